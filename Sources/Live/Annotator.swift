import Classifier
import Dataset
import Foundation
import Media
import Pose

/// The overlay of live and annotate: every person's wireframe (the prominent one's with its
/// id), and a banner with the prominent person's action and confidence (and the fps).
public enum Overlay {
    public static func draw(_ image: inout RGBImage, persons: [Person], state: ActionState?, fps: Double? = nil) {
        image.drawWireframe(persons) { $0.isProminent ? "#\($0.id)" : nil }
        let scale = max(1, image.height / 240)
        var text: String
        switch state {
        case .none: text = "…"
        case .noPerson?: text = "no person"
        case .lowConfidence(let label, let c)?: text = String(format: "low confidence (%@ %.0f%%)", label, c * 100)
        case .action(let label, let c)?: text = String(format: "%@ %.0f%%", label, c * 100)
        }
        if let fps { text += String(format: "   %.0f fps", fps) }
        let color: RGB = { if case .action? = state { return .brightGreen }; return .yellow }()
        _ = image.drawText(text, at: (x: 8 * scale, y: 8 * scale), color: color, scale: scale, background: .black)
    }
}

/// The share of annotated time on which a timeline agrees with an annotation file, leaving
/// out `margin` seconds on each side of every change of annotated label (where a 1-second
/// window cannot be right yet) and the time outside every annotated range.
public enum TimelineAgreement {
    public static func compute(_ timeline: [TimelineRange], annotations: [(start: Double, end: Double, label: String)],
                               margin: Double = 1, step: Double = 0.05) -> (agreement: Double, seconds: Double) {
        let sorted = annotations.sorted { $0.start < $1.start }
        var changes: [Double] = []
        for (a, b) in zip(sorted, sorted.dropFirst()) where a.label != b.label { changes.append(b.start) }
        var counted = 0, agreed = 0
        for a in sorted {
            var t = a.start + step / 2
            while t < a.end {
                defer { t += step }
                if changes.contains(where: { abs($0 - t) < margin }) { continue }
                counted += 1
                if let r = timeline.first(where: { $0.start <= t && t < $0.end }), r.label == a.label { agreed += 1 }
            }
        }
        return (counted > 0 ? Double(agreed) / Double(counted) : 0, Double(counted) * step)
    }
}

/// `poseact annotate`: a recorded video through the pose pipeline and the model, frame by
/// frame at the model's rate, with the overlay written to a video and the predictions kept.
public final class Annotator {
    public let pipeline: PosePipeline
    public let recognizer: ActionRecognizer

    public struct Result {
        public var predictions: [Prediction]
        public var summary: ActionSummary
        public var frames: Int
        public var duration: Double
        public var timeline: [TimelineRange]
    }

    public init(pipeline: PosePipeline, recognizer: ActionRecognizer) {
        self.pipeline = pipeline
        self.recognizer = recognizer
    }

    /// `progress(frame, frames?)` after each frame.
    public func run(input: String, output: String?, progress: ((Int, Int?) -> Void)? = nil) throws -> Result {
        let fps = recognizer.spec.fps
        let reader = try VideoReader(input, options: ReaderOptions(targetFPS: fps))
        defer { reader.close() }
        let info = reader.info
        // VideoWriter writes to a temporary file and renames it when finished.
        let writer = try output.map { try VideoWriter(path: $0, width: info.width, height: info.height, fps: fps) }
        var predictions: [Prediction] = [], summary = ActionSummary()
        var n = 0
        let total = info.duration.map { Int($0 * fps) }
        // Frame i covers [i/fps, (i+1)/fps): it is pushed at the end of its time.
        try FrameLoop(pipeline: pipeline, recognizer: recognizer, drawOverlay: writer != nil)
            .run(reader, time: { Double($0.index + 1) / fps }) { step in
                if let p = step.prediction { predictions.append(p); summary.add(p) }
                if let image = step.overlay { try writer?.write(image) }
                n += 1
                progress?(n, total)
                return true
            }
        try writer?.finish()
        let duration = Double(n) / fps
        summary.finish(at: duration)
        let window = Double(recognizer.spec.window) / fps
        return Result(predictions: predictions, summary: summary, frames: n, duration: duration,
                      timeline: TimelineRange.ranges(predictions, end: duration, shift: -window / 2,
                                                     start: predictions.first.map { $0.time - window }))
    }
}
