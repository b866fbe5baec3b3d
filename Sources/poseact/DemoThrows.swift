import Classifier
import Extraction
import Foundation
import Keypoints
import Live
import Pose
import Scenes

extension Demo {
    /// Throws, as Apple's Action & Vision app coaches them: a throw-type model trained on
    /// generated clips (overhand, underhand, background), then a generated scene of the
    /// figure throwing twice through the live pipeline with --trajectories: each throw's
    /// type, release speed and angle, and whether it landed on the board, beside the truth.
    func throwing(folder: URL) throws {
        let clips = folder.appendingPathComponent("throw-clips")
        try ThrowScenes.writeTypeDataset(to: clips, perLabel: 8, seed: 36)
        var options = ExtractOptions()
        options.jobs = 2; options.threads = 1
        let (detector, landmark) = try inference.models.paths()
        let store = folder.appendingPathComponent("throws.h5").path
        try? FileManager.default.removeItem(atPath: store)
        _ = try Extractor(detectorPath: detector, landmarkPath: landmark, options: options)
            .run(try DatasetSources.scan(clips.path).clips, output: store)
        // configs/throws.yaml, in short: a window of a swing's length.
        var config = TrainingConfig()
        config.preprocessing.window = 24
        config.preprocessing.stride = 4
        config.preprocessing.features = [.position, .confidence, .velocity, .bone]
        config.model.dilations = [1, 1, 2, 2]
        config.training.epochs = 30
        config.optimizer.batchSize = 8
        config.data.validationShare = 0
        let run = folder.appendingPathComponent("throws-run").path
        let trainer = try TrainingRun(folder: run).train(config: config, dataPath: store, restart: true) { _ in }[0]
        let model = try ActionClassifier.load(path: TrainingRun(folder: run).model)
        let (windows, _, _) = try model.windows(fromData: store, split: "test")
        let evaluation = model.evaluate(windows, modelPath: run, dataPath: store, split: "test")
        print(String(format: "throws: a type model (overhand, underhand, background) trained on %d windows of 8 generated clips a label, %d epochs: %.0f%% of the %d test clips right",
                     trainer.data.train.count, trainer.epochsDone, evaluation.clips.accuracy * 100, evaluation.clips.count))

        let scene = ThrowScenes.demoScene()
        let video = folder.appendingPathComponent("throws.mp4")
        try ThrowScenes.write(scene, name: "throws", to: folder)
        let truth = ThrowSceneTruth(scene: scene, clip: "throws.mp4")
        // A 1280×720 scene with the figure a third of its height: the detector looks in tiles,
        // as `live` does by default.
        var poseOptions = PipelineOptions(maxPeople: 2, threads: inference.threads)
        poseOptions.detectInTiles = true
        let live = LivePipeline(pipeline: try inference.models.pipeline(poseOptions),
                                coach: PeopleCoach(classifier: model, options: CoachOptions()))
        live.asFastAsPossible = true
        live.drawOverlay = false
        var throwOptions = ThrowOptions()
        guard let scale = truth.scale, let target = truth.target else { return }
        let b = (scale: scale, target: target)
        throwOptions.scale = .reference(x1: Float(b.scale.x1), y1: Float(b.scale.y1), x2: Float(b.scale.x2), y2: Float(b.scale.y2), metres: b.scale.metres)
        throwOptions.target = [(Float(b.target.x), Float(b.target.y)), (Float(b.target.x + b.target.width), Float(b.target.y)),
                               (Float(b.target.x + b.target.width), Float(b.target.y + b.target.height)),
                               (Float(b.target.x), Float(b.target.y + b.target.height))]
        throwOptions.backgroundLabels = ["background"]
        live.throwCoach = ThrowCoach(options: throwOptions, labels: model.labels)
        var made: [ThrowReport] = []
        let stats = try live.run(input: video.path) { event in
            if case .throwMade(let t) = event { made.append(t) }
        }
        made = ThrowReport.latest(made)   // an amended throw replaces what was said of it
        let truths = truth.throwsMade.map { String(format: "%@ %.1f m/s at %.0f°", $0.type.rawValue, $0.speedMetresPerSecond, $0.angle) }
        print(String(format: "  a generated scene of the figure throwing twice (%d frames, 1280×720): %d trajector%@, %d throw%@ (the truth: %@, both on the board)",
                     stats.frames, stats.trajectories, stats.trajectories == 1 ? "y" : "ies", made.count, made.count == 1 ? "" : "s",
                     truths.joined(separator: ", ")))
        for t in made {
            print(String(format: "  %.2f s: %@, %.1f %@, forearm at %.0f° (%@), flight at %.0f°, %@", t.releaseTime, t.type ?? "?", t.speed, t.speedUnit,
                         t.releaseAngle ?? .nan, t.arm, t.launchAngle, t.hit == true ? "on the board" : "off the board"))
        }
    }
}
