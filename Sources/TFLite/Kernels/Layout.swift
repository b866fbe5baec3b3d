import CPUKernels
import MatrixProduct
import Tensor

/// PAD with zeros: output (D0+p0+q0, …) holds the input at offset (p0, p1, …). Any rank ≤ 4
/// (the models pad H and W before stride-2 convolutions, and C to widen residual branches).
final class PadKernel: Kernel {
    let name = "PAD"
    let input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>
    let inShape: [Int], outShape: [Int], before: [Int]
    var flops: Int { 0 }

    init(input: UnsafePointer<Float>, inShape: [Int], output: UnsafeMutablePointer<Float>, outShape: [Int], before: [Int]) {
        // Work in 4-D, with leading 1s.
        let extra = 4 - inShape.count
        self.input = input; self.output = output
        self.inShape = Array(repeating: 1, count: extra) + inShape
        self.outShape = Array(repeating: 1, count: extra) + outShape
        self.before = Array(repeating: 0, count: extra) + before
    }

    func run(_ pool: ThreadPool, threads: Int) {
        let (i0, i1, i2, i3) = (inShape[0], inShape[1], inShape[2], inShape[3])
        let (o1, o2, o3) = (outShape[1], outShape[2], outShape[3])
        let rows = outShape[0] * o1
        pool.parallelFor(rows, threads: threads, minPerThread: minimumPerThread(floatsPerItem: o2 * o3)) { range, _ in
            for row in range {
                let a = row / o1, b = row % o1
                let dstRow = self.output + row * o2 * o3
                let ia = a - self.before[0], ib = b - self.before[1]
                if ia < 0 || ia >= i0 || ib < 0 || ib >= i1 {
                    dstRow.initialize(repeating: 0, count: o2 * o3); continue
                }
                for c in 0..<o2 {
                    let dst = dstRow + c * o3
                    let ic = c - self.before[2]
                    if ic < 0 || ic >= i2 { dst.initialize(repeating: 0, count: o3); continue }
                    let src = self.input + ((ia * i1 + ib) * i2 + ic) * i3
                    let lead = self.before[3]
                    if lead > 0 { dst.initialize(repeating: 0, count: lead) }
                    dst.advanced(by: lead).update(from: src, count: i3)
                    let tail = o3 - lead - i3
                    if tail > 0 { dst.advanced(by: lead + i3).initialize(repeating: 0, count: tail) }
                }
            }
        }
    }
}

/// RESIZE_BILINEAR, NHWC: (N, IH, IW, C) → (N, OH, OW, C), TensorFlow's coordinate rules
/// (align_corners, half_pixel_centers) and its clamping at the borders; with a residual
/// (N, OH, OW, C), a fused ADD after it: act(resize + residual). The blending is the kernel
/// path's C loop (`pa_resize_rows`); the rows and columns each output reads, computed here once.
final class ResizeBilinearKernel: Kernel {
    let name = "RESIZE_BILINEAR"
    let inShape: Shape4, outShape: Shape4
    let hasResidual: Bool
    let path: KernelPath
    /// y0, y1 (OH each), then x0, x1 (OW each): the input rows and columns each output blends.
    private let indices: UnsafeMutableBufferPointer<Int>
    /// fy (OH), then fx (OW): the weight of the second row and column.
    private let fractions: UnsafeMutableBufferPointer<Float>
    private let params: UnsafeMutablePointer<pa_resize>
    var flops: Int { outShape.count * (hasResidual ? 5 : 4) }
    var detail: String { hasResidual ? "+add" : "" }

    init(input: UnsafePointer<Float>, inShape: Shape4, output: UnsafeMutablePointer<Float>, outShape: Shape4,
         alignCorners: Bool, halfPixelCenters: Bool, residual: UnsafePointer<Float>? = nil,
         activation: FusedActivation = .none, path: KernelPath) {
        self.inShape = inShape; self.outShape = outShape; self.hasResidual = residual != nil; self.path = path
        func axis(_ inSize: Int, _ outSize: Int) -> [(Int, Int, Float)] {
            let scale: Float = alignCorners && outSize > 1 ? Float(inSize - 1) / Float(outSize - 1)
                                                           : Float(inSize) / Float(outSize)
            return (0..<outSize).map { o in
                let src = halfPixelCenters ? (Float(o) + 0.5) * scale - 0.5 : Float(o) * scale
                let lowF = src.rounded(.down)
                let low = max(Int(lowF), 0), high = min(Int(src.rounded(.up)), inSize - 1)
                return (min(low, inSize - 1), high, src - lowF)
            }
        }
        let ys = axis(inShape.h, outShape.h), xs = axis(inShape.w, outShape.w)
        let oh = outShape.h, ow = outShape.w
        indices = .allocate(capacity: 2 * (oh + ow))
        fractions = .allocate(capacity: oh + ow)
        for (i, (low, high, f)) in ys.enumerated() { indices[i] = low; indices[oh + i] = high; fractions[i] = f }
        for (i, (low, high, f)) in xs.enumerated() {
            indices[2 * oh + i] = low; indices[2 * oh + ow + i] = high; fractions[oh + i] = f
        }
        let (lo, hi) = activation.bounds
        let base = UnsafePointer(indices.baseAddress!), weights = UnsafePointer(fractions.baseAddress!)
        params = .allocate(capacity: 1)
        params.initialize(to: pa_resize(
            input: input, residual: residual, output: output,
            n: inShape.n, ih: inShape.h, iw: inShape.w, c: inShape.c, oh: oh, ow: ow,
            y0: base, y1: base + oh, x0: base + 2 * oh, x1: base + 2 * oh + ow,
            fy: weights, fx: weights + oh, lo: lo, hi: hi))
    }

