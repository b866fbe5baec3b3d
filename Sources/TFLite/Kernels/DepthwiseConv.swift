import Tensor

/// DEPTHWISE_CONV_2D, NHWC, depth multiplier m.
///   input  (N, IH, IW, Cin)
///   filter (1, KH, KW, Cout), Cout = Cin·m; output channel o reads input channel o / m
///   bias   (Cout)
///   output (N, OH, OW, Cout)
/// Direct loops, eight channels at a time held in registers across all KH·KW taps.
/// Pixels whose window lies inside the input take a path with no bounds checks.
final class DepthwiseConvKernel: Kernel {
    let name = "DEPTHWISE_CONV_2D"
    let input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>
    let filter: FloatBuffer, bias: FloatBuffer
    let inShape: Shape4, outShape: Shape4
    let kh: Int, kw: Int, strideH: Int, strideW: Int, dilationH: Int, dilationW: Int
    let padTop: Int, padLeft: Int, multiplier: Int
    let activation: FusedActivation

    var flops: Int { 2 * outShape.count * kh * kw }
    var detail: String { "\(inShape)→\(outShape) \(kh)×\(kw)/\(strideH) pad \(padTop)" }

    init(input: UnsafePointer<Float>, inShape: Shape4, output: UnsafeMutablePointer<Float>, outShape: Shape4,
         filter: FloatBuffer, bias: FloatBuffer, kh: Int, kw: Int, strideH: Int, strideW: Int,
         dilationH: Int, dilationW: Int, padTop: Int, padLeft: Int, multiplier: Int, activation: FusedActivation) {
        self.input = input; self.inShape = inShape; self.output = output; self.outShape = outShape
        self.filter = filter; self.bias = bias; self.kh = kh; self.kw = kw
        self.strideH = strideH; self.strideW = strideW; self.dilationH = dilationH; self.dilationW = dilationW
        self.padTop = padTop; self.padLeft = padLeft; self.multiplier = multiplier; self.activation = activation
    }

    func run(_ pool: ThreadPool, threads: Int) {
        let rows = outShape.n * outShape.h
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
        let w = filter.pointer, bp = bias.pointer
        for ox in 0..<outShape.w {
            let ix0 = ox * strideW - padLeft
            let out = output + ((b * outShape.h + oy) * outShape.w + ox) * cout
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
                continue
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
