import Basics
import Foundation
import Keypoints
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
    /// relative to the file's folder; MMAction2's `_base_`): the base is read first (and its
    /// own base before it), then each key of the file replaces the base's, a section's keys
    /// one by one. Each file is checked on its own, so an error names the file it is in.
    public static func load(path: String) throws -> TrainingConfig {
        let (root, file) = try inherited(path: path, chain: [])
        return try decode(root, file)
    }

    /// Parses YAML text (`file` names it in errors). Problems of values (e.g. a negative
    /// window) are left to `problems`, so flags can still override them. A `base:` needs a
    /// file's folder: `load(path:)`.
    public static func parse(_ text: String, file: String = "config") throws -> TrainingConfig {
        let (root, checker) = try node(text, file: file)
        if let base = root["base"] { throw checker.error(base, "base: only a config file read from its path can have a base") }
        return try decode(root, checker)
    }

    /// The file's text as a checked node (an empty file: an empty mapping), decoded once to
    /// find a wrong value while its file is known.
    static func node(_ text: String, file name: String) throws -> (Node, ConfigFile) {
        let composed: Node?
        do { composed = try Yams.compose(yaml: text) } catch {
            throw ConfigError("\(name): not valid YAML (\(String(describing: error).split(separator: "\n").first ?? ""))")
        }
        let file = ConfigFile(name: name)
        guard let composed, composed.null == nil else { return (Node([(Node, Node)]()), file) }
        let root = try file.checked(composed, path: [])
        _ = try decode(root, file)
        return (root, file)
    }

    static func decode(_ root: Node, _ file: ConfigFile) throws -> TrainingConfig {
        do {
            return try YAMLDecoder().decode(TrainingConfig.self, from: root, userInfo: [.configFile: true])
        } catch let error as DecodingError {
            throw file.error(error, in: root)
        }
    }

    /// The file at `path` merged over its bases; `chain`: the files that inherit from it.
    static func inherited(path: String, chain: [String]) throws -> (Node, ConfigFile) {
        // A config is a few kB; a FIFO or a device under its name is never opened for reading.
        let data: Data
        do { data = try InputFile.read(path, limit: 1 << 20, what: "config file", allowStream: chain.isEmpty) } catch let error as InputFileError {
            throw ConfigError(error.message)
        }
        let (root, file) = try node(String(decoding: data, as: UTF8.self), file: path)
        guard let mapping = root.mapping, let baseNode = root["base"] else { return (root, file) }
        let own = Node.Mapping(mapping.filter { $0.key.string != "base" }.map { ($0.key, $0.value) }, mapping.tag, mapping.style, mapping.mark)
        let base = baseNode.string ?? ""
        let basePath = base.hasPrefix("/") ? base
            : URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(base).path
        let names = (chain + [path, basePath]).map { URL(fileURLWithPath: $0).standardizedFileURL.resolvingSymlinksInPath().path }
        if names.dropLast().contains(names.last!) {
            throw file.error(baseNode, "base: '\(base)' makes a cycle (\((chain + [path, basePath]).joined(separator: " → "))); remove one base")
        }
        // A regular file only: a device or a FIFO named as a base would never end.
        let real = URL(fileURLWithPath: basePath).resolvingSymlinksInPath().path
        let type = (try? FileManager.default.attributesOfItem(atPath: real))?[.type] as? FileAttributeType
        guard type == .typeRegular, FileManager.default.isReadableFile(atPath: basePath) else {
            throw file.error(baseNode, "base: cannot read '\(basePath)' (the path is relative to this file's folder)")
        }
        let (below, _) = try inherited(path: basePath, chain: chain + [path])
        return (merged(below, over: .mapping(own)), file)
    }

    /// `top`'s keys over `bottom`'s; two mappings under one key are merged the same way.
    static func merged(_ bottom: Node, over top: Node) -> Node {
        guard let b = bottom.mapping, let t = top.mapping else { return top }
        var pairs: [(Node, Node)] = b.map { ($0.key, $0.value) }
        for (key, value) in t {
            if let i = pairs.firstIndex(where: { $0.0.string == key.string }) { pairs[i].1 = merged(pairs[i].1, over: value) }
            else { pairs.append((key, value)) }
        }
        return .mapping(Node.Mapping(pairs, t.tag, t.style, t.mark))
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

/// A config file's YAML: the checks its keys and values need beyond their types, and its
/// errors, each one line that says file:line, key, what was expected and what was found.
struct ConfigFile {
    let name: String

    static let layoutNames: [String: [String]] = [
        "vision": Skeleton.visionLayout, "blazepose": Skeleton.blazePoseNames, "all": Skeleton.allNames,
    ]

    /// The keys a config file may give under `path` (the sections, or a section's keys);
    /// nil where the path holds a value.
    static func keys(under path: [String]) -> [String]? {
        guard let section = path.first else { return TrainingConfig.configFileKeys }
        return path.count == 1 ? TrainingConfig.keys.first { $0.name == section }?.sectionKeys : nil
    }

    func error(_ node: Node, _ message: String) -> ConfigError {
        ConfigError("\(name)\(node.mark.map { ":\($0.line)" } ?? ""): \(message)")
    }

    func shown(_ node: Node) -> String {
        switch node {
        case .scalar(let s): return "'\(s.string)'"
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        }
    }

    /// `node` with every key known and every value finite, and `preprocessing.joints`
    /// given by a layout name as that layout's list.
    func checked(_ node: Node, path: [String]) throws -> Node {
        let key = path.joined(separator: ".")
        guard let known = Self.keys(under: path) else {
            // YAML's .inf and .nan are numbers, but no setting is meant to be one.
            if node.tag == Tag(.float), let x = node.float, !x.isFinite {
                throw error(node, "\(key) must be a finite number, not \(shown(node))")
            }
            if path == ["base"], node.scalar == nil || node.null != nil {
                throw error(node, "base must be the path of a config file, not \(shown(node))")
            }
            return path == ["preprocessing", "joints"] ? try joints(node, key) : node
        }
        guard let mapping = node.mapping else {
            throw error(node, "\(path.isEmpty ? "the config" : key) must be a mapping of keys (\(known.joined(separator: ", "))), not \(shown(node))")
        }
        let pairs = try mapping.map { k, v in
            guard let name = k.string else { throw error(k, "a key must be a name, not \(shown(k))") }
            // base: the file this one inherits from (`TrainingConfig.load`).
            guard known.contains(name) || (path.isEmpty && name == "base") else {
                let near = known.min { editDistance($0, name) < editDistance($1, name) }
                let hint = near.flatMap { editDistance($0, name) <= 3 ? " (did you mean '\($0)'?)" : nil } ?? ""
                throw error(k, "unknown key '\((path + [name]).joined(separator: "."))'\(hint); known keys here: \(known.joined(separator: ", "))")
            }
            return (k, try checked(v, path: path + [name]))
        }
        return .mapping(Node.Mapping(pairs, mapping.tag, mapping.style, mapping.mark))
    }

    /// vision, blazepose, all, or a list of joint names (each one poseact knows).
    func joints(_ node: Node, _ key: String) throws -> Node {
        if case .scalar(let s) = node {
            guard let names = Self.layoutNames[s.string] else {
                throw error(node, "\(key) must be vision, blazepose, all or a list of joint names, not '\(s.string)'")
            }
            return Node(names.map { Node($0) })
        }
        guard let names = node.sequence?.compactMap(\.string) else { return node }
        for n in names where Skeleton.index(of: n, in: Skeleton.allNames) == nil {
            throw error(node, "\(key): unknown joint '\(n)' (known: \(Skeleton.allNames.joined(separator: ", ")))")
        }
        guard Set(names).count == names.count else { throw error(node, "\(key) lists a joint twice") }
        guard !names.isEmpty else { throw error(node, "\(key) must list at least one joint") }
        return node
    }

    /// A decoding error as one line, at the node its coding path leads to.
    func error(_ decoding: DecodingError, in root: Node) -> ConfigError {
        let context: DecodingError.Context, expected: String
        switch decoding {
        case .typeMismatch(let type, let c), .valueNotFound(let type, let c): (context, expected) = (c, Self.expectation(of: type))
        case .dataCorrupted(let c), .keyNotFound(_, let c): (context, expected) = (c, "")
        @unknown default: return ConfigError("\(name): \(decoding)")
        }
        let node = context.codingPath.reduce(root) { node, key in (key.intValue.map { node[$0] } ?? node[key.stringValue]) ?? node }
        let key = context.codingPath.filter { $0.intValue == nil }.map(\.stringValue).joined(separator: ".")
        guard !expected.isEmpty else { return error(node, "\(key): \(context.debugDescription)") }
        // A range given as a list is refused for its ends, not for being a list.
        let found = node.sequence != nil && expected.hasPrefix("[") ? "" : ", not \(shown(node))"
        return error(node, "\(key) must be \(expected)\(found)")
    }

    /// What a value of `type` is, as a config file writes it.
    static func expectation(of type: Any.Type) -> String {
        switch type {
        case is Int.Type: return "a whole number"
        case is UInt64.Type: return "a whole number ≥ 0"
        case is Double.Type, is Float.Type: return "a number"
        case is Bool.Type: return "true or false"
        case is String.Type: return "a name"
        case is ClosedRange<Double>.Type: return "[low, high] with low ≤ high"
        case is Node.Sequence.Type: return "a list, like [a, b]"
        case is Node.Scalar.Type: return "one value"
        case let choice as any ConfigChoice.Type: return "one of " + choice.names.joined(separator: ", ")
        default: return "\(type)"
        }
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
