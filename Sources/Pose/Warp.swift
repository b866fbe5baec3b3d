import Foundation
import Images
import Tensor

/// A rectangle in image pixels, rotated by `rotation` radians about its centre (the ROI of
/// BlazePose: positive rotation turns it clockwise on screen, y pointing down).
public struct RotatedRect: Sendable, Equatable {
    public var centerX: Float, centerY: Float, width: Float, height: Float, rotation: Float
    public init(centerX: Float, centerY: Float, width: Float, height: Float, rotation: Float) {
        self.centerX = centerX; self.centerY = centerY; self.width = width; self.height = height; self.rotation = rotation
    }
}

/// How the crop reads pixels outside the image.
public enum WarpBorder: Sendable { case zero, replicate }

/// OpenCV 4.x `warpPerspective(INTER_LINEAR)` of a rotated rectangle into an S×S tensor,
/// reproduced exactly, as MediaPipe's ImageToTensorCalculator uses it.
///
/// BlazePose is sensitive to the resampler: a plain float bilinear crop moves landmarks by
/// 2 px on a photo and over 10 px on a 1080p frame, while this one reproduces MediaPipe's
/// crops bit for bit (docs/pose.md, "BlazePose step by step", step 6, spells the algorithm out):
/// corners by `cv::boxPoints`, the perspective transform solved by LU in double, inverted,
/// source coordinates rounded to 1/32 pixel, and integer bilinear weights summing to 2^15.
public struct PerspectiveWarp {
    /// Inverse map: output pixel (x, y) → source, row-major 3×3.
    public let inverse: [Double]
    public let size: Int

    public init(rect: RotatedRect, size: Int) {
        self.size = size
        // cv::RotatedRect::points in float, angle in degrees as MediaPipe passes it.
        let angle = Float(Double(rect.rotation * 180) / Double.pi)   // roi.rotation * 180.f / M_PI
        let radians = Double(angle) * Double.pi / 180
        let b = Float(cos(radians)) * 0.5, a = Float(sin(radians)) * 0.5
        let cx = rect.centerX, cy = rect.centerY, w = rect.width, h = rect.height
        var p0 = (x: cx - a * h - b * w, y: cy + b * h - a * w)
        var p1 = (x: cx + a * h - b * w, y: cy - b * h - a * w)
        let p2 = (x: 2 * cx - p0.x, y: 2 * cy - p0.y)
        let p3 = (x: 2 * cx - p1.x, y: 2 * cy - p1.y)
        // Keep the float32 rounding of the corners, as OpenCV stores them as Point2f.
        p0 = (Float(p0.x), Float(p0.y)); p1 = (Float(p1.x), Float(p1.y))
        let s = Float(size)
        let src = [p0, p1, p2, p3].map { (Double($0.x), Double($0.y)) }
        let dst: [(Double, Double)] = [(0, Double(s)), (0, 0), (Double(s), 0), (Double(s), Double(s))]
        inverse = PerspectiveWarp.invert3x3(PerspectiveWarp.perspectiveTransform(src, dst))
    }

    /// cv::getPerspectiveTransform: the 8×8 system solved by Gaussian elimination with
    /// partial pivoting (OpenCV's LUImpl), in double.
    static func perspectiveTransform(_ src: [(Double, Double)], _ dst: [(Double, Double)]) -> [Double] {
        var a = [Double](repeating: 0, count: 64), b = [Double](repeating: 0, count: 8)
        for i in 0..<4 {
            a[i * 8 + 0] = src[i].0; a[(i + 4) * 8 + 3] = src[i].0
            a[i * 8 + 1] = src[i].1; a[(i + 4) * 8 + 4] = src[i].1
            a[i * 8 + 2] = 1; a[(i + 4) * 8 + 5] = 1
            a[i * 8 + 6] = -src[i].0 * dst[i].0
            a[i * 8 + 7] = -src[i].1 * dst[i].0
            a[(i + 4) * 8 + 6] = -src[i].0 * dst[i].1
            a[(i + 4) * 8 + 7] = -src[i].1 * dst[i].1
            b[i] = dst[i].0; b[i + 4] = dst[i].1
        }
        let m = 8
        for i in 0..<m {
            var k = i
            for j in (i + 1)..<m where abs(a[j * m + i]) > abs(a[k * m + i]) { k = j }
            if abs(a[k * m + i]) < Double.ulpOfOne * 10 { return [1, 0, 0, 0, 1, 0, 0, 0, 1] }
            if k != i {
                for j in i..<m { a.swapAt(i * m + j, k * m + j) }
                b.swapAt(i, k)
            }
            let d = -1 / a[i * m + i]
            for j in (i + 1)..<m {
                let alpha = a[j * m + i] * d
                for k2 in (i + 1)..<m { a[j * m + k2] += alpha * a[i * m + k2] }
                b[j] += alpha * b[i]
            }
        }
        for i in stride(from: m - 1, through: 0, by: -1) {
            var s = b[i]
            for k in (i + 1)..<m { s -= a[i * m + k] * b[k] }
            b[i] = s / a[i * m + i]
        }
        return b + [1]
    }

