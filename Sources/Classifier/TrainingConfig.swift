import Basics
import Config
import Foundation
import Keypoints
import KeypointWindows
import Yams

/// Everything `poseact train` needs to know, read from a YAML file (configs/penn-action.yaml
/// documents every key). Every key is optional; the defaults here are the file's values.
/// Parsing is strict: an unknown key or a value of the wrong type is an error that names
/// the file, the line and the key, before any work starts.
public struct TrainingConfig: ConfigSection, Equatable, Sendable {
    public struct DataSection: ConfigSection, Equatable, Sendable {
        /// Keypoint store or windows file; nil: given on the command line.
        public var store: String?
        public var trainSplit = "train"
        /// nil: no test evaluation at the end of training.
        public var testSplit: String? = "test"
        public var validationShare = 0.1
        public var validationGroup: ValidationGroup = .source
        /// Cross-validation: with `folds` = k ≥ 2 the run trains on the train split less its
        /// `fold`-th of k folds and tests on that fold (`TrainingData.foldGroups`); the test
        /// split is not used. 0: no cross-validation.
        public var folds = 0
        public var fold = 1
        /// A learning curve's point: train on this many clips per label of the train split
        /// (whole source videos, as the folds), drawn at random by `draw`; 0: all of them.
        public var clipsPerLabel = 0
        public var draw = 1

        public init() {}

        /// Each key with its bound (`fold`'s depends on `folds`: `TrainingConfig.problems`).
        public static let keys: [ConfigKey<DataSection>] = [
            .value("store", \.store), .value("train_split", \.trainSplit, Bound("not be empty") { !$0.isEmpty }),
            .value("test_split", \.testSplit),
            .value("validation_share", \.validationShare, .within(0..<1)), .value("validation_group", \.validationGroup),
            .value("folds", \.folds, Bound("be 0 (no cross-validation) or 2…\(TrainingConfig.maxFolds)") {
                $0 == 0 || (2...TrainingConfig.maxFolds).contains($0)
            }),
            .value("fold", \.fold),
            .value("clips_per_label", \.clipsPerLabel, Bound("be 0 (all) or more") { $0 >= 0 }),
            .value("draw", \.draw, Bound("be 0 or more") { $0 >= 0 }),
        ]
    }

    public enum ValidationGroup: String, ConfigChoice, Sendable {
        /// Clips cut from the same video file stay on one side.
        case source
        case clip
    }

    public enum OptimizerName: String, ConfigChoice, Sendable { case adamw, adam }

    public struct OptimizerSection: ConfigSection, Equatable, Sendable {
        public var name: OptimizerName = .adamw
        public var learningRate = 0.001
        public var minLearningRate = 0.00001
        public var warmupEpochs = 1.0
        public var weightDecay = 0.01
        public var gradientClip = 5.0
        public var batchSize = 32

        public init() {}

        /// Each key with its bound (`min_learning_rate`'s depends on `learning_rate`:
        /// `TrainingConfig.problems`).
        public static let keys: [ConfigKey<OptimizerSection>] = [
            .value("name", \.name), .value("learning_rate", \.learningRate, .positive),
            .value("min_learning_rate", \.minLearningRate),
            .value("warmup_epochs", \.warmupEpochs, .notNegative()), .value("weight_decay", \.weightDecay, .notNegative()),
            .value("gradient_clip", \.gradientClip, .notNegative("0 turns it off")),
            .value("batch_size", \.batchSize, Bound(holds: { (2...TrainingConfig.maxBatch).contains($0) }) { key, value in
                "\(key) must be in 2…\(TrainingConfig.maxBatch) (batch norm needs 2; got \(value))"
            }),
        ]
    }

    public enum ClassWeighting: String, ConfigChoice, Sendable { case none, balanced }
    public enum Keep: String, ConfigChoice, Sendable { case last, best }
    public enum WindowWeighting: String, ConfigChoice, Sendable { case window, clip }

