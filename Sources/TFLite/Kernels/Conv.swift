import CPUKernels
import MatrixProduct
import Tensor

/// CONV_2D, NHWC.
///   input  (N, IH, IW, Cin)
///   filter (Cout, KH, KW, Cin)   — read as a (Cout, K) matrix, K = KH·KW·Cin
///   bias   (Cout)
///   output (N, OH, OW, Cout)     = act(im2col(input) (M, K) · filterᵀ + bias [+ residual]), M = N·OH·OW
///   residual (N, OH, OW, Cout)   — optional: a residual ADD fused into this layer (Planner)
/// A 1×1 stride-1 convolution needs no im2col: the NHWC input already is the (M, Cin)
/// matrix. Other shapes gather a block of rows at a time into per-thread scratch.
final class Conv2DKernel: Kernel {
    let name = "CONV_2D"
    let input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>
    let residual: UnsafePointer<Float>?
    let filter: FloatBuffer, bias: FloatBuffer
    let inShape: Shape4, outShape: Shape4
    let kh: Int, kw: Int, strideH: Int, strideW: Int, dilationH: Int, dilationW: Int
    let padTop: Int, padLeft: Int
    let activation: FusedActivation
    let direct: Bool                  // 1×1, stride 1, no padding
    let blockRows: Int                // im2col rows gathered per sgemm call
    let scratch: FloatBuffer?         // threads × blockRows × K
    let packed: PackedWeights?        // for small K, our own micro-kernel instead of sgemm
    let path: KernelPath              // the micro-kernel's instruction set
    let window: UnsafeMutablePointer<pa_window>   // the input geometry, for im2col
    let tapOffsets: UnsafeMutablePointer<Int>?    // packed, not 1×1: each filter value's offset in the input
    let narrow: Bool                  // ≤ 4 output channels: dot products straight from the input

    /// Up to this K the packed micro-kernel is used. On BlazePose's layers (K ≤ 1152) it
    /// beats OpenBLAS everywhere once work is split between threads: OpenBLAS repacks the
    /// whole filter in every call, so splitting a 64-pixel layer between two threads
    /// doubled that cost and gained nothing (`POSEACT_PROFILE_KERNELS=1 poseact bench pose
    /// --profile`). Larger K (not in these models) keeps OpenBLAS's cache blocking.
    static let packedMaxK = 4096

    /// Input channels from which a layer's products are bfloat16 on a bfloat16 path.
    static let bfloat16MinChannels = 16

    var k: Int { kh * kw * inShape.c }
    var detail: String { "\(inShape)→\(outShape) \(kh)×\(kw)/\(strideH)\(direct ? " direct" : "")\(residual != nil ? " +add" : "")" }
    var flops: Int { 2 * outShape.n * outShape.h * outShape.w * outShape.c * k + (residual != nil ? outShape.count : 0) }

