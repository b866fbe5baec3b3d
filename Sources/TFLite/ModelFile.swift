// The decoded contents of a `.tflite` file (TFLite schema version 3, identifier "TFL3").
//
// Only what an interpreter needs is decoded; everything decoded is validated (indices in
// range, shapes sane, buffers inside the file and of the right size), so code using a
// `ModelFile` can index `subgraph.tensors[i]` and `buffers[t.buffer]` without checking.
// Field numbers below are vtable slots in the schema's field order (a union takes two).

#if canImport(Glibc)
import Basics
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum TFLiteFailure {}
public typealias TFLiteError = OneLineError<TFLiteFailure>

// MARK: - Enums

public enum TensorType: Int8, Sendable {
    case float32 = 0, float16 = 1, int32 = 2, uint8 = 3, int64 = 4, string = 5, bool = 6,
         int16 = 7, complex64 = 8, int8 = 9, float64 = 10, complex128 = 11, uint64 = 12,
         resource = 13, variant = 14, uint32 = 15, uint16 = 16, int4 = 17, bfloat16 = 18

    public var name: String {
        switch self {
        case .float32: return "FLOAT32"
        case .float16: return "FLOAT16"
        case .int32: return "INT32"
        case .uint8: return "UINT8"
        case .int64: return "INT64"
        case .string: return "STRING"
        case .bool: return "BOOL"
        case .int16: return "INT16"
        case .complex64: return "COMPLEX64"
        case .int8: return "INT8"
        case .float64: return "FLOAT64"
        case .complex128: return "COMPLEX128"
        case .uint64: return "UINT64"
        case .resource: return "RESOURCE"
        case .variant: return "VARIANT"
        case .uint32: return "UINT32"
        case .uint16: return "UINT16"
        case .int4: return "INT4"
        case .bfloat16: return "BFLOAT16"
        }
    }

    /// Bytes per element; nil for types without a fixed element size
    /// (string, resource, variant, and the packed int4).
    public var byteSize: Int? {
        switch self {
        case .bool, .uint8, .int8: return 1
        case .float16, .int16, .uint16, .bfloat16: return 2
        case .float32, .int32, .uint32: return 4
        case .int64, .uint64, .float64, .complex64: return 8
        case .complex128: return 16
        case .string, .resource, .variant, .int4: return nil
        }
    }
}

public enum Padding: Int8, Sendable { case same = 0, valid = 1 }

public enum Activation: Int8, Sendable {
    case none = 0, relu = 1, reluN1To1 = 2, relu6 = 3, tanh = 4, signBit = 5
}

// MARK: - Operator codes

public struct OperatorCode: Sendable {
    /// max(deprecated_builtin_code, builtin_code), as TFLite does.
    public let builtinCode: Int32
    public let customCode: String?
    public let version: Int32

    /// "CONV_2D", ...; "CUSTOM(name)" for custom operators; "BUILTIN_<n>" if unknown.
    public var name: String {
        if builtinCode == OperatorCode.customBuiltinCode {
            return "CUSTOM(\(customCode ?? ""))"
        }
        return OperatorCode.builtinName(builtinCode) ?? "BUILTIN_\(builtinCode)"
    }

    /// The BuiltinOperator code of CUSTOM.
    public static let customBuiltinCode: Int32 = 32

    /// The schema name of a builtin operator code, nil if the code is not in the table.
    public static func builtinName(_ code: Int32) -> String? {
        guard code >= 0, Int(code) < builtinNames.count else { return nil }
        return builtinNames[Int(code)]
    }

