import Basics
import Foundation
import Keypoints
import Tensor

/// The architecture of a net, as stored in its weights file.
public struct Architecture: Codable, Equatable, Sendable {
    /// tcn, stgcn or stgcn++ (`TrainingConfig.ModelSection.types`).
    public var type = "tcn"
    public var inputChannels: Int
    public var frames: Int
    public var classes: Int
    /// TCN: channels, dilations, kernel, pooling.
    public var channels: Int
    public var dilations: [Int]
    public var kernel: Int
    public var dropout: Double
    public var pooling: TCN.Pooling
    /// ST-GCN: channels of each graph block (empty in a TCN's file).
    public var blocks: [Int]
    /// Whether a prediction averages the window's probabilities with its mirror image's
    /// (false in files written before this key existed).
    public var flipAverage: Bool
    /// A BatchNorm over the input channels first (false in files written before this key).
    public var inputNorm: Bool

    enum CodingKeys: String, CodingKey {
        case type, inputChannels = "input_channels", frames, classes, channels, dilations, kernel, dropout, pooling, blocks
        case flipAverage = "flip_average", inputNorm = "input_norm"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = try c.decode(String.self, forKey: .type)
        inputChannels = try c.decode(Int.self, forKey: .inputChannels)
        frames = try c.decode(Int.self, forKey: .frames)
        classes = try c.decode(Int.self, forKey: .classes)
        channels = try c.decode(Int.self, forKey: .channels)
        dilations = try c.decode([Int].self, forKey: .dilations)
        kernel = try c.decode(Int.self, forKey: .kernel)
        dropout = try c.decode(Double.self, forKey: .dropout)
        pooling = try c.decodeIfPresent(TCN.Pooling.self, forKey: .pooling) ?? .mean
        blocks = try c.decodeIfPresent([Int].self, forKey: .blocks) ?? []
        flipAverage = try c.decodeIfPresent(Bool.self, forKey: .flipAverage) ?? false
        inputNorm = try c.decodeIfPresent(Bool.self, forKey: .inputNorm) ?? false
    }

    public init(config: TrainingConfig, classes: Int) {
        type = config.model.type
        inputChannels = config.preprocessing.channels
        frames = config.preprocessing.window
        self.classes = classes
        channels = config.model.channels
        dilations = config.model.dilations
        kernel = config.model.kernel
        dropout = config.model.dropout
        pooling = config.model.pooling
        blocks = config.model.isGraph ? config.model.blocks : []
        flipAverage = config.model.flipAverage
        inputNorm = config.model.inputNorm
    }

    /// The net of this architecture on the joint layout `joints`, for batches of up to
    /// `maxBatch` windows.
    func net(joints: [String], maxBatch: Int, seed: UInt64) -> any ClassifierNet {
        switch type {
        case "stgcn", "stgcn++":
            return STGCN(.init(graph: SkeletonGraph(layout: joints), features: inputChannels / joints.count, frames: frames,
                               classes: classes, blocks: blocks, plusPlus: type == "stgcn++", dropout: Float(dropout),
                               inputNorm: inputNorm, maxBatch: maxBatch, seed: seed))
        default:
            return TCN(.init(inputChannels: inputChannels, frames: frames, classes: classes, channels: channels,
                             dilations: dilations, kernel: kernel, dropout: Float(dropout), pooling: pooling,
                             inputNorm: inputNorm, maxBatch: maxBatch, seed: seed))
        }
    }

