import Foundation
import Tensor
import TestData
import XCTest
@testable import Keypoints
@testable import KeypointWindows

/// The one preprocessing module (training and live), augmentation and the windows file.
final class PreprocessingTests: XCTestCase {
    static let pennNames = ["head", "left_shoulder", "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist",
                            "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle"]

    var tempFiles: [String] = []
    override func tearDown() {
        for f in tempFiles { try? FileManager.default.removeItem(atPath: f) }
        tempFiles = []
    }
    func temp(_ name: String) -> String {
        let p = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-pre-\(UUID().uuidString)-\(name)").path
        tempFiles.append(p)
        return p
    }

    /// A standing pose for `names` (x, y 0–1, confidence 1), swaying with frame `t`.
    static func pose(_ names: [String], t: Int) -> [Float] {
        var out: [Float] = []
        for (i, n) in names.enumerated() {
            let c = Skeleton.canonicalName(n)
            let side: Float = c.hasPrefix("left") || c.hasSuffix("left") ? 1 : (c.hasPrefix("right") || c.hasSuffix("right") ? -1 : 0)
            var y: Float = 0.5
            if c.contains("eye") || c.contains("ear") || c == "nose" || c == "head" || c.contains("mouth") { y = 0.2 }
            else if c.contains("shoulder") { y = 0.3 } else if c.contains("elbow") { y = 0.4 }
            else if c.contains("wrist") || c.contains("pinky") || c.contains("index") || c.contains("thumb") { y = 0.5 }
            else if c.contains("hip") { y = 0.55 } else if c.contains("knee") { y = 0.7 } else { y = 0.85 }
            let x = 0.5 + side * (0.05 + 0.001 * Float(i)) + 0.01 * sin(Float(t) * 0.3 + Float(i))
            out += [x, y + 0.005 * cos(Float(t) * 0.2 + Float(i)), 0.9]
        }
        return out
    }

    static func clip(_ names: [String], frames: Int, fps: Double = 30, width: Int = 640, height: Int = 480, id: String = "c",
                     label: String = "a", split: String? = "train", pose: (Int) -> [Float]? = { _ in nil }) -> ClipKeypoints {
        var kp: [Float] = []
        for t in 0..<frames { kp += pose(t) ?? Self.pose(names, t: t) }
        return ClipKeypoints(id: id, label: label, split: split, source: "test", start: nil, end: nil, fps: fps, width: width,
                             height: height, jointNames: names, keypoints: kp, times: (0..<frames).map { Double($0) / fps },
                             estimator: "test")
    }

    static func missingFrame(_ n: Int) -> [Float] { (0..<(n * 3)).map { $0 % 3 == 2 ? 0 : .nan } }

    /// Values of joint `name` (x, y, c) at frame `t` of a window with features position, confidence.
    func joint(_ w: Window, _ name: String, t: Int, spec: PreprocessingSpec) -> [Float] {
        let j = spec.joints.firstIndex(of: name)!, f = spec.featuresPerJoint
        let o = (t * spec.joints.count + j) * f
        return Array(w.values[o..<(o + 3)])
    }

    // MARK: mapping

    func testBlazePoseToVisionDerivesNeck() throws {
        let spec = PreprocessingSpec(window: 4, stride: 4, normalization: .none)
        let c = Self.clip(Skeleton.blazePoseNames, frames: 4)
        let w = try XCTUnwrap(Preprocessing.windows(of: c, spec: spec).first)
        XCTAssertEqual(w.values.count, 4 * 18 * 3)
        XCTAssertEqual(w.mask, [1, 1, 1, 1])
        let raw = Self.pose(Skeleton.blazePoseNames, t: 0)
        func src(_ n: String) -> [Float] { let i = Skeleton.index(of: n, in: Skeleton.blazePoseNames)!; return Array(raw[(i * 3)..<(i * 3 + 3)]) }
        let ls = src("left_shoulder"), rs = src("right_shoulder")
        let neck = joint(w, "neck", t: 0, spec: spec)
        XCTAssertEqual(neck[0], (ls[0] + rs[0]) / 2, accuracy: 1e-6)
        XCTAssertEqual(neck[1], (ls[1] + rs[1]) / 2, accuracy: 1e-6)
        XCTAssertEqual(neck[2], 0.9, accuracy: 1e-6)
        for n in ["nose", "left_eye", "right_ear", "left_ankle"] { XCTAssertEqual(joint(w, n, t: 0, spec: spec), src(n), n) }
    }

    func testPennToVisionHeadIsTheNose() throws {
        let spec = PreprocessingSpec(window: 4, stride: 4, normalization: .none)
        let w = try XCTUnwrap(Preprocessing.windows(of: Self.clip(Self.pennNames, frames: 4), spec: spec).first)
        XCTAssertEqual(w.mask, [1, 1, 1, 1], "13 of the 14 joints Penn provides are present: real poses")
        let raw = Self.pose(Self.pennNames, t: 1)
        XCTAssertEqual(joint(w, "nose", t: 1, spec: spec), Array(raw[0..<3]), "Penn's head point stands for the nose")
        for n in ["left_eye", "right_eye", "left_ear", "right_ear"] { XCTAssertEqual(joint(w, n, t: 1, spec: spec), [0, 0, 0], n) }
        for n in ["neck", "left_shoulder", "right_hip", "left_ankle"] { XCTAssertGreaterThan(joint(w, n, t: 1, spec: spec)[2], 0, n) }
        XCTAssertEqual(joint(w, "right_wrist", t: 1, spec: spec), Array(raw[18..<21]))
    }

    // MARK: normalisation, missing frames, windows

