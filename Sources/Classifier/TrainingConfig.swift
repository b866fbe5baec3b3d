import Dataset
import Foundation
import Pose
import Yams

/// Everything `poseact train` needs to know, read from a YAML file (configs/penn-action.yaml
/// documents every key). Every key is optional; the defaults here are the file's values.
/// Parsing is strict: an unknown key or a value of the wrong type is an error that names
/// the file, the line and the key, before any work starts.
public struct TrainingConfig: Codable, Equatable, Sendable {
    public struct DataSection: Codable, Equatable, Sendable {
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

        public init() {}

        enum CodingKeys: String, CodingKey {
            case store, trainSplit = "train_split", testSplit = "test_split"
            case validationShare = "validation_share", validationGroup = "validation_group", folds, fold
        }

        /// Missing keys take their defaults, so a checkpoint from before a key still resumes.
        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self), d = DataSection()
            store = try c.decodeIfPresent(String.self, forKey: .store)
            trainSplit = try c.decodeIfPresent(String.self, forKey: .trainSplit) ?? d.trainSplit
            testSplit = try c.decodeIfPresent(String.self, forKey: .testSplit) ?? d.testSplit
            validationShare = try c.decodeIfPresent(Double.self, forKey: .validationShare) ?? d.validationShare
            validationGroup = try c.decodeIfPresent(ValidationGroup.self, forKey: .validationGroup) ?? d.validationGroup
            folds = try c.decodeIfPresent(Int.self, forKey: .folds) ?? d.folds
            fold = try c.decodeIfPresent(Int.self, forKey: .fold) ?? d.fold
        }
    }

    public enum ValidationGroup: String, Codable, Sendable, CaseIterable {
        /// Clips cut from the same video file stay on one side.
        case source
        case clip
    }

    public struct ModelSection: Codable, Equatable, Sendable {
        public var type = "tcn"
        public var channels = 128
        public var dilations = [1, 2, 4, 8]
        public var kernel = 5
        public var dropout = 0.1
        public var pooling: TCN.Pooling = .mean
        /// Predictions average each window with its mirror image (left and right swapped).
        public var flipAverage = true
        /// A BatchNorm over the input channels before the first block.
        public var inputNorm = false

        public init() {}

        enum CodingKeys: String, CodingKey {
            case type, channels, dilations, kernel, dropout, pooling, flipAverage = "flip_average", inputNorm = "input_norm"
        }

        /// Missing keys take their defaults, so a checkpoint from before a key still resumes.
        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self), d = ModelSection()
            type = try c.decodeIfPresent(String.self, forKey: .type) ?? d.type
            channels = try c.decodeIfPresent(Int.self, forKey: .channels) ?? d.channels
            dilations = try c.decodeIfPresent([Int].self, forKey: .dilations) ?? d.dilations
            kernel = try c.decodeIfPresent(Int.self, forKey: .kernel) ?? d.kernel
            dropout = try c.decodeIfPresent(Double.self, forKey: .dropout) ?? d.dropout
            pooling = try c.decodeIfPresent(TCN.Pooling.self, forKey: .pooling) ?? d.pooling
            flipAverage = try c.decodeIfPresent(Bool.self, forKey: .flipAverage) ?? d.flipAverage
            inputNorm = try c.decodeIfPresent(Bool.self, forKey: .inputNorm) ?? d.inputNorm
        }
    }

    public enum OptimizerName: String, Codable, Sendable, CaseIterable { case adamw, adam }

    public struct OptimizerSection: Codable, Equatable, Sendable {
        public var name: OptimizerName = .adamw
        public var learningRate = 0.001
        public var minLearningRate = 0.00001
        public var warmupEpochs = 1.0
        public var weightDecay = 0.01
        public var gradientClip = 5.0
        public var batchSize = 32

        enum CodingKeys: String, CodingKey {
            case name, learningRate = "learning_rate", minLearningRate = "min_learning_rate"
            case warmupEpochs = "warmup_epochs", weightDecay = "weight_decay", gradientClip = "gradient_clip"
            case batchSize = "batch_size"
        }
    }

    public enum ClassWeighting: String, Codable, Sendable, CaseIterable { case none, balanced }
    public enum Keep: String, Codable, Sendable, CaseIterable { case last, best }
    public enum WindowWeighting: String, Codable, Sendable, CaseIterable { case window, clip }

    public struct TrainingSection: Codable, Equatable, Sendable {
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
        public var seed: UInt64 = 1
        /// BLAS threads; 0: the machine's cores.
        public var threads = 0

        public init() {}

        enum CodingKeys: String, CodingKey {
            case epochs, patience, keep, classWeighting = "class_weighting", windowWeighting = "window_weighting", labelSmoothing = "label_smoothing"
            case emaEpochs = "ema_epochs", seed, threads
        }

        /// Missing keys take their defaults, so a checkpoint from before a key still resumes.
        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self), d = TrainingSection()
            epochs = try c.decodeIfPresent(Int.self, forKey: .epochs) ?? d.epochs
            patience = try c.decodeIfPresent(Int.self, forKey: .patience) ?? d.patience
            keep = try c.decodeIfPresent(Keep.self, forKey: .keep) ?? d.keep
            classWeighting = try c.decodeIfPresent(ClassWeighting.self, forKey: .classWeighting) ?? d.classWeighting
            windowWeighting = try c.decodeIfPresent(WindowWeighting.self, forKey: .windowWeighting) ?? d.windowWeighting
            labelSmoothing = try c.decodeIfPresent(Double.self, forKey: .labelSmoothing) ?? d.labelSmoothing
            // A record from before the key was trained without an average: 0, not today's default.
            emaEpochs = try c.decodeIfPresent(Double.self, forKey: .emaEpochs) ?? 0
            seed = try c.decodeIfPresent(UInt64.self, forKey: .seed) ?? d.seed
            threads = try c.decodeIfPresent(Int.self, forKey: .threads) ?? d.threads
        }
    }

    public var data = DataSection()
    /// The training default: velocities as well as positions, and a frame is a pose when a
    /// quarter of the joints the source provides are seen (PreprocessingSpec's own defaults
    /// are the bare minimum: positions and confidences, half the joints).
    public var preprocessing = PreprocessingSpec(minJointShare: 0.25, features: [.position, .confidence, .velocity])
    public var model = ModelSection()
    public var optimizer = OptimizerSection()
    public var training = TrainingSection()
    public var augmentation = AugmentationSpec(flip: true)

    public init() {}

    /// BLAS threads to use: `training.threads`, or the machine's cores when 0.
    public var threads: Int {
        training.threads > 0 ? training.threads : ProcessInfo.processInfo.activeProcessorCount
    }

    /// Bounds far beyond any model this trains well (the default has 128 channels, kernel 5,
    /// batch 32), low enough that a typo is refused before it asks for gigabytes.
    public static let maxChannels = 4096, maxKernel = 255, maxBatch = 8192, maxBlocks = 64, maxDilation = 1024

    /// Problems that make the config unusable (empty when it is fine), each naming its key.
    public var problems: [String] {
        var p = preprocessing.problems.map { "preprocessing: \($0)" }
        if data.trainSplit.isEmpty { p.append("data.train_split must not be empty") }
        if !(0..<1).contains(data.validationShare) { p.append("data.validation_share must be in [0, 1)") }
        if data.folds == 1 || data.folds < 0 { p.append("data.folds must be 0 (no cross-validation) or at least 2") }
        if data.folds >= 2 && !(1...data.folds).contains(data.fold) { p.append("data.fold must be in 1…\(data.folds)") }
        if model.type != "tcn" { p.append("model.type '\(model.type)' is not known (tcn)") }
        if !(1...Self.maxChannels).contains(model.channels) { p.append("model.channels must be in 1…\(Self.maxChannels) (got \(model.channels))") }
        if !(1...Self.maxBlocks).contains(model.dilations.count) { p.append("model.dilations must list 1 to \(Self.maxBlocks) blocks") }
        if model.dilations.contains(where: { !(1...Self.maxDilation).contains($0) }) {
            p.append("model.dilations must all be in 1…\(Self.maxDilation)")
        }
        if !(1...Self.maxKernel).contains(model.kernel) { p.append("model.kernel must be in 1…\(Self.maxKernel) (got \(model.kernel))") }
        if !(0..<1).contains(model.dropout) { p.append("model.dropout must be in [0, 1)") }
        if !(optimizer.learningRate > 0) { p.append("optimizer.learning_rate must be positive") }
        if optimizer.minLearningRate < 0 || optimizer.minLearningRate > optimizer.learningRate {
            p.append("optimizer.min_learning_rate must be in [0, learning_rate]")
        }
        if optimizer.warmupEpochs < 0 { p.append("optimizer.warmup_epochs must not be negative") }
        if optimizer.weightDecay < 0 { p.append("optimizer.weight_decay must not be negative") }
        if optimizer.gradientClip < 0 { p.append("optimizer.gradient_clip must not be negative (0 turns it off)") }
        if !(2...Self.maxBatch).contains(optimizer.batchSize) {
            p.append("optimizer.batch_size must be in 2…\(Self.maxBatch) (batch norm needs 2; got \(optimizer.batchSize))")
        }
        if !(1...100_000).contains(training.epochs) { p.append("training.epochs must be in 1…100000 (got \(training.epochs))") }
        if !(0..<1).contains(training.labelSmoothing) { p.append("training.label_smoothing must be in [0, 1)") }
        if training.patience < 0 { p.append("training.patience must not be negative (0 turns early stopping off)") }
        if training.threads < 0 { p.append("training.threads must not be negative (0: all cores)") }
        if !(0...1000).contains(training.emaEpochs) { p.append("training.ema_epochs must be in 0…1000 (0 turns it off)") }
        let a = augmentation
        if a.rotationDegrees < 0 || a.translation < 0 || a.jitter < 0 { p.append("augmentation: rotation_degrees, translation and jitter must not be negative") }
        if a.scale.lowerBound <= 0 { p.append("augmentation.scale must be positive") }
        if a.timeStretch.lowerBound <= 0 { p.append("augmentation.time_stretch must be positive") }
        if !(0..<1).contains(a.dropFrames) { p.append("augmentation.drop_frames must be in [0, 1)") }
        if !(0...1).contains(a.occlude) { p.append("augmentation.occlude must be in [0, 1]") }
        if !(0...90).contains(a.turnDegrees) { p.append("augmentation.turn_degrees must be in 0…90") }
        if !(0...100).contains(a.mixup) { p.append("augmentation.mixup must be in 0…100 (0 turns it off)") }
        if a.turnDegrees > 0 && !preprocessing.features.contains(.position) {
            p.append("augmentation.turn_degrees needs the position feature (it keeps the torso length)")
        }
        return p
    }

    // MARK: YAML

    /// Reads and checks a config file.
    public static func load(path: String) throws -> TrainingConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError("\(path): cannot read the config file (does it exist?)")
        }
        return try parse(String(decoding: data, as: UTF8.self), file: path)
    }

    /// Parses YAML text (`file` names it in errors). Problems of values (e.g. a negative
    /// window) are left to `problems`, so flags can still override them.
    public static func parse(_ text: String, file: String = "config") throws -> TrainingConfig {
        let root: Node?
        do { root = try Yams.compose(yaml: text) } catch {
            throw ConfigError("\(file): not valid YAML (\(String(describing: error).split(separator: "\n").first ?? ""))")
        }
        var c = TrainingConfig()
        guard let root, root.null == nil else { return c }   // an empty file: all defaults
        let r = YAMLReader(file: file)
        let sections = try r.mapping(root, path: nil, keys: ["data", "preprocessing", "model", "optimizer", "training", "augmentation"])
        if let s = sections["data"] {
            let m = try r.mapping(s, path: "data", keys: ["store", "train_split", "test_split", "validation_share", "validation_group",
                                                           "folds", "fold"])
            if let v = m["store"] { c.data.store = try r.optionalString(v, "data.store") }
            if let v = m["train_split"] { c.data.trainSplit = try r.string(v, "data.train_split") }
            if let v = m["test_split"] { c.data.testSplit = try r.optionalString(v, "data.test_split") }
            if let v = m["validation_share"] { c.data.validationShare = try r.double(v, "data.validation_share") }
            if let v = m["validation_group"] { c.data.validationGroup = try r.choice(v, "data.validation_group") }
            if let v = m["folds"] { c.data.folds = try r.int(v, "data.folds") }
            if let v = m["fold"] { c.data.fold = try r.int(v, "data.fold") }
        }
        if let s = sections["preprocessing"] {
            let m = try r.mapping(s, path: "preprocessing", keys: ["joints", "fps", "window", "stride", "min_pose_share",
                                                                  "min_confidence", "min_joint_share", "normalization", "features",
                                                                  "outside_frame", "centre", "torso"])
            var p = c.preprocessing
            if let v = m["joints"] { p.joints = try r.joints(v, "preprocessing.joints") }
            if let v = m["fps"] { p.fps = try r.double(v, "preprocessing.fps") }
            if let v = m["window"] { p.window = try r.int(v, "preprocessing.window") }
            if let v = m["stride"] { p.stride = try r.int(v, "preprocessing.stride") }
            if let v = m["min_pose_share"] { p.minPoseShare = try r.double(v, "preprocessing.min_pose_share") }
            if let v = m["min_confidence"] { p.minConfidence = Float(try r.double(v, "preprocessing.min_confidence")) }
            if let v = m["min_joint_share"] { p.minJointShare = try r.double(v, "preprocessing.min_joint_share") }
            if let v = m["normalization"] { p.normalization = try r.choice(v, "preprocessing.normalization") }
            if let v = m["outside_frame"] { p.outsideFrame = try r.choice(v, "preprocessing.outside_frame") }
            if let v = m["centre"] { p.centre = try r.choice(v, "preprocessing.centre") }
            if let v = m["torso"] { p.torso = try r.choice(v, "preprocessing.torso") }
            if let v = m["features"] { p.features = try r.list(v, "preprocessing.features") { try r.choice($0, "preprocessing.features") } }
            c.preprocessing = p
        }
        if let s = sections["model"] {
            let m = try r.mapping(s, path: "model", keys: ["type", "channels", "dilations", "kernel", "dropout", "pooling",
                                                                      "flip_average", "input_norm"])
            if let v = m["type"] { c.model.type = try r.string(v, "model.type") }
            if let v = m["channels"] { c.model.channels = try r.int(v, "model.channels") }
            if let v = m["dilations"] { c.model.dilations = try r.list(v, "model.dilations") { try r.int($0, "model.dilations") } }
            if let v = m["kernel"] { c.model.kernel = try r.int(v, "model.kernel") }
            if let v = m["dropout"] { c.model.dropout = try r.double(v, "model.dropout") }
            if let v = m["pooling"] { c.model.pooling = try r.choice(v, "model.pooling") }
            if let v = m["flip_average"] { c.model.flipAverage = try r.bool(v, "model.flip_average") }
            if let v = m["input_norm"] { c.model.inputNorm = try r.bool(v, "model.input_norm") }
        }
        if let s = sections["optimizer"] {
            let m = try r.mapping(s, path: "optimizer", keys: ["name", "learning_rate", "min_learning_rate", "warmup_epochs",
                                                              "weight_decay", "gradient_clip", "batch_size"])
            if let v = m["name"] { c.optimizer.name = try r.choice(v, "optimizer.name") }
            if let v = m["learning_rate"] { c.optimizer.learningRate = try r.double(v, "optimizer.learning_rate") }
            if let v = m["min_learning_rate"] { c.optimizer.minLearningRate = try r.double(v, "optimizer.min_learning_rate") }
            if let v = m["warmup_epochs"] { c.optimizer.warmupEpochs = try r.double(v, "optimizer.warmup_epochs") }
            if let v = m["weight_decay"] { c.optimizer.weightDecay = try r.double(v, "optimizer.weight_decay") }
            if let v = m["gradient_clip"] { c.optimizer.gradientClip = try r.double(v, "optimizer.gradient_clip") }
            if let v = m["batch_size"] { c.optimizer.batchSize = try r.int(v, "optimizer.batch_size") }
        }
        if let s = sections["training"] {
            let m = try r.mapping(s, path: "training", keys: ["epochs", "patience", "keep", "class_weighting", "window_weighting", "label_smoothing",
                                                             "ema_epochs", "seed", "threads"])
            if let v = m["epochs"] { c.training.epochs = try r.int(v, "training.epochs") }
            if let v = m["patience"] { c.training.patience = try r.int(v, "training.patience") }
            if let v = m["keep"] { c.training.keep = try r.choice(v, "training.keep") }
            if let v = m["class_weighting"] { c.training.classWeighting = try r.choice(v, "training.class_weighting") }
            if let v = m["window_weighting"] { c.training.windowWeighting = try r.choice(v, "training.window_weighting") }
            if let v = m["label_smoothing"] { c.training.labelSmoothing = try r.double(v, "training.label_smoothing") }
            if let v = m["ema_epochs"] { c.training.emaEpochs = try r.double(v, "training.ema_epochs") }
            if let v = m["seed"] {
                let s = try r.int(v, "training.seed")
                guard s >= 0 else { throw r.error(v, "training.seed must not be negative") }
                c.training.seed = UInt64(s)
            }
            if let v = m["threads"] { c.training.threads = try r.int(v, "training.threads") }
        }
        if let s = sections["augmentation"] {
            let m = try r.mapping(s, path: "augmentation", keys: ["flip", "rotation_degrees", "scale", "translation", "jitter",
                                                                 "time_stretch", "drop_frames", "occlude", "turn_degrees", "mixup"])
            var a = c.augmentation
            if let v = m["flip"] { a.flip = try r.bool(v, "augmentation.flip") }
            if let v = m["rotation_degrees"] { a.rotationDegrees = try r.double(v, "augmentation.rotation_degrees") }
            if let v = m["scale"] { a.scale = try r.range(v, "augmentation.scale") }
            if let v = m["translation"] { a.translation = try r.double(v, "augmentation.translation") }
            if let v = m["jitter"] { a.jitter = try r.double(v, "augmentation.jitter") }
            if let v = m["time_stretch"] { a.timeStretch = try r.range(v, "augmentation.time_stretch") }
            if let v = m["drop_frames"] { a.dropFrames = try r.double(v, "augmentation.drop_frames") }
            if let v = m["occlude"] { a.occlude = try r.double(v, "augmentation.occlude") }
            if let v = m["turn_degrees"] { a.turnDegrees = try r.double(v, "augmentation.turn_degrees") }
            if let v = m["mixup"] { a.mixup = try r.double(v, "augmentation.mixup") }
            c.augmentation = a
        }
        return c
    }

    /// The config as YAML, every key written out (for the run folder: what was really used).
    public func yaml() -> String {
        func list<T>(_ a: [T]) -> String { "[" + a.map { "\($0)" }.joined(separator: ", ") + "]" }
        func range(_ r: ClosedRange<Double>) -> String { "[\(r.lowerBound), \(r.upperBound)]" }
        func str(_ s: String?) -> String { s.map { "\"\($0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))\"" } ?? "null" }
        let p = preprocessing, a = augmentation
        let joints = YAMLReader.layoutNames.first { $0.value == p.joints }.map { $0.key } ?? list(p.joints.map { str($0) })
        return """
            # The effective config of this run (file, then command-line flags).
            data:
              store: \(str(data.store))
              train_split: \(str(data.trainSplit))
              test_split: \(str(data.testSplit))
              validation_share: \(data.validationShare)
              validation_group: \(data.validationGroup.rawValue)
              folds: \(data.folds)
              fold: \(data.fold)
            preprocessing:
              joints: \(joints)
              fps: \(p.fps)
              window: \(p.window)
              stride: \(p.stride)
              min_pose_share: \(p.minPoseShare)
              min_confidence: \(p.minConfidence)
              min_joint_share: \(p.minJointShare)
              normalization: \(p.normalization.rawValue)
              outside_frame: \(p.outsideFrame.rawValue)
              centre: \(p.centre.rawValue)
              torso: \(p.torso.rawValue)
              features: \(list(p.features.map(\.rawValue)))
            model:
              type: \(model.type)
              channels: \(model.channels)
              dilations: \(list(model.dilations))
              kernel: \(model.kernel)
              dropout: \(model.dropout)
              pooling: \(model.pooling.rawValue)
              flip_average: \(model.flipAverage)
              input_norm: \(model.inputNorm)
            optimizer:
              name: \(optimizer.name.rawValue)
              learning_rate: \(optimizer.learningRate)
              min_learning_rate: \(optimizer.minLearningRate)
              warmup_epochs: \(optimizer.warmupEpochs)
              weight_decay: \(optimizer.weightDecay)
              gradient_clip: \(optimizer.gradientClip)
              batch_size: \(optimizer.batchSize)
            training:
              epochs: \(training.epochs)
              patience: \(training.patience)
              keep: \(training.keep.rawValue)
              class_weighting: \(training.classWeighting.rawValue)
              window_weighting: \(training.windowWeighting.rawValue)
              label_smoothing: \(training.labelSmoothing)
              ema_epochs: \(training.emaEpochs)
              seed: \(training.seed)
              threads: \(training.threads)
            augmentation:
              flip: \(a.flip)
              rotation_degrees: \(a.rotationDegrees)
              scale: \(range(a.scale))
              translation: \(a.translation)
              jitter: \(a.jitter)
              time_stretch: \(range(a.timeStretch))
              drop_frames: \(a.dropFrames)
              occlude: \(a.occlude)
              turn_degrees: \(a.turnDegrees)
              mixup: \(a.mixup)

            """
    }

    /// As one JSON line (sorted keys), for the weights file.
    public func json() -> String {
        let e = JSONEncoder(); e.outputFormatting = [.sortedKeys]
        return String(decoding: (try? e.encode(self)) ?? Data(), as: UTF8.self)
    }
}