    public struct TrainingSection: ConfigSection, Equatable, Sendable {
        public var epochs = 40
        /// Epochs without a better validation accuracy before stopping; 0: never stop early.
        public var patience = 0
        /// Which epoch becomes the model: the last, or the best on validation.
        public var keep: Keep = .last
        public var classWeighting: ClassWeighting = .none
        /// clip: each clip weighs the same in the loss, whatever its number of windows.
        public var windowWeighting: WindowWeighting = .window
        /// Label smoothing ε: targets (1 − ε) on the label and ε spread over all classes.
        public var labelSmoothing = 0.0
        /// The model is a moving average of the weights over about this many epochs
        /// (`WeightAverage`); 0: the last step's weights.
        public var emaEpochs = 5.0
        /// With model.pretrained: the first epochs train the head alone (the backbone's
        /// weights held), then everything.
        public var freezeEpochs = 0
        public var seed: UInt64 = 1
        /// BLAS threads; 0: the machine's cores.
        public var threads = 0

        public init() {}

        public static let keys: [ConfigKey<TrainingSection>] = [
            .value("epochs", \.epochs, .within(1...100_000)),
            .value("patience", \.patience, Bound("not be negative (0 turns early stopping off)") { $0 >= 0 }),
            .value("keep", \.keep),
            .value("class_weighting", \.classWeighting), .value("window_weighting", \.windowWeighting),
            .value("label_smoothing", \.labelSmoothing, .within(0..<1)),
            // A record from before the key was trained without an average: 0, not today's default.
            .value("ema_epochs", \.emaEpochs, Bound("be in 0…1000 (0 turns it off)") { (0...1000).contains($0) }, before: 0),
            .value("freeze_epochs", \.freezeEpochs, Bound("not be negative (0: the whole net learns from the start)") { $0 >= 0 }),
            .value("seed", \.seed), .value("threads", \.threads, Bound("not be negative (0: all cores)") { $0 >= 0 }),
        ]
    }

    public var data = DataSection()
    /// The training default: velocities as well as positions, and a frame is a pose when a
    /// quarter of the joints the source provides are seen (PreprocessingSpec's own defaults
    /// are the bare minimum: positions and confidences, half the joints).
    public var preprocessing = PreprocessingSpec(minJointShare: 0.25, features: [.position, .confidence, .velocity])
    public var model = ModelSpec()
    public var optimizer = OptimizerSection()
    public var training = TrainingSection()
    public var augmentation = AugmentationSpec(flip: true)

    public init() {}

    public static let keys: [ConfigKey<TrainingConfig>] = [
        .section("data", \.data), .section("preprocessing", \.preprocessing), .section("model", \.model),
        .section("optimizer", \.optimizer), .section("training", \.training), .section("augmentation", \.augmentation),
    ]

    /// BLAS threads to use: `training.threads`, or the machine's cores when 0.
    public var threads: Int {
        training.threads > 0 ? training.threads : ProcessInfo.processInfo.activeProcessorCount
    }

    /// Far beyond any batch this trains well (the default is 32), low enough that a typo is
    /// refused before it asks for gigabytes (the model's keys have their bounds in `ModelSpec`).
    public static let maxBatch = 8192

    /// Far beyond any cross-validation (5 or 10 folds), low enough that a typo is refused
    /// before crossval plans a billion runs.
    public static let maxFolds = 1000

    /// Problems that make the config unusable (empty when it is fine), each naming its key:
    /// every key against the bound declared with it, then what keys ask of each other.
    public var problems: [String] {
        var p = preprocessing.problems.map { "preprocessing: \($0)" }
        p += data.keyProblems(prefix: "data.")
        if data.folds >= 2 && !(1...data.folds).contains(data.fold) { p.append("data.fold must be in 1…\(data.folds)") }
        p += model.problems(prefix: "model.")
        p += optimizer.keyProblems(prefix: "optimizer.")
        if optimizer.minLearningRate < 0 || optimizer.minLearningRate > optimizer.learningRate {
            p.append("optimizer.min_learning_rate must be in [0, learning_rate]")
        }
        p += training.keyProblems(prefix: "training.")
        p += augmentation.keyProblems(prefix: "augmentation.")
        // Each key within its bound can still multiply into terabytes: the net's size, once
        // the keys are sane (the classes are not known yet; the head is a few of its parameters).
        if p.isEmpty, let size = Architecture(config: self, classes: 2).sizeProblem(
            joints: preprocessing.joints.count, batch: optimizer.batchSize,
            lower: model.isGraph ? "model.blocks or optimizer.batch_size" : "model.channels, model.kernel, model.dilations or optimizer.batch_size") {
            p.append(size)
        }
        return p
    }

