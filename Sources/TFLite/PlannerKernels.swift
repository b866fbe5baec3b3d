import MatrixProduct
import Tensor

/// Per-operator shape checks and kernel construction.
extension Planner {
    /// The kernels, in order, and the constant buffers they read through raw pointers
    /// (which the caller keeps alive as long as the kernels).
    func buildKernels(arena: UnsafeMutablePointer<Float>, maxThreads: Int, convolution: ConvolutionKernels = .packed, path: KernelPath) throws -> (kernels: [any Kernel], constants: [FloatBuffer]) {
        var kernels: [any Kernel] = []
        var constants: [FloatBuffer] = []
        for i in planned {
            // Every planned operator has a builder: the folded ones are never planned.
            guard let build = operators[i].kernel else { throw TFLiteError("\(describeOp(i)): no kernel") }
            let builder = try KernelBuilder(planner: self, operator: i, arena: arena, maxThreads: maxThreads, convolution: convolution, path: path)
            if let k = try build(builder)() { kernels.append(k) }
            constants += builder.constants
        }
        return (kernels, constants)
    }

    fileprivate func activation(_ a: Activation, op: Int) throws -> FusedActivation {
        switch a {
        case .none: return .none
        case .relu: return .relu
        case .relu6: return .relu6
        case .reluN1To1: return .reluN1To1
        default: throw TFLiteError("\(describeOp(op)): fused activation \(a) is not supported")
        }
    }

    /// Output size and leading padding of one spatial axis (TensorFlow's SAME / VALID).
    fileprivate func window(_ input: Int, kernel: Int, stride: Int, dilation: Int, padding: Padding) -> (out: Int, before: Int) {
        let effective = (kernel - 1) * dilation + 1
        switch padding {
        case .valid:
            return ((input - effective) / stride + 1, 0)
        case .same:
            let out = (input + stride - 1) / stride
            let total = max((out - 1) * stride + effective - input, 0)
            return (out, total / 2)
        }
    }

    /// Output height and leading padding of a convolution, checking the output width too;
    /// with a fused PAD the window runs over the padded size.
    fileprivate func spatialWindow(_ i: Int, _ x: Shape4, kh: Int, kw: Int, sh: Int, sw: Int, dh: Int, dw: Int,
                               padding: Padding) throws -> (oh: Int, padTop: Int, padLeft: Int) {
        let out = shape(Int(graph.operators[i].outputs[0]))
        var h = x.h, w = x.w, extraTop = 0, extraLeft = 0
        if let fused = fusedPadding[i] {
            let padded = shape(Int(graph.operators[i].inputs[0]))   // the PAD's output
            h = padded[1]; w = padded[2]; extraTop = fused.top; extraLeft = fused.left
        }
        let (oh, top) = window(h, kernel: kh, stride: sh, dilation: dh, padding: padding)
        let (ow, left) = window(w, kernel: kw, stride: sw, dilation: dw, padding: padding)
        guard out.count == 4, out[2] == ow else {
            throw TFLiteError("\(describeOp(i)): output \(out) does not match the convolution's width \(ow)")
        }
        return (oh, top + extraTop, left + extraLeft)
    }
}

/// How one operator of the plan becomes a kernel: its tensors checked against the
/// operator's shapes, its weights copied out of the file. One method an operator, named in
/// `SupportedOperator.kernel`.
final class KernelBuilder {
    let planner: Planner
    /// The operator's index in the graph, the operator, its input and output tensors.
    let i: Int
    let op: Operator
    let ins: [Int], outs: [Int]
    let arena: UnsafeMutablePointer<Float>
    let maxThreads: Int
    let convolution: ConvolutionKernels
    let path: KernelPath
    /// Constant buffers the kernels read through raw pointers; the caller keeps them alive.
    var constants: [FloatBuffer] = []

    init(planner: Planner, operator i: Int, arena: UnsafeMutablePointer<Float>, maxThreads: Int, convolution: ConvolutionKernels, path: KernelPath) throws {
        self.planner = planner; self.i = i; op = planner.graph.operators[i]
        ins = try planner.inputs(of: i).map { $0 < 0 ? -1 : try planner.checkedIndex($0, op: i) }
        outs = try planner.outputs(of: i).map { try planner.checkedIndex($0, op: i) }
        self.arena = arena; self.maxThreads = maxThreads; self.convolution = convolution; self.path = path
    }

