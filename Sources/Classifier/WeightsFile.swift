import Basics
import Evaluation
import Foundation
import Keypoints
import KeypointWindows
import Tensor

/// The weights file (HDF5, `*.poseact.h5`), readable with h5py or h5dump: an
/// `ActionClassifier` on disk, and a training run's checkpoint.
///
/// - root attributes: `format` = "poseact-model", `format_version` = 1, `labels` (class
///   names, in output order), `preprocessing` (PreprocessingSpec JSON: joints, fps,
///   window, stride, normalisation, features, thresholds), `preprocessing_steps` (the
///   steps' names in order, `Preprocessing.steps`; a file without them is from before they
///   were stored and went through the same steps), `architecture` (JSON),
///   `training` (JSON: the config, the data and the metrics of the run), `created`.
/// - `prototypes/`: the labels as directions on the net's embedding, for `enroll`
///   (`LabelPrototypes`; a single net only, absent from files made before poseact 0.44).
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
/// A checkpoint (`RUN/checkpoint.h5`) is a weights file plus the run's state: the root
/// attributes `checkpoint_config` (the config's JSON), `checkpoint_step`,
/// `checkpoint_best_epoch`, `checkpoint_best_validation_loss` (-1: none yet),
/// `checkpoint_best_validation_accuracy` and `checkpoint_history` (JSON), Adam's moments
/// `optimizer/m.NAME` and `optimizer/v.NAME`, and, with training.ema_epochs, the averaged
/// weights `average/NAME`.
extension ActionClassifier {
    public static let format = "poseact-model"
    /// The newest format this poseact reads: 1, one net; 2, an ensemble; 3, a multi-stream one.
    public static let version = 3

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
            try root.setAttribute("preprocessing_steps", Preprocessing.steps)
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
            try prototypes?.write(to: root)
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

    /// The sha256 of the weights alone: every net's tensors in the file's order, each its name,
    /// its shape and its float32 bytes. Two files with the same weights have the same digest
    /// whenever they were written (a file's bytes also hold the time it was made): how a
    /// resumed run is shown to end with the weights of the run that was not stopped.
    public var weightsSHA256: String {
        var hasher = SHA256()
        for member in members {
            for (name, shape, buffer) in Self.stateTensors(member.net) {
                hasher.update(data: Array(name.utf8) + [0])
                for d in shape { withUnsafeBytes(of: Int64(d).littleEndian) { hasher.update(bufferPointer: $0) } }
                buffer.array.withUnsafeBytes { hasher.update(bufferPointer: $0) }
            }
        }
        return SHA256.hex(digest: hasher.finalize())
    }

    /// The group of member `m`'s tensors: `weights`, then `weights.1`, `weights.2`, …
    static func weightsGroup(_ m: Int) -> String { m == 0 ? "weights" : "weights.\(m)" }

    /// Refuses a file whose input went through other preprocessing steps than this poseact
    /// runs. A file from before the steps were stored went through these very steps.
    private static func checkSteps(_ root: HDF5Group, path: String) throws {
        guard try root.hasAttribute("preprocessing_steps") else { return }
        let steps = try root.stringArrayAttribute("preprocessing_steps")
        guard steps == Preprocessing.steps else {
            throw ModelFileError("\(path): its input went through the preprocessing steps "
                + "\(OneLine.excerpt(steps.joined(separator: " → "))), this poseact runs \(Preprocessing.steps.joined(separator: " → ")): "
                + "use the poseact that made it, or train it again")
        }
    }

    /// Reads a weights file (or a checkpoint); every tensor is checked against the architecture.
    public static func load(path: String, maxBatch: Int = inferenceBatch) throws -> ActionClassifier {
        guard FileManager.default.fileExists(atPath: path) else { throw ModelFileError("\(path): no such file") }
        do { try InputFile.check(path) } catch let error as InputFileError { throw ModelFileError(error.message) }
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
            try checkSteps(root, path: path)
            let arch = try JSONLines.decode(Architecture.self, from: try root.stringAttribute("architecture"))
            let training = TrainingRecord(json: (try? root.stringAttribute("training")) ?? "{}")
            let count = v >= 2 ? try root.intAttribute("members") : 1
            guard (1...64).contains(count) else { throw ModelFileError("\(path): members = \(count) (1 to 64 nets)") }
            let records = v >= 3
                ? try JSONLines.decode([Member.Record].self, from: try root.stringAttribute("streams"))
                : [Member.Record](repeating: .init(stream: nil, features: spec.features, weight: 1, architecture: arch), count: count)
            guard records.count == count else { throw ModelFileError("\(path): \(records.count) streams for \(count) members") }
            var wrong = spec.problems.map { "preprocessing: \($0)" }
            if labels.count < 2 { wrong.append("\(labels.count) labels (a classifier needs 2)") }
            // Labels index the outputs: one given twice would make a prediction ambiguous (and
            // a dictionary of them trap).
            if let twice = labels.firstRepeated { wrong.append("the label '\(OneLine.excerpt(twice))' is given twice in labels") }
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
                    // A variance below 0 (a hand-edited file) makes every prediction one
                    // constant, and an ONNX export of NaN.
                    if name.hasSuffix("running_var"), let negative = values.first(where: { $0 < 0 }) {
                        throw ModelFileError("\(path): \(group)/\(name) holds the variance \(negative), below 0: a damaged weights file")
                    }
                    buffer.pointer.update(from: values, count: values.count)
                }
                members.append(Member(net: net, architecture: r.architecture, features: r.features, weight: r.weight, stream: r.stream))
            }
            let classifier = try ActionClassifier(labels: labels, spec: spec, members: members, training: training)
            if count == 1 {
                classifier.prototypes = try LabelPrototypes.read(from: root, path: path, width: members[0].net.head.inFeatures)
                if let p = classifier.prototypes, p.labels != labels {
                    throw ModelFileError("\(path): prototypes/ of the labels \(OneLine.excerpt(p.labels.joined(separator: ", "))), "
                        + "not the model's: a damaged weights file")
                }
            }
            return classifier
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

