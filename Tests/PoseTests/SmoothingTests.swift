import Basics
import Media
import PoseFixtures
import Tensor
import XCTest
@testable import Pose

/// Reproducible Gaussian noise.
typealias SeededNoise = SplitMix64

private func variance(_ v: [Double]) -> Double {
    let m = v.reduce(0, +) / Double(v.count)
    return v.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(v.count)
}

final class SmoothingTests: XCTestCase {
    let fps = 30.0

    func testConstantSignalStaysConstant() {
        var f = OneEuroFilter(minCutoff: 0.05, beta: 80, derivativeCutoff: 1)
        for i in 0..<200 {
            XCTAssertEqual(f.filter(123.25, time: Double(i) / fps, valueScale: 1 / 200.0), 123.25, accuracy: 1e-9)
        }
    }

    func testFirstSamplePassesThroughAndBadTimeIsIgnored() {
        var f = OneEuroFilter()
        XCTAssertEqual(f.filter(7, time: 5), 7)
        XCTAssertEqual(f.filter(7, time: 5 + 1 / fps), 7, accuracy: 1e-12)
        // Same or earlier time: the value comes back as is, the state is untouched.
        XCTAssertEqual(f.filter(1000, time: 5 + 1 / fps), 1000)
        XCTAssertEqual(f.filter(-50, time: 4), -50)
        XCTAssertEqual(f.filter(7, time: 5 + 2 / fps), 7, accuracy: 1e-12)
        f.reset()
        XCTAssertFalse(f.isInitialized)
        XCTAssertEqual(f.filter(-3, time: 0), -3)
    }

    /// A step of 100 px on a 200-px person. With β = 80 the speed (100/200 body sizes in
    /// 1/30 s = 15 sizes/s, low-passed to ≈ 2.6) raises the cutoff to ≈ 208 Hz, α ≈ 0.98:
    /// the step is followed at once with a small lag. With β = 0 (a plain 0.05 Hz EMA,
    /// α ≈ 0.0104) the same step would take minutes.
    func testStepIsFollowedWithLag() {
        var f = OneEuroFilter(minCutoff: 0.05, beta: 80, derivativeCutoff: 1)
        var slow = OneEuroFilter(minCutoff: 0.05, beta: 0, derivativeCutoff: 1)
        var t = 0.0
        for _ in 0..<30 { _ = f.filter(0, time: t, valueScale: 1 / 200.0); _ = slow.filter(0, time: t); t += 1 / fps }
        var outs: [Double] = []
        var slowOut = 0.0
        for _ in 0..<15 {
            outs.append(f.filter(100, time: t, valueScale: 1 / 200.0))
            slowOut = slow.filter(100, time: t)
            t += 1 / fps
        }
        XCTAssertGreaterThan(outs[0], 90, "β makes a fast move pass")
        XCTAssertLessThan(outs[0], 100, "but still with some lag")
        for k in 1..<outs.count { XCTAssertGreaterThanOrEqual(outs[k], outs[k - 1] - 1e-9, "monotone approach") }
        XCTAssertLessThan(100 - outs.last!, 0.05)
        XCTAssertLessThan(slowOut, 20, "without β the 0.05 Hz low-pass lags far behind")
        print("step 0→100 (β 80): first frames \(outs.prefix(4).map { (($0 * 100).rounded() / 100) }); β 0 after 15 frames: \(slowOut)")
    }

    /// A still landmark at 320 px with σ = 1 px Gaussian jitter (about BlazePose's jitter
    /// on a still person), 300 frames at 30 Hz, on a 200-px person. Frame-to-frame noise
    /// looks like ≈ 0.2 sizes/s of speed, so the cutoff stays at a few Hz (α ≈ 0.3–0.6
    /// instead of 1): the variance drops to well under half.
    func testNoiseVarianceIsReducedOnStaticSignal() {
        var noise = SeededNoise(seed: 42)
        var f = OneEuroFilter(minCutoff: 0.05, beta: 80, derivativeCutoff: 1)
        var raw: [Double] = [], out: [Double] = []
        for i in 0..<300 {
            let v = 320 + noise.gaussian()
            let o = f.filter(v, time: Double(i) / fps, valueScale: 1 / 200.0)
            if i >= 30 { raw.append(v); out.append(o) }
        }
        let vr = variance(raw), vo = variance(out)
        print(String(format: "noise σ=1px, 200px person: raw variance %.3f, filtered %.3f (ratio %.2f)", vr, vo, vo / vr))
        XCTAssertLessThan(vo, 0.5 * vr)
        XCTAssertEqual(out.reduce(0, +) / Double(out.count), 320, accuracy: 0.3, "no bias")
    }