    /// What is wrong with it as read from a file, for `joints` joints (empty when nothing).
    func problems(joints: Int) -> [String] {
        var wrong: [String] = []
        guard TrainingConfig.ModelSection.types.contains(type) else { return ["model type '\(type)' is not known to this poseact"] }
        if joints == 0 || inputChannels % joints != 0 { wrong.append("architecture.input_channels = \(inputChannels) for \(joints) joints") }
        if type == "tcn" {
            if !(1...TrainingConfig.maxChannels).contains(channels) { wrong.append("architecture.channels = \(channels)") }
            if !(1...TrainingConfig.maxKernel).contains(kernel) { wrong.append("architecture.kernel = \(kernel)") }
            if !(1...TrainingConfig.maxBlocks).contains(dilations.count)
                || !dilations.allSatisfy({ (1...TrainingConfig.maxDilation).contains($0) }) {
                wrong.append("architecture.dilations = \(dilations)")
            }
        } else if !(1...TrainingConfig.maxBlocks).contains(blocks.count)
                    || !blocks.allSatisfy({ (type == "stgcn++" ? 5 : 1)...TrainingConfig.maxChannels ~= $0 }) {
            wrong.append("architecture.blocks = \(blocks)")
        }
        if wrong.isEmpty, let size = sizeProblem(joints: joints, batch: ActionClassifier.inferenceBatch, lower: "nothing: the file asks for more than poseact builds") {
            wrong.append(size)
        }
        return wrong
    }
}

/// One net of a classifier: its architecture, the features it reads (a stream's, or all of
/// the classifier's), and its weight in the average of probabilities.
public struct Member {
    public let net: any ClassifierNet
    public let architecture: Architecture
    public let features: [Feature]
    public let weight: Double
    /// The stream it is (joint, bone, …), nil for a net on the preprocessing's own features.
    public let stream: Stream?

    public init(net: any ClassifierNet, architecture: Architecture, features: [Feature], weight: Double = 1, stream: Stream? = nil) {
        self.net = net; self.architecture = architecture; self.features = features; self.weight = weight; self.stream = stream
    }

    /// The member's description in a multi-stream weights file.
    public struct Record: Codable, Sendable {
        public var stream: Stream?
        public var features: [Feature]
        public var weight: Double
        public var architecture: Architecture
    }

    public var record: Record { Record(stream: stream, features: features, weight: weight, architecture: architecture) }
}

/// A trained action classifier and everything it needs to run: the labels, the
/// preprocessing that makes its input, the nets and their weights. This is what a weights
/// file holds, and what `evaluate` and `live` run.
///
/// Weights file (HDF5, `*.poseact.h5`), readable with h5py or h5dump:
/// - root attributes: `format` = "poseact-model", `format_version` = 1, `labels` (class
///   names, in output order), `preprocessing` (PreprocessingSpec JSON: joints, fps,
///   window, stride, normalisation, features, thresholds), `architecture` (JSON),
///   `training` (JSON: the config, the data and the metrics of the run), `created`.
/// - `weights/NAME`: one float32 dataset per parameter tensor and batch-norm running
///   statistic, e.g. `weights/block0.conv.weight` [out, kernel, in].
/// - An ensemble (`poseact export RUN1 RUN2 …`: nets of one architecture trained with
///   different seeds, whose probabilities are averaged) has the root attribute `members` = N,
///   its first member in `weights/` and the others in `weights.1/` … `weights.N-1/`, and
///   `format_version` = 2 so that a poseact that reads only one net refuses it.
/// - A multi-stream ensemble (nets on different features or of different architectures,
///   weighted) is `format_version` = 3 with, besides, the root attribute `streams`: a JSON
///   list of {stream, features, weight, architecture}, one per member. `preprocessing`'s
///   features are then all the members' together; each member reads its own from them.
/// A checkpoint is a weights file plus `optimizer/m.NAME`, `optimizer/v.NAME` and the
/// attributes of the run's state.
public final class ActionClassifier {
    public static let format = "poseact-model"
    /// The newest format this poseact reads: 1, one net; 2, an ensemble; 3, a multi-stream one.
    public static let version = 3

