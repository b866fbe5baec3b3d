import Tensor

/// out[M, N] = act(A[M, K] · W + bias) for the convolutions whose K (input channels × taps)
/// is small, where OpenBLAS spends more time packing than multiplying (7–13 GFLOP/s on
/// the 16- to 144-channel 1×1 layers of BlazePose against ~75 on K = 1152).
///
/// W is packed once at load into panels of 16 output channels, each panel K × 16
/// contiguous (zero-filled past N). The micro-kernel keeps a 6 × 16 block of the output in
/// twelve 8-wide registers, and for each k broadcasts six A values against two W vectors:
/// twelve fused multiply-adds per 2 loads + 6 broadcasts, the classic shape for 16 AVX
/// registers. Bias and activation are applied when the block is stored, so the output is
/// written once.
struct PackedWeights {
    let k: Int, n: Int
    let panels: Int
    let data: FloatBuffer          // panels × K × 16
    let bias: FloatBuffer          // panels × 16 (zero-filled past N)

    /// `filter` is (N, K) row-major: TFLite's (Cout, KH, KW, Cin).
    init(filter: UnsafePointer<Float>, n: Int, k: Int, bias: UnsafePointer<Float>) {
        self.k = k; self.n = n
        panels = (n + 15) / 16
        data = FloatBuffer(count: panels * k * 16)
        self.bias = FloatBuffer(count: panels * 16)
        for col in 0..<n {
            let panel = col / 16, lane = col % 16
            for kk in 0..<k { data.pointer[(panel * k + kk) * 16 + lane] = filter[col * k + kk] }
            self.bias.pointer[col] = bias[col]
        }
    }
}

/// Computes rows `rows` and panels `panels` (16 output channels each; all by default) of
/// out (row stride `ldo`) from A (row stride `lda`).
@inline(__always)
func packedGemm(_ a: UnsafePointer<Float>, lda: Int, rows: Range<Int>, weights w: PackedWeights,
                out: UnsafeMutablePointer<Float>, ldo: Int, activation: FusedActivation,
                panels: Range<Int>? = nil) {
    let (lo, hi) = activation.bounds
    // Rows in chunks whose A block stays in L2 while every panel passes over it.
    let chunkRows = max(6, min(96, (48 * 1024) / max(w.k * 4, 1) / 6 * 6))
    var start = rows.lowerBound
    while start < rows.upperBound {
        let end = min(start + chunkRows, rows.upperBound)
        for panel in panels ?? 0..<w.panels {
            let wp = UnsafePointer(w.data.pointer + panel * w.k * 16)
            let bp = UnsafePointer(w.bias.pointer + panel * 16)
            let col0 = panel * 16, width = min(16, w.n - col0)
            var r = start
            while r + 6 <= end {
                tile6x16(a + r * lda, lda: lda, k: w.k, wp: wp, bias: bp,
                         out: out + r * ldo + col0, ldo: ldo, width: width, lo: lo, hi: hi)
                r += 6
            }
            if r + 3 <= end {
                tile3x16(a + r * lda, lda: lda, k: w.k, wp: wp, bias: bp,
                         out: out + r * ldo + col0, ldo: ldo, width: width, lo: lo, hi: hi)
                r += 3
            }
            while r < end {
                tile1x16(a + r * lda, k: w.k, wp: wp, bias: bp, out: out + r * ldo + col0, width: width, lo: lo, hi: hi)
                r += 1
            }
        }
        start = end
    }
}

@inline(__always)
private func storeClamped(_ v: SIMD8<Float>, _ p: UnsafeMutablePointer<Float>, count: Int, lo: Float, hi: Float) {
    let c = clamp8(v, lo: lo, hi: hi)
    if count >= 8 { store8(c, p) } else { for i in 0..<count { p[i] = c[i] } }
}