    func testNormalisationIgnoresPositionAndDistance() {
        let spec = PreprocessingSpec(features: [.position, .confidence, .velocity])
        let names = Skeleton.blazePoseNames
        let a = Self.clip(names, frames: 48)
        let b = Self.clip(names, frames: 48) { t in
            var p = Self.pose(names, t: t)
            for j in 0..<names.count { p[j * 3] = p[j * 3] * 0.4 + 0.1; p[j * 3 + 1] = p[j * 3 + 1] * 0.4 + 0.35 }
            return p
        }
        let wa = Preprocessing.windows(of: a, spec: spec), wb = Preprocessing.windows(of: b, spec: spec)
        XCTAssertEqual(wa.count, 3)
        XCTAssertEqual(wa.count, wb.count)
        for (x, y) in zip(wa, wb) {
            XCTAssertEqual(x.mask, y.mask)
            // Positions agree to float rounding (~1e-6); velocities are differences of them
            // times 30 fps, so up to ~30× that.
            for (u, v) in zip(x.values, y.values) { XCTAssertEqual(u, v, accuracy: 1e-4) }
        }
        // Centred on the root, torso length 1.
        let w = wa[0]
        let root = joint(w, "left_hip", t: 0, spec: spec)[0] + joint(w, "right_hip", t: 0, spec: spec)[0]
        XCTAssertLessThan(abs(root / 2), 0.1)
        XCTAssertGreaterThan(w.values.map(abs).max()!, 0.5)
    }

    /// `centre: frame` takes each frame's own root off its positions (the posture alone) and
    /// leaves the velocities those of the window-centred body (its movement kept); `torso:
    /// median` scales by the median torso length, so one bad frame does not move the scale;
    /// `presence` is 1 for a present joint, 0 for a missing one.
    func testFrameCentreMedianTorsoAndPresence() throws {
        let names = Skeleton.blazePoseNames
        // The body walks right by 4 px a frame; frame 3 has a torso 3× too long (the shoulders
        // mis-tracked high), and its left ear is missing.
        let clip = Self.clip(names, frames: 32) { t in
            var p = Self.pose(names, t: t)
            for j in 0..<names.count { p[j * 3] += Float(t) * 4 / 640 }
            if t == 3 {
                for n in ["left_shoulder", "right_shoulder"] { p[names.firstIndex(of: n)! * 3 + 1] -= 0.3 }
                p[names.firstIndex(of: "left_ear")! * 3 + 2] = 0
            }
            return p
        }
        let layout = Skeleton.visionLayout + ["root"]
        let window = PreprocessingSpec(joints: layout, features: [.position, .presence, .velocity])
        var frame = window; frame.centre = .frame
        var median = window; median.torso = .median
        let w = try XCTUnwrap(Preprocessing.windows(of: clip, spec: window).first)
        let f = try XCTUnwrap(Preprocessing.windows(of: clip, spec: frame).first)
        let m = try XCTUnwrap(Preprocessing.windows(of: clip, spec: median).first)
        let n = layout.count, root = layout.firstIndex(of: "root")!, wrist = layout.firstIndex(of: "left_wrist")!
        let ear = layout.firstIndex(of: "left_ear")!
        func v(_ x: Window, _ t: Int, _ j: Int) -> [Float] { let o = (t * n + j) * 5; return Array(x.values[o..<(o + 5)]) }
        for t in [0, 10, 31] {
            // Frame-centred: the root sits at 0 in every frame; window-centred it moves right.
            XCTAssertEqual(v(f, t, root)[0], 0, accuracy: 1e-5)
            XCTAssertEqual(v(f, t, root)[1], 0, accuracy: 1e-5)
            // The same window less the frame's root, joint by joint.
            for k in 0..<2 { XCTAssertEqual(v(f, t, wrist)[k], v(w, t, wrist)[k] - v(w, t, root)[k], accuracy: 1e-5) }
            // Velocities are the window-centred ones in both: the walk is in them.
            XCTAssertEqual(Array(v(f, t, wrist)[3...]), Array(v(w, t, wrist)[3...]))
            XCTAssertEqual(v(f, t, wrist)[2], 1, "presence")
        }
        XCTAssertGreaterThan(v(w, 31, root)[0] - v(w, 0, root)[0], 1, "window-centred: the root moves across the window")
        XCTAssertGreaterThan(v(w, 10, root)[3], 1, "the walk is in the velocity (about 120 px/s)")
        XCTAssertEqual(v(w, 3, ear), [0, 0, 0, 0, 0], "missing joint: every channel 0, presence too")
        // Frame 3's torso is 264 px against 120: the mean over 32 frames grows by 144/32/120
        // = 3.75 %, the median not at all; the same frame's torso, scaled by each, shows the
        // ratio (±0.5 %: the sway moves the other frames' torsos by up to 2 %, about evenly).
        let torsoLength = { (x: Window) -> Float in
            let neck = layout.firstIndex(of: "neck")!
            let a = v(x, 10, neck), b = v(x, 10, root)
            return ((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1])).squareRoot()
        }
        XCTAssertEqual(torsoLength(m) / torsoLength(w), 1.0375, accuracy: 0.005)
        // Saved and read back with the model; a file from before the keys means window, mean.
        XCTAssertEqual(try PreprocessingSpec.fromJSON(frame.json()), frame)
        XCTAssertEqual(try PreprocessingSpec.fromJSON(median.json()), median)
        let old = try PreprocessingSpec.fromJSON(#"{"joints":["nose"],"features":["position"]}"#)
        XCTAssertEqual(old.centre, .window)
        XCTAssertEqual(old.torso, .mean)
    }

