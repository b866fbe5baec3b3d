import ArgumentParser
import Basics
import Foundation
import Live

struct LiveBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live",
        abstract: "Time the live pipeline on a video played at its own speed.",
        discussion: """
            The file plays as a live source at its frame rate (30 fps for the model's default) \
            through capture, pose, classification and the overlay; --copies N tiles each \
            frame N times (as it is captured, the tiling not counted as latency), for N \
            people (at least N are followed, whatever --max-people says), each classified with a window of their own (`live --people all`), each \
            counted (repetitions). Prints one JSON object: \
            fps (frames processed per second), dropped_frames (and of them dropped_at_start, \
            while the first second's frames were processed), latency_ms_median and \
            latency_ms_p95 and latency_ms_max (frame capture to overlay), frames, predictions, \
            prediction_latency_ms_median and prediction_latency_ms_p95 (capture of a window's \
            last frame to its prediction: the model runs on a thread of its own, as in live), \
            skipped_windows (windows the model had no time for). Where the time goes: \
            stage_ms (per stage of a frame on the frame's thread, mean, p95 and max milliseconds per \
            frame: convert, tile, detector, landmarks, tracking, coach, overlay, output), \
            frame_thread_ms (their means summed), landmark_ms_per_person (one person's \
            landmark run, its own time, median), landmark_runs_per_frame, capture_ms \
            (the capture thread's decoding per frame read), model_ms_per_window (median, \
            on the model threads) and model_windows, cpu_share (the process's CPU time over \
            the run's time on all cores), side_by_side_runs_per_frame (landmark runs one \
            person per core), held_poses_per_frame (--stillness, --hold-when-late) and of \
            them late_holds_per_frame (a frame late: --hold-when-late), late_deferrals (people \
            detected on a late frame, posed from the next), background_detections and \
            background_detection_ms (the detector on its own thread while anyone is followed). --trajectories runs the \
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
        var droppedFrames: Int, droppedAtStart: Int
        var latencyMSMedian: Double, latencyMSP95: Double, latencyMSMax: Double
        var frames: Int, predictions: Int
        var predictionLatencyMSMedian: Double, predictionLatencyMSP95: Double
        var skippedWindows: Int
        var personsPerFrame: Double
        var seconds: Double
        var trajectoryMSMedian: Double?, trajectoryMSP95: Double?
        var trajectoryFramesDropped: Int?
        var trajectories: Int?, throwsMade: Int?
        var stageMS: [String: StageCost]
        var frameThreadMS: Double
        var landmarkMSPerPerson: Double, landmarkRunsPerFrame: Double
        var captureMS: Double
        var modelMSPerWindow: Double, modelWindows: Int
        var cpuShare: Double
        /// Landmark runs made side by side, and poses held (`--stillness`), per frame.
        var sideBySideRunsPerFrame: Double, heldPosesPerFrame: Double, lateHoldsPerFrame: Double, lateDeferrals: Int
        /// Detections on the detector's own thread, and its milliseconds per detection.
        var backgroundDetections: Int, backgroundDetectionMS: Double

        struct StageCost: Encodable { var mean: Double, p95: Double, max: Double }

        enum CodingKeys: String, CodingKey {
            case fps, frames, predictions, seconds
            case stageMS, frameThreadMS, landmarkMSPerPerson
            case landmarkRunsPerFrame, captureMS
            case modelMSPerWindow, modelWindows, cpuShare
            case sideBySideRunsPerFrame, heldPosesPerFrame, lateHoldsPerFrame, lateDeferrals
            case backgroundDetections, backgroundDetectionMS
            case droppedFrames, droppedAtStart, latencyMSMedian, latencyMSP95 = "latencyMsP95"
            case latencyMSMax
            case personsPerFrame
            case predictionLatencyMSMedian, predictionLatencyMSP95 = "predictionLatencyMsP95"
            case skippedWindows
            case trajectoryMSMedian, trajectoryMSP95 = "trajectoryMsP95"
            case trajectoryFramesDropped, trajectories, throwsMade = "throws"
        }
    }

    func run() throws {
        var options = CoachOptions()
        options.modelThread = true
        var pose = pose
        pose.maxPeople = max(pose.maxPeople, copies)   // every copy is someone to follow
        let live = try makeLivePipeline(model: model, pose: pose, options: options)
        live.maxFrames = frames
        let copies = copies
        if copies > 1 { live.capturedFrame = { $0.tiled(copies) } }
        if trajectories {
            var throwOptions = ThrowOptions()
            throwOptions.backgroundLabels = []
            live.throwCoach = ThrowCoach(options: throwOptions, labels: live.coach.classifier.labels)
        }
        var predictions = 0, thrown = Set<Int>()
        let stats = try live.run(input: input) { event in
            if case .prediction = event { predictions += 1 }
            // An amended throw is reported again with its trajectory's id: counted once.
            if case .throwMade(let t) = event { thrown.insert(t.trajectory.id) }
        }
        let lat = stats.latencies.sorted(), predictionLat = stats.predictionLatencies.sorted()
        let costs = stats.costs, poseTimes = live.pipeline.times
        var stages: [String: Timing.StageCost] = [:]
        for (stage, values) in costs.milliseconds {
            let sorted = values.sorted()
            stages[stage.rawValue] = .init(mean: round3(values.reduce(0, +) / Double(max(values.count, 1))), p95: round3(percentile(sorted, 0.95)),
                                           max: round3(sorted.last ?? 0))
        }
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        print(JSONLines.encode(Timing(
            fps: round3(stats.fps), droppedFrames: stats.dropped, droppedAtStart: stats.droppedAtStart, latencyMSMedian: round3(percentile(lat, 0.5)),
            latencyMSP95: round3(percentile(lat, 0.95)), latencyMSMax: round3(lat.last ?? 0), frames: stats.frames, predictions: predictions,
            predictionLatencyMSMedian: round3(percentile(predictionLat, 0.5)),
            predictionLatencyMSP95: round3(percentile(predictionLat, 0.95)), skippedWindows: stats.skippedWindows,
            personsPerFrame: round3(Double(stats.persons) / Double(max(stats.frames, 1))), seconds: round3(stats.seconds),
            trajectoryMSMedian: stats.trajectoryCost.map { round3($0.median) }, trajectoryMSP95: stats.trajectoryCost.map { round3($0.p95) },
            trajectoryFramesDropped: trajectories ? stats.trajectoryFramesDropped : nil,
            trajectories: trajectories ? stats.trajectories : nil, throwsMade: trajectories ? thrown.count : nil,
            stageMS: stages, frameThreadMS: round3(stages.values.reduce(0) { $0 + $1.mean }),
            landmarkMSPerPerson: round3(percentile(costs.landmarkRunMilliseconds.sorted(), 0.5)),
            landmarkRunsPerFrame: round3(Double(costs.landmarkRuns) / Double(max(stats.frames, 1))),
            captureMS: round3(costs.captureSeconds * 1000 / Double(max(stats.frames + stats.dropped, 1))),
            modelMSPerWindow: round3(percentile(costs.modelMilliseconds.sorted(), 0.5)), modelWindows: costs.modelMilliseconds.count,
            cpuShare: round3(costs.cpuSeconds / max(stats.seconds * cores, 1e-9)),
            sideBySideRunsPerFrame: round3(Double(poseTimes.sideBySideRuns) / Double(max(stats.frames, 1))),
            heldPosesPerFrame: round3(Double(poseTimes.heldPoses) / Double(max(stats.frames, 1))),
            lateHoldsPerFrame: round3(Double(poseTimes.lateHolds) / Double(max(stats.frames, 1))),
            lateDeferrals: poseTimes.lateDeferrals,
            backgroundDetections: poseTimes.backgroundDetections,
            backgroundDetectionMS: round3(poseTimes.backgroundDetectSeconds * 1000 / Double(max(poseTimes.backgroundDetections, 1))))))
    }
}
