import Foundation
import Images
import Media
import Pose
import Trajectories

/// What `live` and `annotate` do with every frame, in one place: the pose pipeline, the
/// coach (everyone's recognizer, occurrences, repetitions and angles) and, when drawn, the
/// overlay with each person's state; with `throwCoach`, the trajectories and throws too.
struct FrameLoop {
    let pipeline: PosePipeline
    let coach: PeopleCoach
    var drawOverlay: Bool
    /// Applied to each frame before it is processed (benchmarks tile a frame into several people).
    var transform: ((RGBImage) -> RGBImage)?
    /// Trajectories and throws (`--trajectories`).
    var throwCoach: ThrowCoach?
    /// The trajectory detector on a thread of its own (live), not in step with the frames.
    var trajectoriesInBackground = false

    struct Step {
        var frame: Frame
        var persons: [Person]
        /// What the coach reported on this frame (predictions, occurrences, repetitions, angles).
        var events: [CoachEvent]
        /// The frame with the overlay drawn, when `drawOverlay`.
        var overlay: RGBImage?
        /// Trajectories that ended, and the throws among them (`throwCoach`).
        var trajectories: [Trajectory] = []
        var throwsMade: [ThrowReport] = []
        /// Whether the camera stands still (trajectories are looked for).
        var sceneIsStable = true
        /// Milliseconds of each stage of this frame, on the frame's thread.
        var costs: [FrameCosts.Stage: Double] = [:]
        /// The frame's landmark runs (people posed) and their own seconds, summed.
        var landmarkRuns = 0, landmarkRunSeconds = 0.0
    }

    /// What came after the last frame: the trajectories under way when the input ended.
    struct Ending {
        var trajectories: [Trajectory] = []
        var throwsMade: [ThrowReport] = []
        /// The trajectory detector's milliseconds per frame (median, 95th percentile), and
        /// the frames it had no room for.
        var trajectoryCost: (median: Double, p95: Double)?
        var trajectoryFramesDropped = 0
    }

    /// Reads `reader` to its end, or until `body` returns false. `time` gives the time a frame
    /// is pushed at; `shownFPS` the rate printed in the overlay's banner, if any.
    @discardableResult
    func run(_ reader: VideoReader, time: (Frame) -> Double, shownFPS: () -> Double? = { nil },
             body: (Step) throws -> Bool) throws -> Ending {
        pipeline.reset()
        coach.reset()
        throwCoach?.reset()
        let worker = throwCoach.map { TrajectoryWorker(detector: TrajectoryDetector(options: $0.options.detector),
                                                       background: trajectoriesInBackground) }
        // A reader that throws (a stream that broke off) leaves no thread behind.
        defer { worker?.close() }
        func ending() -> Ending {
            guard let worker, let throwCoach else { return Ending() }
            let last = worker.finish().ended.map(throwCoach.take)
            return Ending(trajectories: last.map(\.trajectory), throwsMade: last.compactMap(\.throwMade),
                          trajectoryCost: worker.costMilliseconds, trajectoryFramesDropped: worker.droppedFrames)
        }
        var converted = reader.conversionSeconds
        while var frame = try reader.next() {
            var costs: [FrameCosts.Stage: Double] = [.convert: (reader.conversionSeconds - converted) * 1000]
            converted = reader.conversionSeconds
            var clock = monotonicSeconds()
            /// Milliseconds since the last call (or the frame's start).
            func lap() -> Double { let now = monotonicSeconds(); defer { clock = now }; return (now - clock) * 1000 }
            if let transform {
                // The transform stands for a bigger frame from the source (benchmarks): its time
                // is not the pipeline's latency.
                frame.image = transform(frame.image)
                costs[.tile] = lap()
                frame.decodedAt += costs[.tile]! / 1000
            }
            // The detector sees the frame first: on its own thread it works while the poses are found.
            worker?.submit(frame.image, time: frame.time)
            let before = pipeline.times
            let persons = pipeline.process(frame: frame)
            let after = pipeline.times
            _ = lap()
            costs[.detector] = (after.detectSeconds - before.detectSeconds) * 1000
            costs[.landmarks] = (after.landmarkStageSeconds - before.landmarkStageSeconds) * 1000
            costs[.tracking] = (after.trackingSeconds - before.trackingSeconds) * 1000
            let events = coach.push(persons: persons, width: frame.image.width, height: frame.image.height, time: time(frame))
            costs[.coach] = lap()
            var found = TrajectoryWorker.Output(), made: [ThrowReport] = []
            if let worker, let throwCoach {
                throwCoach.push(persons: persons, time: frame.time)
                for case .prediction(let p) in events { throwCoach.push(prediction: p) }
                found = worker.take()
                let taken = found.ended.map(throwCoach.take)
                found.ended = taken.map(\.trajectory)
                made = taken.compactMap(\.throwMade)
            }
            var overlay: RGBImage?
            if drawOverlay {
                var image = frame.image
                if let throwCoach {
                    Overlay.drawTrajectories(&image, recent: throwCoach.recent, ongoing: found.ongoing, labels: throwCoach.labels)
                }
                Overlay.draw(&image, persons: persons, people: coach.views, angleNames: coach.options.angles.map(\.name),
                             following: coach.options.people, fps: shownFPS(),
                             note: found.sceneIsStable ? nil : "camera moving: no trajectories")
                overlay = image
                costs[.overlay] = lap()
            }
            let step = Step(frame: frame, persons: persons, events: events, overlay: overlay, trajectories: found.ended,
                            throwsMade: made, sceneIsStable: found.sceneIsStable, costs: costs,
                            landmarkRuns: after.landmarkRuns - before.landmarkRuns,
                            landmarkRunSeconds: after.landmarkSeconds - before.landmarkSeconds)
            guard try body(step) else { return ending() }
        }
        return ending()
    }
}
