@testable import TFLite
import MatrixProduct
import Tensor
import XCTest

/// The convolution kernels on shapes BlazePose does not have (channel counts that leave a
/// tail after the last vector, dilation, odd panels, a depth multiplier, a fused residual),
/// on every kernel path this CPU runs, against the definition computed in double precision. Tolerance
/// 1e-4 × (1 + |value|): float sums of at most 45 products of values below 1, where
/// fused and unfused multiply-adds differ by ~1e-6. A bfloat16 path's products are held to
/// the same bound against the definition on their operands rounded to bfloat16 (to nearest,
/// ties to even), which is what it computes exactly up to the FP32 sums' order.
final class ConvolutionKernelTests: XCTestCase {
    struct Geometry {
        var n = 1, ih = 9, iw = 11, cin = 3, cout = 24
        var kh = 3, kw = 3, stride = 1, dilation = 1, pad = 1
        var oh: Int { (ih + 2 * pad - (kh - 1) * dilation - 1) / stride + 1 }
        var ow: Int { (iw + 2 * pad - (kw - 1) * dilation - 1) / stride + 1 }
    }

    func random(_ count: Int, seed: UInt64) -> FloatBuffer {
        var rng = SplitMix64(seed: seed)
        let buffer = FloatBuffer(count: count)
        for i in 0..<count { buffer.pointer[i] = Float(rng.uniform() * 2 - 1) }
        return buffer
    }

    /// x rounded to bfloat16 (to nearest, ties to even), as a float.
    static func bfloat16(_ x: Float) -> Float {
        let u = x.bitPattern
        return Float(bitPattern: (u &+ 0x7FFF &+ ((u >> 16) & 1)) & 0xFFFF_0000)
    }

    /// out[b, oy, ox, o] = bias[o] + Σ in[b, iy, ix, c(o, ci)] · w(o, ky, kx, ci) (+ residual), clamped.
    func reference(_ g: Geometry, input: FloatBuffer, weight: (Int, Int, Int, Int) -> Float, bias: FloatBuffer,
                   depthwise: Int?, residual: FloatBuffer? = nil, lo: Float, hi: Float) -> [Float] {
        var out = [Float](repeating: 0, count: g.n * g.oh * g.ow * g.cout)
        for b in 0..<g.n { for oy in 0..<g.oh { for ox in 0..<g.ow { for o in 0..<g.cout {
            var acc = Double(bias.pointer[o])
            for ky in 0..<g.kh { for kx in 0..<g.kw {
                let iy = oy * g.stride - g.pad + ky * g.dilation, ix = ox * g.stride - g.pad + kx * g.dilation
                guard iy >= 0, iy < g.ih, ix >= 0, ix < g.iw else { continue }
                let pixel = ((b * g.ih + iy) * g.iw + ix) * g.cin
                if let m = depthwise {
                    acc += Double(input.pointer[pixel + o / m]) * Double(weight(o, ky, kx, 0))
                } else {
                    for ci in 0..<g.cin { acc += Double(input.pointer[pixel + ci]) * Double(weight(o, ky, kx, ci)) }
                }
            } }
            let at = ((b * g.oh + oy) * g.ow + ox) * g.cout + o
            if let residual { acc += Double(residual.pointer[at]) }
            out[at] = min(max(Float(acc), lo), hi)
        } } } }
        return out
    }

    func assertClose(_ got: FloatBuffer, _ expected: [Float], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        var worst: Float = 0, at = 0
        for i in expected.indices {
            let error = abs(got.pointer[i] - expected[i]) / (1 + abs(expected[i]))
            if error > worst || error.isNaN { worst = error; at = i }
        }
        XCTAssertLessThanOrEqual(worst, 1e-4, "\(what): at \(at) got \(got.pointer[at]), expected \(expected[at])", file: file, line: line)
    }

