import Tensor

/// Maximum over time of the valid frames, per channel: "did it ever happen in the window"
/// (an arm overhead once), which a mean dilutes. Set the mask (`mask.set`) before
/// `forward`; a sample with no valid frame pools to zeros (and passes no gradient).
///
/// Shapes: inp is (B,T,C), mask is (B,T) (see `FrameMask`), out is (B,C).
public final class MaskedMaxPool: MaskedTimePooling {
    public let frames: Int, channels: Int, maxBatch: Int
    public let output: FloatBuffer
    public let inputGrad: FloatBuffer
    public let mask: FrameMask
    /// The frame that won, per (b, c) of the last forward; −1 when the sample had none.
    var winner: [Int]

    public init(frames: Int, channels: Int, maxBatch: Int) {
        self.frames = frames; self.channels = channels; self.maxBatch = maxBatch
        output = FloatBuffer(count: maxBatch * channels)
        inputGrad = FloatBuffer(count: maxBatch * frames * channels)
        mask = FrameMask(frames: frames, maxBatch: maxBatch)
        winner = [Int](repeating: -1, count: maxBatch * channels)
    }

    // out[b,c] = max_{t: mask[b,t] > 0} inp[b,t,c]   (0 when no frame is valid; ties: first frame)
    public func forward(_ x: UnsafePointer<Float>, batch B: Int, training: Bool) {
        precondition(B <= maxBatch)
        let T = frames, C = channels
        for b in 0..<B {
            let out = zeroedOutputRow(b)
            for c in 0..<C { winner[b * C + c] = -1 }
            mask.forEachValidFrame(of: b) { t, _ in
                let row = x + (b * T + t) * C
                for c in 0..<C where winner[b * C + c] < 0 || row[c] > out[c] {
                    out[c] = row[c]
                    winner[b * C + c] = t
                }
            }
        }
    }

    // dinp[b,t,c] = dout[b,c] where t is the frame that won (b,c), else 0
    public func backward(_ dOut: UnsafePointer<Float>, input x: UnsafePointer<Float>, batch B: Int) {
        let T = frames, C = channels
        inputGrad.pointer.update(repeating: 0, count: B * T * C)
        for b in 0..<B {
            for c in 0..<C {
                let t = winner[b * C + c]
                if t >= 0 { inputGrad.pointer[(b * T + t) * C + c] = dOut[b * C + c] }
            }
        }
    }
}