    func testMissingFramesAreZeroWithMaskZero() throws {
        let names = Skeleton.blazePoseNames
        let spec = PreprocessingSpec()
        let c = Self.clip(names, frames: 32) { t in (5..<10).contains(t) ? Self.missingFrame(names.count) : nil }
        let w = try XCTUnwrap(Preprocessing.windows(of: c, spec: spec).first)
        XCTAssertEqual(w.mask, (0..<32).map { (5..<10).contains($0) ? 0 : 1 })
        let per = spec.channels
        for t in 5..<10 { XCTAssertTrue(w.values[(t * per)..<((t + 1) * per)].allSatisfy { $0 == 0 }) }
        XCTAssertFalse(w.values[(4 * per)..<(5 * per)].allSatisfy { $0 == 0 })
        // A frame with too few joints (fewer than half) is missing too.
        let sparse = Self.clip(names, frames: 32) { t in
            guard t == 3 else { return nil }
            var p = Self.pose(names, t: t)
            for j in 0..<25 { p[j * 3 + 2] = 0.1 }   // below minConfidence
            return p
        }
        XCTAssertEqual(try XCTUnwrap(Preprocessing.windows(of: sparse, spec: spec).first).mask[3], 0)
    }

    func testSixtyPercentRule() {
        let names = Skeleton.blazePoseNames
        let spec = PreprocessingSpec(window: 100, stride: 100)
        func clip(real: Int) -> ClipKeypoints { Self.clip(names, frames: 100) { t in t < real ? nil : Self.missingFrame(names.count) } }
        XCTAssertEqual(Preprocessing.windows(of: clip(real: 59), spec: spec).count, 0, "59 % real poses: dropped")
        XCTAssertEqual(Preprocessing.windows(of: clip(real: 60), spec: spec).count, 1, "60 %: kept")
    }

    func testWindowCountAndShortClip() {
        let names = Skeleton.blazePoseNames
        for (t, w, s) in [(100, 32, 8), (32, 32, 8), (33, 32, 8), (200, 16, 5)] {
            let spec = PreprocessingSpec(window: w, stride: s)
            let ws = Preprocessing.windows(of: Self.clip(names, frames: t), spec: spec)
            XCTAssertEqual(ws.count, (t - w) / s + 1, "T \(t) W \(w) S \(s)")
            XCTAssertEqual(ws.map(\.start), Array(stride(from: 0, through: t - w, by: s)))
        }
        let short = Self.clip(names, frames: 18)
        XCTAssertEqual(Preprocessing.windows(of: short, spec: PreprocessingSpec()).count, 0, "18 of 32 = 56 % real: dropped")
        let kept = Preprocessing.windows(of: short, spec: PreprocessingSpec(minPoseShare: 0.5))
        XCTAssertEqual(kept.count, 1)
        XCTAssertEqual(kept[0].mask, (0..<32).map { $0 < 18 ? 1 : 0 })
        XCTAssertEqual(kept[0].values.count, 32 * 54)
        XCTAssertTrue(kept[0].values[(18 * 54)...].allSatisfy { $0 == 0 })
    }

    func testResamplingPicksNearestEarlierFrame() throws {
        let names = Skeleton.blazePoseNames
        let spec = PreprocessingSpec(fps: 30, window: 10, stride: 10, normalization: .none)
        // 60 fps source; frame t's nose x encodes t.
        let c = Self.clip(names, frames: 40, fps: 60) { t in var p = Self.pose(names, t: 0); p[0] = Float(t) / 100; return p }
        let w = try XCTUnwrap(Preprocessing.windows(of: c, spec: spec).first)
        XCTAssertEqual((0..<10).map { joint(w, "nose", t: $0, spec: spec)[0] }, (0..<10).map { Float(2 * $0) / 100 })
        // A gap in the source times becomes missing frames.
        var gap = Self.clip(names, frames: 20, fps: 30)
        gap.times = gap.times.map { $0 < 0.2 ? $0 : $0 + 0.2 }
        let g = try XCTUnwrap(Preprocessing.windows(of: gap, spec: PreprocessingSpec(window: 26, stride: 26)).first)
        XCTAssertEqual(g.mask.count, 26)
        // Frame 5 is at 0.167 s, frame 6 at 0.4 s: 0.2 s still takes frame 5 (one model frame
        // later, within 1.5 source frames), 0.233…0.367 s are missing.
        XCTAssertEqual(Array(g.mask[5..<13]), [1, 1, 0, 0, 0, 0, 0, 1])
    }

    // MARK: live = training

    func testLiveWindowEqualsTrainingWindow() throws {
        let names = Skeleton.blazePoseNames
        let spec = PreprocessingSpec(features: [.position, .confidence, .velocity])
        for frames in [32, 48] {
            let c = Self.clip(names, frames: frames) { t in t % 7 == 3 ? Self.missingFrame(names.count) : nil }
            let training = try XCTUnwrap(Preprocessing.windows(of: c, spec: spec).last)
            let perFrame = (0..<frames).map { Array(c.keypoints[($0 * names.count * 3)..<(($0 + 1) * names.count * 3)]) }
            let live = try XCTUnwrap(Self.lastWindow(perFrame, names: names, width: c.width, height: c.height, spec: spec))
            XCTAssertEqual(live.values, training.values, "\(frames) frames")
            XCTAssertEqual(live.mask, training.mask)
            XCTAssertEqual(live.start, training.start)
        }
        // With world landmarks (`world` feature), as ActionRecognizer passes them.
        let worldSpec = PreprocessingSpec(features: [.position, .world])
        let c = Self.worldClip(frames: 40)
        let rows = (0..<40).map { Array(c.keypoints[($0 * names.count * 3)..<(($0 + 1) * names.count * 3)]) }
        let worldRows = (0..<40).map { Array(c.world![($0 * names.count * 3)..<(($0 + 1) * names.count * 3)]) }
        let training = try XCTUnwrap(Preprocessing.windows(of: c, spec: worldSpec).last)
        let live = try XCTUnwrap(Self.lastWindow(Array(rows.suffix(32)), world: Array(worldRows.suffix(32)), names: names,
                                                 width: c.width, height: c.height, spec: worldSpec))
        XCTAssertEqual(live.values, training.values)
        XCTAssertNotEqual(live.values.filter { $0 != 0 }.count, 0)
    }