public struct ConfigError: Error, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Typed access to YAML nodes with errors that say file:line, key, what was expected and
/// what was found.
struct YAMLReader {
    let file: String

    static let layoutNames: [String: [String]] = [
        "vision": Skeleton.visionLayout, "blazepose": Skeleton.blazePoseNames, "all": Skeleton.allNames,
    ]

    func error(_ node: Node, _ message: String) -> ConfigError {
        ConfigError("\(file)\(node.mark.map { ":\($0.line)" } ?? ""): \(message)")
    }

    func shown(_ node: Node) -> String {
        switch node {
        case .scalar(let s): return "'\(s.string)'"
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        }
    }

    /// A mapping whose keys must all be in `keys`; an unknown key names the known ones.
    func mapping(_ node: Node, path: String?, keys: [String]) throws -> [String: Node] {
        guard let m = node.mapping else {
            throw error(node, "\(path ?? "the config") must be a mapping of keys (\(keys.joined(separator: ", "))), not \(shown(node))")
        }
        var out: [String: Node] = [:]
        for (k, v) in m {
            guard let key = k.string else { throw error(k, "a key must be a name, not \(shown(k))") }
            let full = path.map { "\($0).\(key)" } ?? key
            guard keys.contains(key) else {
                let near = keys.min { editDistance($0, key) < editDistance($1, key) }
                let hint = near.flatMap { editDistance($0, key) <= 3 ? " (did you mean '\($0)'?)" : nil } ?? ""
                throw error(k, "unknown key '\(full)'\(hint); known keys here: \(keys.joined(separator: ", "))")
            }
            guard out[key] == nil else { throw error(k, "key '\(full)' appears twice") }
            out[key] = v
        }
        return out
    }

