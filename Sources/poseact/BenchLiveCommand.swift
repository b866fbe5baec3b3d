import ArgumentParser
import Basics
import Foundation
import Live
import Media
import Pose

struct LiveBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live",
        abstract: "Time the live pipeline on a video played at its own speed.",
        discussion: """
            The file plays as a live source at its frame rate (30 fps for the model's default) \
            through capture, pose, classification and the overlay; --copies N tiles each \
            frame N times (as it is captured, the tiling not counted as latency), for N \
            people, each classified with a window of their own (`live --people all`), each \
            counted (repetitions). Prints one JSON object: \
            fps (frames processed per second), dropped_frames, latency_ms_median and \
            latency_ms_p95 and latency_ms_max (frame capture to overlay), frames, predictions, \
            prediction_latency_ms_median and prediction_latency_ms_p95 (capture of a window's \
            last frame to its prediction: the model runs on a thread of its own, as in live), \
            skipped_windows (windows the model had no time for). --trajectories runs the \
            trajectory detector too, on its own thread as in `live --trajectories`, and adds \
            trajectory_ms_median and trajectory_ms_p95 (its own time per frame), \
            trajectory_frames_dropped, trajectories and throws.
            """)

    @Option(help: "A weights file (.poseact.h5) or a run folder.") var model: String
    @Option(help: "The video to play as a live source.") var input: String
    @Option(parsing: .unconditional, help: "Stop after this many frames (0: the whole video).") var frames = 0
    @Option(parsing: .unconditional, help: "Put this many copies of each frame in a grid: that many people to track.") var copies = 1
    @OptionGroup var pose: PosePipelineOptions
    @Flag(help: "Run the trajectory detector and the throws too (live --trajectories).") var trajectories = false

    func validate() throws {
        guard frames >= 0 else { throw ValidationError("--frames must be 0 (the whole video) or more (got \(frames))") }
        guard copies >= 1, copies <= 8 else { throw ValidationError("--copies must be 1 to 8") }
    }

    /// What it prints.
    struct Timing: Encodable {
        var fps: Double
        var droppedFrames: Int
        var latencyMSMedian: Double, latencyMSP95: Double, latencyMSMax: Double
        var frames: Int, predictions: Int
        var predictionLatencyMSMedian: Double, predictionLatencyMSP95: Double
        var skippedWindows: Int
        var personsPerFrame: Double
        var seconds: Double
        var trajectoryMSMedian: Double?, trajectoryMSP95: Double?
        var trajectoryFramesDropped: Int?
        var trajectories: Int?, throwsMade: Int?

        enum CodingKeys: String, CodingKey {
            case fps, frames, predictions, seconds
            case droppedFrames = "dropped_frames", latencyMSMedian = "latency_ms_median", latencyMSP95 = "latency_ms_p95"
            case latencyMSMax = "latency_ms_max"
            case personsPerFrame = "persons_per_frame"
            case predictionLatencyMSMedian = "prediction_latency_ms_median", predictionLatencyMSP95 = "prediction_latency_ms_p95"
            case skippedWindows = "skipped_windows"
            case trajectoryMSMedian = "trajectory_ms_median", trajectoryMSP95 = "trajectory_ms_p95"
            case trajectoryFramesDropped = "trajectory_frames_dropped", trajectories, throwsMade = "throws"
        }
    }

    func run() throws {
        var options = CoachOptions()
        options.modelThread = true
        let live = try makeLivePipeline(model: model, pose: pose, options: options)
        live.maxFrames = frames
        let copies = copies
        if copies > 1 { live.capturedFrame = { $0.tiled(copies) } }
        if trajectories {
            var throwOptions = ThrowOptions()
            throwOptions.backgroundLabels = []
            live.throwCoach = ThrowCoach(options: throwOptions, labels: live.coach.classifier.labels)
        }
        var predictions = 0, throwCount = 0
        let stats = try live.run(input: input) { event in
            if case .prediction = event { predictions += 1 }
            if case .throwMade = event { throwCount += 1 }
        }
        let lat = stats.latencies.sorted(), predictionLat = stats.predictionLatencies.sorted()
        print(JSONLines.encode(Timing(
            fps: round3(stats.fps), droppedFrames: stats.dropped, latencyMSMedian: round3(percentile(lat, 0.5)),
            latencyMSP95: round3(percentile(lat, 0.95)), latencyMSMax: round3(lat.last ?? 0), frames: stats.frames, predictions: predictions,
            predictionLatencyMSMedian: round3(percentile(predictionLat, 0.5)),
            predictionLatencyMSP95: round3(percentile(predictionLat, 0.95)), skippedWindows: stats.skippedWindows,
            personsPerFrame: round3(Double(stats.persons) / Double(max(stats.frames, 1))), seconds: round3(stats.seconds),
            trajectoryMSMedian: stats.trajectoryCost.map { round3($0.median) }, trajectoryMSP95: stats.trajectoryCost.map { round3($0.p95) },
            trajectoryFramesDropped: trajectories ? stats.trajectoryFramesDropped : nil,
            trajectories: trajectories ? stats.trajectories : nil, throwsMade: trajectories ? throwCount : nil)))
    }
}