    public let labels: [String]
    public let spec: PreprocessingSpec
    /// The first member's architecture (every member's, unless streams differ).
    public var architecture: Architecture { members[0].architecture }
    /// The record of the run that made it.
    public var training: TrainingRecord
    /// The nets whose probabilities are averaged: one, or an ensemble's members.
    public let members: [Member]
    /// Per member, the channel of the window each of its input channels is (nil: all, in order).
    let channelMaps: [[Int]?]
    /// The first (usually only) net; the one training works on.
    public var model: any ClassifierNet { members[0].net }

    /// Windows per forward pass at inference.
    public static let inferenceBatch = 64

    public init(labels: [String], spec: PreprocessingSpec, architecture: Architecture, training: TrainingRecord = TrainingRecord(),
                model: (any ClassifierNet)? = nil) {
        self.labels = labels; self.spec = spec; self.training = training
        let net = model ?? architecture.net(joints: spec.joints, maxBatch: Self.inferenceBatch, seed: 0)
        members = [Member(net: net, architecture: architecture, features: spec.features)]
        channelMaps = [nil]
    }

    init(labels: [String], spec: PreprocessingSpec, members: [Member], training: TrainingRecord) throws {
        self.labels = labels; self.spec = spec; self.members = members; self.training = training
        channelMaps = try members.map { m in
            guard m.features != spec.features else { return nil }
            return try Self.channelMap(from: spec.features, to: m.features, joints: spec.joints.count, frames: spec.window)
        }
    }

    /// An ensemble of classifiers with the same labels and preprocessing but for the
    /// features: nets trained with different seeds, or streams (nets on different features,
    /// of the same or another architecture). A window's probabilities are the mean of
    /// theirs, weighted by `weights` (one per classifier; 1 each by default). Its record
    /// holds theirs under "members". On a small dataset which clips a net gets wrong depends
    /// much on its seed; the ensemble's answer does not hang on one seed (push-ups, 5-fold
    /// cross-validation: five nets 80.2–84.7 % of clips, mean 82.3 %; their ensemble 81.9 %;
    /// windows 75.7–79.0 %, mean 77.9 %, ensemble 78.6 %: steadier, not better than the
    /// average net).
    public convenience init(ensemble: [ActionClassifier], weights: [Double]? = nil, streams: [Stream]? = nil) throws {
        guard let first = ensemble.first else { throw ModelFileError("an ensemble needs at least one model") }
        var spec = first.spec
        for (i, c) in ensemble.enumerated().dropFirst() {
            guard c.labels == first.labels else {
                throw ModelFileError("member \(i + 1) has other labels (\(c.labels.joined(separator: ", "))) than the first (\(first.labels.joined(separator: ", ")))")
            }
            var a = c.spec, b = spec
            a.features = []; b.features = []
            guard a == b else { throw ModelFileError("member \(i + 1) has other preprocessing than the first (\(c.spec.json()))") }
        }
        // Every member's features, in `Feature`'s order: the window all of them read from.
        if !ensemble.allSatisfy({ $0.spec.features == first.spec.features }) {
            let used = Set(ensemble.flatMap { $0.members.flatMap(\.features) })
            spec.features = Feature.allCases.filter(used.contains)
        }
        var members: [Member] = []
        for (i, c) in ensemble.enumerated() {
            for m in c.members {
                members.append(Member(net: m.net, architecture: m.architecture, features: m.features,
                                      weight: m.weight * (weights?[i] ?? 1), stream: streams?[i] ?? m.stream))
            }
        }
        try self.init(labels: first.labels, spec: spec, members: members, training: TrainingRecord(members: ensemble.map(\.training)))
    }

