import Tensor

/// 1-D convolution over time, channels last: dilation `d`, stride `s`, 'same' zero padding
/// (T frames in, ⌈T/s⌉ out; for an even kernel the extra padding goes on the right). Output
/// frame t reads input frames t·s − padLeft + k·d, as PyTorch's Conv1d with padding
/// d·(K−1)/2.
///
/// Shapes: inp is (B,T,C), weight is (OC,K·C) laid out [oc][k][c], bias is (OC),
/// out is (B,T',OC), T' = ⌈T/s⌉. Forward is im2col + one GEMM; backward is two GEMMs +
/// col2im (a 1×1 convolution needs neither im2col nor col2im for the input's gradient).
/// The loops around the GEMMs are split over `LayerThreads`.
/// `bias: false` drops the bias, for a convolution followed by batch norm (which
/// subtracts any per-channel constant anyway).
public final class Conv1D: Layer {
    public let frames: Int, inChannels: Int, outChannels: Int, kernel: Int, dilation: Int, stride: Int
    /// Output frames, ⌈frames / stride⌉.
    public let outFrames: Int
    public let maxBatch: Int
    public let weight: Parameter
    public let bias: Parameter?
    public let output: FloatBuffer
    public let inputGrad: FloatBuffer
    /// im2col of the last forward input, (B·T', K·C); backward reads it for dW. A 1×1
    /// convolution of stride 1 reads the input itself.
    let col: FloatBuffer
    /// Gradient with respect to `col`, (B·T', K·C); col2im folds it into `inputGrad` (not
    /// for a 1×1 convolution of stride 1).
    let dCol: FloatBuffer
    /// Zero padding on the left: frame t reads input frames t·s − padLeft + k·d, k = 0..<K.
    let padLeft: Int
    /// Kernel 1 and stride 1: the input is its own im2col, and dinp needs no col2im.
    let pointwise: Bool

    public var inputShape: [Int] { [frames, inChannels] }
    public var outputShape: [Int] { [outFrames, outChannels] }
    public var parameters: [Parameter] { bias.map { [weight, $0] } ?? [weight] }

    /// Weights Kaiming/He normal over fan-in K·C, times `gain` (1 before a ReLU, as the
    /// √2 is built in); bias zero.
    public init(frames: Int, inChannels: Int, outChannels: Int, kernel: Int, dilation: Int = 1, stride: Int = 1,
                bias hasBias: Bool = true, maxBatch: Int, rng: inout SplitMix64, gain: Double = 1,
                name: String = "conv") {
        precondition(frames > 0 && inChannels > 0 && outChannels > 0 && kernel > 0 && dilation > 0 && stride > 0 && maxBatch > 0)
        self.frames = frames; self.inChannels = inChannels; self.outChannels = outChannels
        self.kernel = kernel; self.dilation = dilation; self.stride = stride; self.maxBatch = maxBatch
        outFrames = (frames - 1) / stride + 1
        padLeft = dilation * (kernel - 1) / 2
        let kc = kernel * inChannels
        weight = Parameter(name: "\(name).weight", shape: [outChannels, kernel, inChannels], decays: true)
        bias = hasBias ? Parameter(name: "\(name).bias", shape: [outChannels], decays: false) : nil
        fillGaussian(weight.value.pointer, count: weight.count, std: gain * (2.0 / Double(kc)).squareRoot(), rng: &rng)
        output = FloatBuffer(count: maxBatch * outFrames * outChannels)
        inputGrad = FloatBuffer(count: maxBatch * frames * inChannels)
        pointwise = kernel == 1 && stride == 1
        col = FloatBuffer(count: pointwise ? 1 : maxBatch * outFrames * kc)
        dCol = FloatBuffer(count: pointwise ? 1 : maxBatch * outFrames * kc)
    }

    // inp is (B,T,C) → col is (B·T', K·C), col[b,t][k,c] = inp[b, t·s − padLeft + k·d, c] or 0.
    // Then out (B·T', OC) = bias + col · weightᵀ (the GEMM adds to the bias rows).
    public func forward(_ x: UnsafePointer<Float>, batch B: Int, training: Bool) {
        precondition(B <= maxBatch)
        let T = frames, TO = outFrames, C = inChannels, OC = outChannels, K = kernel, KC = kernel * inChannels
        let col = col.pointer, out = output.pointer, bias = bias?.value.pointer, pointwise = pointwise
        LayerThreads.forEach(B * TO, minPerPiece: Self.rowsPerPiece) { rows in
            for bt in rows {
                if let bias { (out + bt * OC).update(from: bias, count: OC) }
                if pointwise { continue }
                let bi = bt / TO, t = bt % TO
                let row = col + bt * KC
                for k in 0..<K {
                    let src = t * stride - padLeft + k * dilation
                    if src >= 0 && src < T {
                        (row + k * C).update(from: x + (bi * T + src) * C, count: C)
                    } else {
                        (row + k * C).update(repeating: 0, count: C)
                    }
                }
            }
        }
        BLAS.gemm(m: B * TO, n: OC, k: KC, a: pointwise ? x : UnsafePointer(col), lda: KC, b: weight.value.pointer, ldb: KC, transposeB: true,
                     c: out, ldc: OC, accumulate: bias != nil)
    }

    /// Output rows per piece of the loops split over `LayerThreads`.
    static let rowsPerPiece = 256

    // dout is (B,T',OC); col is the forward's (B·T', K·C).
    // dweight (OC, K·C) += doutᵀ · col;  dbias (OC) += Σ_bt dout.
    // dcol (B·T', K·C) = dout · weight;  dinp (B,T,C) = col2im(dcol) (K = 1, stride 1: dinp = dout · weight).
    public func backward(_ dOut: UnsafePointer<Float>, input x: UnsafePointer<Float>, batch B: Int) {
        let T = frames, TO = outFrames, C = inChannels, OC = outChannels, K = kernel, KC = kernel * inChannels
        let BT = B * TO
        guard BT > 0 else { return }
        BLAS.gemm(m: OC, n: KC, k: BT, a: dOut, lda: OC, transposeA: true, b: pointwise ? x : UnsafePointer(col.pointer), ldb: KC,
                  c: weight.grad.pointer, ldc: KC, accumulate: true)
        if let db = bias?.grad.pointer {
            for bt in 0..<BT {
                let d = dOut + bt * OC
                for oc in 0..<OC { db[oc] += d[oc] }
            }
        }
        let dx = inputGrad.pointer, dCol = dCol.pointer
        if pointwise {
            BLAS.gemm(m: BT, n: C, k: OC, a: dOut, lda: OC, b: weight.value.pointer, ldb: C, c: dx, ldc: C)
            return
        }
        BLAS.gemm(m: BT, n: KC, k: OC, a: dOut, lda: OC, b: weight.value.pointer, ldb: KC, c: dCol, ldc: KC)
        // col2im, a sequence per piece's share (each writes only its own sequence's frames).
        LayerThreads.forEach(B, minPerPiece: max(1, Self.rowsPerPiece / TO)) { sequences in
            dx.advanced(by: sequences.lowerBound * T * C).update(repeating: 0, count: sequences.count * T * C)
            for bi in sequences {
                for t in 0..<TO {
                    let row = dCol + (bi * TO + t) * KC
                    for k in 0..<K {
                        let src = t * stride - padLeft + k * dilation
                        guard src >= 0 && src < T else { continue }
                        let d = dx + (bi * T + src) * C, r = row + k * C
                        for c in 0..<C { d[c] += r[c] }
                    }
                }
            }
        }
    }
}