    func scalar(_ node: Node, _ key: String, expected: String) throws -> Node.Scalar {
        guard case .scalar(let s) = node else { throw error(node, "\(key) must be \(expected), not \(shown(node))") }
        return s
    }

    func int(_ node: Node, _ key: String) throws -> Int {
        let s = try scalar(node, key, expected: "a whole number")
        guard s.style == .plain, let v = node.int else {
            throw error(node, "\(key) must be a whole number, not '\(s.string)'")
        }
        return v
    }

    func double(_ node: Node, _ key: String) throws -> Double {
        let s = try scalar(node, key, expected: "a number")
        if let v = node.int { return Double(v) }
        guard let v = node.float, v.isFinite, s.style == .plain else { throw error(node, "\(key) must be a number, not '\(s.string)'") }
        return v
    }

    func bool(_ node: Node, _ key: String) throws -> Bool {
        let s = try scalar(node, key, expected: "true or false")
        guard s.style == .plain, let v = node.bool else { throw error(node, "\(key) must be true or false, not '\(s.string)'") }
        return v
    }

    func string(_ node: Node, _ key: String) throws -> String {
        let s = try scalar(node, key, expected: "a name")
        guard node.null == nil || s.style != .plain else { throw error(node, "\(key) must be a name, not null") }
        return s.string
    }

