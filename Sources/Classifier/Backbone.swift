import Basics
import Foundation
import KeypointWindows

/// A trained net a run starts from (`model.pretrained`): every weight and batch-norm
/// statistic of its net but the head, which a run always makes anew for its own labels.
///
/// A backbone fits a run when its net is the run's less the head (the same model keys,
/// input channels and frames) and its input is made the same way (joints, features, frame
/// rate, window and normalisation): the weights learned what those numbers mean.
public struct Backbone {
    public let path: String
    let classifier: ActionClassifier

    /// The weights file at `path`, checked against the run's preprocessing and architecture.
    public init(path: String, spec: PreprocessingSpec, architecture: Architecture) throws {
        let source = try ActionClassifier.load(path: path, maxBatch: 1)
        guard source.members.count == 1 else {
            throw ConfigError("model.pretrained \(path): an ensemble of \(source.members.count) nets; a backbone is one net")
        }
        let theirs = source.spec, input: [(String, Bool)] = [
            ("preprocessing.joints", theirs.joints == spec.joints), ("preprocessing.features", theirs.features == spec.features),
            ("preprocessing.fps", theirs.fps == spec.fps), ("preprocessing.window", theirs.window == spec.window),
            ("preprocessing.normalization", theirs.normalization == spec.normalization && theirs.centre == spec.centre),
            ("preprocessing.velocity_unit", theirs.velocityUnit == spec.velocityUnit),
        ]
        if let key = input.first(where: { !$0.1 })?.0 {
            throw ConfigError("model.pretrained \(path): its \(key) differs from this run's: take the backbone's "
                              + "preprocessing (poseact model inspect \(path)), or train with model.pretrained: none")
        }
        var net = source.architecture
        net.classes = architecture.classes
        net.model.streams = architecture.model.streams; net.model.streamWeights = architecture.model.streamWeights
        net.model.pretrained = architecture.model.pretrained
        guard net == architecture else {
            throw ConfigError("model.pretrained \(path): its net (\(source.architecture.model.netSummary)) is not this run's "
                              + "(\(architecture.model.netSummary)): give the model section the backbone's keys")
        }
        self.path = path
        classifier = source
    }

    /// `model.pretrained: auto` starts a run from a shipped backbone when its smallest label
    /// has fewer training clips than this: where the measured curves meet. On Penn Action's
    /// held-out classes (dev splits, 5 draws) runs from a backbone were 5.6 points ahead of
    /// random weights with 1 clip a label and 7.6 with 5, and level from 10 on
    /// (docs/experiments.md, issue 52).
    public static let autoBelowClips = 10

    /// What `auto` chooses for a run on `data`: the first of `shipped` (weights files) whose
    /// net and input are the run's, when the smallest label has fewer than `autoBelowClips`
    /// training clips; nil (random weights) otherwise. With the reason, in words.
    public static func auto(shipped: [String], config: TrainingConfig, spec: PreprocessingSpec, labelClips: [String: Int])
        -> (path: String?, reason: String) {
        let (label, clips) = labelClips.min { ($0.value, $0.key) < ($1.value, $1.key) } ?? ("", 0)
        let size = "the smallest label ('\(label)') has \(clips) training clip\(clips == 1 ? "" : "s")"
        guard clips < autoBelowClips else { return (nil, "\(size), \(autoBelowClips) or more: random weights do as well there") }
        let architecture = Architecture(config: config, classes: max(labelClips.count, 2))
        for path in shipped where (try? Backbone(path: path, spec: spec, architecture: architecture)) != nil {
            return (path, "\(size), fewer than \(autoBelowClips)")
        }
        let names = shipped.map { URL(fileURLWithPath: $0).lastPathComponent }
        return (nil, "\(size), but no shipped backbone has this net and input (\(names.isEmpty ? "none found" : names.joined(separator: ", "))): "
                + "random weights")
    }

    /// The shipped backbones in `folders`, in order: their `*.poseact.h5` files.
    public static func shipped(in folders: [String]) -> [String] {
        folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".poseact.h5") }.sorted()
                .map { folder + "/" + $0 }
        }
    }

    /// Whether a state tensor is the head's (made anew by every run).
    static func isHead(_ name: String) -> Bool { name.hasPrefix("head.") }

    /// Copies the backbone's tensors into `net`, all but its head.
    func copy(into net: any ClassifierNet) {
        let source = Dictionary(uniqueKeysWithValues: classifier.model.state.map { ($0.name, $0.buffer) })
        for (name, buffer) in net.state where !Self.isHead(name) {
            // `init` compared the architectures: the same names and sizes.
            let from = source[name]!
            precondition(from.count == buffer.count, "backbone tensor \(name)")
            buffer.pointer.update(from: from.pointer, count: buffer.count)
        }
    }
}
