import CPUKernels
import Tensor

/// DEPTHWISE_CONV_2D, NHWC, depth multiplier m.
///   input  (N, IH, IW, Cin)
///   filter (1, KH, KW, Cout), Cout = Cin·m; output channel o reads input channel o / m
///   bias   (Cout)
///   output (N, OH, OW, Cout)
/// With depth multiplier 1 (every BlazePose layer), the kernel path's C loops
/// (`Sources/CPUKernels`): a vector of channels at a time held in registers across all
/// KH·KW taps, four neighbouring pixels sharing each weight load, 3×3 and 5×5 unrolled.
/// Other multipliers take the Swift loops below. Pixels whose window lies inside the input
/// take a path with no bounds checks.
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

    @inline(__always)
    private func outputRow(_ row: Int) {
        let b = row / outShape.h, oy = row % outShape.h
        let cout = outShape.c, cin = inShape.c, ih = inShape.h, iw = inShape.w
        let iy0 = oy * strideH - padTop
        let rowInside = iy0 >= 0 && iy0 + (kh - 1) * dilationH < ih
        let image = input + b * ih * iw * cin
        // Output columns whose window lies inside the input horizontally.
        let firstInside = min(outShape.w, (padLeft + strideW - 1) / strideW)
        let lastInside = (iw - 1 - (kw - 1) * dilationW + padLeft) >= 0
            ? min(outShape.w - 1, (iw - 1 - (kw - 1) * dilationW + padLeft) / strideW) : -1
        var ox = 0
        while ox < outShape.w {
            // Four interior pixels at once: each weight vector is loaded once for all four.
            if multiplier == 1 && rowInside && ox >= firstInside && ox + 3 <= lastInside {
                interiorQuad(image: image, iy0: iy0, ox: ox, out: output + ((b * outShape.h + oy) * outShape.w + ox) * cout)
                ox += 4
                continue
            }
            pixel(image: image, iy0: iy0, rowInside: rowInside, ox: ox,
                  out: output + ((b * outShape.h + oy) * outShape.w + ox) * cout)
            ox += 1
        }
    }

    @inline(__always)
    private func interiorQuad(image: UnsafePointer<Float>, iy0: Int, ox: Int, out: UnsafeMutablePointer<Float>) {
        let cout = outShape.c, cin = inShape.c, iw = inShape.w
        let w = filter.pointer, bp = bias.pointer
        let step = strideW * cin, tap = dilationW * cin
        let ix0 = ox * strideW - padLeft
        var c = 0
        while c + 8 <= cout {
            let b = load8(bp + c)
            var a0 = b, a1 = b, a2 = b, a3 = b
            for ky in 0..<kh {
                var src = image + ((iy0 + ky * dilationH) * iw + ix0) * cin + c
                var wr = w + ky * kw * cout + c
                for _ in 0..<kw {
                    let wv = load8(wr)
                    a0 = a0.addingProduct(load8(src), wv)
                    a1 = a1.addingProduct(load8(src + step), wv)
                    a2 = a2.addingProduct(load8(src + 2 * step), wv)
                    a3 = a3.addingProduct(load8(src + 3 * step), wv)
                    src += tap
                    wr += cout
                }
            }
            store8(activation.apply(a0), out + c)
            store8(activation.apply(a1), out + cout + c)
            store8(activation.apply(a2), out + 2 * cout + c)
            store8(activation.apply(a3), out + 3 * cout + c)
            c += 8
        }
        if c < cout {
            for j in 0..<4 {
                let pixelIn = image + (iy0 * iw + ix0) * cin + j * step
                for ch in c..<cout {
                    var acc = bp[ch]
                    for ky in 0..<kh { for kx in 0..<kw {
                        acc += pixelIn[(ky * dilationH * iw) * cin + kx * tap + ch] * w[(ky * kw + kx) * cout + ch]
                    } }
                    out[j * cout + ch] = activation.apply(acc)
                }
            }
        }
    }

    @inline(__always)
    private func pixel(image: UnsafePointer<Float>, iy0: Int, rowInside: Bool, ox: Int, out: UnsafeMutablePointer<Float>) {
        let cout = outShape.c, cin = inShape.c, ih = inShape.h, iw = inShape.w
        let w = filter.pointer, bp = bias.pointer
        do {
            let ix0 = ox * strideW - padLeft
            let inside = rowInside && ix0 >= 0 && ix0 + (kw - 1) * dilationW < iw
            if multiplier != 1 {
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
                return
            }
            var c = 0
            while c + 8 <= cout {
                var acc = load8(bp + c)
                if inside {
                    for ky in 0..<kh {
                        let src = image + ((iy0 + ky * dilationH) * iw + ix0) * cin + c
                        let wr = w + ky * kw * cout + c
                        for kx in 0..<kw {
                            acc = acc.addingProduct(load8(src + kx * dilationW * cin), load8(wr + kx * cout))
                        }
                    }
                } else {
                    for ky in 0..<kh {
                        let iy = iy0 + ky * dilationH
                        if iy < 0 || iy >= ih { continue }
                        for kx in 0..<kw {
                            let ix = ix0 + kx * dilationW
                            if ix < 0 || ix >= iw { continue }
                            acc = acc.addingProduct(load8(image + (iy * iw + ix) * cin + c),
                                                    load8(w + (ky * kw + kx) * cout + c))
                        }
                    }
                }
                store8(activation.apply(acc), out + c)
                c += 8
            }
            while c < cout {
                var acc = bp[c]
                for ky in 0..<kh {
                    let iy = iy0 + ky * dilationH
                    if iy < 0 || iy >= ih { continue }
                    for kx in 0..<kw {
                        let ix = ix0 + kx * dilationW
                        if ix < 0 || ix >= iw { continue }
                        acc += image[(iy * iw + ix) * cin + c] * w[(ky * kw + kx) * cout + c]
                    }
                }
                out[c] = activation.apply(acc)
                c += 1
            }
        }
    }
}