    // The planner's view of the tensors.
    func shape(_ t: Int) -> [Int] { planner.shape(t) }
    func describe(_ t: Int) -> String { planner.describe(t) }
    func describeOp(_ i: Int) -> String { planner.describeOp(i) }
    func offset(of t: Int) -> Int { planner.offset(of: t) }
    func isConstant(_ t: Int) -> Bool { planner.isConstant(t) }
    func tensor(_ t: Int) -> TensorInfo { planner.tensor(t) }
    var floatConstants: [Int: [Float]] { planner.floatConstants }
    var intConstants: [Int: [Int32]] { planner.intConstants }
    var fusedResidual: [Int: (residual: Int, output: Int, activation: Activation)] { planner.fusedResidual }
    func activation(_ a: Activation, op: Int) throws -> FusedActivation { try planner.activation(a, op: op) }
    func window(_ input: Int, kernel: Int, stride: Int, dilation: Int, padding: Padding) -> (out: Int, before: Int) {
        planner.window(input, kernel: kernel, stride: stride, dilation: dilation, padding: padding)
    }
    func spatialWindow(_ i: Int, _ x: Shape4, kh: Int, kw: Int, sh: Int, sw: Int, dh: Int, dw: Int, padding: Padding) throws -> (oh: Int, padTop: Int, padLeft: Int) {
        try planner.spatialWindow(i, x, kh: kh, kw: kw, sh: sh, sw: sw, dh: dh, dw: dw, padding: padding)
    }

    func fail(_ why: String) -> TFLiteError { TFLiteError("\(describeOp(i)): \(why)") }
    func need(_ inputs: Int, _ outputs: Int = 1) throws {
        guard ins.count >= inputs, outs.count == outputs, ins.prefix(inputs).allSatisfy({ $0 >= 0 }) else {
            throw fail("expects \(inputs) inputs and \(outputs) output, has \(ins.count) and \(outs.count)")
        }
    }
    func activationPointer(_ t: Int) throws -> UnsafeMutablePointer<Float> {
        guard !isConstant(t) else { throw fail("\(describe(t)) is a constant where an activation is expected") }
        guard tensor(t).type == .float32 else { throw fail("\(describe(t)) has type \(tensor(t).type.name), not float32") }
        return arena + offset(of: t)
    }
    func shape4(_ t: Int) throws -> Shape4 {
        guard let s = Shape4(shape(t)), s.count > 0 else { throw fail("\(describe(t)) has shape \(shape(t)), expected 4 positive dimensions") }
        return s
    }
    func weights(_ t: Int, count: Int, what: String) throws -> FloatBuffer {
        guard let values = floatConstants[t] else { throw fail("\(what) \(describe(t)) must be a constant") }
        guard values.count == count else { throw fail("\(what) \(describe(t)) has \(values.count) values, expected \(count)") }
        return FloatBuffer(values)
    }
    func bias(_ position: Int, count: Int) throws -> FloatBuffer {
        guard ins.count > position, ins[position] >= 0 else { return FloatBuffer(count: count) }
        return try weights(ins[position], count: count, what: "bias")
    }
    func constantPointer(_ values: [Float]) -> UnsafePointer<Float> {
        let buffer = FloatBuffer(values)
        constants.append(buffer)
        return UnsafePointer(buffer.pointer)
    }
    func expect(_ got: Shape4, _ want: Shape4, _ t: Int) throws {
        guard got == want else { throw fail("\(describe(t)) has shape \(got), the operator produces \(want)") }
    }

    func conv2D() throws -> any Kernel {
        try need(2)
        guard case .conv2D(let padding, let sw, let sh, var act, let dw, let dh) = op.options else { throw fail("missing Conv2DOptions") }
        var residual: UnsafePointer<Float>?
        if let fused = fusedResidual[i] {
            residual = UnsafePointer(try activationPointer(fused.residual))
            act = fused.activation
        }
        guard sw > 0, sh > 0, dw > 0, dh > 0 else { throw fail("strides and dilations must be positive") }
        let x = try shape4(ins[0]), out = try shape4(outs[0])
        let f = shape(ins[1])
        guard f.count == 4, f[3] == x.c, f[0] == out.c, f[1] > 0, f[2] > 0 else { throw fail("filter shape \(f) does not fit input \(x) and output \(out)") }
        let (oh, padTop, padLeft) = try spatialWindow(i, x, kh: f[1], kw: f[2], sh: sh, sw: sw, dh: dh, dw: dw, padding: padding)
        let ow = out.w
        try expect(out, Shape4(n: x.n, h: oh, w: ow, c: f[0]), outs[0])
        return Conv2DKernel(input: try activationPointer(ins[0]), inShape: x, output: try activationPointer(outs[0]), outShape: out,
                            residual: residual, filter: try weights(ins[1], count: f.reduce(1, *), what: "filter"), bias: try bias(2, count: out.c),
                            kh: f[1], kw: f[2], strideH: sh, strideW: sw, dilationH: dh, dilationW: dw,
                            padTop: padTop, padLeft: padLeft, activation: try activation(act, op: i), maxThreads: maxThreads,
                            path: convolution == .blas ? nil : path)
    }