    /// cv::invert for 3×3 with DECOMP_LU: cofactors over the determinant, in double.
    static func invert3x3(_ m: [Double]) -> [Double] {
        func s(_ r: Int, _ c: Int) -> Double { m[r * 3 + c] }
        var d = s(0, 0) * (s(1, 1) * s(2, 2) - s(1, 2) * s(2, 1))
              - s(0, 1) * (s(1, 0) * s(2, 2) - s(1, 2) * s(2, 0))
              + s(0, 2) * (s(1, 0) * s(2, 1) - s(1, 1) * s(2, 0))
        guard d != 0 else { return [0, 0, 0, 0, 0, 0, 0, 0, 0] }
        d = 1 / d
        return [
            (s(1, 1) * s(2, 2) - s(1, 2) * s(2, 1)) * d, (s(0, 2) * s(2, 1) - s(0, 1) * s(2, 2)) * d, (s(0, 1) * s(1, 2) - s(0, 2) * s(1, 1)) * d,
            (s(1, 2) * s(2, 0) - s(1, 0) * s(2, 2)) * d, (s(0, 0) * s(2, 2) - s(0, 2) * s(2, 0)) * d, (s(0, 2) * s(1, 0) - s(0, 0) * s(1, 2)) * d,
            (s(1, 0) * s(2, 1) - s(1, 1) * s(2, 0)) * d, (s(0, 1) * s(2, 0) - s(0, 0) * s(2, 1)) * d, (s(0, 0) * s(1, 1) - s(0, 1) * s(1, 0)) * d,
        ]
    }

    /// Warps `image` into `out` (size × size × 3 floats), value = scale·px + offset.
    public func apply(_ image: RGBImage, into out: UnsafeMutablePointer<Float>, border: WarpBorder,
                      scale: Float, offset: Float, pool: ThreadPool = .shared, threads: Int = 2) {
        let mi = inverse, n = size, w = image.width, h = image.height
        // The 256 grey levels → float, once (what the model sees for each byte).
        var lut = [Float](repeating: 0, count: 256)
        for v in 0..<256 { lut[v] = Float(v) * scale + offset }
        image.pixels.withUnsafeBufferPointer { src in
            lut.withUnsafeBufferPointer { table in
                pool.parallelFor(n, threads: threads) { rows, _ in
                    for y in rows {
                        let yd = Double(y)
                        let rowX = mi[1] * yd + mi[2], rowY = mi[4] * yd + mi[5], rowW = mi[7] * yd + mi[8]
                        var o = out + y * n * 3
                        for x in 0..<n {
                            let xd = Double(x)
                            let wd = mi[6] * xd + rowW
                            let inv = wd != 0 ? 32 / wd : 0
                            let fx = max(Double(Int32.min), min(Double(Int32.max), (mi[0] * xd + rowX) * inv))
                            let fy = max(Double(Int32.min), min(Double(Int32.max), (mi[3] * xd + rowY) * inv))
                            let X = roundHalfEven(fx), Y = roundHalfEven(fy)
                            let ix = X >> 5, iy = Y >> 5, ax = X & 31, ay = Y & 31
                            let w00 = 32 * (32 - ax) * (32 - ay), w01 = 32 * ax * (32 - ay)
                            let w10 = 32 * (32 - ax) * ay, w11 = 32 * ax * ay
                            if ix >= 0 && iy >= 0 && ix + 1 < w && iy + 1 < h {
                                let p = (iy * w + ix) * 3, q = p + w * 3
                                for c in 0..<3 {
                                    let v = Int(src[p + c]) * w00 + Int(src[p + 3 + c]) * w01 + Int(src[q + c]) * w10 + Int(src[q + 3 + c]) * w11
                                    o[c] = table[min(max((v + 16384) >> 15, 0), 255)]
                                }
                            } else if border == .zero && (ix >= w || ix + 1 < 0 || iy >= h || iy + 1 < 0) {
                                for c in 0..<3 { o[c] = table[0] }
                            } else {
                                // Some taps outside: zeros, or the nearest edge pixel.
                                @inline(__always) func tap(_ tx: Int, _ ty: Int, _ c: Int) -> Int {
                                    if border == .replicate {
                                        return Int(src[(min(max(ty, 0), h - 1) * w + min(max(tx, 0), w - 1)) * 3 + c])
                                    }
                                    return tx >= 0 && ty >= 0 && tx < w && ty < h ? Int(src[(ty * w + tx) * 3 + c]) : 0
                                }
                                for c in 0..<3 {
                                    let v = tap(ix, iy, c) * w00 + tap(ix + 1, iy, c) * w01 + tap(ix, iy + 1, c) * w10 + tap(ix + 1, iy + 1, c) * w11
                                    o[c] = table[min(max((v + 16384) >> 15, 0), 255)]
                                }
                            }
                            o += 3
                        }
                    }
                }
            }
        }
    }
}

/// x rounded to the nearest integer, ties to even (OpenCV's cvRound), for |x| < 2⁵¹: adding
/// and subtracting 1.5 · 2⁵² leaves no fraction bits, so the FPU's own rounding does it.
/// `rounded(.toNearestOrEven)` is one instruction only from SSE4.1 on; on the baseline
/// x86-64 it calls libm's rint, which cost the warp a quarter of its time.
@inline(__always) func roundHalfEven(_ x: Double) -> Int {
    let magic = 6_755_399_441_055_744.0
    return Int((x + magic) - magic)
}
