import Basics
import Foundation
import Keypoints
import KeypointWindows

/// Labels learnt from a few clips without training (`poseact enroll`): a label is the mean
/// direction of its windows' embeddings (the head's input) seen from a centre, and a window
/// is the label whose direction is nearest its own (nearest centroid by cosine, as in
/// SimpleShot: Wang et al. 2019).
///
/// That rule is a linear head exactly. With c the centre and p̂ₖ label k's unit direction,
/// argmaxₖ ((e − c)/|e − c|)·p̂ₖ = argmaxₖ (e − c)·p̂ₖ, since |e − c| is the same for every k.
/// So the head's row k is p̂ₖ·τ/s and its bias −(c·p̂ₖ)·τ/s, s being the median |e − c| of
/// the windows that made the centre: a typical window's logits are τ times its cosines.
/// `live`, `evaluate` and ONNX run it as any head.
///
/// In the weights file: the group `prototypes/` with the attributes `labels`, `scale` and
/// `windows` (per label, how many), and the datasets `centre` [P] and `sums` [K, P] (per
/// label, Σ (e − c)/|e − c| over its windows: sums, so that more windows add to a label).
public struct LabelPrototypes: Equatable, Sendable {
    public private(set) var centre: [Float]
    public private(set) var scale: Float
    public private(set) var labels: [String]
    public private(set) var sums: [[Float]]
    public private(set) var windows: [Int]

    /// The logits' scale for cosines: a cosine 0.1 higher makes a label e times likelier.
    static let temperature: Float = 10

    public var width: Int { centre.count }

    /// Prototypes of the labels of `embeddings`, seen from their mean.
    public init(embeddings: [[Float]], labels: [String]) {
        precondition(!embeddings.isEmpty && embeddings.count == labels.count)
        let p = embeddings[0].count
        var mean = [Float](repeating: 0, count: p)
        for e in embeddings { for j in 0..<p { mean[j] += e[j] } }
        for j in 0..<p { mean[j] /= Float(embeddings.count) }
        let distances = embeddings.map { e in (0..<p).reduce(Float(0)) { $0 + (e[$1] - mean[$1]) * (e[$1] - mean[$1]) }.squareRoot() }
        let median = distances.sorted()[distances.count / 2]
        centre = mean; scale = median > 0 ? median : 1
        self.labels = []; sums = []; windows = []
        add(embeddings: embeddings, labels: labels)
    }

    init(centre: [Float], scale: Float, labels: [String], sums: [[Float]], windows: [Int]) {
        self.centre = centre; self.scale = scale; self.labels = labels; self.sums = sums; self.windows = windows
    }

    /// Adds windows to their labels' sums; a label not yet known is appended.
    public mutating func add(embeddings: [[Float]], labels of: [String]) {
        let p = width
        for (e, label) in zip(embeddings, of) {
            precondition(e.count == p)
            let k: Int
            if let i = labels.firstIndex(of: label) { k = i } else {
                labels.append(label); sums.append([Float](repeating: 0, count: p)); windows.append(0); k = labels.count - 1
            }
            let d = (0..<p).map { e[$0] - centre[$0] }
            let norm = d.reduce(Float(0)) { $0 + $1 * $1 }.squareRoot()
            windows[k] += 1
            // A window at the centre has no direction; it counts, and adds nothing.
            guard norm > 0 else { continue }
            for j in 0..<p { sums[k][j] += d[j] / norm }
        }
    }

    /// These prototypes of `kept` labels only, in that order.
    public func keeping(_ kept: [String]) -> LabelPrototypes {
        let index = kept.map { labels.firstIndex(of: $0)! }
        return LabelPrototypes(centre: centre, scale: scale, labels: kept, sums: index.map { sums[$0] }, windows: index.map { windows[$0] })
    }

    /// The head that picks the nearest direction: weight (K, P) row by row, bias (K).
    public func head() -> (weight: [Float], bias: [Float]) {
        var weight: [Float] = [], bias: [Float] = []
        let gain = Self.temperature / scale
        for sum in sums {
            let norm = sum.reduce(Float(0)) { $0 + $1 * $1 }.squareRoot()
            let unit = norm > 0 ? sum.map { $0 / norm } : sum
            weight += unit.map { $0 * gain }
            bias.append(-zip(unit, centre).reduce(Float(0)) { $0 + $1.0 * $1.1 } * gain)
        }
        return (weight, bias)
    }

    static let group = "prototypes"

    func write(to root: HDF5Group) throws {
        let g = try root.createGroup(Self.group)
        defer { g.close() }
        try g.setAttribute("labels", labels)
        try g.setAttribute("scale", Double(scale))
        try g.write("centre", centre, shape: [width]).close()
        try g.write("sums", sums.flatMap { $0 }, shape: [labels.count, width]).close()
        try g.setAttribute("windows", windows)
    }