    /// BuiltinOperator names 0...205, in schema order (one row of ten per line).
    public static let builtinNames: [String] = [
        /*   0 */ "ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D",
                  "DEPTH_TO_SPACE", "DEQUANTIZE", "EMBEDDING_LOOKUP", "FLOOR", "FULLY_CONNECTED",
        /*  10 */ "HASHTABLE_LOOKUP", "L2_NORMALIZATION", "L2_POOL_2D", "LOCAL_RESPONSE_NORMALIZATION", "LOGISTIC",
                  "LSH_PROJECTION", "LSTM", "MAX_POOL_2D", "MUL", "RELU",
        /*  20 */ "RELU_N1_TO_1", "RELU6", "RESHAPE", "RESIZE_BILINEAR", "RNN",
                  "SOFTMAX", "SPACE_TO_DEPTH", "SVDF", "TANH", "CONCAT_EMBEDDINGS",
        /*  30 */ "SKIP_GRAM", "CALL", "CUSTOM", "EMBEDDING_LOOKUP_SPARSE", "PAD",
                  "UNIDIRECTIONAL_SEQUENCE_RNN", "GATHER", "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND", "TRANSPOSE",
        /*  40 */ "MEAN", "SUB", "DIV", "SQUEEZE", "UNIDIRECTIONAL_SEQUENCE_LSTM",
                  "STRIDED_SLICE", "BIDIRECTIONAL_SEQUENCE_RNN", "EXP", "TOPK_V2", "SPLIT",
        /*  50 */ "LOG_SOFTMAX", "DELEGATE", "BIDIRECTIONAL_SEQUENCE_LSTM", "CAST", "PRELU",
                  "MAXIMUM", "ARG_MAX", "MINIMUM", "LESS", "NEG",
        /*  60 */ "PADV2", "GREATER", "GREATER_EQUAL", "LESS_EQUAL", "SELECT",
                  "SLICE", "SIN", "TRANSPOSE_CONV", "SPARSE_TO_DENSE", "TILE",
        /*  70 */ "EXPAND_DIMS", "EQUAL", "NOT_EQUAL", "LOG", "SUM",
                  "SQRT", "RSQRT", "SHAPE", "POW", "ARG_MIN",
        /*  80 */ "FAKE_QUANT", "REDUCE_PROD", "REDUCE_MAX", "PACK", "LOGICAL_OR",
                  "ONE_HOT", "LOGICAL_AND", "LOGICAL_NOT", "UNPACK", "REDUCE_MIN",
        /*  90 */ "FLOOR_DIV", "REDUCE_ANY", "SQUARE", "ZEROS_LIKE", "FILL",
                  "FLOOR_MOD", "RANGE", "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU", "SQUARED_DIFFERENCE",
        /* 100 */ "MIRROR_PAD", "ABS", "SPLIT_V", "UNIQUE", "CEIL",
                  "REVERSE_V2", "ADD_N", "GATHER_ND", "COS", "WHERE",
        /* 110 */ "RANK", "ELU", "REVERSE_SEQUENCE", "MATRIX_DIAG", "QUANTIZE",
                  "MATRIX_SET_DIAG", "ROUND", "HARD_SWISH", "IF", "WHILE",
        /* 120 */ "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5", "SCATTER_ND", "SELECT_V2", "DENSIFY",
                  "SEGMENT_SUM", "BATCH_MATMUL", "PLACEHOLDER_FOR_GREATER_OP_CODES", "CUMSUM", "CALL_ONCE",
        /* 130 */ "BROADCAST_TO", "RFFT2D", "CONV_3D", "IMAG", "REAL",
                  "COMPLEX_ABS", "HASHTABLE", "HASHTABLE_FIND", "HASHTABLE_IMPORT", "HASHTABLE_SIZE",
        /* 140 */ "REDUCE_ALL", "CONV_3D_TRANSPOSE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE",
                  "BROADCAST_ARGS", "RANDOM_STANDARD_NORMAL", "BUCKETIZE", "RANDOM_UNIFORM", "MULTINOMIAL",
        /* 150 */ "GELU", "DYNAMIC_UPDATE_SLICE", "RELU_0_TO_1", "UNSORTED_SEGMENT_PROD", "UNSORTED_SEGMENT_MAX",
                  "UNSORTED_SEGMENT_SUM", "ATAN2", "UNSORTED_SEGMENT_MIN", "SIGN", "BITCAST",
        /* 160 */ "BITWISE_XOR", "RIGHT_SHIFT", "STABLEHLO_LOGISTIC", "STABLEHLO_ADD", "STABLEHLO_DIVIDE",
                  "STABLEHLO_MULTIPLY", "STABLEHLO_MAXIMUM", "STABLEHLO_RESHAPE", "STABLEHLO_CLAMP", "STABLEHLO_CONCATENATE",
        /* 170 */ "STABLEHLO_BROADCAST_IN_DIM", "STABLEHLO_CONVOLUTION", "STABLEHLO_SLICE", "STABLEHLO_CUSTOM_CALL", "STABLEHLO_REDUCE",
                  "STABLEHLO_ABS", "STABLEHLO_AND", "STABLEHLO_COSINE", "STABLEHLO_EXPONENTIAL", "STABLEHLO_FLOOR",
        /* 180 */ "STABLEHLO_LOG", "STABLEHLO_MINIMUM", "STABLEHLO_NEGATE", "STABLEHLO_OR", "STABLEHLO_POWER",
                  "STABLEHLO_REMAINDER", "STABLEHLO_RSQRT", "STABLEHLO_SELECT", "STABLEHLO_SUBTRACT", "STABLEHLO_TANH",
        /* 190 */ "STABLEHLO_SCATTER", "STABLEHLO_COMPARE", "STABLEHLO_CONVERT", "STABLEHLO_DYNAMIC_SLICE", "STABLEHLO_DYNAMIC_UPDATE_SLICE",
                  "STABLEHLO_PAD", "STABLEHLO_IOTA", "STABLEHLO_DOT_GENERAL", "STABLEHLO_REDUCE_WINDOW", "STABLEHLO_SORT",
        /* 200 */ "STABLEHLO_WHILE", "STABLEHLO_GATHER", "STABLEHLO_TRANSPOSE", "DILATE", "STABLEHLO_RNG_BIT_GENERATOR",
                  "REDUCE_WINDOW",
    ]
}

