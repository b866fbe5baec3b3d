import CPUKernels
import Tensor

/// out[M, N] = act(A[M, K] · W + bias) for the convolutions whose K (input channels × taps)
/// is small, where OpenBLAS spends more time packing than multiplying (7–13 GFLOP/s on
/// the 16- to 144-channel 1×1 layers of BlazePose against ~75 on K = 1152).
///
/// W is packed once at load into panels of 16 output channels, each panel K × 16
/// contiguous (zero-filled past N). The micro-kernels (`Sources/CPUKernels`) keep a block
/// of the output in registers for the whole K loop and broadcast A against one or two
/// panels: 12 rows × 32 channels on AVX-512, 6 × 16 on AVX2, 3 × 16 on the portable path.
/// Bias and activation are applied when the block is stored, so the output is written once.
final class PackedWeights {
    let k: Int, n: Int
    let panels: Int
    let data: FloatBuffer          // panels × K × 16
    let bias: FloatBuffer          // panels × 16 (zero-filled past N)
    /// The same weights as the C kernels take them (pointers into the buffers above).
    let c: UnsafeMutablePointer<pa_packed_weights>

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
        c = .allocate(capacity: 1)
        c.initialize(to: pa_packed_weights(data: data.pointer, bias: self.bias.pointer, k: k, n: n, panels: panels))
    }

    deinit { c.deallocate() }
}

/// Computes rows `rows` and panels `panels` (16 output channels each; all by default) of
/// out (row stride `ldo`) from A (row stride `lda`), plus `residual` (laid out as out) when
/// given, on the kernel path `path`.
@inline(__always)
func packedGemm(_ a: UnsafePointer<Float>, lda: Int, rows: Range<Int>, weights: PackedWeights,
                out: UnsafeMutablePointer<Float>, residual: UnsafePointer<Float>? = nil, ldo: Int,
                activation: FusedActivation, path: KernelPath, panels: Range<Int>? = nil) {
    let (lo, hi) = activation.bounds
    let panels = panels ?? 0..<weights.panels
    pa_packed_gemm(path.c, a + rows.lowerBound * lda, lda, rows.count, weights.c, panels.lowerBound, panels.upperBound,
                   out + rows.lowerBound * ldo, residual.map { $0 + rows.lowerBound * ldo }, ldo, lo, hi)
}
