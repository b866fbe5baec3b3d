import Foundation
import Images
import MatrixProduct
import TFLite

/// A person found by the detector, in image pixels.
public struct Detection: Sendable {
    public var score: Float
    public var box: Box
    /// 0 hip centre, 1 full-body scale point, 2 shoulder centre, 3 upper-body scale point.
    public var keypoints: [(x: Float, y: Float)]
}

/// BlazePose's person detector: letterbox into 224×224, run, decode 2254 anchors, weighted
/// NMS, undo the letterbox (docs/pose.md, "BlazePose step by step", steps 1–4).
public final class PoseDetector: @unchecked Sendable {
    public static let inputSize = 224
    public let interpreter: Interpreter
    public var scoreThreshold: Float = 0.5
    public var iouThreshold: Float = 0.3
    let anchors: [(x: Float, y: Float)]

    /// `kernels`: the kernel path (nil: the fastest this CPU runs, or POSEACT_KERNELS's).
    public init(modelPath: String, threads: Int = 2, kernels: KernelPath? = nil) throws {
        interpreter = try Interpreter(path: modelPath, options: .init(threads: threads, kernels: kernels))
        guard interpreter.inputs.first?.shape == [1, 224, 224, 3],
              interpreter.output(named: "Identity")?.count == 2254 * 12,
              interpreter.output(named: "Identity_1")?.count == 2254 else {
            throw TFLiteError("\(modelPath): not BlazePose's pose detector (expected input [1,224,224,3] and outputs Identity [1,2254,12], Identity_1 [1,2254,1])")
        }
        // 28×28×2 (stride 8), 14×14×2 (16), 7×7×6 (the three stride-32 layers merged);
        // order layer, row, column, anchor; centres in cell middles; size fixed to 1.
        var anchors: [(x: Float, y: Float)] = []
        for (cells, perCell) in [(28, 2), (14, 2), (7, 6)] {
            for row in 0..<cells { for col in 0..<cells { for _ in 0..<perCell {
                anchors.append(((Float(col) + 0.5) / Float(cells), (Float(row) + 0.5) / Float(cells)))
            } } }
        }
        self.anchors = anchors
    }

    /// The letterbox of an image: the whole frame centred in a square of its long side.
    public static func letterbox(width: Int, height: Int) -> RotatedRect {
        let side = Float(max(width, height))
        return RotatedRect(centerX: Float(width) / 2, centerY: Float(height) / 2, width: side, height: side, rotation: 0)
    }

    /// Writes the detector input for `image` (px/127.5 − 1, letterbox padding −1), or for
    /// the square `region` of it (axis-aligned; what lies outside the image is padding too).
    public func prepare(_ image: RGBImage, region: RotatedRect? = nil) {
        let warp = PerspectiveWarp(rect: region ?? PoseDetector.letterbox(width: image.width, height: image.height),
                                   size: PoseDetector.inputSize)
        warp.apply(image, into: interpreter.input(0).baseAddress!, border: .zero,
                   scale: Float(2.0 / 255.0), offset: -1, threads: interpreter.threads)
    }

    /// People in `image` (or in the square `region` of it), best first, in the image's pixels.
    public func detect(_ image: RGBImage, region: RotatedRect? = nil) -> [Detection] {
        prepare(image, region: region)
        interpreter.invoke()
        return decode(width: image.width, height: image.height, region: region)
    }

    /// Squares that cover a wide (or tall) frame along its long side, overlapping by a
    /// quarter at least: of side the short side, or half the long side if that is more (a
    /// person lying down is wider than a tall frame's short side); none for a frame closer
    /// to square than 3:2. In the letterbox of such a frame people shrink by its aspect
    /// ratio, and the detector misses the smaller ones (four push-ups in a 2×2 grid: two
    /// found); in these squares they keep their size or more.
    public static func tiles(width: Int, height: Int) -> [RotatedRect] {
        let long = Float(max(width, height)), short = Float(min(width, height))
        guard short > 0, long >= 1.5 * short else { return [] }
        let side = max(short, long / 2)
        var n = Int((long / side).rounded(.up))
        if Float(n) * side - long < side / 4 { n += 1 }
        let step = (long - side) / Float(n - 1)
        return (0..<n).map { i in
            let c = side / 2 + Float(i) * step
            return width >= height ? RotatedRect(centerX: c, centerY: short / 2, width: side, height: side, rotation: 0)
                                   : RotatedRect(centerX: short / 2, centerY: c, width: side, height: side, rotation: 0)
        }
    }