    init(input: UnsafePointer<Float>, inShape: Shape4, output: UnsafeMutablePointer<Float>, outShape: Shape4,
         residual: UnsafePointer<Float>? = nil, filter: FloatBuffer, bias: FloatBuffer, kh: Int, kw: Int, strideH: Int, strideW: Int,
         dilationH: Int, dilationW: Int, padTop: Int, padLeft: Int, activation: FusedActivation,
         maxThreads: Int, path: KernelPath?) {
        self.input = input; self.inShape = inShape; self.output = output; self.outShape = outShape
        self.residual = residual
        self.filter = filter; self.bias = bias; self.kh = kh; self.kw = kw
        self.strideH = strideH; self.strideW = strideW; self.dilationH = dilationH; self.dilationW = dilationW
        self.padTop = padTop; self.padLeft = padLeft; self.activation = activation
        direct = kh == 1 && kw == 1 && strideH == 1 && strideW == 1 && padTop == 0 && padLeft == 0
            && inShape.h == outShape.h && inShape.w == outShape.w
        let k = kh * kw * inShape.c
        // Keep a block's gathered rows around 256 KiB so they stay in L2 for sgemm.
        blockRows = min(outShape.n * outShape.h * outShape.w, max(64, 65536 / max(k, 1)))
        scratch = direct ? nil : FloatBuffer(count: maxThreads * blockRows * k)
        // A GEMM panel is 16 channels wide; a 1-channel layer (the segmentation head)
        // would waste 15/16 of it, so few-channel layers take dot products instead.
        // nil path: im2col + OpenBLAS everywhere (for comparison).
        self.path = path ?? .portable
        narrow = path != nil && outShape.c <= 4 && inShape.c % 8 == 0
        packed = !narrow && path != nil && k < Conv2DKernel.packedMaxK
            ? PackedWeights(filter: filter.pointer, n: outShape.c, k: k, bias: bias.pointer) : nil
        // bfloat16 where the layer reads 16 channels or more. With fewer (the picture's 3, the
        // segmentation head's 8) rounding the few inputs of each pixel to pairs costs more
        // than the faster products save: such layers took 1.14–1.35× their FP32 time
        // (docs/experiments.md), and they stay FP32.
        if let packed, path?.roundsToBFloat16 == true, inShape.c >= Conv2DKernel.bfloat16MinChannels { packed.roundToBFloat16() }
        window = .allocate(capacity: 1)
        window.initialize(to: pa_window(
            input: input, n: inShape.n, ih: inShape.h, iw: inShape.w, c: inShape.c, oh: outShape.h, ow: outShape.w,
            kh: kh, kw: kw, stride_h: strideH, stride_w: strideW, dilation_h: dilationH, dilation_w: dilationW,
            pad_top: padTop, pad_left: padLeft))
        if packed != nil && !direct {
            tapOffsets = .allocate(capacity: k)
            for ky in 0..<kh { for kx in 0..<kw { for c in 0..<inShape.c {
                tapOffsets![(ky * kw + kx) * inShape.c + c] = (ky * dilationH * inShape.w + kx * dilationW) * inShape.c + c
            } } }
        } else {
            tapOffsets = nil
        }
    }

    deinit {
        window.deallocate()
        tapOffsets?.deallocate()
    }

