import Basics
import Config
import Foundation
import KeypointWindows

/// The kinds of net poseact trains and runs, by the names config files and weights files use.
public enum ModelType: String, ConfigChoice, Sendable {
    case tcn, stgcn
    case stgcnPlusPlus = "stgcn++"

    /// ST-GCN or ST-GCN++: a net over the skeleton's graph.
    public var isGraph: Bool { self != .tcn }
    public static let graphs: [ModelType] = [.stgcn, .stgcnPlusPlus]
}

/// The one description of a net: the `model` section of a training config, and (less the
/// streams, with the input's shape) the `architecture` of a weights file. Each key is
/// declared once: its default is the property's initial value, and its line in `table`
/// gives its name, its bound and the nets that read it. Config parsing, config problems,
/// the weights file's architecture and its checks all follow from that line.
public struct ModelSpec: ConfigSection, Equatable, Sendable {
    public var type: ModelType = .tcn
    /// TCN: channels of every block.
    public var channels = 128
    /// TCN: one block per entry, with that dilation.
    public var dilations = [1, 2, 4, 8]
    public var kernel = 5
    /// TCN: in every block; ST-GCN: on the pooled features.
    public var dropout = 0.1
    public var pooling: TCN.Pooling = .mean
    /// Predictions average each window with its mirror image (left and right swapped).
    public var flipAverage = true
    /// A BatchNorm over the input channels before the first block: each feature enters on
    /// the same scale (positions in torso lengths, velocities per second, confidences 0–1).
    public var inputNorm = false
    /// ST-GCN / ST-GCN++: channels of each graph block.
    public var blocks = [64, 64, 128, 128]
    /// One net per stream, each on its stream's features; empty: one net on
    /// `preprocessing.features`.
    public var streams: [Stream] = []
    /// Each stream's weight in the average of probabilities; empty: equal weights.
    public var streamWeights: [Double] = []
    /// The weights a run starts from: `auto` (a shipped backbone that fits, when the data is
    /// small: `Backbone.auto`), `none` (random), or a weights file whose net is this one less
    /// its head (`Backbone`); the head always starts anew for the run's labels.
    public var pretrained = "auto"

    public init() {}

    /// Bounds far beyond any model this trains well, low enough that a typo is refused
    /// before it asks for gigabytes (and `Architecture.sizeProblem` catches what the keys
    /// multiply into). `before`: the value of a weights file written before the key.
    static let table: [ModelKey] = [
        .key("type", \.type),
        .key("channels", \.channels, .within(1...4096), nets: [.tcn]),
        .key("dilations", \.dilations, .list(count: 1...64, each: 1...1024), nets: [.tcn]),
        .key("kernel", \.kernel, .within(1...255), nets: [.tcn]),
        .key("dropout", \.dropout, .within(0..<1)),
        .key("pooling", \.pooling, nets: [.tcn]),
        .key("flip_average", \.flipAverage, before: false),
        .key("input_norm", \.inputNorm, before: false),
        .key("blocks", \.blocks, .list(count: 1...64, each: 1...4096), nets: ModelType.graphs, before: []),
        .key("streams", \.streams, inArchitecture: false),
        .key("stream_weights", \.streamWeights, .positive, inArchitecture: false),
        .key("pretrained", \.pretrained, Bound("be auto, none or the path of a weights file") { !$0.isEmpty }, inArchitecture: false),
    ]

    public static let keys = table.map(\.key)

    /// Whether the model is a graph net (ST-GCN or ST-GCN++).
    public var isGraph: Bool { type.isGraph }

    /// The net in a few words, as `train` and its refusals say it: "tcn, 128 channels,
    /// dilations [1, 2, 4, 8], kernel 5" or "stgcn, blocks [64, 64, 128, 128]".
    public var netSummary: String {
        isGraph ? "\(type.rawValue), blocks \(blocks)" : "\(type.rawValue), \(channels) channels, dilations \(dilations), kernel \(kernel)"
    }

    /// What is wrong with the spec, each naming its key after `prefix` ("model.",
    /// "architecture."); `allKeys` false: only the keys its type's net reads.
    public func problems(prefix: String, allKeys: Bool = true) -> [String] {
        var p = Self.table.filter { allKeys || $0.nets.contains(type) }.compactMap { $0.problem(self, prefix) }
        if type == .stgcnPlusPlus && blocks.contains(where: { $0 < MultiScaleTemporalConv.branches }) {
            p.append("\(prefix)blocks: stgcn++ needs at least \(MultiScaleTemporalConv.branches) channels a block "
                     + "(its temporal convolution has \(MultiScaleTemporalConv.branches) branches)")
        }
        if Set(streams).count != streams.count { p.append("\(prefix)streams lists a stream twice") }
        if !streamWeights.isEmpty && streamWeights.count != streams.count {
            p.append("\(prefix)stream_weights must give one weight per stream (\(streams.count)) or none")
        }
        return p
    }
}

