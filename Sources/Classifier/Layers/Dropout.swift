import Tensor

/// Inverted dropout: in training each element is kept with probability 1 − p and scaled by
/// 1 / (1 − p), so evaluation is the identity. The mask comes from the layer's own seeded
/// SplitMix64, so a training run is reproducible. Shapes: inp and out are (B, shape…).
public final class Dropout: Layer {
    public let inputShape: [Int]
    public let maxBatch: Int
    public let probability: Float
    public let output: FloatBuffer
    public let inputGrad: FloatBuffer
    /// 0 or 1/(1 − p) per element of the last training forward (all 1 after an eval forward).
    public let mask: FloatBuffer
    /// When set, training forwards reuse the current mask instead of drawing a new one
    /// (gradient checks need the same mask for every evaluation).
    public var freezeMask = false
    public var rng: SplitMix64

    public var outputShape: [Int] { inputShape }
    public var parameters: [Parameter] { [] }

    public init(shape: [Int], probability: Float, maxBatch: Int, seed: UInt64) {
        precondition(probability >= 0 && probability < 1)
        inputShape = shape
        self.maxBatch = maxBatch
        self.probability = probability
        rng = SplitMix64(seed: seed)
        let n = maxBatch * shape.reduce(1, *)
        output = FloatBuffer(count: n)
        inputGrad = FloatBuffer(count: n)
        mask = FloatBuffer(count: n)
        mask.pointer.update(repeating: 1, count: n)
    }

    // training: mask = (u ≥ p) / (1 − p), out = inp·mask;  evaluation: out = inp
    public func forward(_ x: UnsafePointer<Float>, batch B: Int, training: Bool) {
        precondition(B <= maxBatch)
        let n = B * inputCount, out = output.pointer, m = mask.pointer
        if !training || probability == 0 {
            m.update(repeating: 1, count: n)
            out.update(from: x, count: n)
            return
        }
        if !freezeMask {
            // Four 16-bit uniforms per 64-bit draw: p is resolved to 1/65536, and drawing
            // is no longer a visible share of the training time.
            let scale = 1 / (1 - probability), threshold = UInt64((Double(probability) * 65536).rounded())
            var bits: UInt64 = 0
            for i in 0..<n {
                if i & 3 == 0 { bits = rng.next() }
                m[i] = bits & 0xFFFF >= threshold ? scale : 0
                bits >>= 16
            }
        }
        for i in 0..<n { out[i] = x[i] * m[i] }
    }

    // dinp = dout·mask (mask is all ones after an evaluation forward)
    public func backward(_ dOut: UnsafePointer<Float>, input x: UnsafePointer<Float>, batch B: Int) {
        let dx = inputGrad.pointer, m = mask.pointer
        for i in 0..<(B * inputCount) { dx[i] = dOut[i] * m[i] }
    }
}
