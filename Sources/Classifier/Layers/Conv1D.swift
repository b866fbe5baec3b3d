import MatrixProduct
import Tensor

/// 1-D convolution over time, channels last: dilation `d`, stride `s`, 'same' zero padding
/// (T frames in, ⌈T/s⌉ out; for an even kernel the extra padding goes on the right). Output
/// frame t reads input frames t·s − padLeft + k·d, as PyTorch's Conv1d with padding
/// d·(K−1)/2.
///
/// Shapes: inp is (B,T,C), weight is (OC,K·C) laid out [oc][k][c], bias is (OC),
/// out is (B,T',OC), T' = ⌈T/s⌉. Forward is one GEMM over the im2col of the input; backward
/// is two GEMMs (dW, dinp). Without dilation, the im2col is not built: each sequence is
/// copied between zero frames (`padded`), where output frame t's K·C values are the K·C
/// contiguous floats from padded frame t·s, so the GEMMs read overlapping rows of it
/// (lda = s·C); the input's gradient is likewise, for the input frames of each residue
/// modulo s, a convolution of the zero-padded output gradient with that residue's taps
/// flipped (no col2im; with stride 1 one residue and every tap). ST-GCN's k = 9 layers
/// spent a fifth of their time writing and reading the nine-fold im2col and its gradient.
/// A 1×1 convolution of stride 1 reads its input as it is. The loops around the GEMMs are
/// split over `LayerThreads`.
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
    /// Not pointwise and dilation 1: the GEMMs read `padded` instead of `col`.
    let direct: Bool
    /// Frames of a padded sequence: padLeft zeros, the T frames, zeros to the last window's end.
    let paddedFrames: Int
    /// `direct`: the input, each sequence between zero frames, (B, paddedFrames, C).
    let padded: FloatBuffer
    /// `direct`: dout, each sequence after `gradLead` zero frames and zeros to `gradFrames`,
    /// (B, gradFrames, OC); the kernel's taps flipped, residue by residue (see backward),
    /// (K·OC, C).
    let paddedGrad: FloatBuffer, flipped: FloatBuffer
    let gradLead: Int, gradFrames: Int
    /// op(B) of the product being made (weightᵀ forward, weight or its flipped taps
    /// backward), packed for the C kernels: room for the largest, allocated once.
    let packed: PackedWeights

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
        let plan = Buffers(frames: frames, inChannels: inChannels, outChannels: outChannels, kernel: kernel, dilation: dilation, stride: stride)
        outFrames = plan.outFrames; padLeft = plan.padLeft; pointwise = plan.pointwise; direct = plan.direct
        paddedFrames = plan.paddedFrames; gradLead = plan.gradLead; gradFrames = plan.gradFrames
        weight = Parameter(name: "\(name).weight", shape: [outChannels, kernel, inChannels], decays: true)
        bias = hasBias ? Parameter(name: "\(name).bias", shape: [outChannels], decays: false) : nil
        fillGaussian(weight.value.pointer, count: weight.count, std: gain * (2.0 / Double(kernel * inChannels)).squareRoot(), rng: &rng)
        // (A buffer this geometry does not use keeps one float.)
        output = FloatBuffer(count: maxBatch * plan.output)
        inputGrad = FloatBuffer(count: maxBatch * plan.inputGrad)
        col = FloatBuffer(count: max(1, maxBatch * plan.columns))
        dCol = FloatBuffer(count: max(1, maxBatch * plan.columns))
        padded = FloatBuffer(count: max(1, maxBatch * plan.padded))
        paddedGrad = FloatBuffer(count: max(1, maxBatch * plan.paddedGrad))
        flipped = FloatBuffer(count: max(1, plan.flipped))
        packed = PackedWeights(capacity: plan.packed)
    }

    /// The layer's geometry and the floats of each buffer it allocates, per window of a batch
    /// and once: `init` allocates these, `ModelSize` adds them up before a net is built.
    struct Buffers {
        let outFrames: Int, padLeft: Int, paddedFrames: Int, gradLead: Int, gradFrames: Int
        let pointwise: Bool, direct: Bool
        /// Per window: output, input gradient, im2col (and as much for its gradient), the
        /// padded input, the padded output gradient (0 where this geometry has none).
        let output: Int, inputGrad: Int, columns: Int, padded: Int, paddedGrad: Int
        /// Once: the flipped taps, the packed weights.
        let flipped: Int, packed: Int

        init(frames: Int, inChannels: Int, outChannels: Int, kernel: Int, dilation: Int, stride: Int) {
            outFrames = (frames - 1) / stride + 1
            padLeft = dilation * (kernel - 1) / 2
            pointwise = kernel == 1 && stride == 1
            direct = !pointwise && dilation == 1
            paddedFrames = max(padLeft + frames, (outFrames - 1) * stride + kernel)
            gradLead = (kernel + stride - 1) / stride - 1
            let lead = gradLead, outFrames = outFrames
            gradFrames = Conv1D.residues(frames: frames, kernel: kernel, stride: stride, padLeft: padLeft)
                .reduce(lead + outFrames) { max($0, $1.q0 + lead + $1.rows) }
            let kc = kernel * inChannels
            output = outFrames * outChannels
            inputGrad = frames * inChannels
            columns = pointwise || direct ? 0 : outFrames * kc
            padded = direct ? paddedFrames * inChannels : 0
            paddedGrad = direct ? gradFrames * outChannels : 0
            flipped = direct ? kc * outChannels : 0
            packed = Conv1D.packedFloats(inChannels: inChannels, outChannels: outChannels, kernel: kernel, dilation: dilation, stride: stride)
        }

        var perWindow: Int { output + inputGrad + 2 * columns + padded + paddedGrad }
        var fixed: Int { flipped + packed }
    }

    /// The room `packed` needs: the forward's weightᵀ (K·C × OC) and the backward's weight
    /// (OC × C pointwise, OC × K·C through the im2col) or flipped taps (⌈K/s⌉·OC × C).
    static func packedFloats(inChannels C: Int, outChannels OC: Int, kernel K: Int, dilation: Int, stride s: Int) -> Int {
        let pointwise = K == 1 && s == 1, direct = !pointwise && dilation == 1
        let backward = pointwise ? PackedWeights.floats(k: OC, n: C)
            : direct ? PackedWeights.floats(k: (K + s - 1) / s * OC, n: C) : PackedWeights.floats(k: OC, n: K * C)
        return max(PackedWeights.floats(k: K * C, n: OC), backward)
    }

    // inp is (B,T,C) → col is (B·T', K·C), col[b,t][k,c] = inp[b, t·s − padLeft + k·d, c] or 0.
    // Then out (B·T', OC) = col · weightᵀ + bias.
    public func forward(_ x: UnsafePointer<Float>, batch B: Int, training: Bool) {
        precondition(B <= maxBatch)
        let T = frames, TO = outFrames, C = inChannels, OC = outChannels, K = kernel, KC = kernel * inChannels
        let col = col.pointer, out = output.pointer, bias = bias?.value.pointer, pointwise = pointwise
        if direct {
            // padded[b, padLeft + t] = inp[b, t] (the zero frames are never written); out[b, t]
            // reads padded frames t·s ..< t·s + K.
            let xp = padded.pointer, P = paddedFrames, padLeft = padLeft
            LayerThreads.forEach(B, minPerPiece: max(1, Self.rowsPerPiece / T)) { sequences in
                for b in sequences { (xp + (b * P + padLeft) * C).update(from: x + b * T * C, count: T * C) }
            }
            packed.pack(b: weight.value.pointer, ldb: KC, k: KC, n: OC, transposed: true, bias: bias.map { UnsafePointer($0) })
            PanelGemm.multiply(m: TO, groups: B, a: xp, lda: stride * C, aGroupStride: P * C, weights: packed,
                               c: out, ldc: OC, cGroupStride: TO * OC)
            return
        }
        if !pointwise { LayerThreads.forEach(B * TO, minPerPiece: Self.rowsPerPiece) { rows in
            for bt in rows {
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
        } }
        packed.pack(b: weight.value.pointer, ldb: KC, k: KC, n: OC, transposed: true, bias: bias.map { UnsafePointer($0) })
        PanelGemm.multiply(m: B * TO, a: pointwise ? x : UnsafePointer(col), lda: KC, weights: packed, c: out, ldc: OC)
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
        if direct {
            PanelGemm.accumulateTransposed(m: OC, n: KC, rows: TO, groups: B, a: dOut, lda: OC, aGroupStride: TO * OC,
                                           b: padded.pointer, ldb: stride * C, bGroupStride: paddedFrames * C,
                                           c: weight.grad.pointer, ldc: KC)
        } else {
            PanelGemm.accumulateTransposed(m: OC, n: KC, rows: BT, a: dOut, lda: OC, b: pointwise ? x : UnsafePointer(col.pointer),
                                           ldb: KC, c: weight.grad.pointer, ldc: KC)
        }
        if let db = bias?.grad.pointer {
            for bt in 0..<BT {
                let d = dOut + bt * OC
                for oc in 0..<OC { db[oc] += d[oc] }
            }
        }
        let dx = inputGrad.pointer, dCol = dCol.pointer
        if pointwise {
            packed.pack(b: weight.value.pointer, ldb: C, k: OC, n: C, transposed: false)
            PanelGemm.multiply(m: BT, a: dOut, lda: OC, weights: packed, c: dx, ldc: C)
            return
        }
        if direct {
            directInputGradient(dOut, dx, batch: B)
            return
        }
        packed.pack(b: weight.value.pointer, ldb: KC, k: OC, n: KC, transposed: false)
        PanelGemm.multiply(m: BT, a: dOut, lda: OC, weights: packed, c: dCol, ldc: KC)
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

    /// The input frames u with (u + padLeft) ≡ ρ (mod s), for each residue ρ: the first, u0,
    /// and how many (`rows`, every s-th from u0); the taps k ≡ ρ (`taps`, k = ρ + s·j); and
    /// q0 = (u0 + padLeft − ρ) / s, the output frame the first of them reads through tap ρ.
    static func residues(frames T: Int, kernel K: Int, stride s: Int, padLeft: Int)
        -> [(rho: Int, u0: Int, rows: Int, taps: Int, q0: Int)] {
        (0..<s).map { rho in
            let u0 = ((rho - padLeft) % s + s) % s
            let rows = u0 < T ? (T - u0 + s - 1) / s : 0, taps = K > rho ? (K - rho + s - 1) / s : 0
            return (rho, u0, rows, taps, (u0 + padLeft - rho) / s)
        }
    }

    // dinp[b, u] = Σ over (t', k) with t'·s − padLeft + k = u of dout[b, t'] · W[:, k, :]. For the
    // residue ρ of u + padLeft: k = ρ + s·j and t' = q0 + m − j (u = u0 + s·m), j < taps, so
    //   dinp[b, u0 + s·m] = Σ_i paddedGrad[b, gradLead + q0 − taps + 1 + m + i] · W[:, ρ + s·(taps − 1 − i), :],
    // one GEMM per residue whose rows overlap (lda = OC) and whose output rows are s frames apart.
    func directInputGradient(_ dOut: UnsafePointer<Float>, _ dx: UnsafeMutablePointer<Float>, batch B: Int) {
        let T = frames, TO = outFrames, C = inChannels, OC = outChannels, K = kernel, KC = K * C, s = stride
        let L = gradFrames, lead = gradLead, dp = paddedGrad.pointer, w = weight.value.pointer
        let residues = Self.residues(frames: T, kernel: K, stride: s, padLeft: padLeft)
        LayerThreads.forEach(B, minPerPiece: max(1, Self.rowsPerPiece / T)) { sequences in
            for b in sequences { (dp + (b * L + lead) * OC).update(from: dOut + b * TO * OC, count: TO * OC) }
            // Frames of a residue without taps (a 1×1 convolution with stride 2) get no gradient.
            if residues.contains(where: { $0.taps == 0 && $0.rows > 0 }) {
                dx.advanced(by: sequences.lowerBound * T * C).update(repeating: 0, count: sequences.count * T * C)
            }
        }
        var fl = flipped.pointer
        for r in residues where r.taps > 0 && r.rows > 0 {
            for i in 0..<r.taps {
                let k = r.rho + s * (r.taps - 1 - i)
                for oc in 0..<OC { (fl + (i * OC + oc) * C).update(from: w + oc * KC + k * C, count: C) }
            }
            packed.pack(b: fl, ldb: C, k: r.taps * OC, n: C, transposed: false)
            PanelGemm.multiply(m: r.rows, groups: B, a: dp + (lead + r.q0 - r.taps + 1) * OC, lda: OC,
                               aGroupStride: L * OC, weights: packed, c: dx + r.u0 * C, ldc: s * C, cGroupStride: T * C)
            fl += r.taps * OC * C
        }
    }
}
