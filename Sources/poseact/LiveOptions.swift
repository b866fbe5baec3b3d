import ArgumentParser
import Classifier
import Keypoints
import Live
import Movement

extension PeopleChoice: ExpressibleByArgument {}

/// What `live` and `annotate` share: the model, the pose pipeline, whom to classify, how
/// predictions become the state shown and occurrences, and the angles to measure.
struct LiveOptions: ParsableArguments {
    @Option(help: "A weights file (.poseact.h5) or a run folder.") var model: String
    @OptionGroup var pose: PosePipelineOptions
    @Option(help: "Whom to classify: all (every tracked person, each their own window; up to --max-people) or prominent (the largest, kept stable).")
    var people: PeopleChoice = .all
    @Option(parsing: .unconditional, help: "Under this probability the state is 'low confidence'.") var minConfidence: Float = 0.6
    @Option(parsing: .unconditional, help: "Predictions averaged into each one shown (1: none).") var smooth = 1
    @Option(parsing: .unconditional, help: "An occurrence starts when its label's probability reaches this.") var enter: Float = 0.6
    @Option(parsing: .unconditional, help: "An occurrence holds while its label's probability stays at this or more.") var exit: Float = 0.4
    @Option(parsing: .unconditional, help: "Seconds a change must last to end an occurrence (and the shortest occurrence).")
    var minDuration = 1.0
    @Option(help: ArgumentHelp("A label that is never an occurrence (the negative class); repeat for several.", valueName: "label"))
    var backgroundLabel: [String] = ["other"]
    @Option(help: ArgumentHelp("Joint angles to measure, comma-separated: left_elbow, right_knee, body_line… or A-B-C (the angle at joint B).",
                               valueName: "names"))
    var angles: String?

    func validate() throws {
        guard smooth >= 1 else { throw ValidationError("--smooth must be at least 1 (got \(smooth))") }
        guard (0...1).contains(minConfidence) else { throw ValidationError("--min-confidence must be in 0…1 (got \(minConfidence))") }
        guard (0...1).contains(enter), (0...1).contains(exit) else { throw ValidationError("--enter and --exit must be in 0…1 (got \(enter), \(exit))") }
        guard exit <= enter else { throw ValidationError("--exit (\(exit)) must not be above --enter (\(enter)): it is the lower threshold") }
        guard minDuration >= 0, minDuration.isFinite else { throw ValidationError("--min-duration must be 0 or more seconds (got \(minDuration))") }
        _ = try jointAngles()
    }

    /// The angles asked for, on BlazePose's joints.
    func jointAngles() throws -> [JointAngle] {
        guard let angles else { return [] }
        let names = angles.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        do {
            return try names.map { try JointAngle.named($0, jointNames: Skeleton.blazePoseNames) }
        } catch let error as AngleError {
            throw ValidationError("--angles: \(error.description)")
        }
    }

    func coachOptions(modelThread: Bool) throws -> CoachOptions {
        var o = CoachOptions()
        o.people = people
        o.minConfidence = minConfidence
        o.smoothing = smooth
        o.modelThread = modelThread
        o.occurrences = OccurrenceRules(enter: enter, exit: exit, minimumDuration: minDuration, background: Set(backgroundLabel))
        o.angles = try jointAngles()
        return o
    }

    /// `background`: each person's model on a thread of its own (real time; see `ActionRecognizer`).
    func livePipeline(background: Bool) throws -> LivePipeline {
        try makeLivePipeline(model: model, pose: pose, options: coachOptions(modelThread: background))
    }
}

/// The model and the pose pipeline, ready to run live. The pipeline poses as the model's
/// training keypoints were extracted (`extract --mirror-average`, `--redetect`, recorded in
/// the weights file), so live sees the keypoints the model learnt from.
func makeLivePipeline(model: String, pose: PosePipelineOptions, options: CoachOptions) throws -> LivePipeline {
    let classifier = try ActionClassifier.load(path: modelPath(model))
    let pipeline = try pose.pipeline()
    let record = classifier.training.data ?? classifier.training.members?.first?.data
    if let settings = record?.poseSettings {
        pipeline.options.mirrorAverage = settings.mirrorAverage
        pipeline.options.redetect = settings.redetect
    }
    let live = LivePipeline(pipeline: pipeline, coach: PeopleCoach(classifier: classifier, options: options))
    live.detectInBackground = pose.backgroundDetector
    live.holdPosesWhenLate = pose.holdWhenLate
    return live
}