    /// Decodes the current outputs for an image of the given size (and the square `region`
    /// of it the input was taken from; nil: the letterbox).
    public func decode(width: Int, height: Int, region: RotatedRect? = nil) -> [Detection] {
        let raw = interpreter.output(named: "Identity")!, logits = interpreter.output(named: "Identity_1")!
        let size = Float(PoseDetector.inputSize)
        struct Candidate { var score: Float; var box: (Float, Float, Float, Float); var keypoints: [Float] }
        var candidates: [Candidate] = []
        for i in 0..<anchors.count {
            let score = 1 / (1 + expf(-min(max(logits[i], -100), 100)))
            guard score >= scoreThreshold else { continue }
            let r = raw.baseAddress! + i * 12, a = anchors[i]
            let cx = r[0] / size + a.x, cy = r[1] / size + a.y, w = r[2] / size, h = r[3] / size
            var keypoints: [Float] = []
            for k in 0..<4 { keypoints.append(r[4 + 2 * k] / size + a.x); keypoints.append(r[5 + 2 * k] / size + a.y) }
            candidates.append(Candidate(score: score, box: (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2), keypoints: keypoints))
        }
        // Weighted NMS: each best remaining box absorbs those overlapping it by more than the
        // threshold (itself included): box and keypoints become score-weighted means, the
        // score stays the best one's.
        candidates.sort { $0.score > $1.score }
        func iou(_ a: (Float, Float, Float, Float), _ b: (Float, Float, Float, Float)) -> Float {
            let ix = max(0, min(a.2, b.2) - max(a.0, b.0)), iy = max(0, min(a.3, b.3) - max(a.1, b.1))
            let inter = ix * iy, union = (a.2 - a.0) * (a.3 - a.1) + (b.2 - b.0) * (b.3 - b.1) - inter
            return union > 0 ? inter / union : 0
        }
        var merged: [Candidate] = []
        var remaining = candidates
        while let top = remaining.first {
            var cluster: [Candidate] = [], rest: [Candidate] = []
            for c in remaining { (iou(top.box, c.box) > iouThreshold ? { cluster.append(c) } : { rest.append(c) })() }
            var total: Float = 0, box: (Float, Float, Float, Float) = (0, 0, 0, 0)
            var keypoints = [Float](repeating: 0, count: 8)
            for c in cluster {
                total += c.score
                box.0 += c.box.0 * c.score; box.1 += c.box.1 * c.score; box.2 += c.box.2 * c.score; box.3 += c.box.3 * c.score
                for k in 0..<8 { keypoints[k] += c.keypoints[k] * c.score }
            }
            merged.append(Candidate(score: top.score, box: (box.0 / total, box.1 / total, box.2 / total, box.3 / total),
                                    keypoints: keypoints.map { $0 / total }))
            remaining = rest
        }
        // Undo the letterbox (or the region): normalised to the square → pixels.
        let square = region ?? PoseDetector.letterbox(width: width, height: height)
        let left = square.centerX - square.width / 2, top = square.centerY - square.height / 2
        func ux(_ x: Float) -> Float { left + x * square.width }
        func uy(_ y: Float) -> Float { top + y * square.height }
        return merged.map { c in
            let x0 = ux(c.box.0), y0 = uy(c.box.1), x1 = ux(c.box.2), y1 = uy(c.box.3)
            return Detection(score: c.score, box: Box(x: x0, y: y0, width: x1 - x0, height: y1 - y0),
                             keypoints: (0..<4).map { (ux(c.keypoints[2 * $0]), uy(c.keypoints[2 * $0 + 1])) })
        }
    }
}

/// The region of interest for the landmark model from two alignment points (the detector's
/// keypoints 0–1, or the landmark model's auxiliary points 33–34), as MediaPipe computes it:
/// centre on the first point, size twice their distance, rotation turning the second point
/// straight up (target angle 90°), then scaled by 1.25 and made square on its long side.
public func regionOfInterest(center: (x: Float, y: Float), scalePoint: (x: Float, y: Float),
                             imageWidth: Int, imageHeight: Int, scale: Float = 1.25) -> RotatedRect {
    let w = Float(imageWidth), h = Float(imageHeight)
    // AlignmentPointsRectsCalculator works from normalised points scaled back to pixels.
    let x0 = center.x / w * w, y0 = center.y / h * h, x1 = scalePoint.x / w * w, y1 = scalePoint.y / h * h
    let boxSize = ((x1 - x0) * (x1 - x0) + (y1 - y0) * (y1 - y0)).squareRoot() * 2
    let rotation = normalizeRadians(Float.pi / 2 - atan2f(-(y1 - y0), x1 - x0))
    // RectTransformationCalculator: square on the long side in pixels, then scale.
    let normWidth = boxSize / w, normHeight = boxSize / h
    let longSide = max(normWidth * w, normHeight * h)
    return RotatedRect(centerX: x0, centerY: y0, width: longSide / w * scale * w, height: longSide / h * scale * h, rotation: rotation)
}

/// An angle in [−π, π).
@inline(__always) func normalizeRadians(_ angle: Float) -> Float {
    angle - 2 * Float.pi * ((angle + Float.pi) / (2 * Float.pi)).rounded(.down)
}