    /// For each channel of a (T, V·|to|) window, its channel in the (T, V·|from|) window.
    static func channelMap(from: [Feature], to: [Feature], joints V: Int, frames T: Int) throws -> [Int] {
        func offset(_ f: Feature, in list: [Feature]) -> Int? {
            guard let i = list.firstIndex(of: f) else { return nil }
            return list[..<i].reduce(0) { $0 + $1.width }
        }
        let wFrom = from.reduce(0) { $0 + $1.width }
        var perJoint: [Int] = []
        for f in to {
            guard let o = offset(f, in: from) else {
                throw ModelFileError("a member reads the feature \(f.rawValue), which the preprocessing does not make")
            }
            perJoint += (0..<f.width).map { o + $0 }
        }
        var map: [Int] = []
        map.reserveCapacity(T * V * perJoint.count)
        for t in 0..<T { for v in 0..<V { map += perJoint.map { (t * V + v) * wFrom + $0 } } }
        return map
    }

    /// Parameters of all the nets.
    public var parameterCount: Int { members.reduce(0) { $0 + $1.net.parameterCount } }

    /// Whether the file needs format 3: members that differ in features, architecture or weight.
    public var isMultiStream: Bool {
        members.contains { $0.features != spec.features || $0.architecture != architecture || $0.weight != 1 || $0.stream != nil }
    }

    /// Class probabilities of each window (values: frames × channels, mask: frames); with
    /// `architecture.flipAverage`, the mean of the window's and its mirror image's (the
    /// model learnt both sides with flip augmentation; asking it both ways evens out its
    /// left/right bias: +0.4 points of clip accuracy on Penn Action).
    public func probabilities(values: [[Float]], masks: [[Float]]) -> [[Float]] {
        guard architecture.flipAverage else { return rawProbabilities(values: values, masks: masks) }
        // The windows and their mirror images in one pass: live's one window becomes one
        // forward pass of two, not two of one.
        let mirrored = values.map { AugmentationSpec.flipped($0, layout: spec.joints, features: spec.features) }
        let both = rawProbabilities(values: values + mirrored, masks: masks + masks)
        return values.indices.map { i in zip(both[i], both[values.count + i]).map { ($0 + $1) / 2 } }
    }

    private func rawProbabilities(values: [[Float]], masks: [[Float]]) -> [[Float]] {
        let each = zip(members, channelMaps).map { m, map in
            rawProbabilities(of: m.net, values: map.map { map in values.map { v in map.map { v[$0] } } } ?? values, masks: masks)
        }
        guard each.count > 1 else { return each[0] }
        let total = members.reduce(0) { $0 + $1.weight }
        let scales = members.map { Float($0.weight / total) }
        return values.indices.map { i in
            (0..<labels.count).map { k in zip(each, scales).reduce(0) { $0 + $1.0[i][k] * $1.1 } }
        }
    }

    private func rawProbabilities(of model: any ClassifierNet, values: [[Float]], masks: [[Float]]) -> [[Float]] {
        precondition(values.count == masks.count)
        let w = spec.window, c = values.first?.count ?? 0, k = labels.count
        let batch = model.maxBatch
        var x = [Float](repeating: 0, count: batch * c), m = [Float](repeating: 0, count: batch * w)
        var out: [[Float]] = []
        out.reserveCapacity(values.count)
        var start = 0
        while start < values.count {
            let n = min(batch, values.count - start)
            for i in 0..<n {
                precondition(values[start + i].count == c && masks[start + i].count == w)
                x.replaceSubrange((i * c)..<((i + 1) * c), with: values[start + i])
                m.replaceSubrange((i * w)..<((i + 1) * w), with: masks[start + i])
            }
            let logits = x.withUnsafeBufferPointer { xp in
                m.withUnsafeBufferPointer { mp in
                    model.forward(xp.baseAddress!, mask: mp.baseAddress!, batch: n, training: false)
                }
            }
            for i in 0..<n { out.append(softmax(logits + i * k, count: k)) }
            start += n
        }
        return out
    }

    public func probabilities(_ windows: [Window]) -> [[Float]] {
        probabilities(values: windows.map(\.values), masks: windows.map(\.mask))
    }

    // MARK: Weights file

