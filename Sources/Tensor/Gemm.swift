import CBLAS

/// Matrix products on OpenBLAS. OpenBLAS runs single-threaded here; the engine splits
/// work between its own threads (OpenBLAS's threading costs more than it gains on the
/// small matrices of a pose model, and two thread pools fight over two cores).
///
/// `gemm` is the one way into `cblas_sgemm` (the engine's convolutions, the layers' products
/// that `PanelGemm` does not take), so no other target imports CBLAS.
public enum BLAS {
    public static func useSingleThread() { LayerThreads.set(1) }

    /// C[M,N] = op(A) · op(B) (+ C when `accumulate`), all row-major with the given leading
    /// dimensions. op(A) is M×K: A itself, or with `transposeA` the transpose of a K×M A;
    /// op(B) is K×N: B itself, or with `transposeB` the transpose of an N×K B. A convolution
    /// in NHWC is A · Bᵀ (A = input pixels × input channels, B = filter as output channels ×
    /// taps); a weight gradient is Aᵀ · B (A = output gradients, B = inputs).
    ///
    /// Nothing is done when a dimension is 0 (C is then left as it is, also without `accumulate`).
    @inline(__always)
    public static func gemm(m: Int, n: Int, k: Int,
                            a: UnsafePointer<Float>, lda: Int, transposeA: Bool = false,
                            b: UnsafePointer<Float>, ldb: Int, transposeB: Bool = false,
                            c: UnsafeMutablePointer<Float>, ldc: Int,
                            accumulate: Bool = false) {
        guard m > 0, n > 0, k > 0 else { return }
        cblas_sgemm(CblasRowMajor, transposeA ? CblasTrans : CblasNoTrans, transposeB ? CblasTrans : CblasNoTrans,
                    Int32(m), Int32(n), Int32(k),
                    1, a, Int32(lda), b, Int32(ldb), accumulate ? 1 : 0, c, Int32(ldc))
    }
}
