import Foundation
import KeypointWindows

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
/// file holds (WeightsFile.swift), and what `evaluate` and `live` run.
public final class ActionClassifier {
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
    /// The layout's left-right mirror, for flip averaging.
    let mirror: WindowMirror
    /// Its labels as directions on the net's embedding (`LabelPrototypes`): what `enroll`
    /// adds labels to. `train` records them; an ensemble has none.
    public var prototypes: LabelPrototypes?

    /// Windows per forward pass at inference.
    public static let inferenceBatch = 64

    public init(labels: [String], spec: PreprocessingSpec, architecture: Architecture, training: TrainingRecord = TrainingRecord(),
                model: (any ClassifierNet)? = nil) {
        self.labels = labels; self.spec = spec; self.training = training
        let net = model ?? architecture.net(joints: spec.joints, maxBatch: Self.inferenceBatch, seed: 0)
        members = [Member(net: net, architecture: architecture, features: spec.features)]
        channelMaps = [nil]
        mirror = WindowMirror(layout: spec.joints, features: spec.features)
    }

    init(labels: [String], spec: PreprocessingSpec, members: [Member], training: TrainingRecord) throws {
        self.labels = labels; self.spec = spec; self.members = members; self.training = training
        mirror = WindowMirror(layout: spec.joints, features: spec.features)
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
        let mirrored = values.map(mirror.mirrored)
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
        let k = labels.count
        var out: [[Float]] = []
        out.reserveCapacity(values.count)
        forwardInBatches(model, values: values, masks: masks) { _, n, logits in
            for i in 0..<n { out.append(softmax(logits + i * k, count: k)) }
        }
        return out
    }

    /// Runs `model` on the windows, a batch of its size at a time; after each forward,
    /// `take(first window, windows, logits)` while the net's buffers hold that batch.
    func forwardInBatches(_ model: any ClassifierNet, values: [[Float]], masks: [[Float]],
                          take: (Int, Int, UnsafeMutablePointer<Float>) -> Void) {
        precondition(values.count == masks.count)
        let w = spec.window, c = values.first?.count ?? 0
        let batch = model.maxBatch
        var x = [Float](repeating: 0, count: batch * c), m = [Float](repeating: 0, count: batch * w)
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
            take(start, n, logits)
            start += n
        }
    }

    public func probabilities(_ windows: [Window]) -> [[Float]] {
        probabilities(values: windows.map(\.values), masks: windows.map(\.mask))
    }
}

func softmax(_ z: UnsafePointer<Float>, count k: Int) -> [Float] {
    var maxZ = z[0]
    for o in 1..<k where z[o] > maxZ { maxZ = z[o] }
    var p = (0..<k).map { expf(z[$0] - maxZ) }
    let sum = p.reduce(0, +)
    for o in 0..<k { p[o] /= sum }
    return p
}
