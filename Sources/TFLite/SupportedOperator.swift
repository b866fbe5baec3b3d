/// The TFLite operators the engine runs, by their builtin names in a `.tflite` file. What
/// the planner does with each is a table (`kernel`, in PlannerKernels.swift): adding an
/// operator is a case here and a `KernelBuilder` method there.
enum SupportedOperator: String, CaseIterable, Sendable {
    case conv2D = "CONV_2D"
    case depthwiseConv2D = "DEPTHWISE_CONV_2D"
    case add = "ADD"
    case pad = "PAD"
    case resizeBilinear = "RESIZE_BILINEAR"
    case maxPool2D = "MAX_POOL_2D"
    case depthToSpace = "DEPTH_TO_SPACE"
    case concatenation = "CONCATENATION"
    case reshape = "RESHAPE"
    case logistic = "LOGISTIC"
    /// float16 weights widened to float32: decoded once, at planning.
    case dequantize = "DEQUANTIZE"
    /// Sparse weights made dense: decoded once, at planning.
    case densify = "DENSIFY"

    /// Run once on constant inputs while planning, never per inference.
    var isFoldedIntoConstants: Bool { self == .dequantize || self == .densify }

    /// The names, sorted, for the message that refuses any other operator.
    static var names: String { allCases.map(\.rawValue).sorted().joined(separator: ", ") }
}
