import CPUKernels
import MatrixProduct
import Tensor

/// DEPTHWISE_CONV_2D, NHWC, depth multiplier m.
///   input  (N, IH, IW, Cin)
///   filter (1, KH, KW, Cout), Cout = Cin·m; output channel o reads input channel o / m
///   bias   (Cout)
///   output (N, OH, OW, Cout)
/// With depth multiplier 1 (every BlazePose layer), the kernel path's C loops
/// (`Sources/CPUKernels`): a vector of channels at a time held in registers across all
/// KH·KW taps, four neighbouring pixels (eight on AVX-512 at stride 1) sharing each weight
/// load, 3×3 and 5×5 unrolled.
/// Other multipliers take the plain Swift loops below.
final class DepthwiseConvKernel: Kernel {
    let name = "DEPTHWISE_CONV_2D"
    let input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>
    let filter: FloatBuffer, bias: FloatBuffer
    let inShape: Shape4, outShape: Shape4
    let kh: Int, kw: Int, strideH: Int, strideW: Int, dilationH: Int, dilationW: Int
    let padTop: Int, padLeft: Int, multiplier: Int
    let activation: FusedActivation
    let path: KernelPath
    let params: UnsafeMutablePointer<pa_depthwise>   // the layer as the C kernels take it

    var flops: Int { 2 * outShape.count * kh * kw }
    var detail: String { "\(inShape)→\(outShape) \(kh)×\(kw)/\(strideH) pad \(padTop)" }

    init(input: UnsafePointer<Float>, inShape: Shape4, output: UnsafeMutablePointer<Float>, outShape: Shape4,
         filter: FloatBuffer, bias: FloatBuffer, kh: Int, kw: Int, strideH: Int, strideW: Int,
         dilationH: Int, dilationW: Int, padTop: Int, padLeft: Int, multiplier: Int, activation: FusedActivation,
         path: KernelPath) {
        self.input = input; self.inShape = inShape; self.output = output; self.outShape = outShape
        self.filter = filter; self.bias = bias; self.kh = kh; self.kw = kw
        self.strideH = strideH; self.strideW = strideW; self.dilationH = dilationH; self.dilationW = dilationW
        self.padTop = padTop; self.padLeft = padLeft; self.multiplier = multiplier; self.activation = activation
        self.path = path
        let (lo, hi) = activation.bounds
        params = .allocate(capacity: 1)
        params.initialize(to: pa_depthwise(
            input: input, filter: filter.pointer, bias: bias.pointer, output: output,
            n: inShape.n, ih: inShape.h, iw: inShape.w, c: outShape.c, oh: outShape.h, ow: outShape.w,
            kh: kh, kw: kw, stride_h: strideH, stride_w: strideW, dilation_h: dilationH, dilation_w: dilationW,
            pad_top: padTop, pad_left: padLeft, lo: lo, hi: hi))
    }

    deinit { params.deallocate() }

    func run(_ pool: ThreadPool, threads: Int) {
        let rows = outShape.n * outShape.h
        if multiplier == 1 {
            // Tasks of one row × 64 channels, so that the small late layers (7×7, 2×2 pixels
            // with hundreds of channels) still split evenly over the threads.
            let groups = (outShape.c + 63) / 64
            let work = outShape.w * min(64, outShape.c) * kh * kw
            pool.parallelFor(rows * groups, threads: threads, minPerThread: minimumPerThread(workPerItem: work)) { range, _ in
                for task in range {
                    let row = task / groups, c0 = task % groups * 64
                    pa_depthwise_rows(self.path.c, self.params, row, row + 1, c0, min(c0 + 64, self.outShape.c))
                }
            }
            return
        }
        pool.parallelFor(rows, threads: threads) { range, _ in
            for row in range { self.outputRow(row) }
        }
    }

    /// One output row with depth multiplier m ≠ 1 (output channel o reads input channel
    /// o / m): plain loops, taps outside the input skipped. No BlazePose layer takes it.
    private func outputRow(_ row: Int) {
        let b = row / outShape.h, oy = row % outShape.h
        let cout = outShape.c, cin = inShape.c, ih = inShape.h, iw = inShape.w
        let image = input + b * ih * iw * cin
        let w = filter.pointer, bp = bias.pointer
        let iy0 = oy * strideH - padTop
        for ox in 0..<outShape.w {
            let ix0 = ox * strideW - padLeft
            let out = output + (row * outShape.w + ox) * cout
            for o in 0..<cout {
                var acc = bp[o]
                for ky in 0..<kh {
                    let iy = iy0 + ky * dilationH
                    if iy < 0 || iy >= ih { continue }
                    for kx in 0..<kw {
                        let ix = ix0 + kx * dilationW
                        if ix < 0 || ix >= iw { continue }
                        acc += image[(iy * iw + ix) * cin + o / multiplier] * w[(ky * kw + kx) * cout + o]
                    }
                }
                out[o] = activation.apply(acc)
            }
        }
    }
}
