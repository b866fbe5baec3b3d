import MatrixProduct

// out[M, N] = act(A[M, K] · W + bias) for the convolutions whose K (input channels × taps)
// is small, where OpenBLAS spends more time packing than multiplying (7–13 GFLOP/s on the
// 16- to 144-channel 1×1 layers of BlazePose against ~75 on K = 1152): the filter is packed
// once at load (`PackedWeights`, the one packing of the C kernels' products, shared with
// training), and the activation is the kernel's clamp.

/// Computes rows `rows` and panels `panels` (16 output channels each; all by default) of
/// out (row stride `ldo`) from A (row stride `lda`), plus `residual` (laid out as out) when
/// given, on the kernel path `path`.
@inline(__always)
func packedGemm(_ a: UnsafePointer<Float>, lda: Int, rows: Range<Int>, weights: PackedWeights,
                out: UnsafeMutablePointer<Float>, residual: UnsafePointer<Float>? = nil, ldo: Int,
                activation: FusedActivation, path: KernelPath, panels: Range<Int>? = nil) {
    let (lo, hi) = activation.bounds
    weights.multiply(a, lda: lda, rows: rows, out: out, residual: residual, ldo: ldo, clamp: (lo, hi), path: path, panels: panels)
}