    deinit { indices.deallocate(); fractions.deallocate(); params.deallocate() }

    func run(_ pool: ThreadPool, threads: Int) {
        pool.parallelFor(outShape.n * outShape.h, threads: threads,
                         minPerThread: minimumPerThread(floatsPerItem: outShape.w * outShape.c)) { range, _ in
            pa_resize_rows(self.path.c, self.params, range.lowerBound, range.upperBound)
        }
    }
}

/// MAX_POOL_2D, NHWC, with padding (padded taps are ignored) and a fused activation.
final class MaxPoolKernel: Kernel {
    let name = "MAX_POOL_2D"
    let input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>
    let inShape: Shape4, outShape: Shape4
    let fh: Int, fw: Int, sh: Int, sw: Int, padTop: Int, padLeft: Int
    let activation: FusedActivation
    var flops: Int { outShape.count * fh * fw }

    init(input: UnsafePointer<Float>, inShape: Shape4, output: UnsafeMutablePointer<Float>, outShape: Shape4,
         fh: Int, fw: Int, sh: Int, sw: Int, padTop: Int, padLeft: Int, activation: FusedActivation) {
        self.input = input; self.output = output; self.inShape = inShape; self.outShape = outShape
        self.fh = fh; self.fw = fw; self.sh = sh; self.sw = sw; self.padTop = padTop; self.padLeft = padLeft
        self.activation = activation
    }

    func run(_ pool: ThreadPool, threads: Int) {
        let c = inShape.c
        pool.parallelFor(outShape.n * outShape.h, threads: threads) { range, _ in
            for row in range {
                let b = row / self.outShape.h, oy = row % self.outShape.h
                for ox in 0..<self.outShape.w {
                    let out = self.output + (row * self.outShape.w + ox) * c
                    for ch in 0..<c { out[ch] = -.infinity }
                    for ky in 0..<self.fh {
                        let iy = oy * self.sh - self.padTop + ky
                        if iy < 0 || iy >= self.inShape.h { continue }
                        for kx in 0..<self.fw {
                            let ix = ox * self.sw - self.padLeft + kx
                            if ix < 0 || ix >= self.inShape.w { continue }
                            let src = self.input + ((b * self.inShape.h + iy) * self.inShape.w + ix) * c
                            for ch in 0..<c { out[ch] = max(out[ch], src[ch]) }
                        }
                    }
                    for ch in 0..<c { out[ch] = self.activation.apply(out[ch]) }
                }
            }
        }
    }
}

/// DEPTH_TO_SPACE, block b: (N, H, W, C·b²) → (N, H·b, W·b, C);
/// out[n, y·b+dy, x·b+dx, c] = in[n, y, x, (dy·b+dx)·C + c].
final class DepthToSpaceKernel: Kernel {
    let name = "DEPTH_TO_SPACE"
    let input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>
    let inShape: Shape4, block: Int
    var flops: Int { 0 }
    init(input: UnsafePointer<Float>, inShape: Shape4, output: UnsafeMutablePointer<Float>, block: Int) {
        self.input = input; self.output = output; self.inShape = inShape; self.block = block
    }
    func run(_ pool: ThreadPool, threads: Int) {
        let b = block, oc = inShape.c / (b * b), ow = inShape.w * b
        pool.parallelFor(inShape.n * inShape.h, threads: threads,
                         minPerThread: minimumPerThread(floatsPerItem: inShape.w * inShape.c)) { range, _ in
            for row in range {
                let n = row / self.inShape.h, y = row % self.inShape.h
                for x in 0..<self.inShape.w {
                    let src = self.input + (row * self.inShape.w + x) * self.inShape.c
                    for dy in 0..<b {
                        let dstRow = self.output + ((n * self.inShape.h * b + y * b + dy) * ow + x * b) * oc
                        for dx in 0..<b {
                            (dstRow + dx * oc).update(from: src + (dy * b + dx) * oc, count: oc)
                        }
                    }
                }
            }
        }
    }
}

/// CONCATENATION along `axis`: each input contributes a slab of `inner_i` values per
/// outer index, outer = product of the dimensions before the axis.
final class ConcatKernel: Kernel {
    let name = "CONCATENATION"
    let inputs: [(UnsafePointer<Float>, Int)]   // pointer, values per outer index
    let output: UnsafeMutablePointer<Float>
    let outer: Int, activation: FusedActivation
    var flops: Int { 0 }
    init(inputs: [(UnsafePointer<Float>, Int)], output: UnsafeMutablePointer<Float>, outer: Int, activation: FusedActivation) {
        self.inputs = inputs; self.output = output; self.outer = outer; self.activation = activation
    }
    func run(_ pool: ThreadPool, threads: Int) {
        let total = inputs.reduce(0) { $0 + $1.1 }
        pool.parallelFor(outer, threads: threads, minPerThread: 64) { range, _ in
            for o in range {
                var dst = self.output + o * total
                for (src, inner) in self.inputs {
                    dst.update(from: src + o * inner, count: inner)
                    dst += inner
                }
            }
        }
        if case .none = activation { return }
        for i in 0..<(outer * total) { output[i] = activation.apply(output[i]) }
    }
}