// MARK: - Tensors

public enum DimensionFormat: Sendable { case dense, sparseCSR }

public struct DimensionMetadata: Sendable {
    public let format: DimensionFormat
    public let denseSize: Int32
    /// CSR segments (row pointers), widened from the uint8/uint16/int32 vector; empty if dense.
    public let segments: [Int32]
    /// CSR indices (column indices), widened likewise; empty if dense.
    public let indices: [Int32]
}

public struct Sparsity: Sendable {
    public let traversalOrder: [Int32]
    public let blockMap: [Int32]
    public let dimMetadata: [DimensionMetadata]
}

public struct TensorInfo: Sendable {
    public let name: String
    public let shape: [Int32]
    public let type: TensorType
    /// Index into `ModelFile.buffers` (0 = no data).
    public let buffer: Int
    public let sparsity: Sparsity?
    public let isVariable: Bool
    /// True if the quantization table has a non-empty `scale`.
    public let hasQuantization: Bool

    /// Product of `shape` (1 for a scalar); validated to be at most 2^31.
    public var elementCount: Int { shape.reduce(1) { $0 * Int($1) } }
}

// MARK: - Operators

public enum OperatorOptions: Sendable {
    case none
    case conv2D(padding: Padding, strideW: Int, strideH: Int, activation: Activation, dilationW: Int, dilationH: Int)
    case depthwiseConv2D(padding: Padding, strideW: Int, strideH: Int, depthMultiplier: Int, activation: Activation, dilationW: Int, dilationH: Int)
    case pool2D(padding: Padding, strideW: Int, strideH: Int, filterW: Int, filterH: Int, activation: Activation)
    case add(activation: Activation)
    case concatenation(axis: Int, activation: Activation)
    case reshape(newShape: [Int32])
    case resizeBilinear(alignCorners: Bool, halfPixelCenters: Bool)
    case depthToSpace(blockSize: Int)
    /// Options present but of a kind not decoded here.
    case other(unionType: UInt8)

