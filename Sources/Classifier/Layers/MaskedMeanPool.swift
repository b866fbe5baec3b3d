import Tensor

/// Mean over time of the valid frames: a clip shorter than T is padded, and its padding
/// must not count. Set the per-frame mask with `setMask` before `forward`; a sample with
/// no valid frame pools to zeros (and passes no gradient).
///
/// Shapes: inp is (B,T,C), mask is (B,T) with 1 = valid, 0 = padding (any non-negative
/// weight works: the result is the weighted mean), out is (B,C).
public final class MaskedMeanPool: Layer {
    public let frames: Int, channels: Int, maxBatch: Int
    public let output: FloatBuffer
    public let inputGrad: FloatBuffer
    /// (B,T) frame weights, all 1 until `setMask` is called.
    public let mask: FloatBuffer
    /// 1 / Σ_t mask[b,t] per sample (0 when the sum is 0), from the last forward.
    let invCount: FloatBuffer

    public var inputShape: [Int] { [frames, channels] }
    public var outputShape: [Int] { [channels] }
    public var parameters: [Parameter] { [] }

    public init(frames: Int, channels: Int, maxBatch: Int) {
        self.frames = frames; self.channels = channels; self.maxBatch = maxBatch
        output = FloatBuffer(count: maxBatch * channels)
        inputGrad = FloatBuffer(count: maxBatch * frames * channels)
        mask = FloatBuffer(count: maxBatch * frames)
        mask.pointer.update(repeating: 1, count: maxBatch * frames)
        invCount = FloatBuffer(count: maxBatch)
    }

    /// Copies a (B,T) mask into the layer; nil means every frame is valid.
    public func setMask(_ m: UnsafePointer<Float>?, batch B: Int) {
        precondition(B <= maxBatch)
        if let m { mask.pointer.update(from: m, count: B * frames) }
        else { mask.pointer.update(repeating: 1, count: B * frames) }
    }

    // out[b,c] = Σ_t mask[b,t]·inp[b,t,c] / Σ_t mask[b,t]   (0 when Σ_t mask[b,t] = 0)
    public func forward(_ x: UnsafePointer<Float>, batch B: Int, training: Bool) {
        precondition(B <= maxBatch)
        let T = frames, C = channels, m = mask.pointer
        for b in 0..<B {
            let out = output.pointer + b * C
            out.update(repeating: 0, count: C)
            var total: Float = 0
            for t in 0..<T {
                let w = m[b * T + t]
                guard w != 0 else { continue }
                total += w
                let row = x + (b * T + t) * C
                for c in 0..<C { out[c] += w * row[c] }
            }
            let inv: Float = total > 0 ? 1 / total : 0
            invCount.pointer[b] = inv
            for c in 0..<C { out[c] *= inv }
        }
    }

    // dinp[b,t,c] = mask[b,t] · dout[b,c] / Σ_t mask[b,t]
    public func backward(_ dOut: UnsafePointer<Float>, input x: UnsafePointer<Float>, batch B: Int) {
        let T = frames, C = channels, m = mask.pointer
        for b in 0..<B {
            let d = dOut + b * C
            for t in 0..<T {
                let w = m[b * T + t] * invCount.pointer[b]
                let dx = inputGrad.pointer + (b * T + t) * C
                for c in 0..<C { dx[c] = w * d[c] }
            }
        }
    }
}
