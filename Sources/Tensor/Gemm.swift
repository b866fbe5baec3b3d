import CBLAS

/// Matrix products on OpenBLAS. OpenBLAS runs single-threaded here; the engine splits
/// work between its own threads (OpenBLAS's threading costs more than it gains on the
/// small matrices of a pose model, and two thread pools fight over two cores).
public enum BLAS {
    public static func useSingleThread() { LayerThreads.set(1) }

    /// C[M,N] = A[M,K] · B[N,K]ᵀ (+ C when `accumulate`), all row-major with the given
    /// leading dimensions. This is a convolution in NHWC: A = input pixels × input
    /// channels, B = filter as output channels × taps.
    @inline(__always)
    public static func gemmABt(m: Int, n: Int, k: Int,
                               a: UnsafePointer<Float>, lda: Int,
                               b: UnsafePointer<Float>, ldb: Int,
                               c: UnsafeMutablePointer<Float>, ldc: Int,
                               accumulate: Bool = false) {
        guard m > 0, n > 0, k > 0 else { return }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int32(m), Int32(n), Int32(k),
                    1, a, Int32(lda), b, Int32(ldb), accumulate ? 1 : 0, c, Int32(ldc))
    }

    /// C[M,N] = A[M,K] · B[K,N] (+ C when `accumulate`), row-major.
    @inline(__always)
    public static func gemm(m: Int, n: Int, k: Int,
                            a: UnsafePointer<Float>, lda: Int,
                            b: UnsafePointer<Float>, ldb: Int,
                            c: UnsafeMutablePointer<Float>, ldc: Int,
                            accumulate: Bool = false) {
        guard m > 0, n > 0, k > 0 else { return }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Int32(m), Int32(n), Int32(k),
                    1, a, Int32(lda), b, Int32(ldb), accumulate ? 1 : 0, c, Int32(ldc))
    }
}