    func run(_ pool: ThreadPool, threads: Int) {
        let m = outShape.n * outShape.h * outShape.w, n = outShape.c, k = self.k
        if narrow {
            let (lo, hi) = activation.bounds
            pool.parallelFor(outShape.n * outShape.h, threads: threads,
                             minPerThread: minimumPerThread(workPerItem: outShape.w * n * k)) { rows, _ in
                pa_narrow_conv_rows(self.path.c, self.window, self.filter.pointer, self.bias.pointer, n, self.output,
                                    self.residual, rows.lowerBound, rows.upperBound, lo, hi)
            }
            return
        }
        // Split rows (pixels) between threads, or output channels when there are few pixels.
        if let packed, let tapOffsets {
            // Read straight from the input, a row of output pixels at a time.
            let (lo, hi) = activation.bounds
            pool.parallelFor(outShape.n * outShape.h, threads: threads,
                             minPerThread: minimumPerThread(workPerItem: outShape.w * n * k)) { rows, thread in
                pa_conv_rows(self.path.c, self.window, tapOffsets, packed.c, self.output, self.residual, rows.lowerBound, rows.upperBound,
                             lo, hi, self.scratch!.pointer + thread * self.blockRows * k)
            }
            return
        }
        if let packed {
            // Whole micro-kernel tiles per task when there are enough; otherwise (the 8×8
            // and smaller layers) every task takes all rows and a share of the 16-channel panels.
            let tile = path.gemmTileRows
            let tiles = (m + tile - 1) / tile
            if tiles >= 4 * threads || packed.panels < 2 * threads {
                pool.parallelFor(m, threads: threads, minPerThread: 2 * tile, alignment: tile) { rows, thread in
                    self.rows(rows, scratchPart: thread)
                }
            } else {
                let step = path.gemmTilePanels   // whole tiles per task: an odd panel would take a narrower one
                pool.parallelFor((packed.panels + step - 1) / step, threads: threads) { groups, _ in
                    let panels = groups.lowerBound * step..<min(packed.panels, groups.upperBound * step)
                    packedGemm(self.input, lda: k, rows: 0..<m, weights: packed, out: self.output, residual: self.residual, ldo: n,
                               activation: self.activation, path: self.path, panels: panels)
                }
            }
            return
        }
        if m >= 16 * threads || n < 16 || m > blockRows {
            pool.parallelFor(m, threads: threads, minPerThread: 8) { rows, thread in
                self.rows(rows, scratchPart: thread)
            }
        } else {
            pool.parallelFor(n, threads: threads, minPerThread: 8) { cols, thread in
                // Few pixels (the 2×2 "fully connected" layers): gather the rows, then
                // compute this piece's output channels.
                let a: UnsafePointer<Float>
                if self.direct { a = self.input } else {
                    let buf = self.scratch!.pointer + thread * self.blockRows * k
                    self.gather(0..<m, into: buf)
                    a = UnsafePointer(buf)
                }
                BLAS.gemm(m: m, n: cols.count, k: k, a: a, lda: k,
                          b: self.filter.pointer + cols.lowerBound * k, ldb: k, transposeB: true,
                          c: self.output + cols.lowerBound, ldc: n)
                addBiasActivate(self.output + cols.lowerBound, rows: m, channels: cols.count, ld: n,
                                bias: self.bias.pointer + cols.lowerBound, residual: self.residual.map { $0 + cols.lowerBound },
                                activation: self.activation)
            }
        }
    }

    /// Output rows `range`: straight from the NHWC input for a 1×1 convolution, else
    /// gathered (im2col) a block at a time into this thread's scratch.
    private func rows(_ range: Range<Int>, scratchPart: Int) {
        let n = outShape.c, k = self.k
        if direct {
            multiply(input + range.lowerBound * k, rows: range.count, into: output + range.lowerBound * n,
                     residual: residual.map { $0 + range.lowerBound * n })
            return
        }
        let buf = scratch!.pointer + scratchPart * blockRows * k
        var start = range.lowerBound
        while start < range.upperBound {
            let end = min(start + blockRows, range.upperBound)
            gather(start..<end, into: buf)
            multiply(buf, rows: end - start, into: output + start * n, residual: residual.map { $0 + start * n })
            start = end
        }
    }

    /// out (rows × Cout) = act(a (rows × K) · filterᵀ + bias + residual), by the packed
    /// micro-kernel or by OpenBLAS followed by a bias (+ residual) + activation pass.
    @inline(__always)
    private func multiply(_ a: UnsafePointer<Float>, rows: Int, into out: UnsafeMutablePointer<Float>,
                          residual: UnsafePointer<Float>?) {
        let n = outShape.c, k = self.k
        if let packed {
            packedGemm(a, lda: k, rows: 0..<rows, weights: packed, out: out, residual: residual, ldo: n,
                       activation: activation, path: path)
            return
        }
        BLAS.gemm(m: rows, n: n, k: k, a: a, lda: k, b: filter.pointer, ldb: k, transposeB: true, c: out, ldc: n)
        addBiasActivate(out, rows: rows, channels: n, ld: n, bias: bias.pointer, residual: residual, activation: activation)
    }

    /// im2col for output pixels `range` (flattened N·OH·OW): row r holds the KH×KW×Cin
    /// input values under the filter, zeros where it hangs over the padding.
    private func gather(_ range: Range<Int>, into buf: UnsafeMutablePointer<Float>) {
        pa_im2col(window, range.lowerBound, range.upperBound, buf)
    }
}