/// One key of `ModelSpec`: how it is read and written, its bound, and which nets read it.
struct ModelKey {
    let key: ConfigKey<ModelSpec>
    /// The nets that read the key (a weights file's architecture is checked only for these).
    let nets: [ModelType]
    /// Whether a weights file's architecture holds it (the streams are the ensemble's).
    let inArchitecture: Bool
    let problem: (ModelSpec, _ prefix: String) -> String?

    static func key<Value: Codable>(_ name: String, _ property: WritableKeyPath<ModelSpec, Value>, _ bound: Bound<Value>? = nil,
                                    nets: [ModelType] = ModelType.allCases, before: Value? = nil, inArchitecture: Bool = true) -> ModelKey {
        let key = ConfigKey<ModelSpec>.value(name, property, bound, before: before)
        return ModelKey(key: key, nets: nets, inArchitecture: inArchitecture, problem: { spec, prefix in key.problems(spec, prefix: prefix).first })
    }
}

/// The architecture of a net, as stored in its weights file: its `ModelSpec` (less the
/// streams) and the shape of its input and output. Reads as its spec: `a.channels`.
@dynamicMemberLookup
public struct Architecture: ConfigSection, Equatable, Sendable {
    public var model = ModelSpec()
    public var inputChannels = 0
    public var frames = 0
    public var classes = 0

    public init() {}

    public static let keys: [ConfigKey<Architecture>] = [
        .value("input_channels", \.inputChannels), .value("frames", \.frames), .value("classes", \.classes),
    ] + ModelSpec.table.filter(\.inArchitecture).map { $0.key.lifted(\.model) }

    /// The keys every weights file has held; the others have their `before` value when missing.
    static let required = ["type", "input_channels", "frames", "classes", "channels", "dilations", "kernel", "dropout"]

    public init(from decoder: Decoder) throws {
        let mapping = try decoder.container(keyedBy: KeyName.self)
        for name in Self.required where mapping.key(name) == nil {
            throw DecodingError.keyNotFound(KeyName(name), .init(codingPath: mapping.codingPath, debugDescription: "no \(name)"))
        }
        self.init()
        try update(from: decoder)
    }

    public subscript<T>(dynamicMember key: WritableKeyPath<ModelSpec, T>) -> T {
        get { model[keyPath: key] }
        set { model[keyPath: key] = newValue }
    }

    public subscript<T>(dynamicMember key: KeyPath<ModelSpec, T>) -> T { model[keyPath: key] }

    public init(config: TrainingConfig, classes: Int) {
        model = config.model
        // The keys outside the architecture at their defaults, as a weights file's read back.
        model.streams = []; model.streamWeights = []; model.pretrained = ModelSpec().pretrained
        // A TCN's file has always held no blocks.
        if !model.isGraph { model.blocks = [] }
        inputChannels = config.preprocessing.channels
        frames = config.preprocessing.window
        self.classes = classes
    }

    /// The net of this architecture on the joint layout `joints`, for batches of up to
    /// `maxBatch` windows.
    func net(joints: [String], maxBatch: Int, seed: UInt64) -> any ClassifierNet {
        if model.isGraph {
            return STGCN(.init(graph: SkeletonGraph(layout: joints), features: inputChannels / joints.count, frames: frames,
                               classes: classes, blocks: model.blocks, plusPlus: model.type == .stgcnPlusPlus,
                               dropout: Float(model.dropout), inputNorm: model.inputNorm, maxBatch: maxBatch, seed: seed))
        }
        return TCN(.init(inputChannels: inputChannels, frames: frames, classes: classes, channels: model.channels,
                         dilations: model.dilations, kernel: model.kernel, dropout: Float(model.dropout), pooling: model.pooling,
                         inputNorm: model.inputNorm, maxBatch: maxBatch, seed: seed))
    }

    /// Far above any layout's joints times their channels (33 joints × 17 floats).
    static let maxInputChannels = 100_000
    /// Far above any dataset's labels.
    static let maxClasses = 100_000

    /// What is wrong with it as read from a file, for `joints` joints (empty when nothing).
    func problems(joints: Int) -> [String] {
        var wrong: [String] = []
        if joints == 0 || inputChannels % joints != 0 { wrong.append("architecture.input_channels = \(inputChannels) for \(joints) joints") }
        // Within these, the layers' geometry (`Conv1D.Buffers`) and the head cannot overflow an Int;
        // what a batch of it takes is then `sizeProblem`'s, in Doubles.
        if !(1...PreprocessingSpec.maxWindow).contains(frames) {
            wrong.append("architecture.frames must be in 1…\(PreprocessingSpec.maxWindow) (got \(frames))")
        }
        if !(1...Self.maxInputChannels).contains(inputChannels) {
            wrong.append("architecture.input_channels must be in 1…\(Self.maxInputChannels) (got \(inputChannels))")
        }
        if !(1...Self.maxClasses).contains(classes) {
            wrong.append("architecture.classes must be in 1…\(Self.maxClasses) (got \(classes))")
        }
        wrong += model.problems(prefix: "architecture.", allKeys: false)
        if wrong.isEmpty, let size = sizeProblem(joints: joints, batch: ActionClassifier.inferenceBatch, lower: "nothing: the file asks for more than poseact builds") {
            wrong.append(size)
        }
        return wrong
    }
}
