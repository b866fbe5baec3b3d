import Foundation
import XCTest
@testable import Keypoints
@testable import KeypointWindows

/// The keypoint filter (`KeypointRowSmoother`) and the quality measure (`KeypointQuality`).
final class KeypointQualityTests: XCTestCase {
    /// A BlazePose clip of a person standing still for `frames` frames, then moving their
    /// arms steadily, every coordinate with deterministic noise of `noise` pixels; shifted
    /// right by `shift` pixels.
    static func clip(frames: Int = 120, noise: Float = 2, shift: Float = 0) -> ClipKeypoints {
        let names = Skeleton.blazePoseNames
        var kp: [Float] = []
        for t in 0..<frames {
            for (j, n) in names.enumerated() {
                var x: Float = 300 + Float(j % 7) * 12, y: Float = 80 + Float(j) * 9
                if n.hasPrefix("left_shoulder") || n.hasPrefix("right_shoulder") { y = 150 }
                if n.hasSuffix("_hip") { y = 300 }
                if t >= frames / 2 && (n.contains("wrist") || n.contains("elbow")) { x += 6 * Float(t - frames / 2) }
                let k = Float(t * 99 + j)
                x += noise * sinf(k * 12.9898 + 78.233 * sinf(k)) + shift
                y += noise * sinf(k * 39.346 + 11.135 * sinf(k))
                kp += [x / 640, y / 480, 0.9]
            }
        }
        return ClipKeypoints(id: "c", label: "a", split: "test", source: "", start: nil, end: nil, fps: 30, width: 640, height: 480,
                             jointNames: names, keypoints: kp, times: (0..<frames).map { Double($0) / 30 }, estimator: "test")
    }

    /// The figures: raw jitter on the still frames is the noise's (for independent noise of
    /// RMS σ in x and y, the acceleration's mean length is √6·σ·√(π/2) ≈ 3.1 σ: between 2 σ
    /// and 4 σ, in torso lengths of 152 px); the filter cuts it at least in half; the moving
    /// arms are counted as moving; a mirror run shifted by 6 px disagrees by 6 px (to 2 %:
    /// the noise moves the median torso by about a pixel).
    func testJitterFilterAndMirrorDisagreement() {
        let q = KeypointQuality.measure([Self.clip()], mirrored: ["c": Self.clip(shift: 6)])
        let raw = q.figures.first { $0.filter == "none" }!, filtered = q.figures.first { $0.filter == "one_euro" }!
        let sigma = Float(2) / Float(2).squareRoot(), torso = Float(24 * 24 + 150 * 150).squareRoot()
        XCTAssertGreaterThan(raw.jitter, Double(2 * sigma / torso))
        XCTAssertLessThan(raw.jitter, Double(4 * sigma / torso))
        XCTAssertLessThan(filtered.jitter, raw.jitter / 2)
        XCTAssertGreaterThan(raw.movingSamples, 0)
        XCTAssertEqual(raw.mirrorDisagreement ?? 0, Double(6 / torso), accuracy: Double(0.02 * 6 / torso))
        XCTAssertEqual(raw.lagFrames, 0)
    }

    /// The filter is causal and MediaPipe's: the first frame passes unchanged, a frame with
    /// no person passes and resets it (the next is a first frame again), a missing joint
    /// passes unchanged, and still noise comes out quieter.
    func testRowSmootherResetsAndLeavesMissingJoints() {
        let clip = Self.clip(frames: 10)
        let j = clip.jointNames.count
        var rows = (0..<10).map { Array(clip.keypoints[($0 * j * 3)..<(($0 + 1) * j * 3)]) }
        rows[5] = (0..<(j * 3)).map { $0 % 3 == 2 ? 0 : .nan }
        rows[3][0] = .nan; rows[3][2] = 0
        let out = KeypointRowSmoother.smooth(rows, times: clip.times, width: 640, height: 480)
        XCTAssertEqual(out[0], rows[0])
        XCTAssertNotEqual(out[1], rows[1])
        XCTAssertTrue(out[3][0].isNaN)
        XCTAssertEqual(out[3][2], 0)
        XCTAssertTrue(out[5][0].isNaN)
        XCTAssertEqual(out[6], rows[6], "after a frame with nobody the smoother starts again")
    }
}
