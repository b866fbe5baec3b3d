import Foundation
import Images
import MatrixProduct
import TFLite

/// What the landmark model says about one region of interest.
public struct LandmarkResult: Sendable {
    /// Pose presence (already a probability): below 0.5 there is no person in the ROI.
    public var presence: Float
    /// All 39 landmarks in pixels (33 body + 2 auxiliary for the next ROI + 4 unused).
    public var landmarks: [Landmark]
    /// 39 world landmarks, metres, rotated into the frame.
    public var worldLandmarks: [SIMD3<Float>]
    /// The ROI for the same person in the next frame (from auxiliary landmarks 33 and 34).
    public var nextROI: RotatedRect
}

/// BlazePose's full landmark model on a rotated crop (docs/pose.md, "BlazePose step by step", steps 6–10).
public final class PoseLandmarker: @unchecked Sendable {
    public static let inputSize = 256
    /// Cells a side of the heatmap output.
    public static let heatmapSize = 64
    public let interpreter: Interpreter
    /// Heatmap refinement window (MediaPipe 0.10.14 runs 9, whatever its graph text says).
    public var refinementKernel = 9
    public var refinementMinConfidence: Float = 0.5

    /// The segmentation output is not computed: poses don't need it.
    /// `kernels`: the kernel path (nil: the fastest this CPU runs, or POSEACT_KERNELS's).
    public init(modelPath: String, threads: Int = 2, kernels: KernelPath? = nil) throws {
        interpreter = try Interpreter(path: modelPath, options: .init(threads: threads, outputs: ["Identity", "Identity_1", "Identity_3", "Identity_4"],
                                                                      kernels: kernels))
        guard interpreter.inputs.first?.shape == [1, 256, 256, 3], interpreter.output(named: "Identity")?.count == 195,
              interpreter.output(named: "Identity_3")?.count == 64 * 64 * 39, interpreter.output(named: "Identity_4")?.count == 117 else {
            throw TFLiteError("\(modelPath): not BlazePose's full landmark model (expected input [1,256,256,3], outputs Identity [1,195], Identity_3 [1,64,64,39], Identity_4 [1,117])")
        }
    }

    /// Writes the model input: the ROI warped to 256×256 (px/255, edge pixels replicated).
    public func prepare(_ image: RGBImage, roi: RotatedRect) {
        PerspectiveWarp(rect: roi, size: PoseLandmarker.inputSize)
            .apply(image, into: interpreter.input(0).baseAddress!, border: .replicate, scale: Float(1.0 / 255.0), offset: 0,
                   threads: interpreter.threads)
    }

    public func run(_ image: RGBImage, roi: RotatedRect) -> LandmarkResult {
        prepare(image, roi: roi)
        interpreter.invoke()
        return decode(roi: roi, imageWidth: image.width, imageHeight: image.height)
    }

    /// Test-time augmentation: the crop and its mirror image, each through the model, their
    /// poses averaged (the mirror's taken back: x → 1 − x, left and right swapped). Twice
    /// the work of `run`; what it does to the keypoints is measured in docs/experiments.md.
    public func runMirrorAveraged(_ image: RGBImage, roi: RotatedRect) -> LandmarkResult {
        prepare(image, roi: roi)
        interpreter.invoke()
        let direct = cropPose()
        mirrorInput()
        interpreter.invoke()
        let mirrored = cropPose().mirrored()
        return place(direct.averaged(with: mirrored), roi: roi, imageWidth: image.width, imageHeight: image.height)
    }

    @inline(__always) static func sigmoid(_ x: Float) -> Float { 1 / (1 + expf(-x)) }

    /// Decodes the current outputs for a crop taken at `roi`.
    public func decode(roi: RotatedRect, imageWidth: Int, imageHeight: Int) -> LandmarkResult {
        place(cropPose(), roi: roi, imageWidth: imageWidth, imageHeight: imageHeight)
    }

    /// The model's pose in the crop's own units: x, y in 0–1 of the crop (after heatmap
    /// refinement), z on x's scale, visibility and presence as probabilities, world
    /// landmarks in the crop's axes.
    struct CropPose {
        var presence: Float
        /// 39 × (x, y, z, visibility, presence).
        var points: [SIMD8<Float>]
        var world: [SIMD3<Float>]

        /// BlazePose's left/right pairs (nose, the auxiliary and unused points map to themselves).
        static let mirrorIndex: [Int] = {
            var m = Array(0..<39)
            let face: [(Int, Int)] = [(1, 4), (2, 5), (3, 6), (7, 8), (9, 10)]
            let body: [(Int, Int)] = stride(from: 11, to: 33, by: 2).map { ($0, $0 + 1) }
            for (a, b) in face + body { m[a] = b; m[b] = a }
            return m
        }()

