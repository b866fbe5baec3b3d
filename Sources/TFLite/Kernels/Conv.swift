import Tensor

/// CONV_2D, NHWC.
///   input  (N, IH, IW, Cin)
///   filter (Cout, KH, KW, Cin)   — read as a (Cout, K) matrix, K = KH·KW·Cin
///   bias   (Cout)
///   output (N, OH, OW, Cout)     = act(im2col(input) (M, K) · filterᵀ + bias), M = N·OH·OW
/// A 1×1 stride-1 convolution needs no im2col: the NHWC input already is the (M, Cin)
/// matrix. Other shapes gather a block of rows at a time into per-thread scratch.
final class Conv2DKernel: Kernel {
    let name = "CONV_2D"
    let input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>
    let filter: FloatBuffer, bias: FloatBuffer
    let inShape: Shape4, outShape: Shape4
    let kh: Int, kw: Int, strideH: Int, strideW: Int, dilationH: Int, dilationW: Int
    let padTop: Int, padLeft: Int
    let activation: FusedActivation
    let direct: Bool                  // 1×1, stride 1, no padding
    let blockRows: Int                // im2col rows gathered per sgemm call
    let scratch: FloatBuffer?         // threads × blockRows × K
    let packed: PackedWeights?        // for small K, our own micro-kernel instead of sgemm
    let narrow: Bool                  // ≤ 4 output channels: dot products straight from the input

    /// Below this K the packed micro-kernel beats OpenBLAS (measured with
    /// `POSEACT_PROFILE_KERNELS=1 poseact bench pose --profile`); above it OpenBLAS's
    /// cache blocking wins.
    static let packedMaxK = 256

    var k: Int { kh * kw * inShape.c }
    var detail: String { "\(inShape)→\(outShape) \(kh)×\(kw)/\(strideH)\(direct ? " direct" : "")" }
    var flops: Int { 2 * outShape.n * outShape.h * outShape.w * outShape.c * k }

    init(input: UnsafePointer<Float>, inShape: Shape4, output: UnsafeMutablePointer<Float>, outShape: Shape4,
         filter: FloatBuffer, bias: FloatBuffer, kh: Int, kw: Int, strideH: Int, strideW: Int,
         dilationH: Int, dilationW: Int, padTop: Int, padLeft: Int, activation: FusedActivation,
         maxThreads: Int) {
        self.input = input; self.inShape = inShape; self.output = output; self.outShape = outShape
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
        narrow = outShape.c <= 4 && inShape.c % 8 == 0
        packed = !narrow && k < Conv2DKernel.packedMaxK
            ? PackedWeights(filter: filter.pointer, n: outShape.c, k: k, bias: bias.pointer) : nil
    }

    func run(_ pool: ThreadPool, threads: Int) {
        let m = outShape.n * outShape.h * outShape.w, n = outShape.c, k = self.k
        if narrow {
            pool.parallelFor(outShape.n * outShape.h, threads: threads) { rows, _ in
                for row in rows { self.narrowRow(row) }
            }
            return
        }
        // Split rows (pixels) between threads, or output channels when there are few pixels.
        if m >= 16 * threads || n < 16 || m > blockRows || packed != nil {
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
                BLAS.gemmABt(m: m, n: cols.count, k: k, a: a, lda: k,
                             b: self.filter.pointer + cols.lowerBound * k, ldb: k,
                             c: self.output + cols.lowerBound, ldc: n)
                addBiasActivate(self.output + cols.lowerBound, rows: m, channels: cols.count, ld: n,
                                bias: self.bias.pointer + cols.lowerBound, activation: self.activation)
            }
        }
    }

    private func rows(_ range: Range<Int>, scratchPart: Int) {
        let n = outShape.c, k = self.k
        if let packed {
            if direct {
                packedGemm(input, lda: k, rows: range, weights: packed, out: output, ldo: n, activation: activation)
                return
            }
            let buf = scratch!.pointer + scratchPart * blockRows * k
            var start = range.lowerBound
            while start < range.upperBound {
                let end = min(start + blockRows, range.upperBound)
                gather(start..<end, into: buf)
                packedGemm(buf, lda: k, rows: 0..<(end - start), weights: packed, out: output + start * n, ldo: n,
                           activation: activation)
                start = end
            }
            return
        }
        if direct {
            BLAS.gemmABt(m: range.count, n: n, k: k, a: input + range.lowerBound * k, lda: k,
                         b: filter.pointer, ldb: k, c: output + range.lowerBound * n, ldc: n)
            addBiasActivate(output + range.lowerBound * n, rows: range.count, channels: n, ld: n,
                            bias: bias.pointer, activation: activation)
            return
        }
        let buf = scratch!.pointer + scratchPart * blockRows * k
        var start = range.lowerBound
        while start < range.upperBound {
            let end = min(start + blockRows, range.upperBound)
            gather(start..<end, into: buf)
            BLAS.gemmABt(m: end - start, n: n, k: k, a: buf, lda: k, b: filter.pointer, ldb: k,
                         c: output + start * n, ldc: n)
            addBiasActivate(output + start * n, rows: end - start, channels: n, ld: n,
                            bias: bias.pointer, activation: activation)
            start = end
        }
    }

    /// One output row of a few-channel convolution: for each pixel and output channel, the
    /// dot product of the filter with the input under it, eight input channels at a time.
    private func narrowRow(_ row: Int) {
        let b = row / outShape.h, oy = row % outShape.h
        let cin = inShape.c, cout = outShape.c, k = self.k
        let w = filter.pointer
        for ox in 0..<outShape.w {
            let out = output + (row * outShape.w + ox) * cout
            for o in 0..<cout {
                var acc = SIMD8<Float>()
                for ky in 0..<kh {
                    let iy = oy * strideH - padTop + ky * dilationH
                    if iy < 0 || iy >= inShape.h { continue }
                    for kx in 0..<kw {
                        let ix = ox * strideW - padLeft + kx * dilationW
                        if ix < 0 || ix >= inShape.w { continue }
                        let src = input + ((b * inShape.h + iy) * inShape.w + ix) * cin
                        let wt = w + o * k + (ky * kw + kx) * cin
                        var c = 0
                        while c < cin { acc = acc.addingProduct(load8(src + c), load8(wt + c)); c += 8 }
                    }
                }
                let sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
                out[o] = activation.apply(sum + bias.pointer[o])
            }
        }
    }

    /// im2col for output pixels `range` (flattened N·OH·OW): row r holds the KH×KW×Cin
    /// input values under the filter, zeros where it hangs over the padding.
    private func gather(_ range: Range<Int>, into buf: UnsafeMutablePointer<Float>) {
        let cin = inShape.c, k = self.k
        for (r, pixel) in range.enumerated() {
            let ox = pixel % outShape.w, rest = pixel / outShape.w
            let oy = rest % outShape.h, b = rest / outShape.h
            let row = buf + r * k
            for ky in 0..<kh {
                let iy = oy * strideH - padTop + ky * dilationH
                for kx in 0..<kw {
                    let ix = ox * strideW - padLeft + kx * dilationW
                    let dst = row + (ky * kw + kx) * cin
                    if iy < 0 || iy >= inShape.h || ix < 0 || ix >= inShape.w {
                        dst.initialize(repeating: 0, count: cin)
                    } else {
                        dst.update(from: input + ((b * inShape.h + iy) * inShape.w + ix) * cin, count: cin)
                    }
                }
            }
        }
    }
}