    /// Live's last window of `rows`, frames already at the model's rate (as live's frame loop
    /// gives them), with their world landmarks when given.
    static func lastWindow(_ rows: [[Float]], world: [[Float]]? = nil, names: [String], width: Int, height: Int,
                           spec: PreprocessingSpec) -> Window? {
        let live = StreamingPreprocessor(jointNames: names, width: width, height: height, spec: spec, retention: .lastWindow)
        for (f, row) in rows.enumerated() { live.append(row, world: world?[f], time: nil) }
        return live.lastWindow()
    }

    /// Live's sequence keeps only a window of frames, however long it runs, and its last
    /// window after every frame is the clip's window ending there (times from a 25 fps
    /// source, resampled to 30, with the one-euro filter on: every frame-by-frame step).
    func testLiveSequenceEqualsClipAtEveryFrame() throws {
        let names = Skeleton.blazePoseNames
        var spec = PreprocessingSpec(features: [.position, .confidence, .velocity])
        spec.keypointFilter = .oneEuro
        let c = Self.clip(names, frames: 150, fps: 25) { t in t % 9 == 4 ? Self.missingFrame(names.count) : nil }
        let clip = StreamingPreprocessor(jointNames: names, width: c.width, height: c.height, spec: spec, retention: .all)
        let live = StreamingPreprocessor(jointNames: names, width: c.width, height: c.height, spec: spec, retention: .lastWindow)
        let j = names.count * 3
        var compared = 0
        for f in 0..<c.frameCount {
            let row = Array(c.keypoints[(f * j)..<((f + 1) * j)])
            clip.append(row, time: c.times[f]); live.append(row, time: c.times[f])
            XCTAssertEqual(live.frameCount, clip.frameCount)
            let start = max(0, live.frameCount - spec.window)
            let a = live.lastWindow(), b = clip.window(start: start)
            XCTAssertEqual(a?.values, b?.values, "frame \(f)"); XCTAssertEqual(a?.mask, b?.mask)
            if a != nil { compared += 1 }
        }
        XCTAssertGreaterThan(compared, 100)
        // 150 frames at 25 fps are 5.96 s: 179 model frames; live no longer has the first ones.
        XCTAssertEqual(live.frameCount, 179)
        XCTAssertNotNil(clip.window(start: 0))
        XCTAssertNil(live.window(start: 0))
        // A stream that pauses for an hour makes only the frames a window needs.
        live.append(Self.pose(names, t: 0), time: 3600)
        XCTAssertEqual(live.frameCount, Int((3600 - c.times[0]) * 30 + 1e-6) + 1)
        XCTAssertEqual(live.lastWindow()?.mask.count, spec.window)
        // A broken clock: a time that is not a number is passed over; one absurdly far on is
        // a long pause; neither traps.
        let before = live.frameCount
        live.append(Self.pose(names, t: 1), time: .nan)
        XCTAssertEqual(live.frameCount, before)
        live.append(Self.pose(names, t: 2), time: 1e300)
        XCTAssertEqual(live.frameCount, before + spec.window + 1)
        XCTAssertNil(live.lastWindow(), "one pose after the pause: too few for a window")
    }

    /// Resampling frame by frame picks what resampling the whole clip would: the nearest
    /// earlier source frame, missing past 1.5 source frames (a 60 fps source with a gap).
    func testStreamingResamplingMatchesTheRule() {
        let names = Skeleton.blazePoseNames
        let spec = PreprocessingSpec(window: 1, stride: 1, normalization: .none)   // a window per model frame
        var times = (0..<40).map { Double($0) / 60 }
        for i in 20..<40 { times[i] += 0.1 }
        let s = StreamingPreprocessor(jointNames: names, width: 640, height: 480, spec: spec, sourceFPS: 60, retention: .all)
        for (i, t) in times.enumerated() { var p = Self.pose(names, t: 0); p[0] = Float(i) / 100; s.append(p, time: t) }
        let count = Int((times.last! * 30 + 1e-6).rounded(.down)) + 1
        XCTAssertEqual(s.frameCount, count)
        for k in 0..<count {
            let t = Double(k) / 30
            let source = times.lastIndex { $0 <= t + 1e-6 }!
            let missing = t - times[source] > 1.5 / 60 + 1e-6
            let w = s.window(start: k)
            if missing { XCTAssertNil(w, "model frame \(k)"); continue }
            XCTAssertEqual(w.map { joint($0, "nose", t: 0, spec: spec)[0] }, Float(source) / 100, "model frame \(k)")
        }
    }

    /// A BlazePose clip with world landmarks: the 2-D pose of `pose(_:t:)` and, in 3-D, the
    /// same points (metres, about the hips) with depth by side, each moved by `transform`.
    static func worldClip(frames: Int, transform: (SIMD3<Float>) -> SIMD3<Float> = { $0 },
                          bend: Float = 0) -> ClipKeypoints {
        let names = Skeleton.blazePoseNames
        var c = clip(names, frames: frames)
        var world: [Float] = []
        for t in 0..<frames {
            let p = pose(names, t: t)
            for (i, n) in names.enumerated() {
                let side: Float = n.hasPrefix("left") ? 1 : (n.hasPrefix("right") ? -1 : 0)
                var q = SIMD3(p[i * 3] - 0.5, p[i * 3 + 1] - 0.55, 0.08 * side + 0.01 * Float(i % 5))
                if n == "left_knee" { q.z += bend }
                q = transform(q)
                world += [q.x, q.y, q.z]
            }
        }
        c.world = world
        return c
    }