    func testSmootherFirstFramePassesThroughAndVisibilityLowPass() {
        let s = LandmarkSmoother()
        var pose = makeStandingPose(offsetX: 100, offsetY: 50)
        XCTAssertEqual(s.smooth(pose, time: 1), pose, "first frame unchanged")
        // Visibility: α = 0.1 low-pass; coordinates: unchanged pose stays put; presence as is.
        for i in pose.indices { pose[i].visibility = 0; pose[i].presence = 0.2 }
        let out = s.smooth(pose, time: 1 + 1 / fps)
        XCTAssertEqual(out[0].visibility, 0.9 * 0.9, accuracy: 1e-6)
        XCTAssertEqual(out[0].presence, 0.2)
        XCTAssertEqual(out[11].x, pose[11].x, accuracy: 1e-4)
        // Same time again: passes through, state untouched.
        var moved = pose
        for i in moved.indices { moved[i].x += 500 }
        XCTAssertEqual(s.smooth(moved, time: 1 + 1 / fps), moved)
        let next = s.smooth(pose, time: 1 + 2 / fps)
        XCTAssertEqual(next[11].x, pose[11].x, accuracy: 1e-4)
        XCTAssertEqual(next[0].visibility, 0.9 * 0.9 * 0.9, accuracy: 1e-6)
        // An empty frame resets: the next one passes through.
        XCTAssertEqual(s.smooth([], time: 2), [])
        var other = makeStandingPose(offsetX: 300)
        other[3].visibility = 0.4
        XCTAssertEqual(s.smooth(other, time: 2.1), other)
    }

    /// MediaPipe's scale rule: the speed driving the cutoff is divided by the pose's size,
    /// so a pose twice as large moving twice as many pixels is smoothed identically
    /// (output exactly 2×); without the rule the larger pose's jitter would open the
    /// filter twice as wide.
    func testObjectScaleMakesSmoothingScaleInvariant() {
        XCTAssertEqual(LandmarkSmoother.objectScale(of: makeStandingPose()), ((142 - 58) + (294 - 36)) / 2)
        let small = LandmarkSmoother(), large = LandmarkSmoother()
        var noise = SeededNoise(seed: 7)
        var maxRel: Float = 0
        for i in 0..<90 {
            let dx = Float(i) * 2 + Float(noise.gaussian())      // walking right with jitter
            let base = makeStandingPose(offsetX: dx)
            let a = small.smooth(base, time: Double(i) / fps)
            let big = base.map { Landmark(x: $0.x * 2, y: $0.y * 2, z: $0.z * 2, visibility: $0.visibility, presence: $0.presence) }
            let b = large.smooth(big, time: Double(i) / fps)
            for k in a.indices {
                maxRel = max(maxRel, abs(b[k].x - 2 * a[k].x) / max(1, abs(2 * a[k].x)))
                maxRel = max(maxRel, abs(b[k].y - 2 * a[k].y) / max(1, abs(2 * a[k].y)))
            }
        }
        XCTAssertLessThan(maxRel, 1e-4)
    }

    func testSmoothedWalkLagsLittleAndJittersLess() {
        // A pose walking at 60 px/s with σ = 1.5 px jitter on every coordinate.
        let s = LandmarkSmoother()
        var noise = SeededNoise(seed: 3)
        var errRaw: [Double] = [], errOut: [Double] = []
        for i in 0..<150 {
            let truth = makeStandingPose(offsetX: Float(i) * 2)
            var noisy = truth
            for k in noisy.indices { noisy[k].x += Float(1.5 * noise.gaussian()); noisy[k].y += Float(1.5 * noise.gaussian()) }
            let out = s.smooth(noisy, time: Double(i) / fps)
            if i >= 30 {
                for k in truth.indices {
                    errRaw.append(Double(noisy[k].x - truth[k].x)); errOut.append(Double(out[k].x - truth[k].x))
                }
            }
        }
        let rmsRaw = (errRaw.map { $0 * $0 }.reduce(0, +) / Double(errRaw.count)).squareRoot()
        let rmsOut = (errOut.map { $0 * $0 }.reduce(0, +) / Double(errOut.count)).squareRoot()
        print(String(format: "walk 60px/s, jitter 1.5px: RMS error raw %.2f px, smoothed %.2f px", rmsRaw, rmsOut))
        XCTAssertLessThan(rmsOut, rmsRaw)
    }
}