    /// BuiltinOptions union indices of the decoded option tables.
    public enum UnionType {
        public static let conv2D: UInt8 = 1
        public static let depthwiseConv2D: UInt8 = 2
        public static let pool2D: UInt8 = 5
        public static let concatenation: UInt8 = 10
        public static let add: UInt8 = 11
        public static let resizeBilinear: UInt8 = 15
        public static let reshape: UInt8 = 17
        public static let depthToSpace: UInt8 = 94
    }
}

public struct Operator: Sendable {
    public let opcodeIndex: Int
    /// Tensor indices; -1 = optional input absent.
    public let inputs: [Int32]
    public let outputs: [Int32]
    public let options: OperatorOptions
}

public struct SubGraph: Sendable {
    public let name: String
    public let tensors: [TensorInfo]
    public let inputs: [Int32]
    public let outputs: [Int32]
    public let operators: [Operator]
}

// MARK: - Model

public final class ModelFile: @unchecked Sendable {
    /// The whole file.
    public let bytes: [UInt8]
    public let version: UInt32
    public let description: String
    public let operatorCodes: [OperatorCode]
    public let subgraphs: [SubGraph]
    /// Byte range of each buffer's data inside `bytes` (empty range = no data).
    public let buffers: [Range<Int>]

    /// Largest element count accepted for one tensor.
    public static let maxTensorElements = 1 << 31
    /// Largest rank accepted for one tensor.
    public static let maxRank = 16

    public convenience init(bytes: [UInt8]) throws {
        try self.init(bytes: bytes, sourceName: "data")
    }

    public convenience init(path: String) throws {
        let bytes = try ModelFile.readFile(path)
        do {
            try self.init(bytes: bytes, sourceName: path)
        } catch let error as TFLiteError where !error.message.hasPrefix(path) {
            throw TFLiteError("\(path): \(error.message)")
        }
    }

    /// `sourceName` names the data in identifier / emptiness errors ("X is empty").
    public init(bytes: [UInt8], sourceName: String) throws {
        if bytes.isEmpty { throw TFLiteError("\(sourceName) is empty") }
        let fb = FlatBuffer(bytes: bytes)
        guard fb.fileIdentifier == "TFL3" else {
            throw TFLiteError("\(sourceName) is not a TFLite model (no TFL3 identifier)")
        }
        // Largest file whose offsets a flatbuffer can address; also keeps all Int arithmetic on
        // positions far from overflow.
        if bytes.count > Int(UInt32.max) {
            throw TFLiteError("\(sourceName) is too large (\(bytes.count) bytes)")
        }
        let model = try fb.rootTable(path: "model")

        // Model: version 0, operator_codes 1, subgraphs 2, description 3, buffers 4.
        let version = try model.uint32(0, "version")
        let description = try model.string(3, "description") ?? ""

        // Operator codes.
        var operatorCodes: [OperatorCode] = []
        if let v = try model.vector(1, "operator_codes", elementSize: 4) {
            operatorCodes.reserveCapacity(min(v.count, 1024))
            for i in 0..<v.count {
                let t = try v.table(i, path: "operator code \(i)")
                operatorCodes.append(try ModelFile.decodeOperatorCode(t))
            }
        }

        // Buffers.
        var buffers: [Range<Int>] = []
        if let v = try model.vector(4, "buffers", elementSize: 4) {
            buffers.reserveCapacity(min(v.count, 1024))
            for i in 0..<v.count {
                let t = try v.table(i, path: "buffer \(i)")
                buffers.append(try ModelFile.decodeBuffer(t, fileSize: bytes.count))
            }
        }

        // Subgraphs.
        var subgraphs: [SubGraph] = []
        guard let sv = try model.vector(2, "subgraphs", elementSize: 4), sv.count > 0 else {
            throw TFLiteError("corrupt file: model has no subgraphs")
        }
        subgraphs.reserveCapacity(min(sv.count, 1024))
        for s in 0..<sv.count {
            let t = try sv.table(s, path: "subgraph \(s)")
            subgraphs.append(try ModelFile.decodeSubGraph(t, index: s, operatorCodeCount: operatorCodes.count,
                                                          buffers: buffers))
        }

        self.bytes = bytes
        self.version = version
        self.description = description
        self.operatorCodes = operatorCodes
        self.subgraphs = subgraphs
        self.buffers = buffers
    }