    /// The `world` feature is in the body's own frame: the same posture seen from another
    /// camera angle (rotated in 3-D), by a bigger person (scaled) and elsewhere (shifted)
    /// gives the same values (to float rounding: 1e-5 of a torso length); another posture
    /// does not. A clip without world landmarks is refused with one line.
    func testWorldFeatureIsTheSameFromAnyCameraAngle() throws {
        let spec = PreprocessingSpec(joints: Skeleton.visionLayout + ["root"], features: [.world])
        let a = try XCTUnwrap(Preprocessing.windows(of: Self.worldClip(frames: 32), spec: spec).first)
        // Yaw 70°, pitch 25°, scale 1.3, shift.
        let yaw: Float = 70 * .pi / 180, pitch: Float = 25 * .pi / 180
        let turned = Self.worldClip(frames: 32) { q in
            let y = SIMD3(cos(yaw) * q.x + sin(yaw) * q.z, q.y, -sin(yaw) * q.x + cos(yaw) * q.z)
            let r = SIMD3(y.x, cos(pitch) * y.y - sin(pitch) * y.z, sin(pitch) * y.y + cos(pitch) * y.z)
            return 1.3 * r + SIMD3(0.2, -0.1, 0.5)
        }
        let b = try XCTUnwrap(Preprocessing.windows(of: turned, spec: spec).first)
        XCTAssertEqual(a.values.count, 32 * 19 * 3)
        for (x, y) in zip(a.values, b.values) { XCTAssertEqual(x, y, accuracy: 1e-5) }
        XCTAssertGreaterThan(a.values.map(abs).max() ?? 0, 0.5, "not all zero")
        // Up the spine: the neck is 1 torso length above the root, which is the origin.
        let n = spec.joints.count
        let neck = spec.joints.firstIndex(of: "neck")!, root = spec.joints.firstIndex(of: "root")!
        XCTAssertEqual(Array(a.values[(neck * 3)..<(neck * 3 + 3)]).map { ($0 * 1e4).rounded() / 1e4 }, [0, 1, 0])
        XCTAssertEqual(Array(a.values[(root * 3)..<(root * 3 + 3)]), [0, 0, 0])
        // Another posture: the left knee moved forward 10 cm.
        let bent = try XCTUnwrap(Preprocessing.windows(of: Self.worldClip(frames: 32, bend: 0.1), spec: spec).first)
        let knee = spec.joints.firstIndex(of: "left_knee")!
        XCTAssertGreaterThan(abs(bent.values[(5 * n + knee) * 3 + 2] - a.values[(5 * n + knee) * 3 + 2]), 0.1)
        XCTAssertNil(Preprocessing.problem(with: Self.worldClip(frames: 32), spec: spec))
        let problem = try XCTUnwrap(Preprocessing.problem(with: Self.clip(Skeleton.blazePoseNames, frames: 32), spec: spec))
        XCTAssertTrue(problem.contains("no world landmarks"), problem)
        XCTAssertNil(Preprocessing.problem(with: Self.clip(Skeleton.blazePoseNames, frames: 32), spec: PreprocessingSpec()))
    }

    /// Mirroring the video (x → 1 − x in the picture, x → −x in the world landmarks, left and
    /// right swapped by the pose model) gives the window `AugmentationSpec.flipped` makes of
    /// the original, every feature included: so flip augmentation and `flip_average` show the
    /// net the inputs a mirrored camera would (tolerance 1e-4: float rounding of 1 − x,
    /// which the velocity multiplies by the frame rate, 30).
    func testFlipIsTheMirroredVideo() throws {
        let names = Skeleton.blazePoseNames
        let spec = PreprocessingSpec(features: [.position, .confidence, .velocity, .bone, .world])
        let original = Self.worldClip(frames: 32)
        var mirrored = original
        let j = names.count
        let partner = names.map { Skeleton.index(of: Skeleton.mirror($0), in: names)! }
        for f in 0..<original.frameCount {
            for k in 0..<j {
                let src = (f * j + partner[k]) * 3, dst = (f * j + k) * 3
                mirrored.keypoints[dst] = 1 - original.keypoints[src]
                mirrored.keypoints[dst + 1] = original.keypoints[src + 1]
                mirrored.keypoints[dst + 2] = original.keypoints[src + 2]
                mirrored.world![dst] = -original.world![src]
                mirrored.world![dst + 1] = original.world![src + 1]
                mirrored.world![dst + 2] = original.world![src + 2]
            }
        }
        let w = try XCTUnwrap(Preprocessing.windows(of: original, spec: spec).first)
        let m = try XCTUnwrap(Preprocessing.windows(of: mirrored, spec: spec).first)
        let flipped = AugmentationSpec.flipped(w.values, layout: spec.joints, features: spec.features)
        for (x, y) in zip(m.values, flipped) { XCTAssertEqual(x, y, accuracy: 1e-4) }
        XCTAssertNotEqual(m.values, w.values)
    }

    /// Velocity: the change from the previous frame (normalised) times the frame rate; per
    /// frame for a spec from an older file.
    func testVelocityIsPerSecond() throws {
        var spec = PreprocessingSpec(fps: 25, features: [.position, .velocity])
        let c = Self.clip(Self.pennNames, frames: 40, fps: 25)
        let w = try XCTUnwrap(Preprocessing.windows(of: c, spec: spec).first)
        spec.velocityUnit = .perFrame
        let perFrame = try XCTUnwrap(Preprocessing.windows(of: c, spec: spec).first)
        let n = spec.joints.count, k = spec.joints.firstIndex(of: "left_wrist")!
        for t in [1, 13] {
            let o = (t * n + k) * 4, prev = ((t - 1) * n + k) * 4
            XCTAssertEqual(perFrame.values[o + 2], w.values[o] - w.values[prev], accuracy: 1e-6)
            XCTAssertEqual(perFrame.values[o + 3], w.values[o + 1] - w.values[prev + 1], accuracy: 1e-6)
            XCTAssertEqual(w.values[o + 2], 25 * perFrame.values[o + 2], accuracy: 1e-5)
            XCTAssertEqual(w.values[o + 3], 25 * perFrame.values[o + 3], accuracy: 1e-5)
            XCTAssertNotEqual(w.values[o + 2], 0)
        }
        XCTAssertEqual(Array(w.values[(k * 4 + 2)..<(k * 4 + 4)]), [0, 0], "no velocity at the first frame")
    }

