import Dataset
import Errors
import Foundation
import JSONLines
import Tensor

/// The architecture of a model, as stored in its weights file.
public struct Architecture: Codable, Equatable, Sendable {
    public var type = "tcn"
    public var inputChannels: Int
    public var frames: Int
    public var classes: Int
    public var channels: Int
    public var dilations: [Int]
    public var kernel: Int
    public var dropout: Double
    public var pooling: TCN.Pooling
    /// Whether a prediction averages the window's probabilities with its mirror image's
    /// (false in files written before this key existed).
    public var flipAverage: Bool
    /// A BatchNorm over the input channels first (false in files written before this key).
    public var inputNorm: Bool

    enum CodingKeys: String, CodingKey {
        case type, inputChannels = "input_channels", frames, classes, channels, dilations, kernel, dropout, pooling
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
        flipAverage = config.model.flipAverage
        inputNorm = config.model.inputNorm
    }

    /// The TCN of this architecture, for batches of up to `maxBatch` windows.
    func tcn(maxBatch: Int, seed: UInt64) -> TCN {
        TCN(.init(inputChannels: inputChannels, frames: frames, classes: classes, channels: channels,
                  dilations: dilations, kernel: kernel, dropout: Float(dropout), pooling: pooling,
                  inputNorm: inputNorm, maxBatch: maxBatch, seed: seed))
    }
}

/// A trained action classifier and everything it needs to run: the labels, the
/// preprocessing that makes its input, the architecture and the weights. This is what a
/// weights file holds, and what `evaluate` and `live` run.
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
/// A checkpoint is a weights file plus `optimizer/m.NAME`, `optimizer/v.NAME` and the
/// attributes of the run's state.
public final class ActionClassifier {
    public static let format = "poseact-model"
    /// The newest format this poseact reads: 1, one net; 2, an ensemble.
    public static let version = 2

    public let labels: [String]
    public let spec: PreprocessingSpec
    public let architecture: Architecture
    /// The record of the run that made it.
    public var training: TrainingRecord
    /// The nets whose probabilities are averaged: one, or an ensemble's members.
    public let members: [TCN]
    /// The first (usually only) net; the one training works on.
    public var model: TCN { members[0] }

    /// Windows per forward pass at inference.
    public static let inferenceBatch = 64

    public init(labels: [String], spec: PreprocessingSpec, architecture: Architecture, training: TrainingRecord = TrainingRecord(),
                model: TCN? = nil) {
        self.labels = labels; self.spec = spec; self.architecture = architecture; self.training = training
        self.members = [model ?? architecture.tcn(maxBatch: Self.inferenceBatch, seed: 0)]
    }

    /// An ensemble of classifiers with the same labels, preprocessing and architecture (nets
    /// trained with different seeds): a window's probabilities are the mean of theirs. Its
    /// record holds theirs under "members". On a small dataset which clips a net gets wrong
    /// depends much on its seed; the ensemble's answer does not hang on one seed (push-ups,
    /// 5-fold cross-validation: five nets 80.2–84.7 % of clips, mean 82.3 %; their ensemble
    /// 81.9 %; windows 75.7–79.0 %, mean 77.9 %, ensemble 78.6 %: steadier, not better
    /// than the average net).
    public init(ensemble: [ActionClassifier]) throws {
        guard let first = ensemble.first else { throw ModelFileError("an ensemble needs at least one model") }
        for (i, c) in ensemble.enumerated().dropFirst() {
            guard c.labels == first.labels else {
                throw ModelFileError("member \(i + 1) has other labels (\(c.labels.joined(separator: ", "))) than the first (\(first.labels.joined(separator: ", ")))")
            }
            guard c.spec == first.spec else { throw ModelFileError("member \(i + 1) has other preprocessing than the first (\(c.spec.json()))") }
            guard c.architecture == first.architecture else {
                throw ModelFileError("member \(i + 1) has another architecture than the first (\(JSONLines.encode(c.architecture)))")
            }
        }
        labels = first.labels; spec = first.spec; architecture = first.architecture
        members = ensemble.flatMap(\.members)
        training = TrainingRecord(members: ensemble.map(\.training))
    }

    /// Parameters of all the nets.
    public var parameterCount: Int { members.reduce(0) { $0 + $1.parameterCount } }

    /// Class probabilities of each window (values: frames × channels, mask: frames); with
    /// `architecture.flipAverage`, the mean of the window's and its mirror image's (the
    /// model learnt both sides with flip augmentation; asking it both ways evens out its
    /// left/right bias: +0.4 points of clip accuracy on Penn Action).
    public func probabilities(values: [[Float]], masks: [[Float]]) -> [[Float]] {
        let plain = rawProbabilities(values: values, masks: masks)
        guard architecture.flipAverage else { return plain }
        let mirrored = rawProbabilities(values: values.map { AugmentationSpec.flipped($0, layout: spec.joints, features: spec.features) },
                                        masks: masks)
        return zip(plain, mirrored).map { a, b in zip(a, b).map { ($0 + $1) / 2 } }
    }

