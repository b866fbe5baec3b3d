import ArgumentParser
import Classifier
import Dataset
import Foundation
import JSONLines
import Live
import Media
import Pose

struct Annotate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a trained model over a recorded video: overlay, timeline and summary.",
        discussion: """
            The video is read at the model's frame rate and goes through the pose pipeline and \
            the model exactly as in `live` (the same preprocessing as training, from the weights \
            file): a prediction every `stride` frames on the last `window` frames of the \
            prominent person, from the first frame that can fill 60 % of a window (the 24th of \
            32), "no person" when fewer than 60 % of those frames hold a pose, \
            "low confidence" under --min-confidence. --output writes the video with every \
            person's wireframe and the action banner (as live shows it, so the banner trails \
            the action by about half a window); --timeline writes the label ranges (JSON or \
            CSV by extension), as Create ML's preview shows them, each prediction placed at \
            the middle of its window and the first range starting with the video; --compare \
            takes an \
            annotation file (video,label,start,end) and prints the share of annotated time the \
            timeline agrees with, leaving out 1 s on each side of every change of label.
            """)

    @OptionGroup var options: LiveOptions
    @Argument(help: "The video file.") var input: String
    @Option(name: .shortAndLong, help: "The annotated video to write (.mp4).") var output: String?
    @Option(help: "The label ranges to write (.json or .csv).") var timeline: String?
    @Option(help: "An annotation file to compare the timeline with (CSV or JSON: video,label,start,end).") var compare: String?
    @Flag(help: "Print one JSON object (timeline, summary, agreement) instead of text.") var json = false

    func validate() throws {
        guard FileManager.default.fileExists(atPath: input) else { throw PathError("\(input): no such video file") }
        if let compare, !FileManager.default.fileExists(atPath: compare) {
            throw PathError("--compare \(compare): no such annotation file")
        }
        var inputs: [(flag: String, path: String)] = [("the video", input), ("--model", modelPath(options.model))]
        if let compare { inputs.append(("--compare", compare)) }
        if let output { try OutputPaths.check(output, flag: "--output", inputs: inputs) }
        if let timeline {
            try OutputPaths.check(timeline, flag: "--timeline", inputs: inputs + (output.map { [("--output", $0)] } ?? []))
            if let output, timeline == output { throw ValidationError("--timeline and --output are one path (\(output)); give two") }
        }
    }

    /// `annotate --json`.
    struct Summary: Encodable {
        var input: String
        var frames: Int
        /// Seconds of video.
        var duration: Double
        /// Seconds it took.
        var seconds: Double
        var predictions: Int
        var timeline: [TimelineRange]
        /// Seconds per state.
        var summary: [String: Double]
        /// With --compare: the share of the compared seconds the timeline agrees on.
        var agreement: Double?
        var comparedSeconds: Double?

        enum CodingKeys: String, CodingKey {
            case input, frames, duration, seconds, predictions, timeline, summary, agreement, comparedSeconds = "compared_seconds"
        }
    }

    func run() throws {
        // The very pipeline `live` runs, without the real-time part.
        // The annotation file is read first, so that one without this video's ranges is said at once.
        let annotated = try compare.map { try DatasetSources.annotatedRanges(ofVideo: input, in: $0) }
        let live = try options.livePipeline(background: false)
        let annotator = Annotator(pipeline: live.pipeline, recognizer: live.recognizer)
        let classifier = live.recognizer.classifier
        var bar: ProgressDisplay?
        let started = Date()
        let result = try annotator.run(input: input, output: output) { n, total in
            if bar == nil, let total { bar = ProgressDisplay(title: "annotate", total: total, unit: "frames") }
            bar?.update(done: min(n, bar?.total ?? n))
        }
        let seconds = Date().timeIntervalSince(started)
        if let timeline {
            let text = timeline.hasSuffix(".csv") ? TimelineRange.csv(result.timeline) : JSONLines.encode(result.timeline) + "\n"
            try AtomicFile.write(text, to: timeline)
        }
        let agreement = annotated.map { TimelineAgreement.compute(result.timeline, annotations: $0) }
        if json {
            print(JSONLines.encode(Summary(input: input, frames: result.frames, duration: result.duration, seconds: seconds,
                                           predictions: result.predictions.count, timeline: result.timeline,
                                           summary: result.summary.seconds, agreement: agreement?.agreement,
                                           comparedSeconds: agreement?.seconds)))
            return
        }
        print(String(format: "%@: %d frames (%.1f s) at %g fps in %.1f s, %d predictions", input, result.frames, result.duration,
                     classifier.spec.fps, seconds, result.predictions.count))
        for r in result.timeline {
            print(String(format: "  %7.2f – %7.2f  %@%@", r.start, r.end, r.label, r.confidence.map { String(format: " (%.0f%%)", $0 * 100) } ?? ""))
        }
        print("summary:")
        for line in result.summary.lines { print("  " + line) }
        if let agreement {
            print(String(format: "agreement with %@: %.1f%% of %.1f s (1 s around each change of label left out)",
                         compare!, agreement.agreement * 100, agreement.seconds))
        }
        if let output { note("wrote \(output)") }
    }
}
