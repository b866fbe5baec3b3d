import ArgumentParser
import Classifier
import Live
import Pose

/// What `live` and `annotate` share: the model, the pose pipeline, and how predictions
/// become the state shown.
struct LiveOptions: ParsableArguments {
    @Option(help: "A weights file (.poseact.h5) or a run folder.") var model: String
    @OptionGroup var pose: PosePipelineOptions
    @Option(parsing: .unconditional, help: "Under this probability the state is 'low confidence'.") var minConfidence: Float = 0.6
    @Option(parsing: .unconditional, help: "Predictions averaged into each one shown (1: none).") var smooth = 1

    func validate() throws {
        guard smooth >= 1 else { throw ValidationError("--smooth must be at least 1 (got \(smooth))") }
        guard (0...1).contains(minConfidence) else { throw ValidationError("--min-confidence must be in 0…1 (got \(minConfidence))") }
    }

    /// `background`: the model on a thread of its own (real time; see `ActionRecognizer`).
    func livePipeline(background: Bool) throws -> LivePipeline {
        try makeLivePipeline(model: model, pose: pose, minConfidence: minConfidence, smooth: smooth, background: background)
    }
}

/// The model and the pose pipeline, ready to run live.
func makeLivePipeline(model: String, pose: PosePipelineOptions, minConfidence: Float = 0.6, smooth: Int = 1,
                      background: Bool) throws -> LivePipeline {
    let classifier = try ActionClassifier.load(path: modelPath(model))
    return LivePipeline(pipeline: try pose.pipeline(),
                        recognizer: ActionRecognizer(classifier: classifier, minConfidence: minConfidence, smoothing: smooth,
                                                     background: background))
}