// MARK: Checkpoint

extension Trainer {
    /// Writes the full state (weights, optimiser moments, history) atomically.
    public func saveCheckpoint(to path: String) throws {
        classifier.training = record()
        try classifier.save(to: path) { root in
            try root.setAttribute("checkpoint_config", self.config.json())
            try root.setAttribute("checkpoint_step", self.optimizer.step)
            try root.setAttribute("checkpoint_best_epoch", self.bestEpoch)
            try root.setAttribute("checkpoint_best_validation_loss", self.bestValidationLoss.isFinite ? self.bestValidationLoss : -1)
            try root.setAttribute("checkpoint_best_validation_accuracy", self.bestValidationAccuracy)
            try root.setAttribute("checkpoint_history", JSONLines.encode(self.history))
            let g = try root.createGroup("optimizer")
            for (i, p) in self.optimizer.parameters.enumerated() {
                try g.write("m.\(p.name)", self.optimizer.m[i].array, shape: p.shape).close()
                try g.write("v.\(p.name)", self.optimizer.v[i].array, shape: p.shape).close()
            }
            g.close()
            if let average = self.average {
                let a = try root.createGroup("average")
                for (s, b) in zip(self.model.state, average.buffers) { try a.write(s.name, b.array, shape: [b.count]).close() }
                a.close()
            }
        }
    }

    /// The config a checkpoint was written with.
    public static func checkpointConfig(path: String) throws -> TrainingConfig {
        let file = try HDF5File.open(path)
        defer { try? file.close() }
        let root = try file.root()
        defer { root.close() }
        return try JSONLines.decode(TrainingConfig.self, from: try root.stringAttribute("checkpoint_config"))
    }

    /// A trainer in the state a checkpoint holds (for the same config and data).
    public static func resume(from path: String, config: TrainingConfig, data: TrainingData) throws -> Trainer {
        let classifier = try ActionClassifier.load(path: path, maxBatch: batchSize(config: config, data: data))
        guard classifier.labels == data.labels else {
            throw ConfigError("\(path): the checkpoint's labels (\(classifier.labels.joined(separator: ", "))) are not the data's (\(data.labels.joined(separator: ", ")))")
        }
        // The net stored and the config stored are two parts of one file: a damaged or
        // hand-made checkpoint may disagree with itself.
        guard classifier.architecture == Architecture(config: config, classes: data.labels.count),
              classifier.model.maxBatch == batchSize(config: config, data: data) else {
            throw ModelFileError("\(path): a damaged checkpoint: its net is not the one its config describes; start the run again without it")
        }
        let t = Trainer(config: config, data: data, classifier: classifier)
        let file = try HDF5File.open(path)
        defer { try? file.close() }
        let root = try file.root()
        defer { root.close() }
        t.optimizer.step = try root.intAttribute("checkpoint_step")
        t.bestEpoch = try root.intAttribute("checkpoint_best_epoch")
        let best = try root.doubleAttribute("checkpoint_best_validation_loss")
        t.bestValidationLoss = best < 0 ? .infinity : best
        t.bestValidationAccuracy = try root.doubleAttribute("checkpoint_best_validation_accuracy")
        t.history = try JSONLines.decode([EpochRecord].self, from: try root.stringAttribute("checkpoint_history"))
        let g = try root.group("optimizer")
        defer { g.close() }
        for (i, p) in t.optimizer.parameters.enumerated() {
            let (m, _) = try g.read("m.\(p.name)", as: Float.self)
            let (v, _) = try g.read("v.\(p.name)", as: Float.self)
            guard m.count == p.count, v.count == p.count else { throw ModelFileError("\(path): optimizer state of \(p.name) is damaged") }
            t.optimizer.m[i].pointer.update(from: m, count: m.count)
            t.optimizer.v[i].pointer.update(from: v, count: v.count)
        }
        if let average = t.average {
            let a = try root.group("average")
            defer { a.close() }
            for (s, b) in zip(t.model.state, average.buffers) {
                let (values, _) = try a.read(s.name, as: Float.self)
                guard values.count == b.count else { throw ModelFileError("\(path): the averaged weights of \(s.name) are damaged") }
                b.pointer.update(from: values, count: values.count)
            }
            average.steps = t.optimizer.step
        }
        return t
    }
}
