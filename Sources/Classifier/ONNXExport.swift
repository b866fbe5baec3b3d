import Dataset
import Foundation
import JSONLines
import Tensor

/// The protobuf wire format, as much of it as an ONNX model needs: varints, 32-bit floats
/// and length-delimited fields. Small enough to own (a few dozen lines) rather than
/// generating swift-protobuf code for all of onnx.proto.
struct ProtoWriter {
    private(set) var bytes: [UInt8] = []

    private mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 { bytes.append(UInt8(v & 0x7F) | 0x80); v >>= 7 }
        bytes.append(UInt8(v))
    }
    private mutating func tag(_ field: Int, _ wire: UInt64) { varint(UInt64(field) << 3 | wire) }

    mutating func int(_ field: Int, _ v: Int64) { tag(field, 0); varint(UInt64(bitPattern: v)) }
    mutating func float(_ field: Int, _ v: Float) {
        tag(field, 5)
        withUnsafeBytes(of: v.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }
    mutating func data(_ field: Int, _ d: [UInt8]) { tag(field, 2); varint(UInt64(d.count)); bytes.append(contentsOf: d) }
    mutating func string(_ field: Int, _ s: String) { data(field, Array(s.utf8)) }
    mutating func message(_ field: Int, _ build: (inout ProtoWriter) -> Void) {
        var m = ProtoWriter()
        build(&m)
        data(field, m.bytes)
    }
    mutating func packedInts(_ field: Int, _ vs: [Int64]) {
        var m = ProtoWriter()
        for v in vs { m.varint(UInt64(bitPattern: v)) }
        data(field, m.bytes)
    }
}

/// An ONNX graph being built: nodes, initializers (weights), inputs and outputs.
struct ONNXGraph {
    enum Attribute {
        case int(Int), ints([Int]), float(Float)
    }
    private var nodes: [ProtoWriter] = []

    /// `from` under the name `name` (the graph's output).
    mutating func identity(_ from: String, as name: String) {
        var n = ProtoWriter()
        n.string(1, from)
        n.string(2, name)
        n.string(3, name)
        n.string(4, "Identity")
        nodes.append(n)
    }
    private var initializers: [ProtoWriter] = []
    private var counter = 0

    /// A fresh name.
    mutating func name(_ stem: String) -> String { counter += 1; return "\(stem)_\(counter)" }

    /// A float tensor of `dims` (row-major `values`); its name.
    @discardableResult
    mutating func constant(_ stem: String, _ values: [Float], dims: [Int]) -> String {
        precondition(values.count == dims.reduce(1, *))
        let n = name(stem)
        var t = ProtoWriter()
        t.packedInts(1, dims.map(Int64.init))
        t.int(2, 1)   // FLOAT
        t.string(8, n)
        var raw: [UInt8] = []
        raw.reserveCapacity(values.count * 4)
        for v in values { withUnsafeBytes(of: v.bitPattern.littleEndian) { raw.append(contentsOf: $0) } }
        t.data(9, raw)
        initializers.append(t)
        return n
    }

    /// An int64 tensor (shapes, axes, indices); its name.
    mutating func ints(_ stem: String, _ values: [Int], dims: [Int]? = nil) -> String {
        let n = name(stem)
        var t = ProtoWriter()
        t.packedInts(1, (dims ?? [values.count]).map(Int64.init))
        t.int(2, 7)   // INT64
        t.string(8, n)
        var raw: [UInt8] = []
        for v in values { withUnsafeBytes(of: Int64(v).littleEndian) { raw.append(contentsOf: $0) } }
        t.data(9, raw)
        initializers.append(t)
        return n
    }

    /// One node; its (first) output's name.
    @discardableResult
    mutating func node(_ op: String, _ inputs: [String], outputs: Int = 1, _ attributes: [String: Attribute] = [:]) -> String {
        let outs = (0..<outputs).map { _ in name(op.lowercased()) }
        var n = ProtoWriter()
        for i in inputs { n.string(1, i) }
        for o in outs { n.string(2, o) }
        n.string(3, outs[0])
        n.string(4, op)
        for (key, value) in attributes.sorted(by: { $0.key < $1.key }) {
            n.message(5) { a in
                a.string(1, key)
                switch value {
                case .int(let v): a.int(3, Int64(v)); a.int(20, 2)
                case .ints(let vs): a.packedInts(8, vs.map(Int64.init)); a.int(20, 7)
                case .float(let v): a.float(2, v); a.int(20, 1)
                }
            }
        }
        nodes.append(n)
        return outs[0]
    }

