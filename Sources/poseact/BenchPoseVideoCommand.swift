import ArgumentParser
import Basics
import Foundation
import Images
import Media

struct PoseVideoBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pose-video",
        abstract: "Time the pose pipeline on a video, decoding included.",
        discussion: """
            Decodes FILE and runs the tracking pipeline on every frame, as fast as it goes. \
            Prints one JSON object: {"file", "frames", "width", "height", "fps", "decode_ms", \
            "pipeline_ms", "detect_ms", "landmarks_ms", "landmark_stage_ms", "detector_runs", \
            "landmark_runs", "side_by_side_runs", "held_poses" (--stillness), "persons_per_frame"}: fps over the whole run; \
            *_ms are means per frame (decode, pipeline, landmark_stage: everyone's landmark runs \
            on a frame) or per model run (detect, landmarks: a run's own time; with two or more \
            people, runs go side by side one per core, see --no-person-per-core).
            """)

    @Argument(help: "A video file.") var file: String
    @OptionGroup var pose: PosePipelineOptions
    @Flag(help: "Smooth landmarks over time (One-Euro filter, MediaPipe's settings).") var smooth = false
    @Option(parsing: .unconditional, help: "Stop after this many frames.") var frames: Int?
    @Option(help: "Put this many copies of each frame in a grid: that many people to track (no video here has several).")
    var copies = 1

    func validate() throws {
        guard copies >= 1, copies <= 8 else { throw ValidationError("--copies must be 1 to 8") }
        if let frames, frames < 1 { throw ValidationError("--frames must be at least 1 (got \(frames))") }
    }

    /// What it prints.
    struct Timing: Encodable {
        var file: String
        var frames: Int, width: Int, height: Int
        var fps: Double
        var decodeMS: Double, pipelineMS: Double, detectMS: Double, landmarksMS: Double, landmarkStageMS: Double
        var detectorRuns: Int, landmarkRuns: Int, sideBySideRuns: Int, heldPoses: Int
        var personsPerFrame: Double
    }

    func run() throws {
        let pipeline = try pose.pipeline(smoothing: smooth)
        let reader = try VideoReader(file)
        var count = 0, persons = 0
        var decode = 0.0, work = 0.0
        let start = DispatchTime.now().uptimeNanoseconds
        while count < (frames ?? .max) {
            let t0 = DispatchTime.now().uptimeNanoseconds
            guard var frame = try reader.next() else { break }
            frame.image = frame.image.tiled(copies)
            let t1 = DispatchTime.now().uptimeNanoseconds
            persons += pipeline.process(frame: frame).count
            let t2 = DispatchTime.now().uptimeNanoseconds
            decode += Double(t1 - t0) / 1e6; work += Double(t2 - t1) / 1e6
            count += 1
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let t = pipeline.times, n = Double(max(count, 1))
        let columns = RGBImage.tileColumns(copies)
        print(JSONLines.encode(Timing(
            file: file, frames: count, width: reader.info.width * columns, height: reader.info.height * ((copies + columns - 1) / columns),
            fps: round3(Double(count) / max(seconds, 1e-9)), decodeMS: round3(decode / n), pipelineMS: round3(work / n),
            detectMS: round3(t.detectSeconds * 1000 / Double(max(t.detectorRuns, 1))),
            landmarksMS: round3(t.landmarkSeconds * 1000 / Double(max(t.landmarkRuns, 1))),
            landmarkStageMS: round3(t.landmarkStageSeconds * 1000 / n),
            detectorRuns: t.detectorRuns, landmarkRuns: t.landmarkRuns, sideBySideRuns: t.sideBySideRuns, heldPoses: t.heldPoses, personsPerFrame: round3(Double(persons) / n))))
    }
}
