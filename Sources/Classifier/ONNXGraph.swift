import Foundation

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
    private typealias F = ONNXField
    enum Attribute {
        case int(Int), ints([Int]), float(Float)
    }
    private var nodes: [ProtoWriter] = []

    /// `from` under the name `name` (the graph's output).
    mutating func identity(_ from: String, as name: String) {
        var n = ProtoWriter()
        n.string(F.Node.input, from)
        n.string(F.Node.output, name)
        n.string(F.Node.name, name)
        n.string(F.Node.opType, "Identity")
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
        t.packedInts(F.Tensor.dims, dims.map(Int64.init))
        t.int(F.Tensor.dataType, F.Tensor.DataType.float)
        t.string(F.Tensor.name, n)
        var raw: [UInt8] = []
        raw.reserveCapacity(values.count * 4)
        for v in values { withUnsafeBytes(of: v.bitPattern.littleEndian) { raw.append(contentsOf: $0) } }
        t.data(F.Tensor.rawData, raw)
        initializers.append(t)
        return n
    }

    /// An int64 tensor (shapes, axes, indices); its name.
    mutating func ints(_ stem: String, _ values: [Int], dims: [Int]? = nil) -> String {
        let n = name(stem)
        var t = ProtoWriter()
        t.packedInts(F.Tensor.dims, (dims ?? [values.count]).map(Int64.init))
        t.int(F.Tensor.dataType, F.Tensor.DataType.int64)
        t.string(F.Tensor.name, n)
        var raw: [UInt8] = []
        for v in values { withUnsafeBytes(of: Int64(v).littleEndian) { raw.append(contentsOf: $0) } }
        t.data(F.Tensor.rawData, raw)
        initializers.append(t)
        return n
    }

    /// One node; its (first) output's name.
    @discardableResult
    mutating func node(_ op: String, _ inputs: [String], outputs: Int = 1, _ attributes: [String: Attribute] = [:]) -> String {
        let outs = (0..<outputs).map { _ in name(op.lowercased()) }
        var n = ProtoWriter()
        for i in inputs { n.string(F.Node.input, i) }
        for o in outs { n.string(F.Node.output, o) }
        n.string(F.Node.name, outs[0])
        n.string(F.Node.opType, op)
        for (key, value) in attributes.sorted(by: { $0.key < $1.key }) {
            n.message(F.Node.attribute) { a in
                a.string(F.Attribute.name, key)
                switch value {
                case .int(let v): a.int(F.Attribute.i, Int64(v)); a.int(F.Attribute.type, F.Attribute.Kind.int)
                case .ints(let vs): a.packedInts(F.Attribute.ints, vs.map(Int64.init)); a.int(F.Attribute.type, F.Attribute.Kind.ints)
                case .float(let v): a.float(F.Attribute.f, v); a.int(F.Attribute.type, F.Attribute.Kind.float)
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
            w.string(F.ValueInfo.name, name)
            w.message(F.ValueInfo.type) { type in
                type.message(F.TypeProto.tensorType) { tensor in
                    tensor.int(F.TypeProto.TensorType.elemType, F.Tensor.DataType.float)
                    tensor.message(F.TypeProto.TensorType.shape) { shape in
                        for d in dims {
                            shape.message(F.TensorShape.dim) { dim in
                                if let v = d as? Int { dim.int(F.TensorShape.Dimension.dimValue, Int64(v)) } else { dim.string(F.TensorShape.Dimension.dimParam, "\(d)") }
                            }
                        }
                    }
                }
            }
        }
        var m = ProtoWriter()
        m.int(F.Model.irVersion, F.irVersion)
        m.string(F.Model.producerName, "poseact")
        m.message(F.Model.opsetImport) { op in op.string(F.OperatorSetId.domain, ""); op.int(F.OperatorSetId.version, F.opsetVersion) }
        m.message(F.Model.graph) { g in
            for n in nodes { g.data(F.Graph.node, n.bytes) }
            g.string(F.Graph.name, "poseact")
            for t in initializers { g.data(F.Graph.initializer, t.bytes) }
            for (name, dims) in inputs { g.message(F.Graph.input) { valueInfo(&$0, name, dims) } }
            for (name, dims) in outputs { g.message(F.Graph.output) { valueInfo(&$0, name, dims) } }
        }
        for (k, v) in metadata.sorted(by: { $0.key < $1.key }) {
            m.message(F.Model.metadataProps) { e in e.string(F.StringStringEntry.key, k); e.string(F.StringStringEntry.value, v) }
        }
        return m.bytes
    }
}