    // MARK: file reading

    /// The largest model file poseact reads: BlazePose's largest is 27 MB, and the bytes are
    /// held in memory (a sparse 3 GB file costs nothing on disk).
    public static let maxFileBytes = 256 << 20

    static func readFile(_ path: String) throws -> [UInt8] {
        do {
            return [UInt8](try InputFile.read(path, limit: maxFileBytes, what: "TFLite model"))
        } catch let error as InputFileError {
            throw TFLiteError(error.message)
        }
    }

    // MARK: decoding

    // OperatorCode: deprecated_builtin_code 0, custom_code 1, version 2, builtin_code 3.
    static func decodeOperatorCode(_ t: FlatBuffer.Table) throws -> OperatorCode {
        let deprecated = Int32(try t.int8(0, "deprecated_builtin_code"))
        let custom = try t.string(1, "custom_code")
        let version = try t.int32(2, "version", default: 1)
        let code = try t.int32(3, "builtin_code")
        let builtin = max(deprecated, code)
        if builtin < 0 {
            throw TFLiteError("corrupt file: \(t.path) has a negative builtin code \(builtin)")
        }
        return OperatorCode(builtinCode: builtin, customCode: custom, version: version)
    }

    // Buffer: data 0, offset 1, size 2. Offsets > 1 locate data outside the flatbuffer.
    static func decodeBuffer(_ t: FlatBuffer.Table, fileSize: Int) throws -> Range<Int> {
        let offset = try t.uint64(1, "offset")
        if offset > 1 {
            let size = try t.uint64(2, "size")
            if offset > UInt64(fileSize) || size > UInt64(fileSize) - offset {
                throw TFLiteError("truncated or corrupt file: \(t.path) data (offset \(offset), size \(size)) runs past the end of the \(fileSize)-byte file")
            }
            return Int(offset)..<(Int(offset) + Int(size))
        }
        if let data = try t.vector(0, "data", elementSize: 1) {
            return data.byteRange
        }
        return 0..<0
    }

    // SubGraph: tensors 0, inputs 1, outputs 2, operators 3, name 4.
    static func decodeSubGraph(_ t: FlatBuffer.Table, index s: Int, operatorCodeCount: Int,
                               buffers: [Range<Int>]) throws -> SubGraph {
        let name = try t.string(4, "name") ?? ""
        var tensors: [TensorInfo] = []
        if let v = try t.vector(0, "tensors", elementSize: 4) {
            tensors.reserveCapacity(min(v.count, 1024))
            for i in 0..<v.count {
                let tt = try v.table(i, path: "subgraph \(s) tensor \(i)")
                tensors.append(try decodeTensor(tt, buffers: buffers))
            }
        }
        let tensorCount = tensors.count
        func checkIndices(_ list: [Int32], _ what: String, allowAbsent: Bool) throws {
            for (k, idx) in list.enumerated() {
                if allowAbsent && idx == -1 { continue }
                if idx < 0 || Int(idx) >= tensorCount {
                    throw TFLiteError("corrupt file: \(what) \(k) is tensor \(idx), out of range (subgraph \(s) has \(tensorCount) tensors)")
                }
            }
        }
        let inputs = try t.vector(1, "inputs", elementSize: 4)?.int32s() ?? []
        let outputs = try t.vector(2, "outputs", elementSize: 4)?.int32s() ?? []
        try checkIndices(inputs, "subgraph \(s) input", allowAbsent: false)
        try checkIndices(outputs, "subgraph \(s) output", allowAbsent: false)

        var operators: [Operator] = []
        if let v = try t.vector(3, "operators", elementSize: 4) {
            operators.reserveCapacity(min(v.count, 1024))
            for i in 0..<v.count {
                let path = "subgraph \(s) operator \(i)"
                let ot = try v.table(i, path: path)
                let op = try decodeOperator(ot)
                if op.opcodeIndex >= operatorCodeCount {
                    throw TFLiteError("corrupt file: \(path) opcode index \(op.opcodeIndex) is out of range (model has \(operatorCodeCount) operator codes)")
                }
                try checkIndices(op.inputs, "\(path) input", allowAbsent: true)
                try checkIndices(op.outputs, "\(path) output", allowAbsent: false)
                operators.append(op)
            }
        }
        return SubGraph(name: name, tensors: tensors, inputs: inputs, outputs: outputs, operators: operators)
    }

