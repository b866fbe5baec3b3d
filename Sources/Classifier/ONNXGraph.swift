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