    /// The model: opset 17, float inputs and outputs of the given shapes (a String is a
    /// symbolic dimension), `metadata` as key/value strings.
    func model(inputs: [(String, [Any])], outputs: [(String, [Any])], metadata: [String: String]) -> [UInt8] {
        func valueInfo(_ w: inout ProtoWriter, _ name: String, _ dims: [Any]) {
            w.string(1, name)
            w.message(2) { type in
                type.message(1) { tensor in
                    tensor.int(1, 1)   // FLOAT
                    tensor.message(2) { shape in
                        for d in dims {
                            shape.message(1) { dim in
                                if let v = d as? Int { dim.int(1, Int64(v)) } else { dim.string(2, "\(d)") }
                            }
                        }
                    }
                }
            }
        }
        var m = ProtoWriter()
        m.int(1, 8)   // IR version 8: opset 17's
        m.string(2, "poseact")
        m.message(8) { op in op.string(1, ""); op.int(2, 17) }
        m.message(7) { g in
            for n in nodes { g.data(1, n.bytes) }
            g.string(2, "poseact")
            for t in initializers { g.data(5, t.bytes) }
            for (name, dims) in inputs { g.message(11) { valueInfo(&$0, name, dims) } }
            for (name, dims) in outputs { g.message(12) { valueInfo(&$0, name, dims) } }
        }
        for (k, v) in metadata.sorted(by: { $0.key < $1.key }) {
            m.message(14) { e in e.string(1, k); e.string(2, v) }
        }
        return m.bytes
    }
}

/// A model that ONNX export cannot write (yet), with the reason.
public struct ONNXExportError: Error, CustomStringConvertible {
    public let description: String
}

extension ActionClassifier {
    /// The model as ONNX (opset 17): inputs `windows` (batch, frames, features) and `mask`
    /// (batch, frames), output `probabilities` (batch, labels), exactly what
    /// `probabilities(values:masks:)` computes: each member's net (a TCN) on its channels,
    /// softmax, members averaged by weight, and with `flipAverage` the same on the mirror
    /// image, averaged. The labels and the whole preprocessing spec are in the metadata
    /// (`labels`, `preprocessing`: JSON), so an app can make the windows itself.
    public func onnx() throws -> [UInt8] {
        var g = ONNXGraph()
        let F = spec.channels, T = spec.window
        var x = "windows", mask = "mask"
        if architecture.flipAverage {
            // The mirror image is a fixed permutation of the channels with some signs turned:
            // a (F, F) matrix, found by mirroring each unit vector. The windows and their
            // mirror images go through the nets as one batch of 2·B (the weights once in the
            // file), then the two halves are averaged.
            var matrix = [Float](repeating: 0, count: F * F)
            for i in 0..<F {
                var e = [Float](repeating: 0, count: F)
                e[i] = 1
                let m = AugmentationSpec.flipped(e, layout: spec.joints, features: spec.features)
                for j in 0..<F { matrix[i * F + j] = m[j] }
            }
            let mirrored = g.node("MatMul", ["windows", g.constant("mirror", matrix, dims: [F, F])])
            x = g.node("Concat", ["windows", mirrored], ["axis": .int(0)])
            mask = g.node("Concat", ["mask", "mask"], ["axis": .int(0)])
        }
        // Every member on its channels; their probabilities averaged by weight.
        let total = members.reduce(0) { $0 + $1.weight }
        var sum: String?
        for (member, map) in zip(members, channelMaps) {
            guard let tcn = member.net as? TCN else {
                throw ONNXExportError(description: "ONNX export writes TCN nets for now; this model has a \(member.architecture.type) net")
            }
            let h = map.map { g.node("Gather", [x, g.ints("channels", $0)], ["axis": .int(2)]) } ?? x
            let p = g.node("Softmax", [try tcn.onnx(&g, input: h, mask: mask)], ["axis": .int(1)])
            let scaled = members.count > 1 ? g.node("Mul", [p, g.constant("weight", [Float(member.weight / total)], dims: [1])]) : p
            sum = sum.map { g.node("Add", [$0, scaled]) } ?? scaled
        }
        var out = sum!
        if architecture.flipAverage {
            let halves = g.node("Reshape", [out, g.ints("shape", [2, -1, labels.count])])   // (2, B, K)
            out = g.node("ReduceMean", [halves], ["axes": .ints([0]), "keepdims": .int(0)])
        }
        g.identity(out, as: "probabilities")
        let metadata = ["labels": JSONLines.encode(labels), "preprocessing": spec.json(),
                        "inputs": "windows: (batch, frames, features) as poseact's Preprocessing.window makes them; mask: (batch, frames), 1 for a real pose",
                        "producer": "poseact"]
        return g.model(inputs: [("windows", ["batch", T, F]), ("mask", ["batch", T])],
                           outputs: [("probabilities", ["batch", labels.count])], metadata: metadata)
    }
}