    // Tensor: shape 0, type 1, buffer 2, name 3, quantization 4, is_variable 5, sparsity 6,
    // shape_signature 7, has_rank 8, variant_tensors 9.
    static func decodeTensor(_ t: FlatBuffer.Table, buffers: [Range<Int>]) throws -> TensorInfo {
        let name = try t.string(3, "name") ?? ""
        let label = name.isEmpty ? t.path : "\(t.path) (\(name))"
        // Cap the rank before materialising the shape.
        let shapeVector = try t.vector(0, "shape", elementSize: 4)
        if let sv = shapeVector, sv.count > maxRank {
            throw TFLiteError("corrupt file: \(label) has rank \(sv.count) (at most \(maxRank) supported)")
        }
        let shape = shapeVector?.int32s() ?? []
        var elements = 1
        for d in shape {
            if d < 0 {
                throw TFLiteError("corrupt file: \(label) has a negative dimension in shape \(shape)")
            }
            elements *= Int(d)  // both factors <= 2^31: no overflow before the check below
            if elements > maxTensorElements {
                throw TFLiteError("corrupt file: \(label) shape \(shape) has more than 2^31 elements")
            }
        }
        let rawType = try t.int8(1, "type")
        guard let type = TensorType(rawValue: rawType) else {
            throw TFLiteError("corrupt file: \(label) has unknown type \(rawType)")
        }
        let bufferIndex = Int(try t.uint32(2, "buffer"))
        if bufferIndex >= buffers.count {
            throw TFLiteError("corrupt file: \(label) buffer index \(bufferIndex) is out of range (model has \(buffers.count) buffers)")
        }
        var hasQuantization = false
        if let q = try t.table(4, "quantization") {
            // QuantizationParameters: min 0, max 1, scale 2, zero_point 3, ...
            if let scale = try q.vector(2, "scale", elementSize: 4) { hasQuantization = scale.count > 0 }
        }
        let isVariable = try t.bool(5, "is_variable")
        var sparsity: Sparsity? = nil
        if let st = try t.table(6, "sparsity") {
            sparsity = try decodeSparsity(st, label: label)
        }

        let data = buffers[bufferIndex]
        if !data.isEmpty && sparsity == nil, let size = type.byteSize {
            let expected = elements * size
            if data.count != expected {
                throw TFLiteError("corrupt file: \(label) has \(data.count) bytes of data but shape \(shape) of \(type.name) needs \(expected)")
            }
        }
        return TensorInfo(name: name, shape: shape, type: type, buffer: bufferIndex, sparsity: sparsity,
                          isVariable: isVariable, hasQuantization: hasQuantization)
    }