    func optionalString(_ node: Node, _ key: String) throws -> String? {
        let s = try scalar(node, key, expected: "a name or null")
        return s.style == .plain && node.null != nil ? nil : s.string
    }

    func choice<T: RawRepresentable & CaseIterable>(_ node: Node, _ key: String) throws -> T where T.RawValue == String {
        let s = try scalar(node, key, expected: "one of " + T.allCases.map(\.rawValue).joined(separator: ", "))
        guard let v = T(rawValue: s.string) else {
            throw error(node, "\(key) must be one of \(T.allCases.map(\.rawValue).joined(separator: ", ")), not '\(s.string)'")
        }
        return v
    }

    func list<T>(_ node: Node, _ key: String, _ element: (Node) throws -> T) throws -> [T] {
        guard case .sequence(let seq) = node else { throw error(node, "\(key) must be a list, like [a, b], not \(shown(node))") }
        return try seq.map(element)
    }

    /// [low, high], or one number for [x, x].
    func range(_ node: Node, _ key: String) throws -> ClosedRange<Double> {
        if case .scalar = node { let v = try double(node, key); return v...v }
        let v = try list(node, key) { try double($0, key) }
        guard v.count == 2, v[0] <= v[1] else { throw error(node, "\(key) must be [low, high] with low ≤ high") }
        return v[0]...v[1]
    }

    /// vision, blazepose, all, or a list of joint names (each one poseact knows).
    func joints(_ node: Node, _ key: String) throws -> [String] {
        if case .scalar(let s) = node {
            guard let names = Self.layoutNames[s.string] else {
                throw error(node, "\(key) must be vision, blazepose, all or a list of joint names, not '\(s.string)'")
            }
            return names
        }
        let names = try list(node, key) { try string($0, key) }
        for n in names where Skeleton.index(of: n, in: Skeleton.allNames) == nil {
            throw error(node, "\(key): unknown joint '\(n)' (known: \(Skeleton.allNames.joined(separator: ", ")))")
        }
        guard Set(names).count == names.count else { throw error(node, "\(key) lists a joint twice") }
        guard !names.isEmpty else { throw error(node, "\(key) must list at least one joint") }
        return names
    }
}

/// Levenshtein distance, for "did you mean" hints.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    var row = Array(0...b.count)
    for i in 1...max(a.count, 1) where !a.isEmpty {
        var prev = row[0]
        row[0] = i
        for j in 1...max(b.count, 1) where !b.isEmpty {
            let cur = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1))
            prev = cur
        }
    }
    return a.isEmpty ? b.count : row[b.count]
}
