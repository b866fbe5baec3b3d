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
        LayerThreads.forEach(B * inputCount, minPerPiece: elementsPerPiece) { range in
            for i in range { out[i] = x[i] > 0 ? x[i] : 0 }
        }
    }

    // dinp = dout where inp > 0, else 0 (the subgradient at 0 is taken as 0)
    public func backward(_ dOut: UnsafePointer<Float>, input x: UnsafePointer<Float>, batch B: Int) {
        let dx = inputGrad.pointer
        LayerThreads.forEach(B * inputCount, minPerPiece: elementsPerPiece) { range in
            // Both values loaded before the select: a load under the condition vectorises
            // only with masked loads (AVX2); this way SSE2 and NEON vectorise it too.
            for i in range {
                let d = dOut[i], v = x[i]
                dx[i] = v > 0 ? d : 0
            }
        }
    }
}