        /// The same pose seen in a mirror, for a crop whose columns were swapped. Crop column
        /// u is at x = u/256 (OpenCV's warp puts pixel centres on whole coordinates), so the
        /// swap u ↔ 255 − u maps x to 255/256 − x, not 1 − x (a 1/256 bias otherwise: 2.5 px
        /// of a 640 px crop). The heatmap's refinement has its own half-cell bias (MediaPipe
        /// places a cell c at c/64, not at its centre); mirrored back this way it changes
        /// sign, so the average of the two runs has none.
        func mirrored() -> CropPose {
            let axis = Float(PoseLandmarker.inputSize - 1) / Float(PoseLandmarker.inputSize)
            return CropPose(presence: presence,
                            points: Self.mirrorIndex.map { var p = points[$0]; p[0] = axis - p[0]; return p },
                            world: Self.mirrorIndex.map { var w = world[$0]; w.x = -w.x; return w })
        }

        func averaged(with other: CropPose) -> CropPose {
            CropPose(presence: (presence + other.presence) / 2,
                     points: zip(points, other.points).map { ($0 + $1) * 0.5 },
                     world: zip(world, other.world).map { ($0 + $1) * 0.5 })
        }
    }

    func cropPose() -> CropPose {
        let raw = interpreter.output(named: "Identity")!, heatmap = interpreter.output(named: "Identity_3")!
        let world = interpreter.output(named: "Identity_4")!
        let size = Float(PoseLandmarker.inputSize)
        var points: [SIMD8<Float>] = [], worlds: [SIMD3<Float>] = []
        points.reserveCapacity(39); worlds.reserveCapacity(39)
        for j in 0..<39 {
            let (x, y) = refine(x: raw[j * 5] / size, y: raw[j * 5 + 1] / size, landmark: j, heatmap: heatmap)
            let z: Float = raw[j * 5 + 2] / size
            let visibility = PoseLandmarker.sigmoid(raw[j * 5 + 3]), presence = PoseLandmarker.sigmoid(raw[j * 5 + 4])
            points.append(SIMD8<Float>(x, y, z, visibility, presence, 0, 0, 0))
            worlds.append(SIMD3(world[j * 3], world[j * 3 + 1], world[j * 3 + 2]))
        }
        return CropPose(presence: interpreter.output(named: "Identity_1")![0], points: points, world: worlds)
    }

    /// Mirrors the prepared input in place (256 × 256 × 3, left to right).
    func mirrorInput() {
        let input = interpreter.input(0).baseAddress!, side = PoseLandmarker.inputSize
        for row in 0..<side {
            let line = input + row * side * 3
            for c in 0..<(side / 2) {
                let a = line + c * 3, b = line + (side - 1 - c) * 3
                for k in 0..<3 { let t = a[k]; a[k] = b[k]; b[k] = t }
            }
        }
    }

    /// A crop's pose placed in the frame: rotated about the ROI's centre, scaled by its size.
    func place(_ pose: CropPose, roi: RotatedRect, imageWidth: Int, imageHeight: Int) -> LandmarkResult {
        let cosR = cosf(roi.rotation), sinR = sinf(roi.rotation)
        let landmarks = pose.points.map { p -> Landmark in
            let xs = p[0] - 0.5, ys = p[1] - 0.5
            return Landmark(x: (cosR * xs - sinR * ys) * roi.width + roi.centerX, y: (sinR * xs + cosR * ys) * roi.height + roi.centerY,
                            z: p[2] * roi.width, visibility: p[3], presence: p[4])
        }
        let worldLandmarks = pose.world.map { SIMD3(cosR * $0.x - sinR * $0.y, sinR * $0.x + cosR * $0.y, $0.z) }
        let next = regionOfInterest(center: (landmarks[33].x, landmarks[33].y), scalePoint: (landmarks[34].x, landmarks[34].y),
                                    imageWidth: imageWidth, imageHeight: imageHeight)
        return LandmarkResult(presence: pose.presence, landmarks: landmarks, worldLandmarks: worldLandmarks, nextROI: next)
    }

    /// Heatmap refinement: in the kernel×kernel window (clipped to the 64×64 map) around the
    /// landmark's cell, if the strongest sigmoid ≥ 0.5, the landmark moves to the window's
    /// sigmoid-weighted mean cell (in crop-normalised units; no half-cell offset).
    @inline(__always)
    func refine(x: Float, y: Float, landmark j: Int, heatmap: UnsafeBufferPointer<Float>) -> (Float, Float) {
        let side = Self.heatmapSize, channels = 39
        let col = Int(x * Float(side)), row = Int(y * Float(side))   // truncation, as MediaPipe
        guard col >= 0, col < side, row >= 0, row < side else { return (x, y) }
        let half = refinementKernel / 2
        var sum: Float = 0, sumX: Float = 0, sumY: Float = 0, best: Float = 0
        for r in max(0, row - half)...min(side - 1, row + half) {
            for c in max(0, col - half)...min(side - 1, col + half) {
                let s = Self.sigmoid(heatmap[(r * side + c) * channels + j])
                best = max(best, s); sum += s; sumX += Float(c) * s; sumY += Float(r) * s
            }
        }
        guard best >= refinementMinConfidence, sum > 0 else { return (x, y) }
        return (sumX / sum / Float(side), sumY / sum / Float(side))
    }
}