    /// The file's prototypes of a net whose embedding is `width` floats; nil when it has none.
    static func read(from root: HDF5Group, path: String, width: Int) throws -> LabelPrototypes? {
        guard try root.has(group) else { return nil }
        let g = try root.group(group)
        defer { g.close() }
        func damaged(_ what: String) -> ModelFileError { ModelFileError("\(path): \(group)/ \(what): a damaged weights file") }
        let labels = try g.stringArrayAttribute("labels"), scale = try g.doubleAttribute("scale")
        let (centre, centreShape) = try g.read("centre", as: Float.self)
        let (sums, sumsShape) = try g.read("sums", as: Float.self)
        guard case .ints(let windows) = try g.attribute("windows") else { throw damaged("windows is not a list of counts") }
        let k = labels.count
        guard centreShape == [width] else { throw damaged("centre has shape \(centreShape), the net's embedding \(width) floats") }
        guard sumsShape == [k, width], windows.count == k else {
            throw damaged("sums \(sumsShape) and \(windows.count) window counts for \(k) labels of \(width) floats")
        }
        guard scale > 0 && scale.isFinite && Float(scale).isNormal else { throw damaged("scale \(scale)") }
        guard centre.allSatisfy(\.isFinite), sums.allSatisfy(\.isFinite) else { throw damaged("holds NaN or infinity") }
        guard windows.allSatisfy({ $0 >= 0 }) else { throw damaged("a negative window count") }
        if let twice = labels.firstRepeated { throw damaged("the label '\(OneLine.excerpt(twice))' is given twice") }
        return LabelPrototypes(centre: centre, scale: Float(scale), labels: labels,
                               sums: (0..<k).map { Array(sums[($0 * width)..<(($0 + 1) * width)]) }, windows: windows)
    }
}

/// What `enroll` added to a model: the data and, per label, its clips and windows.
public struct EnrolmentRecord: Codable, Equatable, Sendable {
    public var data: String
    public var clips: [String: Int]
    public var windows: [String: Int]

    public init(data: String, clips: [String: Int], windows: [String: Int]) {
        self.data = data; self.clips = clips; self.windows = windows
    }
}

extension ActionClassifier {
    /// The net's embedding of each window (the head's input), and with flip averaging each
    /// window's mirror image's after all of them, with the labels to match. One net only.
    public func embeddings(_ windows: [Window]) -> (embeddings: [[Float]], labels: [String]) {
        precondition(members.count == 1 && channelMaps[0] == nil, "embeddings of one net on its own features")
        var values = windows.map(\.values), masks = windows.map(\.mask), labels = windows.map(\.label)
        if architecture.flipAverage { values += values.map(mirror.mirrored); masks += masks; labels += labels }
        var out: [[Float]] = []
        out.reserveCapacity(values.count)
        let p = model.head.inFeatures
        forwardInBatches(model, values: values, masks: masks) { _, n, _ in
            for i in 0..<n { out.append(Array(UnsafeBufferPointer(start: model.headInput + i * p, count: p))) }
        }
        return (out, labels)
    }

    /// The prototypes of a model that enrolls `windows`' labels (`enrolled`): the model's own
    /// labels' too (recorded by `train`; none with `only`), all seen from the model's centre
    /// when it has one, else from the windows'.
    public func prototypes(enrolling windows: [Window], labels enrolled: [String], only: Bool, path: String) throws -> LabelPrototypes {
        let (embeddings, of) = embeddings(windows)
        let order = only ? enrolled : labels + enrolled.filter { !labels.contains($0) }
        guard var result = prototypes else {
            if !only, let missing = labels.first(where: { !enrolled.contains($0) }) {
                throw ConfigError("\(path) has no prototypes of its labels (a model from before poseact 0.44): give the clips of "
                    + "'\(missing)' and its other labels in --data too, or --only to keep just the enrolled labels")
            }
            return LabelPrototypes(embeddings: embeddings, labels: of).keeping(order)
        }
        result.add(embeddings: embeddings, labels: of)
        return result.keeping(order)
    }

    /// This classifier with its head replaced by the nearest-prototype head of `prototypes`
    /// (their labels, in order), the rest of the net as it is.
    public func enrolled(_ prototypes: LabelPrototypes, record: EnrolmentRecord) -> ActionClassifier {
        precondition(members.count == 1 && prototypes.width == model.head.inFeatures)
        var arch = architecture
        arch.classes = prototypes.labels.count
        let net = arch.net(joints: spec.joints, maxBatch: Self.inferenceBatch, seed: 0)
        let source = Dictionary(uniqueKeysWithValues: model.state.map { ($0.name, $0.buffer) })
        for (name, buffer) in net.state where !Backbone.isHead(name) {
            buffer.pointer.update(from: source[name]!.pointer, count: buffer.count)
        }
        let (weight, bias) = prototypes.head()
        net.head.weight.value.pointer.update(from: weight, count: weight.count)
        net.head.bias.value.pointer.update(from: bias, count: bias.count)
        var training = self.training
        training.enrolled = (training.enrolled ?? []) + [record]
        // The run's test and validation figures were the old head's, not this one's.
        training.test = nil; training.validationAccuracy = nil; training.validationLoss = nil
        let result = ActionClassifier(labels: prototypes.labels, spec: spec, architecture: arch, training: training, model: net)
        result.prototypes = prototypes
        return result
    }
}