extension TCN {
    /// The net as ONNX nodes on `x` (batch, frames, channels) and `mask` (batch, frames):
    /// the logits (batch, classes), as `forward` computes them in evaluation.
    func onnx(_ g: inout ONNXGraph, input x: String, mask: String) throws -> String {
        var h = g.node("Transpose", [x], ["perm": .ints([0, 2, 1])])   // (B, C, T): ONNX's channels first
        if let inputNorm { h = inputNorm.onnx(&g, h) }
        for block in blocks {
            let conv = block.conv
            guard conv.stride == 1 else { throw ONNXExportError(description: "ONNX export: a strided TCN convolution") }
            let OC = conv.outChannels, C = conv.inChannels, K = conv.kernel
            // poseact keeps the filter as [oc][k][c]; ONNX's Conv wants [oc][c][k].
            var w = [Float](repeating: 0, count: OC * C * K)
            let src = conv.weight.value.pointer
            for o in 0..<OC { for k in 0..<K { for c in 0..<C { w[(o * C + c) * K + k] = src[(o * K + k) * C + c] } } }
            let pad = conv.dilation * (K - 1)
            var y = g.node("Conv", [h, g.constant("conv", w, dims: [OC, C, K])],
                           ["dilations": .ints([conv.dilation]), "kernel_shape": .ints([K]), "pads": .ints([conv.padLeft, pad - conv.padLeft]),
                            "strides": .ints([1])])
            y = block.norm.onnx(&g, y)
            y = g.node("Relu", [y])
            if block.residual { y = g.node("Add", [h, y]) }
            h = y
        }
        // Pooling over the valid frames; a window without one pools to zeros.
        let m = g.node("Unsqueeze", [mask, g.ints("axis", [1])])                       // (B, 1, T)
        let count = g.node("ReduceSum", [m, g.ints("axes", [2])], ["keepdims": .int(0)])  // (B, 1)
        func mean() -> String {
            let sum = g.node("ReduceSum", [g.node("Mul", [h, m]), g.ints("axes", [2])], ["keepdims": .int(0)])
            let safe = g.node("Max", [count, g.constant("tiny", [1e-30], dims: [1])])
            return g.node("Div", [sum, safe])
        }
        func max() -> String {
            let zero = g.constant("zero", [0], dims: [1])
            let valid = g.node("Greater", [m, zero])
            let masked = g.node("Where", [valid, h, g.constant("lowest", [-Float.greatestFiniteMagnitude], dims: [1])])
            let top = g.node("ReduceMax", [masked], ["axes": .ints([2]), "keepdims": .int(0)])
            return g.node("Where", [g.node("Greater", [count, zero]), top, zero])
        }
        let pooled: String
        switch config.pooling {
        case .mean: pooled = mean()
        case .max: pooled = max()
        case .meanMax: pooled = g.node("Concat", [mean(), max()], ["axis": .int(1)])
        }
        let w = Array(UnsafeBufferPointer(start: head.weight.value.pointer, count: head.weight.count))
        let b = Array(UnsafeBufferPointer(start: head.bias.value.pointer, count: head.bias.count))
        return g.node("Gemm", [pooled, g.constant("head", w, dims: [config.classes, w.count / config.classes]),
                               g.constant("head_bias", b, dims: [config.classes])], ["transB": .int(1)])
    }
}

extension BatchNorm {
    /// Evaluation-mode batch norm over axis 1 of `x` (running statistics).
    func onnx(_ g: inout ONNXGraph, _ x: String) -> String {
        func values(_ b: FloatBuffer) -> [Float] { Array(UnsafeBufferPointer(start: b.pointer, count: channels)) }
        return g.node("BatchNormalization", [x, g.constant("bn_scale", values(gamma.value), dims: [channels]),
                                             g.constant("bn_bias", values(beta.value), dims: [channels]),
                                             g.constant("bn_mean", values(runningMean), dims: [channels]),
                                             g.constant("bn_var", values(runningVar), dims: [channels])],
                      ["epsilon": .float(eps)])
    }
}
