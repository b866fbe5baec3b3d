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

    /// The floats it allocates per window of a batch (output, input gradient, normalised
    /// input), as `init` does; `ModelSize` adds them up before a net is built.
    static func floatsPerWindow(frames: Int, channels: Int) -> Int { 3 * frames * channels }

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
        // (`floatsPerWindow`: these three.)
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
    // The rows are cut into pieces (`LayerThreads`); each sums its own, then the pieces add up in order.
    public func forward(_ x: UnsafePointer<Float>, batch B: Int, training: Bool) {
        precondition(B <= maxBatch)
        let C = channels, N = B * frames
        let xh = xhat.pointer, out = output.pointer, inv = invStd.pointer, mean = batchMean.pointer
        let g = gamma.value.pointer, be = beta.value.pointer
        lastTraining = training
        let pieces = LayerThreads.pieces(N, minPerPiece: Self.rowsPerPiece)
        if training {
            precondition(N > 0)
            // Row by row (contiguous channels, so the loops vectorise), sums in Double.
            let sum = sums.baseAddress!, sq = squares.baseAddress!
            let partial = UnsafeMutablePointer<Double>.allocate(capacity: pieces * C)
            defer { partial.deallocate() }
            LayerThreads.run(N, pieces: pieces) { rows, p in
                let s = partial + p * C
                s.update(repeating: 0, count: C)
                for i in rows {
                    let row = x + i * C
                    for c in 0..<C { s[c] += Double(row[c]) }
                }
            }
            Self.addPieces(partial, pieces: pieces, channels: C, into: sum)
            for c in 0..<C { sum[c] /= Double(N) }
            LayerThreads.run(N, pieces: pieces) { rows, p in
                let s = partial + p * C
                s.update(repeating: 0, count: C)
                for i in rows {
                    let row = x + i * C
                    for c in 0..<C { let d = Double(row[c]) - sum[c]; s[c] += d * d }
                }
            }
            Self.addPieces(partial, pieces: pieces, channels: C, into: sq)
            for c in 0..<C {
                let variance = sq[c] / Double(N)
                let unbiased = N > 1 ? sq[c] / Double(N - 1) : variance
                inv[c] = Float(1 / (variance + Double(eps)).squareRoot())
                mean[c] = Float(sum[c])
                runningMean.pointer[c] = (1 - momentum) * runningMean.pointer[c] + momentum * mean[c]
                runningVar.pointer[c] = (1 - momentum) * runningVar.pointer[c] + momentum * Float(unbiased)
            }
        } else {
            for c in 0..<C {
                inv[c] = 1 / (runningVar.pointer[c] + eps).squareRoot()
                mean[c] = runningMean.pointer[c]
            }
        }
        LayerThreads.run(N, pieces: pieces) { rows, _ in
            for i in rows {
                let row = x + i * C, xr = xh + i * C, o = out + i * C
                for c in 0..<C {
                    xr[c] = (row[c] - mean[c]) * inv[c]
                    o[c] = g[c] * xr[c] + be[c]
                }
            }
        }
    }

    /// Rows per piece of work: below this a loop is not worth a second thread.
    static let rowsPerPiece = 512

    /// into[c] = Σ_p partial[p, c], p in order (one piece: exactly that piece's sums).
    static func addPieces(_ partial: UnsafePointer<Double>, pieces: Int, channels C: Int, into: UnsafeMutablePointer<Double>) {
        into.update(from: partial, count: C)
        for p in 1..<max(1, pieces) {
            for c in 0..<C { into[c] += partial[p * C + c] }
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
        let pieces = LayerThreads.pieces(N, minPerPiece: Self.rowsPerPiece)
        // Per piece: [Σ dout | Σ dout·xhat], then the pieces in order.
        let partial = UnsafeMutablePointer<Float>.allocate(capacity: pieces * 2 * C)
        defer { partial.deallocate() }
        // Row pointers, not i · C + c: the index's overflow checks kept these loops scalar.
        LayerThreads.run(N, pieces: pieces) { rows, p in
            let s = partial + p * 2 * C, sx = s + C
            s.update(repeating: 0, count: 2 * C)
            for i in rows {
                let d = dOut + i * C, x = UnsafePointer(xh + i * C)
                for c in 0..<C { s[c] += d[c] }
                for c in 0..<C { sx[c] += d[c] * x[c] }
            }
        }
        sDy.update(from: partial, count: C)
        sDyXh.update(from: partial + C, count: C)
        for p in 1..<max(1, pieces) {
            for c in 0..<C {
                sDy[c] += partial[p * 2 * C + c]
                sDyXh[c] += partial[p * 2 * C + C + c]
            }
        }
        for c in 0..<C {
            gamma.grad.pointer[c] += sDyXh[c]
            beta.grad.pointer[c] += sDy[c]
        }
        let dx = inputGrad.pointer, training = lastTraining
        // Per channel: scale = gamma·invStd/N (training) or gamma·invStd, and the two sums.
        let coefficients = UnsafeMutablePointer<Float>.allocate(capacity: 3 * C)
        defer { coefficients.deallocate() }
        let n = Float(N)
        for c in 0..<C {
            coefficients[c] = training ? g[c] * inv[c] / n : g[c] * inv[c]
            coefficients[C + c] = sDy[c]
            coefficients[2 * C + c] = sDyXh[c]
        }
        let scale = UnsafePointer(coefficients), sumD = scale + C, sumDX = scale + 2 * C
        LayerThreads.run(N, pieces: pieces) { rows, _ in
            for i in rows {
                let d = dOut + i * C, x = UnsafePointer(xh + i * C), o = dx + i * C
                if training {
                    for c in 0..<C { o[c] = scale[c] * (n * d[c] - sumD[c] - x[c] * sumDX[c]) }
                } else {
                    for c in 0..<C { o[c] = scale[c] * d[c] }
                }
            }
        }
    }
}