    /// Writes the weights file atomically (a temp file, then a rename). `extra` may add
    /// groups and attributes (a checkpoint's optimiser state) before the file is closed.
    public func save(to path: String, extra: ((HDF5Group) throws -> Void)? = nil) throws {
        try HDF5File.writeAtomically(path) { root in
            try root.setAttribute("format", Self.format)
            // A single net stays format 1, which every poseact reads; an ensemble of one
            // architecture 2.
            try root.setAttribute("format_version", isMultiStream ? 3 : members.count > 1 ? 2 : 1)
            if members.count > 1 { try root.setAttribute("members", members.count) }
            if isMultiStream {
                try root.setAttribute("streams", JSONLines.encode(members.map(\.record)))
            }
            try root.setAttribute("labels", labels)
            try root.setAttribute("preprocessing", spec.json())
            try root.setAttribute("architecture", JSONLines.encode(architecture))
            try root.setAttribute("training", JSONLines.encode(training))
            try root.setAttribute("created", ISO8601DateFormatter().string(from: Date()))
            for (m, member) in members.enumerated() {
                let weights = try root.createGroup(Self.weightsGroup(m))
                defer { weights.close() }
                for (name, shape, buffer) in Self.stateTensors(member.net) {
                    try weights.write(name, buffer.array, shape: shape).close()
                }
            }
            try extra?(root)
        }
    }

    /// `save(to:)`, then the file read back and compared tensor by tensor: a file that does
    /// not give back the very weights is removed.
    public func saveCheckingReadBack(to path: String) throws {
        try save(to: path)
        let back = try ActionClassifier.load(path: path)
        for (x, y) in zip(members, back.members) {
            for (a, b) in zip(x.net.state, y.net.state) where a.buffer.array != b.buffer.array {
                unlink(path)
                throw ModelFileError("\(path): \(a.name) did not read back the same; nothing written")
            }
        }
    }

    /// Every tensor that defines a net's function, with its shape.
    static func stateTensors(_ model: any ClassifierNet) -> [(String, [Int], FloatBuffer)] {
        let shapes = Dictionary(uniqueKeysWithValues: model.parameters.map { ($0.name, $0.shape) })
        return model.state.map { ($0.name, shapes[$0.name] ?? [$0.buffer.count], $0.buffer) }
    }

    /// The group of member `m`'s tensors: `weights`, then `weights.1`, `weights.2`, …
    static func weightsGroup(_ m: Int) -> String { m == 0 ? "weights" : "weights.\(m)" }

