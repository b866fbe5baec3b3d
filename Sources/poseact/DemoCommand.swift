import ArgumentParser
import Classifier
import Evaluation
import Extraction
import Foundation
import Keypoints
import Live
import Media
import Movement
import Pose

/// The main job on an embedded default. It grows with the product: it generates a picture
/// and a short video of a person-like figure and runs the whole pose pipeline on them, then
/// extracts a generated labeled dataset, trains a classifier on it, exports and evaluates it.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the pose pipeline on a generated image and video, and report what it found and how fast.",
        discussion: """
            Draws a simple standing figure (640×480) and poses it as a still image (detector, \
            then landmark model); then renders 3 s of the figure walking and waving at 30 fps \
            and tracks it as a video (the detector finds it once, the landmark model follows \
            it). Then writes a small labeled dataset of generated clips (the figure waving, \
            the figure walking; train/ and test/ folders), extracts it into a keypoint store as \
            `poseact extract` does, trains the default temporal conv net on the train clips as \
            `poseact train` does, exports the weights file and evaluates it on the test clips, \
            and runs a test clip through the live pipeline as `poseact live --input` does. \
            Last, the coach: a generated video of the figure doing 8 jumping jacks at changing \
            speeds goes through the live pipeline, which counts its repetitions from the poses \
            alone and measures its shoulder angles. Then throws: a throw-type model \
            (overhand, underhand, background) trained on generated clips, and a generated \
            scene of the figure throwing twice through the live pipeline with \
            --trajectories: each throw's type, release speed and angle, and whether it \
            landed on the board. \
            Prints what was found and the time per stage. Needs nothing but the two model \
            files; --overlay writes the tracked video with its wireframe, --keep keeps the \
            generated dataset, store, run folder and weights file.
            """)

    @OptionGroup var inference: InferenceOptions
    @Option(parsing: .unconditional, help: "Timed runs per model for the speed line.") var runs = 20
    @Option(help: "Write the tracked video with wireframes here (.mp4).") var overlay: String?
    @Option(help: "Keep the generated dataset and its keypoint store in this folder.") var keep: String?

    func validate() throws {
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1 (got \(runs))") }
        if let overlay { try OutputPaths.check(overlay, flag: "--overlay", inputs: inference.models.inputs) }
        if let keep { try OutputPaths.check(keep, flag: "--keep", kind: .folder) }
    }

    func run() throws {
        let pipeline = try inference.models.pipeline(PipelineOptions(maxPeople: 2, threads: inference.threads))

        // 1. A still image.
        let still = FigureRenderer.frame(width: 640, height: 480, time: 0)
        let persons = pipeline.process(image: still)
        print("image: generated standing figure, 640×480: \(persons.count) person\(persons.count == 1 ? "" : "s") found")
        if let p = persons.first {
            let nose = p.landmarks[0], leftWrist = p.landmarks[15], rightAnkle = p.landmarks[28]
            print(String(format: "  presence %.3f; nose (%.0f, %.0f), left wrist (%.0f, %.0f), right ankle (%.0f, %.0f) px",
                         p.presence, nose.x, nose.y, leftWrist.x, leftWrist.y, rightAnkle.x, rightAnkle.y))
        }

        // 2. A video, tracked.
        pipeline.reset()
        let writer = try overlay.map { try VideoWriter(path: $0, width: 640, height: 480, fps: 30) }
        var withPerson = 0, ids = Set<Int>()
        let frames = 90
        let start = DispatchTime.now().uptimeNanoseconds
        var renderSeconds = 0.0
        for i in 0..<frames {
            let r0 = DispatchTime.now().uptimeNanoseconds
            var image = FigureRenderer.frame(width: 640, height: 480, time: Double(i) / 30)
            renderSeconds += Double(DispatchTime.now().uptimeNanoseconds - r0) / 1e9
            let found = pipeline.process(frame: Frame(image: image, time: Double(i) / 30, index: i))
            if !found.isEmpty { withPerson += 1 }
            ids.formUnion(found.map(\.id))
            if let writer { image.drawWireframe(found); try writer.write(image) }
        }
        try writer?.finish()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 - renderSeconds
        let t = pipeline.times
        print(String(format: "video: 3 s of the figure walking and waving, 30 fps: a person in %d of %d frames, id%@ %@",
                     withPerson, frames, ids.count == 1 ? "" : "s", ids.sorted().map(String.init).joined(separator: ", ")))
        print(String(format: "  tracking: detector ran %d time%@, landmark model %d times; %.0f frames/s (%.1f ms a frame)",
                     t.detectorRuns, t.detectorRuns == 1 ? "" : "s", t.landmarkRuns, Double(frames) / seconds, seconds * 1000 / Double(frames)))
        if let overlay { print("  wrote \(overlay)") }

        // 3. A generated labeled dataset, extracted into a keypoint store, trained on, evaluated.
        try datasetTrainEvaluate()

        // 4. The models alone.
        let detectorTimes = timeRuns(runs, warmup: 3) { pipeline.detector.interpreter.invoke() }
        let landmarkTimes = timeRuns(runs, warmup: 3) { pipeline.landmarker.interpreter.invoke() }
        print(String(format: "speed (%d threads, %@ kernels, median of %d): detector %.2f ms, landmarks %.2f ms",
                     inference.threads, pipeline.detector.interpreter.kernelPath.rawValue, runs,
                     percentile(detectorTimes, 0.5), percentile(landmarkTimes, 0.5)))
    }
}