    /// Runs the kernel `make` builds on every path this CPU runs (nil: OpenBLAS, where
    /// `paths` has it), at 1 and 2 threads, and compares its output with `expected`.
    func checkEveryPath(_ expected: [Float], _ what: String, paths: [KernelPath?] = KernelPath.supported,
                        file: StaticString = #filePath, line: UInt = #line,
                        make: (KernelPath?, UnsafeMutablePointer<Float>) -> any Kernel) {
        for path in paths {
            for threads in [1, 2] {
                let output = FloatBuffer(count: expected.count)
                make(path, output.pointer).run(ThreadPool.shared, threads: threads)
                assertClose(output, expected, "\(what) \(path.map { "\($0)" } ?? "blas") threads \(threads)", file: file, line: line)
            }
        }
    }

    func testConvolutionsOnEveryPath() {
        let shapes: [Geometry] = [
            Geometry(),                                                              // first-layer shape: 3 channels, taps
            Geometry(ih: 10, iw: 12, cin: 3, cout: 24, stride: 2),                   // stride 2, two panels, one half-empty
            Geometry(ih: 8, iw: 9, cin: 17, cout: 40, kh: 2, kw: 3, dilation: 2, pad: 2), // dilation, three panels
            Geometry(ih: 7, iw: 7, cin: 16, cout: 1, pad: 1),                        // few output channels
            Geometry(ih: 6, iw: 13, cin: 8, cout: 3, kh: 3, kw: 3, stride: 2, pad: 0),
            Geometry(n: 2, ih: 5, iw: 6, cin: 24, cout: 33, kh: 1, kw: 1, pad: 0),   // 1×1: the GEMM straight from the input
            Geometry(ih: 5, iw: 7, cin: 37, cout: 20, kh: 1, kw: 1, pad: 0),          // odd K past a 32-value block (bfloat16 pairs)
            Geometry(ih: 7, iw: 9, cin: 300, cout: 48, kh: 1, kw: 1, pad: 0),         // more rows than one bfloat16 block holds
            Geometry(ih: 5, iw: 9, cin: 16, cout: 8, kh: 1, kw: 1, pad: 0),           // one half panel (8 channels)
            Geometry(ih: 10, iw: 12, cin: 16, cout: 24, stride: 2),                  // taps over the padding, a half panel, in bfloat16
            Geometry(ih: 6, iw: 21, cin: 8, cout: 1),                                // few channels, eight pixels at a time
            Geometry(ih: 4, iw: 19, cin: 16, cout: 3, kh: 3, kw: 2, pad: 1),         // the same, three channels, any filter
        ]
        for (s, g) in shapes.enumerated() {
            let input = random(g.n * g.ih * g.iw * g.cin, seed: UInt64(10 + s))
            let k = g.kh * g.kw * g.cin
            let filter = random(g.cout * k, seed: UInt64(20 + s)), bias = random(g.cout, seed: UInt64(30 + s))
            // A residual ADD fused into the convolution: every store path adds it before the clamp.
            let residual = random(g.n * g.oh * g.ow * g.cout, seed: UInt64(70 + s))
            for activation in [FusedActivation.none, .relu6] { for withResidual in [false, true] {
                let (lo, hi) = activation.bounds
                let expected = reference(g, input: input, weight: { o, ky, kx, ci in filter.pointer[o * k + (ky * g.kw + kx) * g.cin + ci] },
                                         bias: bias, depthwise: nil, residual: withResidual ? residual : nil, lo: lo, hi: hi)
                func convolution(_ path: KernelPath?, _ output: UnsafeMutablePointer<Float>) -> Conv2DKernel {
                    Conv2DKernel(
                        input: input.pointer, inShape: Shape4(n: g.n, h: g.ih, w: g.iw, c: g.cin), output: output,
                        outShape: Shape4(n: g.n, h: g.oh, w: g.ow, c: g.cout),
                        residual: withResidual ? UnsafePointer(residual.pointer) : nil, filter: filter, bias: bias,
                        kh: g.kh, kw: g.kw, strideH: g.stride, strideW: g.stride, dilationH: g.dilation, dilationW: g.dilation,
                        padTop: g.pad, padLeft: g.pad, activation: activation, maxThreads: 2, path: path)
                }
                let what = "CONV_2D shape \(s) \(activation)\(withResidual ? " + residual" : "")"
                checkEveryPath(expected, what, paths: KernelPath.supported.filter { !$0.roundsToBFloat16 } + [nil], make: convolution)
                guard let bf16 = KernelPath.supported.first(where: \.roundsToBFloat16) else { continue }
                // The few-output-channel layers have dot products in FP32 on every path, and so
                // do the layers reading fewer than 16 channels (the first-layer shapes).
                let rounds = convolution(bf16, FloatBuffer(count: 1).pointer).packed?.hasBFloat16 == true
                XCTAssertEqual(rounds, !(g.cout <= 4 && g.cin % 8 == 0) && g.cin >= Conv2DKernel.bfloat16MinChannels, what)
                let roundedInput = FloatBuffer(count: input.count)
                for i in 0..<input.count { roundedInput.pointer[i] = rounds ? Self.bfloat16(input.pointer[i]) : input.pointer[i] }
                let roundedExpected = reference(g, input: roundedInput, weight: { o, ky, kx, ci in
                    let w = filter.pointer[o * k + (ky * g.kw + kx) * g.cin + ci]
                    return rounds ? Self.bfloat16(w) : w
                }, bias: bias, depthwise: nil, residual: withResidual ? residual : nil, lo: lo, hi: hi)
                checkEveryPath(roundedExpected, what, paths: [bf16], make: convolution)
            } }
        }
    }

