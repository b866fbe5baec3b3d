/// The field numbers and enum values of onnx.proto (github.com/onnx/onnx, onnx/onnx.proto)
/// that `ONNXGraph` writes, one namespace a message, named as in the .proto file.
enum ONNXField {
    enum Model {
        static let irVersion = 1, producerName = 2, graph = 7, opsetImport = 8, metadataProps = 14
    }
    enum OperatorSetId {
        static let domain = 1, version = 2
    }
    enum StringStringEntry {
        static let key = 1, value = 2
    }
    enum Graph {
        static let node = 1, name = 2, initializer = 5, input = 11, output = 12
    }
    enum Node {
        static let input = 1, output = 2, name = 3, opType = 4, attribute = 5
    }
    enum Attribute {
        static let name = 1, f = 2, i = 3, ints = 8, type = 20
        /// AttributeProto.AttributeType.
        enum Kind { static let float: Int64 = 1, int: Int64 = 2, ints: Int64 = 7 }
    }
    enum Tensor {
        static let dims = 1, dataType = 2, name = 8, rawData = 9
        /// TensorProto.DataType.
        enum DataType { static let float: Int64 = 1, int64: Int64 = 7 }
    }
    enum ValueInfo {
        static let name = 1, type = 2
    }
    enum TypeProto {
        static let tensorType = 1
        /// TypeProto.Tensor.
        enum TensorType { static let elemType = 1, shape = 2 }
    }
    enum TensorShape {
        static let dim = 1
        /// TensorShapeProto.Dimension.
        enum Dimension { static let dimValue = 1, dimParam = 2 }
    }
    /// The IR version of opset 17.
    static let irVersion: Int64 = 8
    static let opsetVersion: Int64 = 17
}