    func depthwiseConv2D() throws -> any Kernel {
        try need(2)
        guard case let .depthwiseConv2D(padding, sw, sh, multiplier, act, dw, dh) = op.options else { throw fail("missing DepthwiseConv2DOptions") }
        guard sw > 0, sh > 0, dw > 0, dh > 0 else { throw fail("strides and dilations must be positive") }
        let x = try shape4(ins[0]), out = try shape4(outs[0])
        let f = shape(ins[1])
        let m = out.c / max(x.c, 1)
        guard f.count == 4, f[0] == 1, f[3] == out.c, f[1] > 0, f[2] > 0, m >= 1, x.c * m == out.c,
              multiplier == m || multiplier == 0 else { throw fail("filter shape \(f) does not fit input \(x) and output \(out)") }
        let (oh, padTop, padLeft) = try spatialWindow(i, x, kh: f[1], kw: f[2], sh: sh, sw: sw, dh: dh, dw: dw, padding: padding)
        try expect(out, Shape4(n: x.n, h: oh, w: out.w, c: out.c), outs[0])
        return DepthwiseConvKernel(input: try activationPointer(ins[0]), inShape: x, output: try activationPointer(outs[0]), outShape: out,
                                   filter: try weights(ins[1], count: f.reduce(1, *), what: "filter"), bias: try bias(2, count: out.c),
                                   kh: f[1], kw: f[2], strideH: sh, strideW: sw, dilationH: dh, dilationW: dw,
                                   padTop: padTop, padLeft: padLeft, multiplier: m, activation: try activation(act, op: i), path: path)
    }

    func add() throws -> any Kernel {
        try need(2)
        guard case let .add(act) = op.options else { throw fail("missing AddOptions") }
        let a = shape(ins[0]), b = shape(ins[1]), out = shape(outs[0])
        guard broadcastShape(a, b) == out else { throw fail("shapes \(a) and \(b) do not broadcast to \(out)") }
        func operand(_ t: Int) throws -> UnsafePointer<Float> {
            if let c = floatConstants[t] { return constantPointer(c) }
            return UnsafePointer(try activationPointer(t))
        }
        return AddKernel(a: try operand(ins[0]), aShape: a, b: try operand(ins[1]), bShape: b,
                         output: try activationPointer(outs[0]), outShape: out, activation: try activation(act, op: i))
    }

    func pad() throws -> any Kernel {
        try need(2)
        let x = shape(ins[0]), out = shape(outs[0])
        guard let pads = intConstants[ins[1]], pads.count == 2 * x.count, x.count <= 4, x.count >= 1 else {
            throw fail("paddings must be a constant int32 [\(x.count), 2] tensor")
        }
        let before = stride(from: 0, to: pads.count, by: 2).map { Int(pads[$0]) }
        let after = stride(from: 1, to: pads.count, by: 2).map { Int(pads[$0]) }
        guard before.allSatisfy({ $0 >= 0 }), after.allSatisfy({ $0 >= 0 }),
              zip(x, zip(before, after)).map({ $0 + $1.0 + $1.1 }) == out else {
            throw fail("padding \(pads) of \(x) does not give \(out)")
        }
        return PadKernel(input: try activationPointer(ins[0]), inShape: x, output: try activationPointer(outs[0]), outShape: out, before: before)
    }

    func resizeBilinear() throws -> any Kernel {
        try need(2)
        guard case let .resizeBilinear(alignCorners, halfPixel) = op.options else { throw fail("missing ResizeBilinearOptions") }
        let x = try shape4(ins[0]), out = try shape4(outs[0])
        guard let size = intConstants[ins[1]], size.count == 2 else { throw fail("size must be a constant int32 [2] tensor") }
        try expect(out, Shape4(n: x.n, h: Int(size[0]), w: Int(size[1]), c: x.c), outs[0])
        return ResizeBilinearKernel(input: try activationPointer(ins[0]), inShape: x, output: try activationPointer(outs[0]), outShape: out,
                                    alignCorners: alignCorners, halfPixelCenters: halfPixel,
                                    residual: try fusedResidual[i].map { UnsafePointer(try activationPointer($0.residual)) },
                                    activation: try fusedResidual[i].map { try activation($0.activation, op: i) } ?? .none, path: path)
    }

    func maxPool2D() throws -> any Kernel {
        try need(1)
        guard case let .pool2D(padding, sw, sh, fw, fh, act) = op.options else { throw fail("missing Pool2DOptions") }
        guard sw > 0, sh > 0, fw > 0, fh > 0 else { throw fail("pool size and strides must be positive") }
        let x = try shape4(ins[0]), out = try shape4(outs[0])
        let (oh, padTop) = window(x.h, kernel: fh, stride: sh, dilation: 1, padding: padding)
        let (ow, padLeft) = window(x.w, kernel: fw, stride: sw, dilation: 1, padding: padding)
        try expect(out, Shape4(n: x.n, h: oh, w: ow, c: x.c), outs[0])
        return MaxPoolKernel(input: try activationPointer(ins[0]), inShape: x, output: try activationPointer(outs[0]), outShape: out,
                             fh: fh, fw: fw, sh: sh, sw: sw, padTop: padTop, padLeft: padLeft, activation: try activation(act, op: i))
    }

