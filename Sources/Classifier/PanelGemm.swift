import CPUKernels
import Tensor

/// Products with few columns (a layer's 15 to 576 output or input channels) and many rows
/// (every frame of every joint of a batch), on the engine's register-blocked GEMM kernels
/// (`Sources/CPUKernels`): A is read in place, only the small B is packed, and C is written
/// once. OpenBLAS, on the same products, packed A, zeroed C first and spun its idle thread
/// between calls: a fifth of an ST-GCN epoch's samples outside its multiply kernel.
///
/// Rows are split between `LayerThreads` in whole tiles; every element of C is one thread's
/// sum over k in order, so a product gives the same bits whatever thread runs which rows.
public enum PanelGemm {
    /// The fastest kernel path this CPU runs (the choice depends only on the CPU).
    static let path: pa_path = pa_path_supported(PA_PATH_AVX512) != 0 ? PA_PATH_AVX512
        : pa_path_supported(PA_PATH_AVX2) != 0 ? PA_PATH_AVX2 : PA_PATH_PORTABLE
    static let tileRows = pa_gemm_tile_rows(path)
    /// Multiply-adds a piece of rows should hold before a second thread is worth its hand-off.
    static let minPerPiece = 65_536

    /// C[M,N] = A[M,K] · op(B) (+ bias[N] on every row) (+ C when `accumulate`), row-major
    /// with the given leading dimensions. op(B) is K×N: B itself, or with `transposeB` the
    /// transpose of an N×K B (a layer's (out, in) weight).
    ///
    /// With `groups` > 1 there are that many such products with the same B, group g's A
    /// starting g · aGroupStride floats after a and its C g · cGroupStride after c (a temporal
    /// convolution's sequences, A a zero-padded input whose rows overlap: lda = stride · channels).
    public static func multiply(m: Int, n: Int, k: Int, groups: Int = 1, a: UnsafePointer<Float>, lda: Int, aGroupStride: Int = 0,
                                b: UnsafePointer<Float>, ldb: Int, transposeB: Bool = false,
                                bias: UnsafePointer<Float>? = nil,
                                c: UnsafeMutablePointer<Float>, ldc: Int, cGroupStride: Int = 0, accumulate: Bool = false) {
        guard m > 0, n > 0, k > 0, groups > 0 else { return }
        // B as the kernels take it: panels of 16 columns, each K rows of 16 floats (zeros past N).
        let panels = (n + 15) / 16
        let raw = UnsafeMutableRawPointer.allocate(byteCount: (panels * k * 16 + panels * 16) * 4, alignment: 64)
        defer { raw.deallocate() }
        let data = raw.bindMemory(to: Float.self, capacity: panels * k * 16 + panels * 16)
        let packedBias = data + panels * k * 16
        for panel in 0..<panels {
            let col0 = panel * 16, width = min(16, n - col0)
            let dst = data + panel * k * 16
            if transposeB {
                if width < 16 { dst.update(repeating: 0, count: k * 16) }
                for lane in 0..<width {
                    let src = b + (col0 + lane) * ldb
                    for kk in 0..<k { dst[kk * 16 + lane] = src[kk] }
                }
            } else {
                for kk in 0..<k {
                    let d = dst + kk * 16
                    d.update(from: b + kk * ldb + col0, count: width)
                    if width < 16 { (d + width).update(repeating: 0, count: 16 - width) }
                }
            }
        }
        packedBias.update(repeating: 0, count: panels * 16)
        if let bias { packedBias.update(from: bias, count: n) }
        var weights = pa_packed_weights(data: data, bias: packedBias, k: k, n: n, panels: panels)
        let lo = -Float.infinity, hi = Float.infinity
        if groups > 1 {
            let pieces = LayerThreads.pieces(groups, minPerPiece: max(1, minPerPiece / max(1, m * n * k)))
            withUnsafePointer(to: &weights) { w in
                LayerThreads.run(groups, pieces: pieces) { range, _ in
                    for g in range {
                        let out = c + g * cGroupStride
                        pa_packed_gemm(path, a + g * aGroupStride, lda, m, w, 0, panels, out,
                                       accumulate ? UnsafePointer(out) : nil, ldc, lo, hi)
                    }
                }
            }
            return
        }
        let tile = tileRows, tiles = (m + tile - 1) / tile
        let pieces = LayerThreads.pieces(tiles, minPerPiece: max(1, minPerPiece / max(1, tile * n * k)))
        withUnsafePointer(to: &weights) { w in
            LayerThreads.run(tiles, pieces: pieces) { range, _ in
                let first = range.lowerBound * tile, rows = min(m, range.upperBound * tile) - first
                guard rows > 0 else { return }
                let out = c + first * ldc
                pa_packed_gemm(path, a + first * lda, lda, rows, w, 0, panels, out, accumulate ? UnsafePointer(out) : nil,
                               ldc, lo, hi)
            }
        }
    }

    /// C[M,N] += Σ_g A_gᵀ · B_g, A_g being R×M (row stride lda) from a + g · aGroupStride and
    /// B_g R×N (ldb) from b + g · bGroupStride: a weight gradient, summed over the rows of every
    /// group (every frame of the batch). The columns of C are split between `LayerThreads` by
    /// 16-wide panels; each element is one thread's sum over the groups and rows in order.
    public static func accumulateTransposed(m: Int, n: Int, rows: Int, groups: Int = 1, a: UnsafePointer<Float>, lda: Int,
                                            aGroupStride: Int = 0, b: UnsafePointer<Float>, ldb: Int, bGroupStride: Int = 0,
                                            c: UnsafeMutablePointer<Float>, ldc: Int) {
        guard m > 0, n > 0, rows > 0, groups > 0 else { return }
        let panels = (n + 15) / 16
        let pieces = LayerThreads.pieces(panels, minPerPiece: max(1, minPerPiece / max(1, 16 * m * rows * groups)))
        LayerThreads.run(panels, pieces: pieces) { range, _ in
            pa_gemm_atb(path, a, lda, b, ldb, rows, groups, aGroupStride, bGroupStride, m, c, ldc,
                        range.lowerBound * 16, min(n, range.upperBound * 16))
        }
    }
}