    // SparsityParameters: traversal_order 0, block_map 1, dim_metadata 2.
    // DimensionMetadata: format 0, dense_size 1, array_segments (type 2, value 3),
    // array_indices (type 4, value 5). SparseIndexVector: 1 Int32Vector, 2 Uint16Vector,
    // 3 Uint8Vector, each a table with `values` in slot 0.
    static func decodeSparsity(_ t: FlatBuffer.Table, label: String) throws -> Sparsity {
        let traversal = try t.vector(0, "traversal_order", elementSize: 4)?.int32s() ?? []
        let blockMap = try t.vector(1, "block_map", elementSize: 4)?.int32s() ?? []
        var dims: [DimensionMetadata] = []
        if let v = try t.vector(2, "dim_metadata", elementSize: 4) {
            dims.reserveCapacity(min(v.count, 1024))
            for i in 0..<v.count {
                let dt = try v.table(i, path: "\(label) sparsity dim_metadata \(i)")
                let rawFormat = try dt.int8(0, "format")
                let format: DimensionFormat
                switch rawFormat {
                case 0: format = .dense
                case 1: format = .sparseCSR
                default:
                    throw TFLiteError("corrupt file: \(dt.path) has unknown format \(rawFormat)")
                }
                let denseSize = try dt.int32(1, "dense_size")
                var segments: [Int32] = []
                var indices: [Int32] = []
                if format == .sparseCSR {
                    segments = try indexVector(dt, typeSlot: 2, "array_segments")
                    indices = try indexVector(dt, typeSlot: 4, "array_indices")
                }
                dims.append(DimensionMetadata(format: format, denseSize: denseSize, segments: segments, indices: indices))
            }
        }
        return Sparsity(traversalOrder: traversal, blockMap: blockMap, dimMetadata: dims)
    }

    static func indexVector(_ t: FlatBuffer.Table, typeSlot: Int, _ name: String) throws -> [Int32] {
        let (type, table) = try t.union(typeSlot: typeSlot, name)
        guard let vt = table else {
            throw TFLiteError("corrupt file: \(t.path) is sparse (CSR) but has no \(name)")
        }
        switch type {
        case 1: return try vt.vector(0, "values", elementSize: 4)?.int32s() ?? []
        case 2: return try vt.vector(0, "values", elementSize: 2)?.uint16s().map { Int32($0) } ?? []
        case 3: return try vt.vector(0, "values", elementSize: 1)?.uint8s().map { Int32($0) } ?? []
        default:
            throw TFLiteError("corrupt file: \(t.path) \(name) has unknown index vector type \(type)")
        }
    }

    // Operator: opcode_index 0, inputs 1, outputs 2, builtin_options (type 3, value 4), ...
    static func decodeOperator(_ t: FlatBuffer.Table) throws -> Operator {
        let opcodeIndex = Int(try t.uint32(0, "opcode_index"))
        let inputs = try t.vector(1, "inputs", elementSize: 4)?.int32s() ?? []
        let outputs = try t.vector(2, "outputs", elementSize: 4)?.int32s() ?? []
        let (type, table) = try t.union(typeSlot: 3, "builtin_options")
        let options = type == 0 ? OperatorOptions.none
            : try decodeOptions(type: type, OptionsTable(table: table, path: "\(t.path) builtin_options"))
        return Operator(opcodeIndex: opcodeIndex, inputs: inputs, outputs: outputs, options: options)
    }

    /// An options table that may be absent (a union type without a value): every field
    /// then takes its schema default, as in TFLite.
    struct OptionsTable {
        let table: FlatBuffer.Table?
        let path: String
        func int8(_ slot: Int, _ name: String) throws -> Int8 { try table?.int8(slot, name) ?? 0 }
        func bool(_ slot: Int, _ name: String) throws -> Bool { try table?.bool(slot, name) ?? false }
        func int32(_ slot: Int, _ name: String, default def: Int32 = 0) throws -> Int32 {
            try table?.int32(slot, name, default: def) ?? def
        }
        func vector(_ slot: Int, _ name: String, elementSize: Int) throws -> FlatBuffer.Vector? {
            try table?.vector(slot, name, elementSize: elementSize)
        }
    }

