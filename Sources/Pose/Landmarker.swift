import Foundation
import Images
import Media
import Tensor
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
    public let interpreter: Interpreter
    /// Heatmap refinement window (MediaPipe 0.10.14 runs 9, whatever its graph text says).
    public var refinementKernel = 9
    public var refinementMinConfidence: Float = 0.5

    /// The segmentation output is not computed: poses don't need it.
    public init(modelPath: String, threads: Int = 2) throws {
        interpreter = try Interpreter(path: modelPath, options: .init(threads: threads, outputs: ["Identity", "Identity_1", "Identity_3", "Identity_4"]))
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

    @inline(__always) static func sigmoid(_ x: Float) -> Float { 1 / (1 + expf(-x)) }

    /// Decodes the current outputs for a crop taken at `roi`.
    public func decode(roi: RotatedRect, imageWidth: Int, imageHeight: Int) -> LandmarkResult {
        let raw = interpreter.output(named: "Identity")!, heatmap = interpreter.output(named: "Identity_3")!
        let world = interpreter.output(named: "Identity_4")!
        let presence = interpreter.output(named: "Identity_1")![0]
        let size = Float(PoseLandmarker.inputSize)
        let cosR = cosf(roi.rotation), sinR = sinf(roi.rotation)
        var landmarks: [Landmark] = []
        var worldLandmarks: [SIMD3<Float>] = []
        landmarks.reserveCapacity(39)
        for j in 0..<39 {
            var x = raw[j * 5] / size, y = raw[j * 5 + 1] / size
            (x, y) = refine(x: x, y: y, landmark: j, heatmap: heatmap)
            // Crop coordinates → frame: rotate about the ROI centre, scale by its size.
            let xs = x - 0.5, ys = y - 0.5
            let fx = (cosR * xs - sinR * ys) * roi.width + roi.centerX
            let fy = (sinR * xs + cosR * ys) * roi.height + roi.centerY
            landmarks.append(Landmark(x: fx, y: fy, z: raw[j * 5 + 2] / size * roi.width,
                                      visibility: Self.sigmoid(raw[j * 5 + 3]), presence: Self.sigmoid(raw[j * 5 + 4])))
            let wx = world[j * 3], wy = world[j * 3 + 1]
            worldLandmarks.append(SIMD3(cosR * wx - sinR * wy, sinR * wx + cosR * wy, world[j * 3 + 2]))
        }
        let next = regionOfInterest(center: (landmarks[33].x, landmarks[33].y), scalePoint: (landmarks[34].x, landmarks[34].y),
                                    imageWidth: imageWidth, imageHeight: imageHeight)
        return LandmarkResult(presence: presence, landmarks: landmarks, worldLandmarks: worldLandmarks, nextROI: next)
    }

    /// Heatmap refinement: in the kernel×kernel window (clipped to the 64×64 map) around the
    /// landmark's cell, if the strongest sigmoid ≥ 0.5, the landmark moves to the window's
    /// sigmoid-weighted mean cell (in crop-normalised units; no half-cell offset).
    @inline(__always)
    func refine(x: Float, y: Float, landmark j: Int, heatmap: UnsafeBufferPointer<Float>) -> (Float, Float) {
        let side = 64, channels = 39
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
