import CPUKernels
import Tensor

/// Training's products with few columns (a layer's 15 to 576 output or input channels) and
/// many rows (every frame of every joint of a batch), on the engine's register-blocked GEMM
/// kernels (`Sources/CPUKernels`): A is read in place, only the small B is packed (into the
/// layer's own `PackedWeights`, so no product allocates), and C is written once. OpenBLAS,
/// on the same products, packed A, zeroed C first and spun its idle thread between calls: a
/// fifth of an ST-GCN epoch's samples outside its multiply kernel.
///
/// Rows are split between `LayerThreads` in whole tiles; every element of C is one thread's
/// sum over k in order, so a product gives the same bits whatever thread runs which rows.
public enum PanelGemm {
    /// Multiply-adds a piece of rows should hold before a second thread is worth its hand-off.
    static let minPerPiece = 65_536

    /// C[M,N] = A[M,K] · op(B) (+ its bias on every row) (+ C when `accumulate`), row-major
    /// with the given leading dimensions, op(B) packed in `weights` (K × N), on `path` (the
    /// process's: `POSEACT_KERNELS`, else the fastest this CPU runs).
    ///
    /// With `groups` > 1 there are that many such products with the same B, group g's A
    /// starting g · aGroupStride floats after a and its C g · cGroupStride after c (a temporal
    /// convolution's sequences, A a zero-padded input whose rows overlap: lda = stride · channels).
    public static func multiply(m: Int, groups: Int = 1, a: UnsafePointer<Float>, lda: Int, aGroupStride: Int = 0,
                                weights: PackedWeights,
                                c: UnsafeMutablePointer<Float>, ldc: Int, cGroupStride: Int = 0, accumulate: Bool = false,
                                path: KernelPath = .process) {
        let n = weights.n, k = weights.k
        guard m > 0, n > 0, k > 0, groups > 0 else { return }
        if groups > 1 {
            let pieces = LayerThreads.pieces(groups, minPerPiece: max(1, minPerPiece / max(1, m * n * k)))
            LayerThreads.run(groups, pieces: pieces) { range, _ in
                for g in range {
                    let out = c + g * cGroupStride
                    weights.multiply(a + g * aGroupStride, lda: lda, rows: 0..<m, out: out, residual: accumulate ? UnsafePointer(out) : nil,
                                     ldo: ldc, path: path)
                }
            }
            return
        }
        let tile = path.gemmTileRows, tiles = (m + tile - 1) / tile
        let pieces = LayerThreads.pieces(tiles, minPerPiece: max(1, minPerPiece / max(1, tile * n * k)))
        LayerThreads.run(tiles, pieces: pieces) { range, _ in
            let rows = range.lowerBound * tile..<min(m, range.upperBound * tile)
            guard !rows.isEmpty else { return }
            weights.multiply(a, lda: lda, rows: rows, out: c, residual: accumulate ? UnsafePointer(c) : nil, ldo: ldc, path: path)
        }
    }

    /// C[M,N] += Σ_g A_gᵀ · B_g, A_g being R×M (row stride lda) from a + g · aGroupStride and
    /// B_g R×N (ldb) from b + g · bGroupStride: a weight gradient, summed over the rows of every
    /// group (every frame of the batch). The columns of C are split between `LayerThreads` by
    /// 16-wide panels; each element is one thread's sum over the groups and rows in order.
    public static func accumulateTransposed(m: Int, n: Int, rows: Int, groups: Int = 1, a: UnsafePointer<Float>, lda: Int,
                                            aGroupStride: Int = 0, b: UnsafePointer<Float>, ldb: Int, bGroupStride: Int = 0,
                                            c: UnsafeMutablePointer<Float>, ldc: Int, path: KernelPath = .process) {
        guard m > 0, n > 0, rows > 0, groups > 0 else { return }
        let panels = (n + 15) / 16
        let pieces = LayerThreads.pieces(panels, minPerPiece: max(1, minPerPiece / max(1, 16 * m * rows * groups)))
        LayerThreads.run(panels, pieces: pieces) { range, _ in
            pa_gemm_atb(path.c, a, lda, b, ldb, rows, groups, aGroupStride, bGroupStride, m, c, ldc,
                        range.lowerBound * 16, min(n, range.upperBound * 16))
        }
    }
}