    func depthToSpace() throws -> any Kernel {
        try need(1)
        guard case let .depthToSpace(block) = op.options, block > 0 else { throw fail("missing DepthToSpaceOptions") }
        let x = try shape4(ins[0]), out = try shape4(outs[0])
        guard x.c % (block * block) == 0 else { throw fail("\(x.c) channels are not divisible by \(block * block)") }
        try expect(out, Shape4(n: x.n, h: x.h * block, w: x.w * block, c: x.c / (block * block)), outs[0])
        return DepthToSpaceKernel(input: try activationPointer(ins[0]), inShape: x, output: try activationPointer(outs[0]), block: block)
    }

    func concatenation() throws -> any Kernel {
        guard !ins.isEmpty, outs.count == 1, ins.allSatisfy({ $0 >= 0 }) else { throw fail("needs inputs and one output") }
        guard case let .concatenation(rawAxis, act) = op.options else { throw fail("missing ConcatenationOptions") }
        let out = shape(outs[0])
        let axis = rawAxis < 0 ? rawAxis + out.count : rawAxis
        guard axis >= 0, axis < out.count else { throw fail("axis \(rawAxis) out of range for rank \(out.count)") }
        var total = 0
        var parts: [(UnsafePointer<Float>, Int)] = []
        for t in ins {
            let s = shape(t)
            guard s.count == out.count, s.indices.allSatisfy({ $0 == axis || s[$0] == out[$0] }) else {
                throw fail("\(describe(t)) of shape \(s) cannot be concatenated into \(out) on axis \(axis)")
            }
            total += s[axis]
            let pointer: UnsafePointer<Float> = try floatConstants[t].map(constantPointer) ?? UnsafePointer(activationPointer(t))
            parts.append((pointer, s[axis...].reduce(1, *)))
        }
        guard total == out[axis] else { throw fail("inputs add up to \(total) on axis \(axis), output has \(out[axis])") }
        return ConcatKernel(inputs: parts, output: try activationPointer(outs[0]), outer: out[..<axis].reduce(1, *),
                            activation: try activation(act, op: i))
    }

    func reshape() throws -> (any Kernel)? {
        guard let first = ins.first, first >= 0, outs.count == 1 else { throw fail("needs an input and one output") }
        let count = shape(first).reduce(1, *)
        guard count == shape(outs[0]).reduce(1, *) else { throw fail("cannot reshape \(shape(first)) into \(shape(outs[0]))") }
        if offset(of: first) == offset(of: outs[0]) { return nil }     // shares storage: nothing to do
        return CopyKernel(input: try activationPointer(first), output: try activationPointer(outs[0]), count: count)
    }

    func logistic() throws -> any Kernel {
        try need(1)
        let count = shape(ins[0]).reduce(1, *)
        guard count == shape(outs[0]).reduce(1, *) else { throw fail("input and output sizes differ") }
        return LogisticKernel(input: try activationPointer(ins[0]), output: try activationPointer(outs[0]), count: count)
    }
}

extension SupportedOperator {
    /// How the planner makes the operator's kernel: the table of `KernelBuilder` methods; nil
    /// for an operator folded into constants before planning.
    var kernel: ((KernelBuilder) -> () throws -> (any Kernel)?)? {
        Self.kernels[self]
    }

    private static let kernels: [SupportedOperator: (KernelBuilder) -> () throws -> (any Kernel)?] = [
        .conv2D: { b in { try b.conv2D() } },
        .depthwiseConv2D: { b in { try b.depthwiseConv2D() } },
        .add: { b in { try b.add() } },
        .pad: { b in { try b.pad() } },
        .resizeBilinear: { b in { try b.resizeBilinear() } },
        .maxPool2D: { b in { try b.maxPool2D() } },
        .depthToSpace: { b in { try b.depthToSpace() } },
        .concatenation: { b in { try b.concatenation() } },
        .reshape: { b in { try b.reshape() } },
        .logistic: { b in { try b.logistic() } },
    ]
}

/// Numpy-style broadcast of two shapes, or nil when they are incompatible.
func broadcastShape(_ a: [Int], _ b: [Int]) -> [Int]? {
    let rank = max(a.count, b.count)
    let pa = Array(repeating: 1, count: rank - a.count) + a
    let pb = Array(repeating: 1, count: rank - b.count) + b
    var out: [Int] = []
    for (x, y) in zip(pa, pb) {
        if x == y || y == 1 { out.append(x) } else if x == 1 { out.append(y) } else { return nil }
    }
    return out
}
