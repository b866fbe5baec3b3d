import CPUKernels
import Tensor

/// The right-hand side of a product, op(B) (K × N), as the C kernels' GEMM takes it: panels
/// of 16 columns, each K rows of 16 contiguous floats (zeros past N), and a bias of 16 floats
/// a panel. The micro-kernels keep a block of the output in registers for the whole K loop
/// and broadcast A against one or two panels (12 rows × 32 columns on AVX-512, 6 × 16 on AVX2,
/// 3 × 16 on the portable path); bias and clamp are applied when the block is stored, so the
/// output is written once.
///
/// The pose engine packs a convolution's filter once, at load. A training layer keeps one of
/// these for its products and packs into it on every call (its weights change every step):
/// the room is allocated once, in the layer's `init`, for the largest product it makes.
public final class PackedWeights {
    /// Floats of room: the largest op(B) packed into it, bias included.
    public let capacity: Int
    public private(set) var k = 0, n = 0, panels = 0
    let data: FloatBuffer
    /// The panels rounded to bfloat16 (`roundToBFloat16()`), for the bfloat16 paths' products.
    private var bf16: UnsafeMutableBufferPointer<UInt16>?
    /// The packing as the C kernels take it (pointers into `data`).
    public let c: UnsafeMutablePointer<pa_packed_weights>

    /// Floats a packing of a K × N op(B) takes: the panels and their bias.
    public static func floats(k: Int, n: Int) -> Int { (n + 15) / 16 * 16 * (k + 1) }

    /// Room for any op(B) whose `floats(k:n:)` is at most `capacity`.
    public init(capacity: Int) {
        self.capacity = max(capacity, 16)
        data = FloatBuffer(count: self.capacity)
        c = .allocate(capacity: 1)
        c.initialize(to: pa_packed_weights(data: data.pointer, bias: data.pointer, k: 0, n: 0, panels: 0, bf16: nil))
    }

    /// A convolution's filter, packed once: `filter` is (N, K) row-major (TFLite's
    /// (Cout, KH, KW, Cin)), `bias` N floats.
    public convenience init(filter: UnsafePointer<Float>, n: Int, k: Int, bias: UnsafePointer<Float>) {
        self.init(capacity: Self.floats(k: k, n: n))
        pack(b: filter, ldb: k, k: k, n: n, transposed: true, bias: bias)
    }

    deinit {
        c.deallocate()
        bf16?.deallocate()
    }

    /// Keeps a bfloat16 copy of the packed panels beside the floats, which the bfloat16 paths'
    /// products (avx512bf16, neonbf16) then use (the other paths ignore it). A later `pack`
    /// drops it.
    public func roundToBFloat16() {
        guard panels > 0 else { return }
        bf16?.deallocate()
        let copy = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: pa_bf16_count(c))
        pa_pack_bf16(c, copy.baseAddress!)
        bf16 = copy
        c.pointee.bf16 = UnsafePointer(copy.baseAddress!)
    }

    /// Whether the products may use a bfloat16 copy (`roundToBFloat16()`).
    public var hasBFloat16: Bool { bf16 != nil }

    /// Packs op(B), K × N: B itself (K × N, row stride `ldb`) or, `transposed`, the transpose
    /// of an N × K B (a layer's (out, in) weight); `bias` N floats, or zeros.
    public func pack(b: UnsafePointer<Float>, ldb: Int, k: Int, n: Int, transposed: Bool, bias: UnsafePointer<Float>? = nil) {
        precondition(k > 0 && n > 0 && Self.floats(k: k, n: n) <= capacity, "PackedWeights: \(k) × \(n) exceeds the room for \(capacity) floats")
        let panels = (n + 15) / 16
        let panelData = data.pointer, packedBias = data.pointer + panels * k * 16
        for panel in 0..<panels {
            let col0 = panel * 16, width = min(16, n - col0)
            let dst = panelData + panel * k * 16
            if transposed {
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
        self.k = k; self.n = n; self.panels = panels
        bf16?.deallocate()
        bf16 = nil
        c.pointee = pa_packed_weights(data: panelData, bias: packedBias, k: k, n: n, panels: panels, bf16: nil)
    }

    /// out[rows, panels' columns] = clamp(A · op(B) + bias (+ residual), lo, hi), on the
    /// calling thread: rows `rows` of A (row stride `lda`) and of out (`ldo`); `residual` laid
    /// out as out. `panels`: the 16-column panels to compute, all by default.
    @inline(__always)
    public func multiply(_ a: UnsafePointer<Float>, lda: Int, rows: Range<Int>, out: UnsafeMutablePointer<Float>,
                         residual: UnsafePointer<Float>? = nil, ldo: Int, clamp: (lo: Float, hi: Float) = (-.infinity, .infinity),
                         path: KernelPath, panels: Range<Int>? = nil) {
        let panels = panels ?? 0..<self.panels
        pa_packed_gemm(path.c, a + rows.lowerBound * lda, lda, rows.count, c, panels.lowerBound, panels.upperBound,
                       out + rows.lowerBound * ldo, residual.map { $0 + rows.lowerBound * ldo }, ldo, clamp.lo, clamp.hi)
    }
}
