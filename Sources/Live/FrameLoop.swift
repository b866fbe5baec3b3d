import Classifier
import Foundation
import Images
import Media
import Pose

/// What `live` and `annotate` do with every frame, in one place: the pose pipeline, the
/// coach (everyone's recognizer, occurrences, repetitions and angles) and, when drawn, the
/// overlay with each person's state.
struct FrameLoop {
    let pipeline: PosePipeline
    let coach: PeopleCoach
    var drawOverlay: Bool
    /// Applied to each frame before it is processed (benchmarks tile a frame into several people).
    var transform: ((RGBImage) -> RGBImage)?

    struct Step {
        var frame: Frame
        var persons: [Person]
        /// What the coach reported on this frame (predictions, occurrences, repetitions, angles).
        var events: [CoachEvent]
        /// The frame with the overlay drawn, when `drawOverlay`.
        var overlay: RGBImage?
    }

    /// Reads `reader` to its end, or until `body` returns false. `time` gives the time a frame
    /// is pushed at; `shownFPS` the rate printed in the overlay's banner, if any.
    func run(_ reader: VideoReader, time: (Frame) -> Double, shownFPS: () -> Double? = { nil },
             body: (Step) throws -> Bool) throws {
        pipeline.reset()
        coach.reset()
        while var frame = try reader.next() {
            if let transform {
                // The transform stands for a bigger frame from the source (benchmarks): its time
                // is not the pipeline's latency.
                let start = monotonicSeconds()
                frame.image = transform(frame.image)
                frame.decodedAt += monotonicSeconds() - start
            }
            let persons = pipeline.process(frame: frame)
            let events = coach.push(persons: persons, width: frame.image.width, height: frame.image.height, time: time(frame))
            var overlay: RGBImage?
            if drawOverlay {
                var image = frame.image
                Overlay.draw(&image, persons: persons, people: coach.views, angleNames: coach.options.angles.map(\.name),
                             following: coach.options.people, fps: shownFPS())
                overlay = image
            }
            guard try body(Step(frame: frame, persons: persons, events: events, overlay: overlay)) else { return }
        }
    }
}