    /// The bone feature: each joint minus its parent in the skeleton tree, after
    /// normalisation; 0 where the parent is missing and at the root. A parent outside the
    /// layout is replaced by the nearest ancestor in it.
    func testBoneIsJointMinusParent() throws {
        let vision = Skeleton.visionLayout
        let parents = Skeleton.parentPositions(of: vision)
        func parent(_ name: String) -> String? { parents[vision.firstIndex(of: name)!].map { vision[$0] } }
        XCTAssertEqual(parent("left_wrist"), "left_elbow")
        XCTAssertEqual(parent("right_knee"), "right_hip")
        XCTAssertEqual(parent("nose"), "neck")
        XCTAssertEqual(parent("left_ear"), "left_eye")
        XCTAssertNil(parent("neck"), "vision has no root joint: the neck's parent is not in the layout")
        XCTAssertEqual(Skeleton.parentPositions(of: ["root", "leftShoulder", "left_elbow", "tail"]), [nil, 0, 1, nil],
                       "the shoulder's parent (neck) is missing: its grandparent, root; unknown names have none")

        let spec = PreprocessingSpec(features: [.position, .bone])
        let w = try XCTUnwrap(Preprocessing.windows(of: Self.clip(Self.pennNames, frames: 32), spec: spec).first)
        let n = spec.joints.count
        func values(_ name: String, t: Int) -> [Float] {
            let o = (t * n + spec.joints.firstIndex(of: name)!) * 4
            return Array(w.values[o..<(o + 4)])
        }
        for t in [0, 20] {
            let wrist = values("left_wrist", t: t), elbow = values("left_elbow", t: t)
            XCTAssertEqual(wrist[2], wrist[0] - elbow[0], accuracy: 1e-6)
            XCTAssertEqual(wrist[3], wrist[1] - elbow[1], accuracy: 1e-6)
            XCTAssertNotEqual(wrist[2], 0)
            XCTAssertEqual(Array(values("left_eye", t: t)), [0, 0, 0, 0], "Penn Action has no eyes: missing, all 0")
            XCTAssertEqual(Array(values("left_ear", t: t)[2...]), [0, 0], "missing joint: no bone")
        }

        // Mirroring swaps the bones of the two sides and negates their x.
        var flipped = w
        AugmentationSpec.flip(&flipped, layout: spec.joints, features: spec.features)
        let o = (7 * n + spec.joints.firstIndex(of: "left_wrist")!) * 4
        let r = values("right_wrist", t: 7)
        XCTAssertEqual(Array(flipped.values[o..<(o + 4)]), [-r[0], r[1], -r[2], r[3]])
    }

    func testSpecJSONRoundTripAndDefaults() throws {
        let spec = PreprocessingSpec(joints: Skeleton.allNames, fps: 25, window: 16, stride: 4, features: [.position, .velocity])
        XCTAssertEqual(try PreprocessingSpec.fromJSON(spec.json()), spec)
        XCTAssertEqual(try PreprocessingSpec.fromJSON("{\"window\": 20}").window, 20)
        var old = PreprocessingSpec()
        old.velocityUnit = .perFrame
        XCTAssertEqual(try PreprocessingSpec.fromJSON("{}"), old, "a file from before velocity_unit: per frame")
        XCTAssertEqual(try PreprocessingSpec.fromJSON(PreprocessingSpec().json()).velocityUnit, .perSecond)
        XCTAssertEqual(spec.channels, 36 * 4)
    }

    // MARK: augmentation

    func testFlipSwapsLeftAndRightAndTwiceIsIdentity() throws {
        let spec = PreprocessingSpec(features: [.position, .confidence, .velocity])
        let w0 = try XCTUnwrap(Preprocessing.windows(of: Self.clip(Skeleton.blazePoseNames, frames: 32), spec: spec).first)
        var w = w0
        AugmentationSpec.flip(&w, layout: spec.joints, features: spec.features)
        let f = spec.featuresPerJoint, n = spec.joints.count
        func v(_ w: Window, _ name: String, t: Int) -> [Float] {
            let o = (t * n + spec.joints.firstIndex(of: name)!) * f
            return Array(w.values[o..<(o + f)])
        }
        for t in [0, 17] {
            XCTAssertEqual(v(w, "left_wrist", t: t), v(w0, "right_wrist", t: t).enumerated().map { [0, 3].contains($0.offset) ? -$0.element : $0.element })
            XCTAssertEqual(v(w, "nose", t: t), v(w0, "nose", t: t).enumerated().map { [0, 3].contains($0.offset) ? -$0.element : $0.element })
        }
        AugmentationSpec.flip(&w, layout: spec.joints, features: spec.features)
        XCTAssertEqual(w, w0)
    }

    func testAugmentationIsDeterministicPerSeed() throws {
        let spec = PreprocessingSpec()
        let w0 = try XCTUnwrap(Preprocessing.windows(of: Self.clip(Skeleton.blazePoseNames, frames: 32), spec: spec).first)
        func run(_ seed: UInt64) -> Window {
            var w = w0, rng = SplitMix64(seed: seed)
            AugmentationSpec.augment(&w, spec: .standard, layout: spec.joints, features: spec.features, rng: &rng)
            return w
        }
        XCTAssertEqual(run(7), run(7))
        XCTAssertNotEqual(run(7).values, run(8).values)
        XCTAssertNotEqual(run(7).values, w0.values)
        var same = w0, rng = SplitMix64(seed: 1)
        AugmentationSpec.augment(&same, spec: .off, layout: spec.joints, features: spec.features, rng: &rng)
        XCTAssertEqual(same, w0, "everything off: unchanged")
        // Missing joints stay 0 under rotation, scale, translation and jitter.
        var spatial = AugmentationSpec.standard
        spatial.timeStretch = 1...1; spatial.dropFrames = 0
        let p = Self.clip(Self.pennNames, frames: 32)
        let pw = try XCTUnwrap(Preprocessing.windows(of: p, spec: spec).first)
        var a = pw; var r = SplitMix64(seed: 3)
        AugmentationSpec.augment(&a, spec: spatial, layout: spec.joints, features: spec.features, rng: &r)
        XCTAssertEqual(joint(a, "left_ear", t: 5, spec: spec), [0, 0, 0])
        XCTAssertEqual(a.mask, pw.mask)
    }