extension Demo {
    /// Two labels × (four train + two test) clips of 2 s, written as MP4 in labeled folders,
    /// extracted, trained on, exported and evaluated.
    func datasetTrainEvaluate() throws {
        let root = keep.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("poseact-demo-\(getpid())")
        defer { if keep == nil { try? FileManager.default.removeItem(at: root) } }
        try FigureRenderer.writeDataset(to: root.appendingPathComponent("clips"))
        let listing = try DatasetSources.scan(root.appendingPathComponent("clips").path)
        var options = ExtractOptions()
        options.jobs = 2; options.threads = 1
        let (detector, landmark) = try inference.models.paths()
        let extractor = try Extractor(detectorPath: detector, landmarkPath: landmark, options: options)
        let store = root.appendingPathComponent("demo.h5").path
        try? FileManager.default.removeItem(atPath: store)
        let summary = try extractor.run(listing.clips, output: store)
        let report = try DatasetReport(store: KeypointStore(path: store), window: 32)
        print(String(format: "dataset: %d generated clips (wave, walk) extracted: %d frames in %.1f s (%.0f frames/s), a person in %.1f%% of frames",
                     summary.stored, summary.frames, summary.seconds, Double(summary.frames) / max(summary.seconds, 1e-9),
                     100 * Double(summary.framesWithPerson) / Double(max(summary.frames, 1))))
        for (label, stats) in report.labels.sorted(by: { $0.key < $1.key }) {
            print("  \(label): \(stats.clips) clips, \(stats.frames) frames")
        }

        // Train the default model (configs/penn-action.yaml) on the train clips, as
        // `poseact train` does; a short run, as the data is tiny.
        var config = TrainingConfig()
        config.training.epochs = 25
        config.optimizer.batchSize = 8
        config.data.validationShare = 0
        let run = root.appendingPathComponent("run").path
        let started = DispatchTime.now().uptimeNanoseconds
        var tested: EvaluationReport?
        let trainer = try TrainingRun(folder: run).train(config: config, dataPath: store, restart: true) { event in
            if case .tested(let report) = event { tested = report }
        }[0]
        let trainSeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        let last = trainer.history.last!
        print(String(format: "train: %d windows of %d frames, %d epochs in %.1f s (%d parameters): loss %.3f, accuracy %.0f%%",
                     trainer.data.train.count, config.preprocessing.window, trainer.epochsDone, trainSeconds,
                     trainer.model.parameterCount, last.trainLoss, last.trainAccuracy * 100))
        let weights = root.appendingPathComponent("demo.poseact.h5").path
        try ActionClassifier.load(path: TrainingRun(folder: run).model).save(to: weights)
        let exported = try ActionClassifier.load(path: weights)
        let (windows, _, _) = try exported.windows(fromData: store, split: "test")
        let evaluation = exported.evaluate(windows, modelPath: weights, dataPath: store, split: "test")
        print(String(format: "evaluate: exported weights file on the %d test clips: clip accuracy %.0f%%, window accuracy %.0f%%%@",
                     evaluation.clips.count, evaluation.clips.accuracy * 100, evaluation.windows.accuracy * 100,
                     tested.map { $0.clips == evaluation.clips ? " (= the run's own test figures)" : " (differs from the run's own test figures!)" } ?? ""))

        // Live: one test clip through the real-time pipeline (as fast as it goes), as
        // `poseact live --input` runs it.
        let live = LivePipeline(
            pipeline: try inference.models.pipeline(PipelineOptions(maxPeople: 2, threads: inference.threads)),
            coach: PeopleCoach(classifier: exported, options: CoachOptions()))
        live.asFastAsPossible = true
        live.drawOverlay = false
        let clip = root.appendingPathComponent("clips/test/wave/wave5.mp4").path
        var states: [String] = []
        let stats = try live.run(input: clip) { event in
            if case .stateChange(_, let to, _, _) = event { states.append(to) }
        }
        print(String(format: "live: test clip wave5.mp4 through the real-time pipeline: %d frames at %.0f fps, states %@; %@",
                     stats.frames, stats.fps, states.joined(separator: " → "), stats.summary.lines.joined(separator: ", ")))
        try coach(exported, folder: root)
        try throwing(folder: root)
        if let keep { print("  kept \(keep)/clips, \(store), \(run) and \(weights)") }
    }