    // MARK: YAML

    /// Reads and checks a config file, over the config it names as its `base:` (a path
    /// relative to the file's folder; MMAction2's `_base_`): see `ConfigFile.read`.
    public static func load(path: String) throws -> TrainingConfig {
        let (root, file) = try ConfigFile.read(path: path, schema: schema) { root, file in _ = try decode(root, file) }
        return try decode(root, file)
    }

    /// Parses YAML text (`file` names it in errors). Problems of values (e.g. a negative
    /// window) are left to `problems`, so flags can still override them. A `base:` needs a
    /// file's folder: `load(path:)`.
    public static func parse(_ text: String, file: String = "config") throws -> TrainingConfig {
        let (root, checker) = try ConfigFile.parse(text, name: file, schema: schema) { root, file in _ = try decode(root, file) }
        return try decode(root, checker)
    }

    static func decode(_ root: Node, _ file: ConfigFile) throws -> TrainingConfig {
        do {
            return try YAMLDecoder().decode(TrainingConfig.self, from: root, userInfo: [.configFile: true])
        } catch let error as DecodingError {
            throw file.error(error, in: root)
        }
    }

    /// A training config file's keys: the sections and theirs; `preprocessing.joints` may
    /// name a layout (vision, blazepose, all) or list joint names poseact knows.
    static let schema = ConfigSchema(topKeys: configFileKeys, sectionKeys: { section in keys.first { $0.name == section }?.sectionKeys },
                                     value: { node, path, file in path == ["preprocessing", "joints"] ? try joints(node, path.joined(separator: "."), file) : node })

    static let layoutNames: [String: [String]] = [
        "vision": Skeleton.visionLayout, "blazepose": Skeleton.blazePoseNames, "all": Skeleton.allNames,
    ]

    /// vision, blazepose, all, or a list of joint names (each one poseact knows).
    static func joints(_ node: Node, _ key: String, _ file: ConfigFile) throws -> Node {
        if case .scalar(let s) = node {
            guard let names = layoutNames[s.string] else {
                throw file.error(node, "\(key) must be vision, blazepose, all or a list of joint names, not '\(s.string)'")
            }
            return Node(names.map { Node($0) })
        }
        guard let names = node.sequence?.compactMap(\.string) else { return node }
        for n in names where Skeleton.index(of: n, in: Skeleton.allNames) == nil {
            throw file.error(node, "\(key): unknown joint '\(n)' (known: \(Skeleton.allNames.joined(separator: ", ")))")
        }
        guard Set(names).count == names.count else { throw file.error(node, "\(key) lists a joint twice") }
        guard !names.isEmpty else { throw file.error(node, "\(key) must list at least one joint") }
        return node
    }

    /// The config as YAML, every key written out (for the run folder: what was really used).
    public func yaml() -> String {
        guard let encoded = try? Yams.compose(yaml: YAMLEncoder().encode(self, userInfo: [.configFile: true])),
              let text = try? Yams.serialize(node: Self.written(encoded, numbers: try? Yams.compose(yaml: json())), width: -1)
        else { return "" }
        return "# The effective config of this run (file, then command-line flags).\n" + text
    }

    /// The encoded node as the file shows it: each list on one line, and each number as
    /// `numbers` (the JSON) has it at its place. Yams writes a number to 15 digits in exponent
    /// form (0.1 as 1e-1, the Float 0.2 as 2.00000002980232e-1); JSONEncoder writes the
    /// shortest that reads back the same.
    private static func written(_ node: Node, numbers: Node?) -> Node {
        switch node {
        case .mapping(let m):
            return .mapping(Node.Mapping(m.map { ($0, written($1, numbers: numbers?[$0.string ?? ""])) }, m.tag, m.style))
        case .sequence(let s):
            return .sequence(Node.Sequence(s.enumerated().map { written($1, numbers: numbers?[$0]) }, s.tag, .flow))
        case .scalar where node.float != nil && numbers?.float != nil: return numbers ?? node
        default: return node
        }
    }

    /// As one JSON line (sorted keys), for the weights file.
    public func json() -> String { JSONLines.encode(self) }
}

/// A config, data or a run folder that training cannot use.
public enum ConfigFailure {}
public typealias ConfigError = OneLineError<ConfigFailure>