    func testOcclusionHidesOneBodyPartForTheWholeWindow() throws {
        let spec = PreprocessingSpec(features: [.position, .confidence, .velocity, .bone])
        let layout = spec.joints, n = layout.count, f = spec.featuresPerJoint
        func names(_ part: [Int]) -> Set<String> { Set(part.map { layout[$0] }) }
        let parts = AugmentationSpec.occlusionParts(layout: layout)
        XCTAssertEqual(parts.map(names), [["left_ankle", "right_ankle"], ["left_ankle", "right_ankle", "left_knee", "right_knee"],
                                          ["nose", "left_eye", "right_eye", "left_ear", "right_ear"]])
        XCTAssertEqual(AugmentationSpec.occlusionParts(layout: Skeleton.blazePoseNames).map { $0.count }, [6, 8, 11])
        let w0 = try XCTUnwrap(Preprocessing.windows(of: Self.clip(Skeleton.blazePoseNames, frames: 32), spec: spec).first)
        func hidden(_ w: Window) -> Set<String> {
            Set((0..<n).filter { j in (0..<32).allSatisfy { t in (0..<f).allSatisfy { w.values[(t * n + j) * f + $0] == 0 } } }
                .map { layout[$0] })
        }
        XCTAssertEqual(hidden(w0), [], "every joint is present to begin with")
        var seen: Set<Set<String>> = []
        for seed in 0..<40 {
            var w = w0, rng = SplitMix64(seed: UInt64(seed))
            AugmentationSpec.augment(&w, spec: AugmentationSpec(occlude: 1), layout: layout, features: spec.features, rng: &rng)
            let h = hidden(w)
            XCTAssertTrue(parts.map(names).contains(h), "seed \(seed): one whole part is hidden, not \(h)")
            // The rest of the window is untouched, and the frames stay real.
            for j in 0..<n where !h.contains(layout[j]) {
                for t in 0..<32 { for c in 0..<f { XCTAssertEqual(w.values[(t * n + j) * f + c], w0.values[(t * n + j) * f + c]) } }
            }
            XCTAssertEqual(w.mask, w0.mask)
            seen.insert(h)
        }
        XCTAssertEqual(seen.count, 3, "each part is drawn")
        var kept = 0
        for seed in 0..<200 {
            var w = w0, rng = SplitMix64(seed: UInt64(seed))
            AugmentationSpec.augment(&w, spec: AugmentationSpec(occlude: 0.3), layout: layout, features: spec.features, rng: &rng)
            if w == w0 { kept += 1 }
        }
        // 140 of 200 expected; ±30 is more than 4 standard deviations (6.5) of a binomial.
        XCTAssertEqual(Double(kept), 140, accuracy: 30)
    }

    /// A body seen by a camera (weak perspective, 400 pixels per metre, 640×480), its world
    /// landmarks `transform`ed first: the 2-D keypoints are the picture of the world ones.
    static func filmedClip(frames: Int, transform: (SIMD3<Float>) -> SIMD3<Float> = { $0 }) -> ClipKeypoints {
        let names = Skeleton.blazePoseNames
        let lh = names.firstIndex(of: "left_hip")!, rh = names.firstIndex(of: "right_hip")!
        var kp: [Float] = [], world: [Float] = []
        for t in 0..<frames {
            let p = pose(names, t: t)
            // A side view of a push-up: the body along x, the far side 0.3 m deeper.
            var q = names.indices.map { i -> SIMD3<Float> in
                let side: Float = names[i].hasPrefix("left") ? 0.15 : (names[i].hasPrefix("right") ? -0.15 : 0)
                return SIMD3(p[i * 3 + 1] - 0.5, 0.3 * (p[i * 3] - 0.5) + 0.02 * Float(i % 3), side + 0.01 * Float(i % 4))
            }
            let hips = (q[lh] + q[rh]) / 2
            q = q.map { transform($0 - hips) }
            for v in q {
                kp += [(320 + 400 * v.x) / 640, (240 + 400 * v.y) / 480, 0.9]
                world += [v.x, v.y, v.z]
            }
        }
        var c = clip(names, frames: frames) { kp.count >= ($0 + 1) * names.count * 3 ? Array(kp[($0 * names.count * 3)..<(($0 + 1) * names.count * 3)]) : nil }
        c.world = world
        return c
    }