    /// The coach on a generated video of the figure doing `Demo.jumpingJacks` jumping jacks,
    /// slow, then three times faster, then slow again: its repetitions counted from the poses
    /// alone and its shoulder angles measured, through the live pipeline.
    func coach(_ classifier: ActionClassifier, folder: URL) throws {
        let path = folder.appendingPathComponent("jumping-jacks.mp4").path
        try Demo.writeJumpingJacks(to: path)
        var options = CoachOptions()
        options.angles = try ["left_shoulder", "right_shoulder"].map { try JointAngle.named($0, jointNames: Skeleton.blazePoseNames) }
        let live = LivePipeline(pipeline: try inference.models.pipeline(PipelineOptions(maxPeople: 2, threads: inference.threads)),
                                coach: PeopleCoach(classifier: classifier, options: options))
        live.asFastAsPossible = true
        live.drawOverlay = false
        var reps: [RepetitionReport] = []
        let stats = try live.run(input: path) { event in
            if case .repetition(let r) = event { reps.append(r) }
        }
        let durations = reps.map(\.repetition.duration)
        let shoulder = reps.compactMap { $0.angles["left_shoulder"] }
        print(String(format: "coach: generated figure doing %d jumping jacks (slow, 3× faster, slow) in %d frames: %d repetitions counted%@",
                     Demo.jumpingJacks, stats.frames, reps.count,
                     durations.isEmpty ? "" : String(format: ", %.1f–%.1f s each", durations.min()!, durations.max()!)))
        if !shoulder.isEmpty {
            print(String(format: "  left_shoulder angle per repetition: from %.0f° to %.0f° (range of motion %.0f°, mean), %.0f° at the turn",
                         shoulder.map(\.minimum).reduce(0, +) / Double(shoulder.count), shoulder.map(\.maximum).reduce(0, +) / Double(shoulder.count),
                         shoulder.map(\.rangeOfMotion).reduce(0, +) / Double(shoulder.count),
                         shoulder.compactMap(\.atTurn).reduce(0, +) / Double(max(shoulder.compactMap(\.atTurn).count, 1))))
        }
    }

    static let jumpingJacks = 8

    /// 12 s at 30 fps, 640×480: a second standing, `jumpingJacks` repetitions, a second standing.
    static func writeJumpingJacks(to path: String) throws {
        let writer = try VideoWriter(path: path, width: 640, height: 480, fps: 30)
        for i in 0..<360 {
            let openness = FigureRenderer.jumpingJackOpenness(time: Double(i) / 30, repetitions: jumpingJacks, seconds: 12)
            try writer.write(FigureRenderer.jumpingJack(width: 640, height: 480, openness: openness))
        }
        try writer.finish()
    }
}