@inline(__always)
private func tile6x16(_ a: UnsafePointer<Float>, lda: Int, k: Int, wp: UnsafePointer<Float>, bias: UnsafePointer<Float>,
                      out: UnsafeMutablePointer<Float>, ldo: Int, width: Int, lo: Float, hi: Float) {
    let b0 = load8(bias), b1 = load8(bias + 8)
    var c00 = b0, c01 = b1, c10 = b0, c11 = b1, c20 = b0, c21 = b1
    var c30 = b0, c31 = b1, c40 = b0, c41 = b1, c50 = b0, c51 = b1
    let a0 = a, a1 = a + lda, a2 = a + 2 * lda, a3 = a + 3 * lda, a4 = a + 4 * lda, a5 = a + 5 * lda
    var w = wp
    for kk in 0..<k {
        let w0 = load8(w), w1 = load8(w + 8)
        var x = SIMD8<Float>(repeating: a0[kk]); c00 = c00.addingProduct(x, w0); c01 = c01.addingProduct(x, w1)
        x = SIMD8<Float>(repeating: a1[kk]); c10 = c10.addingProduct(x, w0); c11 = c11.addingProduct(x, w1)
        x = SIMD8<Float>(repeating: a2[kk]); c20 = c20.addingProduct(x, w0); c21 = c21.addingProduct(x, w1)
        x = SIMD8<Float>(repeating: a3[kk]); c30 = c30.addingProduct(x, w0); c31 = c31.addingProduct(x, w1)
        x = SIMD8<Float>(repeating: a4[kk]); c40 = c40.addingProduct(x, w0); c41 = c41.addingProduct(x, w1)
        x = SIMD8<Float>(repeating: a5[kk]); c50 = c50.addingProduct(x, w0); c51 = c51.addingProduct(x, w1)
        w += 16
    }
    let first = min(width, 8), second = width - first
    storeClamped(c00, out, count: first, lo: lo, hi: hi)
    storeClamped(c10, out + ldo, count: first, lo: lo, hi: hi)
    storeClamped(c20, out + 2 * ldo, count: first, lo: lo, hi: hi)
    storeClamped(c30, out + 3 * ldo, count: first, lo: lo, hi: hi)
    storeClamped(c40, out + 4 * ldo, count: first, lo: lo, hi: hi)
    storeClamped(c50, out + 5 * ldo, count: first, lo: lo, hi: hi)
    if second > 0 {
        storeClamped(c01, out + 8, count: second, lo: lo, hi: hi)
        storeClamped(c11, out + ldo + 8, count: second, lo: lo, hi: hi)
        storeClamped(c21, out + 2 * ldo + 8, count: second, lo: lo, hi: hi)
        storeClamped(c31, out + 3 * ldo + 8, count: second, lo: lo, hi: hi)
        storeClamped(c41, out + 4 * ldo + 8, count: second, lo: lo, hi: hi)
        storeClamped(c51, out + 5 * ldo + 8, count: second, lo: lo, hi: hi)
    }
}

@inline(__always)
private func tile3x16(_ a: UnsafePointer<Float>, lda: Int, k: Int, wp: UnsafePointer<Float>, bias: UnsafePointer<Float>,
                      out: UnsafeMutablePointer<Float>, ldo: Int, width: Int, lo: Float, hi: Float) {
    let b0 = load8(bias), b1 = load8(bias + 8)
    var c00 = b0, c01 = b1, c10 = b0, c11 = b1, c20 = b0, c21 = b1
    let a0 = a, a1 = a + lda, a2 = a + 2 * lda
    var w = wp
    for kk in 0..<k {
        let w0 = load8(w), w1 = load8(w + 8)
        var x = SIMD8<Float>(repeating: a0[kk]); c00 = c00.addingProduct(x, w0); c01 = c01.addingProduct(x, w1)
        x = SIMD8<Float>(repeating: a1[kk]); c10 = c10.addingProduct(x, w0); c11 = c11.addingProduct(x, w1)
        x = SIMD8<Float>(repeating: a2[kk]); c20 = c20.addingProduct(x, w0); c21 = c21.addingProduct(x, w1)
        w += 16
    }
    let first = min(width, 8), second = width - first
    storeClamped(c00, out, count: first, lo: lo, hi: hi)
    storeClamped(c10, out + ldo, count: first, lo: lo, hi: hi)
    storeClamped(c20, out + 2 * ldo, count: first, lo: lo, hi: hi)
    if second > 0 {
        storeClamped(c01, out + 8, count: second, lo: lo, hi: hi)
        storeClamped(c11, out + ldo + 8, count: second, lo: lo, hi: hi)
        storeClamped(c21, out + 2 * ldo + 8, count: second, lo: lo, hi: hi)
    }
}

@inline(__always)
private func tile1x16(_ a: UnsafePointer<Float>, k: Int, wp: UnsafePointer<Float>, bias: UnsafePointer<Float>,
                      out: UnsafeMutablePointer<Float>, width: Int, lo: Float, hi: Float) {
    var c0 = load8(bias), c1 = load8(bias + 8)
    var w = wp
    for kk in 0..<k {
        let x = SIMD8<Float>(repeating: a[kk])
        c0 = c0.addingProduct(x, load8(w)); c1 = c1.addingProduct(x, load8(w + 8))
        w += 16
    }
    let first = min(width, 8)
    storeClamped(c0, out, count: first, lo: lo, hi: hi)
    if width > 8 { storeClamped(c1, out + 8, count: width - 8, lo: lo, hi: hi) }
}