    private func rawProbabilities(values: [[Float]], masks: [[Float]]) -> [[Float]] {
        let each = members.map { rawProbabilities(of: $0, values: values, masks: masks) }
        guard each.count > 1 else { return each[0] }
        let scale = 1 / Float(each.count)
        return values.indices.map { i in
            (0..<architecture.classes).map { k in each.reduce(0) { $0 + $1[i][k] } * scale }
        }
    }

    private func rawProbabilities(of model: TCN, values: [[Float]], masks: [[Float]]) -> [[Float]] {
        precondition(values.count == masks.count)
        let w = architecture.frames, c = architecture.inputChannels, k = architecture.classes
        let batch = model.config.maxBatch
        var x = [Float](repeating: 0, count: batch * w * c), m = [Float](repeating: 0, count: batch * w)
        var out: [[Float]] = []
        out.reserveCapacity(values.count)
        var start = 0
        while start < values.count {
            let n = min(batch, values.count - start)
            for i in 0..<n {
                precondition(values[start + i].count == w * c && masks[start + i].count == w)
                x.replaceSubrange((i * w * c)..<((i + 1) * w * c), with: values[start + i])
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
            // A single net stays format 1, which every poseact reads.
            try root.setAttribute("format_version", members.count > 1 ? 2 : 1)
            if members.count > 1 { try root.setAttribute("members", members.count) }
            try root.setAttribute("labels", labels)
            try root.setAttribute("preprocessing", spec.json())
            try root.setAttribute("architecture", JSONLines.encode(architecture))
            try root.setAttribute("training", JSONLines.encode(training))
            try root.setAttribute("created", ISO8601DateFormatter().string(from: Date()))
            for (m, model) in members.enumerated() {
                let weights = try root.createGroup(Self.weightsGroup(m))
                defer { weights.close() }
                for (name, shape, buffer) in Self.stateTensors(model) {
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
            for (a, b) in zip(x.state, y.state) where a.buffer.array != b.buffer.array {
                unlink(path)
                throw ModelFileError("\(path): \(a.name) did not read back the same; nothing written")
            }
        }
    }

    /// Every tensor that defines a net's function, with its shape.
    static func stateTensors(_ model: TCN) -> [(String, [Int], FloatBuffer)] {
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
            guard arch.type == "tcn" else { throw ModelFileError("\(path): model type '\(arch.type)' is not known to this poseact") }
            var wrong = spec.problems.map { "preprocessing: \($0)" }
            if labels.count < 2 { wrong.append("\(labels.count) labels (a classifier needs 2)") }
            if labels.count != arch.classes { wrong.append("\(labels.count) labels but architecture.classes = \(arch.classes)") }
            if arch.inputChannels != spec.channels {
                wrong.append("architecture.input_channels = \(arch.inputChannels) but the preprocessing gives \(spec.channels)")
            }
            if arch.frames != spec.window { wrong.append("architecture.frames = \(arch.frames) but preprocessing.window = \(spec.window)") }
            if !(1...TrainingConfig.maxChannels).contains(arch.channels) { wrong.append("architecture.channels = \(arch.channels)") }
            if !(1...TrainingConfig.maxKernel).contains(arch.kernel) { wrong.append("architecture.kernel = \(arch.kernel)") }
            if !(1...TrainingConfig.maxBlocks).contains(arch.dilations.count)
                || !arch.dilations.allSatisfy({ (1...TrainingConfig.maxDilation).contains($0) }) {
                wrong.append("architecture.dilations = \(arch.dilations)")
            }
            if let first = wrong.first {
                throw ModelFileError("\(path): a damaged weights file: \(first)\(wrong.count > 1 ? " (and \(wrong.count - 1) more)" : "")")
            }
            let count = v >= 2 ? try root.intAttribute("members") : 1
            guard (1...64).contains(count) else { throw ModelFileError("\(path): members = \(count) (1 to 64 nets)") }
            var nets: [ActionClassifier] = []
            for m in 0..<count {
                let net = arch.tcn(maxBatch: maxBatch, seed: 0)
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
                nets.append(ActionClassifier(labels: labels, spec: spec, architecture: arch, training: training, model: net))
            }
            guard count > 1 else { return nets[0] }
            let ensemble = try ActionClassifier(ensemble: nets)
            ensemble.training = training
            return ensemble
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