    /// `turn` is the view of a camera moved round the body: turning the window of a filmed
    /// body by 35° gives the window of the same body filmed turned by 35° (yaw), for
    /// position, velocity and bone (tolerance 1e-3: float rounding of the least-squares
    /// pixels-per-metre and of 1/torso, times the frame rate, 30, for the velocity).
    func testTurnIsTheViewFromAnotherAngle() throws {
        let spec = PreprocessingSpec(features: [.position, .confidence, .velocity, .bone])
        let degrees = 35.0, a = Float(degrees * .pi / 180)
        let side = Self.filmedClip(frames: 32)
        let turned = Self.filmedClip(frames: 32) { q in SIMD3(cos(a) * q.x + sin(a) * q.z, q.y, -sin(a) * q.x + cos(a) * q.z) }
        let w = try XCTUnwrap(Preprocessing.windows(of: side, spec: spec, depth: true).first)
        let expected = try XCTUnwrap(Preprocessing.windows(of: turned, spec: spec).first)
        let depth = try XCTUnwrap(w.depth)
        XCTAssertEqual(depth.count, 32 * spec.joints.count * 3)
        XCTAssertNil(Preprocessing.windows(of: side, spec: spec).first?.depth, "only when asked")
        var values = w.values
        let turner = WindowAugmenter(spec: AugmentationSpec(), layout: spec.joints, features: spec.features)
        values.withUnsafeMutableBufferPointer { turner.turn($0.baseAddress!, depth: depth, degrees: degrees, frames: 32) }
        var worst: Float = 0
        for (x, y) in zip(values, expected.values) { worst = max(worst, abs(x - y)) }
        XCTAssertLessThan(worst, 1e-3)
        var unturned: Float = 0
        for (x, y) in zip(w.values, expected.values) { unturned = max(unturned, abs(x - y)) }
        XCTAssertGreaterThan(unturned, 0.2, "a 35° turn is a different picture")
        // Through `augment`: only the turn on, so its values are some turn of the window.
        var r = SplitMix64(seed: 5), aw = w
        AugmentationSpec.augment(&aw, spec: AugmentationSpec(turnDegrees: 40), layout: spec.joints, features: spec.features, rng: &r)
        XCTAssertNotEqual(aw.values, w.values)
        var plain = w
        plain.depth = nil
        AugmentationSpec.augment(&plain, spec: AugmentationSpec(turnDegrees: 40), layout: spec.joints, features: spec.features, rng: &r)
        XCTAssertEqual(plain.values, w.values, "no depth: no turn")
    }

    func testJointsOutsideTheFrameAreMissingWhenAsked() throws {
        let names = Skeleton.blazePoseNames, ankle = names.firstIndex(of: "left_ankle")!, knee = names.firstIndex(of: "left_knee")!
        // A close-up: the left ankle beyond the frame's left edge, the knee just inside it.
        let clip = Self.clip(names, frames: 32) { t in
            var p = Self.pose(names, t: t)
            p[ankle * 3] = -0.2; p[knee * 3] = 0.01; p[ankle * 3 + 2] = 0.5
            return p
        }
        var spec = PreprocessingSpec()
        XCTAssertEqual(spec.outsideFrame, .keep)
        let kept = try XCTUnwrap(Preprocessing.windows(of: clip, spec: spec).first)
        XCTAssertEqual(joint(kept, "left_ankle", t: 3, spec: spec)[2], 0.5, "kept: present with its confidence")
        spec.outsideFrame = .missing
        let dropped = try XCTUnwrap(Preprocessing.windows(of: clip, spec: spec).first)
        XCTAssertEqual(joint(dropped, "left_ankle", t: 3, spec: spec), [0, 0, 0])
        XCTAssertEqual(joint(dropped, "left_knee", t: 3, spec: spec), joint(kept, "left_knee", t: 3, spec: spec), "inside: unchanged")
        XCTAssertEqual(try PreprocessingSpec.fromJSON(spec.json()).outsideFrame, .missing)
        XCTAssertEqual(try PreprocessingSpec.fromJSON("{}").outsideFrame, .keep, "a file from before the key keeps them")
    }

    // MARK: windows file

    func testWindowsFileRoundTrip() throws {
        let store = temp("store.h5"), out = temp("windows.h5")
        let writer = try KeypointStoreWriter(path: store)
        try writer.append(Self.clip(Skeleton.blazePoseNames, frames: 48, id: "x1", label: "wave", split: "train"))
        try writer.append(Self.clip(Self.pennNames, frames: 40, id: "x2", label: "jump", split: nil))
        try writer.append(Self.clip(Self.pennNames, frames: 10, id: "x3", label: "sit", split: "test"))
        try writer.finish()
        let (set, report) = try WindowsFile.build(store: KeypointStore(path: store), spec: PreprocessingSpec())
        XCTAssertEqual(report, ["wave": ["train": 3], "jump": ["none": 2], "sit": ["test": 0]])
        XCTAssertEqual(set.labels, ["jump", "sit", "wave"])
        try set.write(to: out)
        XCTAssertFalse(TestData.hasTemporaryFile(out))
        let back = try WindowsFile.read(path: out)
        XCTAssertEqual(back.spec, set.spec)
        XCTAssertEqual(back.labels, set.labels)
        XCTAssertEqual(back.windows, set.windows)
        XCTAssertEqual(back.classIndices, [2, 2, 2, 0, 0], "store order: x1 (wave), x2 (jump)")
    }

    /// Penn Action, window 32 stride 8: windows per split (printed).
    func testPennWindowsPerSplit() throws {
        // Built here from the shared CSV every time (about 1.5 s), never taken from elsewhere.
        let csv = try TestData.shared("data/penn-action/keypoints.csv").path
        let path = temp("penn.h5")
        let result = try KeypointCSV.read(csv)
        let writer = try KeypointStoreWriter(path: path)
        for c in result.clips { try writer.append(c) }
        try writer.finish()
        let started = Date()
        let (set, report) = try WindowsFile.build(store: KeypointStore(path: path), spec: PreprocessingSpec(window: 32, stride: 8))
        var perSplit: [String: Int] = [:]
        for (_, splits) in report { for (s, n) in splits { perSplit[s, default: 0] += n } }
        print("Penn Action windows (32/8): \(perSplit.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")), \(set.windows.count) in all, \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        XCTAssertEqual(report.count, 15)
        // Measured: 5,933 train and 5,096 test windows (11,662 before the 60 % rule). Exact
        // counts depend on the rule's details, which issue 5 may tune: check the order of size.
        XCTAssertEqual(Double(perSplit["train"] ?? 0), 5933, accuracy: 600)
        XCTAssertEqual(Double(perSplit["test"] ?? 0), 5096, accuracy: 500)
        XCTAssertTrue(set.windows.allSatisfy { $0.poseShare >= 0.6 && $0.values.count == 32 * 54 })
    }
}