    static func padding(_ t: OptionsTable, _ slot: Int) throws -> Padding {
        let raw = try t.int8(slot, "padding")
        guard let p = Padding(rawValue: raw) else {
            throw TFLiteError("corrupt file: \(t.path) has unknown padding \(raw)")
        }
        return p
    }

    static func activation(_ t: OptionsTable, _ slot: Int) throws -> Activation {
        let raw = try t.int8(slot, "fused_activation_function")
        guard let a = Activation(rawValue: raw) else {
            throw TFLiteError("corrupt file: \(t.path) has unknown fused activation \(raw)")
        }
        return a
    }

    /// An Int32 field that must be >= `minimum`.
    static func atLeast(_ t: OptionsTable, _ slot: Int, _ name: String, default def: Int32, _ minimum: Int32) throws -> Int {
        let v = try t.int32(slot, name, default: def)
        if v < minimum {
            throw TFLiteError("corrupt file: \(t.path) has \(name) \(v) (must be at least \(minimum))")
        }
        return Int(v)
    }

    static func decodeOptions(type: UInt8, _ t: OptionsTable) throws -> OperatorOptions {
        typealias U = OperatorOptions.UnionType
        switch type {
        case U.conv2D:
            // padding, stride_w, stride_h, fused_activation_function, dilation_w_factor, dilation_h_factor
            return .conv2D(padding: try padding(t, 0),
                           strideW: try atLeast(t, 1, "stride_w", default: 0, 1),
                           strideH: try atLeast(t, 2, "stride_h", default: 0, 1),
                           activation: try activation(t, 3),
                           dilationW: try atLeast(t, 4, "dilation_w_factor", default: 1, 1),
                           dilationH: try atLeast(t, 5, "dilation_h_factor", default: 1, 1))
        case U.depthwiseConv2D:
            // padding, stride_w, stride_h, depth_multiplier, fused_activation_function, dilations
            return .depthwiseConv2D(padding: try padding(t, 0),
                                    strideW: try atLeast(t, 1, "stride_w", default: 0, 1),
                                    strideH: try atLeast(t, 2, "stride_h", default: 0, 1),
                                    depthMultiplier: try atLeast(t, 3, "depth_multiplier", default: 0, 0),
                                    activation: try activation(t, 4),
                                    dilationW: try atLeast(t, 5, "dilation_w_factor", default: 1, 1),
                                    dilationH: try atLeast(t, 6, "dilation_h_factor", default: 1, 1))
        case U.pool2D:
            // padding, stride_w, stride_h, filter_width, filter_height, fused_activation_function
            return .pool2D(padding: try padding(t, 0),
                           strideW: try atLeast(t, 1, "stride_w", default: 0, 1),
                           strideH: try atLeast(t, 2, "stride_h", default: 0, 1),
                           filterW: try atLeast(t, 3, "filter_width", default: 0, 1),
                           filterH: try atLeast(t, 4, "filter_height", default: 0, 1),
                           activation: try activation(t, 5))
        case U.concatenation:
            // axis, fused_activation_function
            return .concatenation(axis: Int(try t.int32(0, "axis")), activation: try activation(t, 1))
        case U.add:
            // fused_activation_function, pot_scale_int16
            return .add(activation: try activation(t, 0))
        case U.resizeBilinear:
            // new_height (deprecated), new_width (deprecated), align_corners, half_pixel_centers
            return .resizeBilinear(alignCorners: try t.bool(2, "align_corners"),
                                   halfPixelCenters: try t.bool(3, "half_pixel_centers"))
        case U.reshape:
            // new_shape
            let v = try t.vector(0, "new_shape", elementSize: 4)
            if let v = v, v.count > maxRank {
                throw TFLiteError("corrupt file: \(t.path) new_shape has rank \(v.count) (at most \(maxRank) supported)")
            }
            return .reshape(newShape: v?.int32s() ?? [])
        case U.depthToSpace:
            // block_size
            return .depthToSpace(blockSize: try atLeast(t, 0, "block_size", default: 0, 1))
        default:
            return .other(unionType: type)
        }
    }
}
