import Tensor

/// Batch normalisation over channels, statistics over all B×T positions of a batch
/// (PyTorch's BatchNorm1d on (B,C,T), here channels last).
///
/// Training: normalise with the batch mean and biased variance, and move the running
/// statistics towards the batch's (running = (1 − momentum)·running + momentum·batch, the
/// running variance taking the unbiased batch variance, as PyTorch does). Evaluation:
/// normalise with the running statistics. gamma starts at 1, beta at 0.
///
/// Shapes: inp is (B,T,C), gamma and beta are (C), out is (B,T,C). T = 1 gives plain
/// batch norm over (B,C) features.
public final class BatchNorm: Layer {
    public let frames: Int, channels: Int, maxBatch: Int
    public let momentum: Float, eps: Float
    public let gamma: Parameter, beta: Parameter
    /// Running statistics (not trained; saved with the weights).
    public let runningMean: FloatBuffer, runningVar: FloatBuffer
    public let output: FloatBuffer
    public let inputGrad: FloatBuffer
    /// (x − mean) / √(var + eps) of the last forward, (B,T,C); backward reads it.
    let xhat: FloatBuffer
    /// 1 / √(var + eps) per channel used by the last forward (batch or running variance).
    let invStd: FloatBuffer
    /// Per-channel sums for backward, (C) each.
    let sumDy: FloatBuffer, sumDyXhat: FloatBuffer
    /// Forward's per-channel sums (Double), and the batch mean, (C) each.
    let sums: UnsafeMutableBufferPointer<Double>, squares: UnsafeMutableBufferPointer<Double>
    let batchMean: FloatBuffer
    /// Whether the last forward used batch statistics (backward differs).
    private var lastTraining = false

    public var inputShape: [Int] { [frames, channels] }
    public var outputShape: [Int] { [frames, channels] }
    public var parameters: [Parameter] { [gamma, beta] }

    public init(frames: Int, channels: Int, maxBatch: Int, momentum: Float = 0.1, eps: Float = 1e-5,
                name: String = "bn") {
        precondition(frames > 0 && channels > 0 && maxBatch > 0)
        self.frames = frames; self.channels = channels; self.maxBatch = maxBatch
        self.momentum = momentum; self.eps = eps
        gamma = Parameter(name: "\(name).gamma", shape: [channels], decays: false)
        beta = Parameter(name: "\(name).beta", shape: [channels], decays: false)
        gamma.value.pointer.update(repeating: 1, count: channels)
        runningMean = FloatBuffer(count: channels)
        runningVar = FloatBuffer(count: channels)
        runningVar.pointer.update(repeating: 1, count: channels)
        output = FloatBuffer(count: maxBatch * frames * channels)
        inputGrad = FloatBuffer(count: maxBatch * frames * channels)
        xhat = FloatBuffer(count: maxBatch * frames * channels)
        invStd = FloatBuffer(count: channels)
        sumDy = FloatBuffer(count: channels)
        sumDyXhat = FloatBuffer(count: channels)
        sums = .allocate(capacity: channels)
        squares = .allocate(capacity: channels)
        batchMean = FloatBuffer(count: channels)
    }

    deinit {
        sums.deallocate()
        squares.deallocate()
    }

    // inp is (B,T,C), N = B·T. Training: mean_c = Σ x / N, var_c = Σ (x − mean)² / N;
    // xhat = (x − mean)·invStd, invStd = 1/√(var + eps); out = gamma·xhat + beta.
    // Means are accumulated in Double: N·C is small and this keeps var ≥ 0 and exact enough.
    public func forward(_ x: UnsafePointer<Float>, batch B: Int, training: Bool) {
        precondition(B <= maxBatch)
        let C = channels, N = B * frames
        let xh = xhat.pointer, out = output.pointer, inv = invStd.pointer
        let g = gamma.value.pointer, be = beta.value.pointer
        lastTraining = training
        if training {
            precondition(N > 0)
            // Row by row (contiguous channels, so the loops vectorise), sums in Double.
            let sum = sums.baseAddress!, sq = squares.baseAddress!
            sum.update(repeating: 0, count: C)
            sq.update(repeating: 0, count: C)
            for i in 0..<N {
                let row = x + i * C
                for c in 0..<C { sum[c] += Double(row[c]) }
            }
            for c in 0..<C { sum[c] /= Double(N) }
            for i in 0..<N {
                let row = x + i * C
                for c in 0..<C { let d = Double(row[c]) - sum[c]; sq[c] += d * d }
            }
            let mean = batchMean.pointer
            for c in 0..<C {
                let variance = sq[c] / Double(N)
                let unbiased = N > 1 ? sq[c] / Double(N - 1) : variance
                inv[c] = Float(1 / (variance + Double(eps)).squareRoot())
                mean[c] = Float(sum[c])
                runningMean.pointer[c] = (1 - momentum) * runningMean.pointer[c] + momentum * mean[c]
                runningVar.pointer[c] = (1 - momentum) * runningVar.pointer[c] + momentum * Float(unbiased)
            }
            for i in 0..<N {
                let row = x + i * C, xr = xh + i * C
                for c in 0..<C { xr[c] = (row[c] - mean[c]) * inv[c] }
            }
        } else {
            for c in 0..<C { inv[c] = 1 / (runningVar.pointer[c] + eps).squareRoot() }
            for i in 0..<N {
                for c in 0..<C { xh[i * C + c] = (x[i * C + c] - runningMean.pointer[c]) * inv[c] }
            }
        }
        for i in 0..<N {
            for c in 0..<C { out[i * C + c] = g[c] * xh[i * C + c] + be[c] }
        }
    }

    // dout is (B,T,C). dgamma += Σ dout·xhat, dbeta += Σ dout (sums over N = B·T).
    // Training (batch statistics depend on x):
    //   dinp = gamma·invStd/N · (N·dout − Σ dout − xhat·Σ dout·xhat)
    // Evaluation (fixed statistics): dinp = gamma·invStd·dout.
    public func backward(_ dOut: UnsafePointer<Float>, input x: UnsafePointer<Float>, batch B: Int) {
        let C = channels, N = B * frames
        let xh = xhat.pointer, inv = invStd.pointer, g = gamma.value.pointer
        let sDy = sumDy.pointer, sDyXh = sumDyXhat.pointer
        sDy.update(repeating: 0, count: C)
        sDyXh.update(repeating: 0, count: C)
        for i in 0..<N {
            for c in 0..<C {
                let d = dOut[i * C + c]
                sDy[c] += d
                sDyXh[c] += d * xh[i * C + c]
            }
        }
        for c in 0..<C {
            gamma.grad.pointer[c] += sDyXh[c]
            beta.grad.pointer[c] += sDy[c]
        }
        let dx = inputGrad.pointer
        if lastTraining {
            let n = Float(N)
            for i in 0..<N {
                for c in 0..<C {
                    let j = i * C + c
                    dx[j] = g[c] * inv[c] / n * (n * dOut[j] - sDy[c] - xh[j] * sDyXh[c])
                }
            }
        } else {
            for i in 0..<N {
                for c in 0..<C { dx[i * C + c] = g[c] * inv[c] * dOut[i * C + c] }
            }
        }
    }
}
