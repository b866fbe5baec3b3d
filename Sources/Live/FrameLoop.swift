import Classifier
import Foundation
import Media
import Pose

/// What `live` and `annotate` do with every frame, in one place: the pose pipeline, the
/// recognizer (fed the prominent person) and, when drawn, the overlay with the current state.
struct FrameLoop {
    let pipeline: PosePipeline
    let recognizer: ActionRecognizer
    var drawOverlay: Bool
    /// Applied to each frame before it is processed (benchmarks tile a frame into several people).
    var transform: ((RGBImage) -> RGBImage)?

    struct Step {
        var frame: Frame
        var persons: [Person]
        /// The recognizer's prediction, on the frames it makes one.
        var prediction: Prediction?
        /// The frame with the overlay drawn, when `drawOverlay`.
        var overlay: RGBImage?
    }

    /// Reads `reader` to its end, or until `body` returns false. `time` gives the time a frame
    /// is pushed at; `shownFPS` the rate printed in the overlay's banner, if any.
    func run(_ reader: VideoReader, time: (Frame) -> Double, shownFPS: () -> Double? = { nil },
             body: (Step) throws -> Bool) throws {
        pipeline.reset()
        recognizer.reset()
        var state: ActionState?
        while var frame = try reader.next() {
            if let transform {
                // The transform stands for a bigger frame from the source (benchmarks): its time
                // is not the pipeline's latency.
                let start = monotonicSeconds()
                frame.image = transform(frame.image)
                frame.decodedAt += monotonicSeconds() - start
            }
            let persons = pipeline.process(frame: frame)
            let prediction = recognizer.push(persons: persons, width: frame.image.width, height: frame.image.height,
                                             time: time(frame))
            if let prediction { state = prediction.state }
            var overlay: RGBImage?
            if drawOverlay {
                var image = frame.image
                Overlay.draw(&image, persons: persons, state: state, fps: shownFPS())
                overlay = image
            }
            guard try body(Step(frame: frame, persons: persons, prediction: prediction, overlay: overlay)) else { return }
        }
    }
}
