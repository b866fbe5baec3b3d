import Tensor

/// Mean over time of the valid frames. Set the mask (`mask.set`) before `forward`; a
/// sample with no valid frame pools to zeros (and passes no gradient).
///
/// Shapes: inp is (B,T,C), mask is (B,T) (see `FrameMask`; any non-negative weight works:
/// the result is the weighted mean), out is (B,C).
public final class MaskedMeanPool: MaskedTimePooling {
    public let frames: Int, channels: Int, maxBatch: Int
    public let output: FloatBuffer
    public let inputGrad: FloatBuffer
    public let mask: FrameMask
    /// 1 / Σ_t mask[b,t] per sample (0 when the sum is 0), from the last forward.
    let invCount: FloatBuffer

    public init(frames: Int, channels: Int, maxBatch: Int) {
        self.frames = frames; self.channels = channels; self.maxBatch = maxBatch
        output = FloatBuffer(count: maxBatch * channels)
        inputGrad = FloatBuffer(count: maxBatch * frames * channels)
        mask = FrameMask(frames: frames, maxBatch: maxBatch)
        invCount = FloatBuffer(count: maxBatch)
    }

    // out[b,c] = Σ_t mask[b,t]·inp[b,t,c] / Σ_t mask[b,t]   (0 when Σ_t mask[b,t] = 0)
    public func forward(_ x: UnsafePointer<Float>, batch B: Int, training: Bool) {
        precondition(B <= maxBatch)
        let T = frames, C = channels
        for b in 0..<B {
            let out = zeroedOutputRow(b)
            var total: Float = 0
            mask.forEachValidFrame(of: b) { t, w in
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
        let T = frames, C = channels, m = mask.weights.pointer
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