    func testDepthwiseOnEveryPath() {
        let shapes: [(Geometry, multiplier: Int)] = [
            (Geometry(ih: 9, iw: 11, cin: 20, cout: 20), 1),                                 // 16 + 4: vector and scalar tails
            (Geometry(ih: 7, iw: 7, cin: 40, cout: 40, kh: 5, kw: 5, pad: 2), 1),            // narrow rows, zero-padded copy
            (Geometry(ih: 30, iw: 31, cin: 24, cout: 24, kh: 5, kw: 5, pad: 2), 1),          // wide rows, 16 + 8 channels
            (Geometry(ih: 12, iw: 13, cin: 72, cout: 72, stride: 2), 1),                     // stride 2, two channel groups
            (Geometry(ih: 9, iw: 10, cin: 8, cout: 8, kh: 3, kw: 2, dilation: 2, pad: 2), 1), // any kernel size, dilation
            (Geometry(n: 2, ih: 6, iw: 7, cin: 4, cout: 8), 2),                              // depth multiplier 2 (Swift)
        ]
        for (s, (g, m)) in shapes.enumerated() {
            let input = random(g.n * g.ih * g.iw * g.cin, seed: UInt64(40 + s))
            let filter = random(g.kh * g.kw * g.cout, seed: UInt64(50 + s)), bias = random(g.cout, seed: UInt64(60 + s))
            for activation in [FusedActivation.none, .relu6] {
                let (lo, hi) = activation.bounds
                let expected = reference(g, input: input, weight: { o, ky, kx, _ in filter.pointer[(ky * g.kw + kx) * g.cout + o] },
                                         bias: bias, depthwise: m, lo: lo, hi: hi)
                checkEveryPath(expected, "DEPTHWISE_CONV_2D shape \(s) \(activation)") { path, output in
                    DepthwiseConvKernel(
                        input: input.pointer, inShape: Shape4(n: g.n, h: g.ih, w: g.iw, c: g.cin), output: output,
                        outShape: Shape4(n: g.n, h: g.oh, w: g.ow, c: g.cout), filter: filter, bias: bias,
                        kh: g.kh, kw: g.kw, strideH: g.stride, strideW: g.stride, dilationH: g.dilation, dilationW: g.dilation,
                        padTop: g.pad, padLeft: g.pad, multiplier: m, activation: activation, path: path!)
                }
            }
        }
    }
}
