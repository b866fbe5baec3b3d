import Tensor

/// max(0, x), element-wise. Shapes: inp and out are (B, shape…).
public final class ReLU: Layer {
    public let inputShape: [Int]
    public let maxBatch: Int
    public let output: FloatBuffer
    public let inputGrad: FloatBuffer

    public var outputShape: [Int] { inputShape }
    public var parameters: [Parameter] { [] }

    public init(shape: [Int], maxBatch: Int) {
        inputShape = shape
        self.maxBatch = maxBatch
        output = FloatBuffer(count: maxBatch * shape.reduce(1, *))
        inputGrad = FloatBuffer(count: maxBatch * shape.reduce(1, *))
    }

    // out = max(0, inp)
    public func forward(_ x: UnsafePointer<Float>, batch B: Int, training: Bool) {
        precondition(B <= maxBatch)
        let out = output.pointer
        for i in 0..<(B * inputCount) { out[i] = x[i] > 0 ? x[i] : 0 }
    }

    // dinp = dout where inp > 0, else 0 (the subgradient at 0 is taken as 0)
    public func backward(_ dOut: UnsafePointer<Float>, input x: UnsafePointer<Float>, batch B: Int) {
        let dx = inputGrad.pointer
        for i in 0..<(B * inputCount) { dx[i] = x[i] > 0 ? dOut[i] : 0 }
    }
}