    /// Reads a weights file (or a checkpoint); every tensor is checked against the architecture.
    public static func load(path: String, maxBatch: Int = inferenceBatch) throws -> ActionClassifier {
        guard FileManager.default.fileExists(atPath: path) else { throw ModelFileError("\(path): no such file") }
        guard HDF5.isHDF5(path) else { throw ModelFileError("\(path): not a poseact weights file (not HDF5)") }
        let file = try HDF5File.open(path)
        defer { try? file.close() }
        let root = try file.root()
        defer { root.close() }
        guard (try? root.stringAttribute("format")) == format else {
            throw ModelFileError("\(path): not a poseact weights file (an HDF5 file without format = \(format))")
        }
        let v = try root.intAttribute("format_version")
        guard v <= version else { throw ModelFileError("\(path): weights format \(v) is newer than this poseact reads (\(version)); update poseact") }
        do {
            let labels = try root.stringArrayAttribute("labels")
            let spec = try PreprocessingSpec.fromJSON(try root.stringAttribute("preprocessing"))
            let arch = try JSONLines.decode(Architecture.self, from: try root.stringAttribute("architecture"))
            let training = TrainingRecord(json: (try? root.stringAttribute("training")) ?? "{}")
            let count = v >= 2 ? try root.intAttribute("members") : 1
            guard (1...64).contains(count) else { throw ModelFileError("\(path): members = \(count) (1 to 64 nets)") }
            let records = v >= 3
                ? try JSONLines.decode([Member.Record].self, from: try root.stringAttribute("streams"))
                : [Member.Record](repeating: .init(stream: nil, features: spec.features, weight: 1, architecture: arch), count: count)
            guard records.count == count else { throw ModelFileError("\(path): \(records.count) streams for \(count) members") }
            guard TrainingConfig.ModelSection.types.contains(arch.type) else {
                throw ModelFileError("\(path): model type '\(arch.type)' is not known to this poseact")
            }
            var wrong = spec.problems.map { "preprocessing: \($0)" }
            if labels.count < 2 { wrong.append("\(labels.count) labels (a classifier needs 2)") }
            // Labels index the outputs: one given twice would make a prediction ambiguous (and
            // a dictionary of them trap).
            if let twice = labels.firstRepeated { wrong.append("the label '\(KeypointChecks.excerpt(twice))' is given twice in labels") }
            if labels.contains(where: \.isEmpty) { wrong.append("an empty label in labels") }
            for (m, r) in records.enumerated() {
                let a = r.architecture, which = count > 1 ? "member \(m + 1): " : ""
                wrong += a.problems(joints: spec.joints.count).map { which + $0 }
                if labels.count != a.classes { wrong.append("\(which)\(labels.count) labels but architecture.classes = \(a.classes)") }
                let channels = spec.joints.count * r.features.reduce(0) { $0 + $1.width }
                if a.inputChannels != channels {
                    wrong.append("\(which)architecture.input_channels = \(a.inputChannels) but its features give \(channels)")
                }
                if !Set(r.features).isSubset(of: spec.features) { wrong.append("\(which)features \(r.features) not in the preprocessing's") }
                if a.frames != spec.window { wrong.append("\(which)architecture.frames = \(a.frames) but preprocessing.window = \(spec.window)") }
                if !(r.weight > 0 && r.weight.isFinite) { wrong.append("\(which)weight \(r.weight)") }
            }
            if let first = wrong.first {
                throw ModelFileError("\(path): a damaged weights file: \(first)\(wrong.count > 1 ? " (and \(wrong.count - 1) more)" : "")")
            }
            var members: [Member] = []
            for (m, r) in records.enumerated() {
                let net = r.architecture.net(joints: spec.joints, maxBatch: maxBatch, seed: 0)
                let group = weightsGroup(m)
                guard try root.has(group) else { throw ModelFileError("\(path): \(group)/ is missing (\(count) members)") }
                let weights = try root.group(group)
                defer { weights.close() }
                for (name, shape, buffer) in stateTensors(net) {
                    guard try weights.has(name) else { throw ModelFileError("\(path): \(group)/\(name) is missing") }
                    let (values, stored) = try weights.read(name, as: Float.self)
                    guard stored == shape, values.count == buffer.count else {
                        throw ModelFileError("\(path): \(group)/\(name) has shape \(stored), the architecture needs \(shape)")
                    }
                    guard values.allSatisfy({ $0.isFinite }) else { throw ModelFileError("\(path): \(group)/\(name) holds NaN or infinity") }
                    buffer.pointer.update(from: values, count: values.count)
                }
                members.append(Member(net: net, architecture: r.architecture, features: r.features, weight: r.weight, stream: r.stream))
            }
            return try ActionClassifier(labels: labels, spec: spec, members: members, training: training)
        } catch let e as ModelFileError {
            throw e
        } catch {
            throw ModelFileError("\(path): damaged weights file (\(error))")
        }
    }
}

/// A weights file that cannot be read or written.
public enum ModelFileFailure {}
public typealias ModelFileError = OneLineError<ModelFileFailure>

func softmax(_ z: UnsafePointer<Float>, count k: Int) -> [Float] {
    var maxZ = z[0]
    for o in 1..<k where z[o] > maxZ { maxZ = z[o] }
    var p = (0..<k).map { expf(z[$0] - maxZ) }
    let sum = p.reduce(0, +)
    for o in 0..<k { p[o] /= sum }
    return p
}
