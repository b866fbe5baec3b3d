import Basics
import Config
import Foundation
import Keypoints

/// How joint positions are normalised within a window.
public enum Normalization: String, ConfigChoice, Sendable {
    /// Positions as the clip holds them: x and y normalised to the frame (0–1).
    case none
    /// In pixels (so the aspect ratio is right), centred on the window's mean root
    /// (mid-hips) and divided by its mean torso length (|neck − root|): the same pose
    /// anywhere in the frame, at any distance to the camera, gives the same values.
    case rootTorso = "root_torso"
}

/// Where a window's positions are centred.
public enum Centre: String, ConfigChoice, Sendable {
    /// On the window's mean root: a body moving across the window moves in the positions too.
    case window
    /// Each frame on its own root (mid-hips; else one hip, else the mean of its present
    /// joints): the positions are the posture alone. The velocity is still taken before this
    /// centring, so the body's movement stays in it.
    case frame
}

/// Which torso length of a window's frames scales it.
public enum TorsoLength: String, ConfigChoice, Sendable {
    case mean
    /// The median: one frame with a foreshortened or mis-tracked torso moves it less.
    case median
}

/// What a joint the pose model places outside the picture becomes. BlazePose guesses
/// where a cut-off limb would be (a close-up's knees at the frame's edge, its ankles
/// beyond it); Apple Vision gives no such joint.
public enum OutsideFrame: String, ConfigChoice, Sendable {
    /// Kept where the pose model put it, as any other joint.
    case keep
    /// Missing, as a joint below `minConfidence`.
    case missing
}

/// Per-joint channels of the model input, in this order within a joint.
public enum Feature: String, ConfigChoice, Sendable {
    /// x, y (normalised).
    case position
    /// The joint's confidence; 0 for a missing joint.
    case confidence
    /// 1 for a present joint, 0 for a missing one (the confidence without its value).
    case presence
    /// dx, dy from the previous frame, in normalised units per second (`VelocityUnit`); 0 at
    /// the first frame and where the joint is missing in either frame.
    case velocity
    /// dx, dy from the joint's parent in the skeleton (`Skeleton.parentPositions`: elbow
    /// from shoulder, knee from hip, …), normalised units: the limbs' directions and
    /// lengths, whatever the body's position. 0 for `root` and where either is missing.
    case bone
    /// dx, dy of the `bone` from the previous frame, per second as `velocity`: how each limb
    /// turns and stretches (ST-GCN's bone-motion stream). 0 at the first frame and where
    /// the joint or its parent is missing in either frame.
    case boneVelocity = "bone_velocity"
    /// The joint in 3-D, in the body's own frame, from the pose model's world landmarks
    /// (`ClipKeypoints.world`): origin between the hips; axes: across the hips (left → right),
    /// up the spine (hips → shoulders), and their cross product; divided by the 3-D torso
    /// length (hips to shoulders). The same posture gives the same values from any camera
    /// angle (side, front, diagonal, above) and at any distance, which the 2-D channels
    /// cannot. 0 where the joint is missing in 2-D, or the frame has no world landmarks.
    /// Needs a store made by `poseact extract` (imported keypoints have no world landmarks).
    case world

    public var width: Int {
        switch self {
        case .position, .velocity, .bone, .boneVelocity: return 2
        case .confidence, .presence: return 1
        case .world: return 3
        }
    }
}

/// The unit of the `velocity` feature. Per second (the frame's change times the frame rate)
/// puts it on the scale of the positions (torso lengths); per frame, at 30 fps, it is ~30×
/// smaller and the net learns little from it (docs/experiments.md has the figures). Weights
/// and windows files from before this field existed are per frame.
public enum VelocityUnit: String, ConfigChoice, Sendable {
    case perFrame = "per_frame"
    case perSecond = "per_second"
}

/// Every parameter that turns a pose sequence into model input; Codable, because it is
/// saved inside the exported weights file and replayed by `live`.
public struct PreprocessingSpec: ConfigSection, Sendable, Equatable {
    /// The model's joint layout, by name (default: Apple Vision's 18).
    public var joints: [String] = Skeleton.visionLayout
    /// The model's frame rate: clips are resampled to it.
    public var fps: Double = 30
    /// Frames per window.
    public var window: Int = 32
    /// Frames between the starts of consecutive windows.
    public var stride: Int = 8
    /// A window with a smaller share of real poses (mask 1) is not used (Apple's sample: 60 %).
    public var minPoseShare: Double = 0.6
    /// A joint below this confidence is missing.
    public var minConfidence: Float = 0.2
    /// A frame is a real pose when at least this share of the layout joints *the source can
    /// provide* is present (Penn Action provides 13 of Vision's 18; a side view shows ~8).
    public var minJointShare: Double = 0.5
    public var normalization: Normalization = .rootTorso
    /// Per-joint channels, in this order.
    public var features: [Feature] = [.position, .confidence]
    public var velocityUnit: VelocityUnit = .perSecond
    /// Joints outside the picture (x or y outside 0…1 of the frame).
    public var outsideFrame: OutsideFrame = .keep
    /// Where positions are centred (`rootTorso` only).
    public var centre: Centre = .window
    /// Which of the frames' torso lengths scales the window (`rootTorso` only).
    public var torso: TorsoLength = .mean
    /// How the pose sequence is smoothed over time before anything else (step 0).
    public var keypointFilter: KeypointFilter = .none

    public var featuresPerJoint: Int { features.reduce(0) { $0 + $1.width } }
    /// The fewest real poses a window needs (`minPoseShare` of `window`, at least 1).
    public var minPoseFrames: Int { max(1, Int((Double(window) * minPoseShare - 1e-9).rounded(.up))) }
    public var channels: Int { joints.count * featuresPerJoint }

    public init(joints: [String] = Skeleton.visionLayout, fps: Double = 30, window: Int = 32, stride: Int = 8,
                minPoseShare: Double = 0.6, minConfidence: Float = 0.2, minJointShare: Double = 0.5,
                normalization: Normalization = .rootTorso, features: [Feature] = [.position, .confidence],
                velocityUnit: VelocityUnit = .perSecond, outsideFrame: OutsideFrame = .keep,
                centre: Centre = .window, torso: TorsoLength = .mean) {
        self.joints = joints; self.fps = fps; self.window = window; self.stride = stride
        self.minPoseShare = minPoseShare; self.minConfidence = minConfidence; self.minJointShare = minJointShare
        self.normalization = normalization; self.features = features; self.velocityUnit = velocityUnit
        self.outsideFrame = outsideFrame; self.centre = centre; self.torso = torso
    }

    public init() {}

    /// Bounds on sizes read from a config, a flag or a file: far beyond any real use (a
    /// 1,000 fps camera; a 10,000-frame window is 5.5 minutes at 30 fps), and low enough
    /// that a typo is refused with a line instead of asking for gigabytes.
    public static let maxFPS = 1000.0
    public static let maxWindow = 10_000

    public static let keys: [ConfigKey<PreprocessingSpec>] = [
        .value("joints", \.joints, Bound(holds: { !$0.isEmpty }, message: { _, _ in "no joints" })),
        .value("fps", \.fps, Bound("be in (0, \(Int(maxFPS))]", showsValue: true) { $0 > 0 && $0 <= maxFPS }),
        .value("window", \.window, Bound("be in 1…\(maxWindow) frames", showsValue: true) { (1...maxWindow).contains($0) }),
        .value("stride", \.stride, Bound("be in 1…\(maxWindow) frames", showsValue: true) { (1...maxWindow).contains($0) }),
        .value("min_pose_share", \.minPoseShare, Bound("be in 0…1", showsValue: true) { (0...1).contains($0) }),
        .value("min_confidence", \.minConfidence, Bound("be in 0…1", showsValue: true) { (0...1).contains($0) }),
        .value("min_joint_share", \.minJointShare, Bound("be in 0…1", showsValue: true) { (0...1).contains($0) }),
        .value("normalization", \.normalization),
        .value("features", \.features, Bound(holds: { !$0.isEmpty }, message: { _, _ in "no features" })),
        // A file from before the key: its velocities were per frame. Not a config file key:
        // training always takes them per second.
        .value("velocity_unit", \.velocityUnit, before: .perFrame, inConfigFiles: false),
        .value("outside_frame", \.outsideFrame), .value("centre", \.centre), .value("torso", \.torso),
        .value("keypoint_filter", \.keypointFilter),
    ]

    /// Problems that make the spec unusable (empty when it is fine): each key against its
    /// bound, declared with it above.
    public var problems: [String] { keyProblems() }

    /// As one JSON line (sorted keys), for the weights file and the windows file.
    public func json() -> String { JSONLines.encode(self) }

    public static func fromJSON(_ text: String) throws -> PreprocessingSpec {
        try JSONLines.decode(PreprocessingSpec.self, from: text)
    }
}

/// One model input: `window` frames × `channels` values, and which frames are real poses.
public struct Window: Sendable, Equatable {
    public var clipID: String
    public var label: String
    public var split: String?
    /// First frame, at the model frame rate (spec.fps), from the clip's first frame.
    public var start: Int
    /// window × channels; per frame, joints in layout order, each `features` in order.
    public var values: [Float]
    /// window: 1 real pose, 0 missing (its values are all 0).
    public var mask: [Float]
    /// Only for the `turn` augmentation: window × joints × the x-y channels of `values`
    /// (position, velocity, bone, as present, in that order), each channel's third
    /// component: the depth towards the camera, in the same units, from the pose model's
    /// world landmarks. nil when not asked for or not known for every real frame.
    public var depth: [Float]?

    public init(clipID: String, label: String, split: String?, start: Int, values: [Float], mask: [Float]) {
        self.clipID = clipID; self.label = label; self.split = split; self.start = start; self.values = values; self.mask = mask
    }

    /// Share of real poses.
    public var poseShare: Double { mask.isEmpty ? 0 : Double(mask.reduce(0, +)) / Double(mask.count) }
}

/// The one module that turns pose sequences into model input, for training (`windows`,
/// `train`) and for `live`. Both feed a `StreamingPreprocessor` frame by frame: steps 0–3
/// run on each frame as it comes, 5–7 on a window of the frames made; a clip cuts all its
/// windows (4), live takes its last. The steps, in order (MMAction2 style), are stored in
/// the weights file (`steps`), so a model says what its input went through:
///
/// 0. `filter` — `spec.keypointFilter` over the whole sequence, causally (`KeypointRowSmoother`;
///    `live` filters each person's frames from when they are first seen).
/// 1. `mapJoints` — the source's joints to `spec.joints` by name (`Skeleton.index(of:in:)`);
///    `neck` (mid-shoulders), `root` (mid-hips) and `head` (mean of nose, eyes, ears) derived
///    when the source lacks them, and `nose` from a source's lone `head` point (Penn Action);
///    a joint below `minConfidence`, or the source lacks, is missing. Also the frame's
///    reference points for normalisation (root, torso length, shoulder width), in pixels.
/// 2. `resample` — to `spec.fps` by timestamp from the first frame, nearest earlier frame; a
///    gap of more than 1.5 source frames gives missing frames (live: repeats the last).
/// 3. `markMissing` — a frame with fewer than `minJointShare` of the joints the source
///    provides is not a real pose: zeros, mask 0 (as Apple's sample fills empty poses).
/// 4. `cut` — windows of `window` frames every `stride` frames (a clip shorter than a window
///    gives one window padded at the end with missing frames); `live`: the last `window` frames.
/// 5. `keep` — a window with a share of real poses below `minPoseShare` is not used.
/// 6. `normalize` — `spec.normalization`, over the window's real frames.
/// 7. `format` — the `features` channels per joint, missing joints and frames as 0.
public enum Preprocessing {
    /// The steps, in order, as names (for logs and reports, and in the weights file: a model
    /// whose steps differ from these was made by another poseact and is refused).
    public static let steps = ["filter", "mapJoints", "resample", "markMissing", "cut", "keep", "normalize", "format"]

    /// One frame in the layout: joints × (x, y in 0–1 units, confidence; 0,0,0 when missing)
    /// and its reference points in pixels.
    struct Frame {
        var joints: [Float]
        var root: (Float, Float)?
        var torso: Float?
        var shoulderWidth: Float?
        var real = true
        /// After `normalize` with `centre: frame`: this frame's own root, normalised, which
        /// `format` takes off its positions.
        var centre: (Float, Float) = (0, 0)
        /// joints × 3: each present joint in the body frame (the `world` feature); empty when
        /// the source has no world landmarks or the body frame cannot be built.
        var world: [Float] = []
        /// joints: each present joint's depth towards the camera relative to the hips, in
        /// pixels (for the `turn` augmentation); empty when not asked for or not known.
        var depth: [Float] = []

        static func missing(_ count: Int) -> Frame {
            Frame(joints: [Float](repeating: 0, count: count * 3), root: nil, torso: nil, shoulderWidth: nil, real: false)
        }
    }

    /// What keeps `clip` from giving the input `spec` asks for, as one line; nil when nothing.
    /// (`windows(of:)` itself never fails: a clip without world landmarks would give the
    /// `world` feature as zeros, which must not pass silently; a clip whose times the
    /// resampler refuses gives no window.)
    public static func problem(with clip: ClipKeypoints, spec: PreprocessingSpec) -> String? {
        // The resampler allocates the clip's span in frames: times from a store are checked
        // again here (a store imported before import checked them, or written by another tool).
        if let (i, reason) = KeypointChecks.timesProblem(clip.times) {
            return "clip '\(OneLine.excerpt(clip.id))', frame \(i + 1): \(reason): import the clip again (poseact import "
                + "refuses such times) or leave it out"
        }
        if resampledCount(clip.times, fps: spec.fps) == nil {
            let span = (clip.times.last ?? 0) - (clip.times.first ?? 0)
            return "clip '\(OneLine.excerpt(clip.id))': its times span \(span) s, which at \(spec.fps) fps would be over "
                + "\(KeypointChecks.maxFrame) frames: cut the clip shorter or lower preprocessing.fps"
        }
        if spec.features.contains(.world) && clip.world == nil {
            return "clip '\(clip.id)' has no world landmarks, which the 'world' feature needs (imported keypoints, "
                + "or a store extracted before poseact kept them): extract it again with poseact extract, "
                + "or leave 'world' out of preprocessing.features"
        }
        return nil
    }

    /// The windows of a clip that are used for training (see the steps above): its frames
    /// through a `StreamingPreprocessor`, then every window `cut` gives.
    /// `depth`: also give each window its `depth` (for the `turn` augmentation), when the
    /// clip has world landmarks.
    public static func windows(of clip: ClipKeypoints, spec: PreprocessingSpec, depth: Bool = false) -> [Window] {
        guard spec.problems.isEmpty, !clip.jointNames.isEmpty else { return [] }
        let times = clip.times.count == clip.frameCount && !clip.times.isEmpty ? clip.times : nil
        if let times, resampledCount(times, fps: spec.fps) == nil { return [] }
        let j = clip.jointNames.count
        let world = (spec.features.contains(.world) || depth) && clip.world?.count == clip.keypoints.count ? clip.world : nil
        let sequence = StreamingPreprocessor(jointNames: clip.jointNames, width: clip.width, height: clip.height, spec: spec,
                                             sourceFPS: clip.fps, retention: .all, depth: depth)
        for f in 0..<clip.frameCount {
            let rows = (f * j * 3)..<((f + 1) * j * 3)
            sequence.append(Array(clip.keypoints[rows]), world: world.map { Array($0[rows]) }, time: times?[f])
        }
        // 4. cut: every window
        return cut(sequence.frameCount, spec: spec).compactMap { start in
            guard var window = sequence.window(start: start) else { return nil }
            window.clipID = clip.id; window.label = clip.label; window.split = clip.split
            return window
        }
    }

    // MARK: 1. map joints

    /// Maps frames of one source layout to the model layout by name.
    struct JointMapper {
        enum Source { case index(Int), mean([Int]), headMean([Int]), none }
        let sources: [Source]
        let minConfidence: Float
        let keepOutsideFrame: Bool
        /// Whether `map` gives frames their `world` feature and their `depth`.
        let wantsWorld: Bool, wantsDepth: Bool
        /// Layout joints the source can provide.
        let providedCount: Int
        // Reference joints in the source.
        let root: Int?, neck: Int?, leftHip: Int?, rightHip: Int?, leftShoulder: Int?, rightShoulder: Int?

        init(source names: [String], layout: [String], spec: PreprocessingSpec, depth: Bool = false) {
            wantsDepth = depth; wantsWorld = spec.features.contains(.world)
            func idx(_ n: String) -> Int? { Skeleton.index(of: n, in: names) }
            minConfidence = spec.minConfidence
            keepOutsideFrame = spec.outsideFrame == .keep
            leftHip = idx("left_hip"); rightHip = idx("right_hip")
            leftShoulder = idx("left_shoulder"); rightShoulder = idx("right_shoulder")
            root = idx("root"); neck = idx("neck")
            let lh = leftHip, rh = rightHip, ls = leftShoulder, rs = rightShoulder
            sources = layout.map { name -> Source in
                if let i = idx(name) { return .index(i) }
                switch Skeleton.canonicalName(name) {
                case "neck": if let a = ls, let b = rs { return .mean([a, b]) }
                case "root": if let a = lh, let b = rh { return .mean([a, b]) }
                case "head":
                    let parts = Skeleton.headParts.compactMap { idx($0) }
                    if !parts.isEmpty { return .headMean(parts) }
                // A source with one head point and no face (Penn Action's `head`) gives it
                // as the nose: the nearest point of the layout, so the head is not lost.
                case "nose": if let h = idx("head") { return .index(h) }
                default: break
                }
                return .none
            }
            providedCount = sources.filter { if case .none = $0 { return false } else { return true } }.count
        }

        func present(_ f: [Float], _ i: Int) -> Bool {
            f[i * 3 + 2] >= minConfidence && f[i * 3].isFinite && f[i * 3 + 1].isFinite && f[i * 3 + 2] > 0
                && (keepOutsideFrame || ((0...1).contains(f[i * 3]) && (0...1).contains(f[i * 3 + 1])))
        }

        /// Mean position and minimum confidence of `parts`, nil unless all are present.
        func combine(_ f: [Float], _ parts: [Int]) -> (Float, Float, Float)? {
            var x: Float = 0, y: Float = 0, c = Float.infinity
            for p in parts {
                guard present(f, p) else { return nil }
                x += f[p * 3]; y += f[p * 3 + 1]; c = min(c, f[p * 3 + 2])
            }
            let n = Float(parts.count)
            return (x / n, y / n, c)
        }

        /// `world`: the frame's world landmarks in the source layout (joints × 3), if any.
        func map(_ f: [Float], world: [Float]? = nil, width: Int, height: Int) -> Frame {
            var out = [Float](repeating: 0, count: sources.count * 3)
            for (k, s) in sources.enumerated() {
                var v: (Float, Float, Float)?
                switch s {
                case .index(let i): v = present(f, i) ? (f[i * 3], f[i * 3 + 1], f[i * 3 + 2]) : nil
                case .mean(let parts): v = combine(f, parts)
                case .headMean(let parts):
                    let seen = parts.filter { present(f, $0) }
                    v = seen.isEmpty ? nil : combine(f, seen)
                case .none: v = nil
                }
                if let v { out[k * 3] = v.0; out[k * 3 + 1] = v.1; out[k * 3 + 2] = v.2 }
            }
            // Reference points, in pixels.
            let w = Float(max(width, 1)), h = Float(max(height, 1))
            func px(_ i: Int?) -> (Float, Float)? {
                guard let i, present(f, i) else { return nil }
                return (f[i * 3] * w, f[i * 3 + 1] * h)
            }
            func mid(_ a: (Float, Float)?, _ b: (Float, Float)?) -> (Float, Float)? {
                guard let a, let b else { return nil }
                return ((a.0 + b.0) / 2, (a.1 + b.1) / 2)
            }
            func dist(_ a: (Float, Float)?, _ b: (Float, Float)?) -> Float? {
                guard let a, let b else { return nil }
                return ((a.0 - b.0) * (a.0 - b.0) + (a.1 - b.1) * (a.1 - b.1)).squareRoot()
            }
            let lh = px(leftHip), rh = px(rightHip), ls = px(leftShoulder), rs = px(rightShoulder)
            let rootPoint = px(root) ?? mid(lh, rh) ?? lh ?? rh
            let neckPoint = px(neck) ?? mid(ls, rs)
            var torso = dist(neckPoint, rootPoint)
            if torso == nil {
                // One side visible (a side view): the same-side shoulder–hip lengths.
                let sides = [dist(ls, lh), dist(rs, rh)].compactMap { $0 }
                if !sides.isEmpty { torso = sides.reduce(0, +) / Float(sides.count) }
            }
            if let t = torso, !(t > 0) { torso = nil }
            var shoulders = dist(ls, rs)
            if let s = shoulders, !(s > 0) { shoulders = nil }
            var frame = Frame(joints: out, root: rootPoint, torso: torso, shoulderWidth: shoulders)
            if let world, wantsWorld { frame.world = bodyFrame(world, present: out) }
            if let world, wantsDepth, let r = rootPoint { frame.depth = cameraDepth(world, present: out, root: r, width: w, height: h) }
            return frame
        }

        /// Source joint `i` of a world landmark row; nil when absent or not finite.
        static func worldPoint(_ w: [Float], _ i: Int?) -> SIMD3<Float>? {
            guard let i, i * 3 + 2 < w.count else { return nil }
            let p = SIMD3(w[i * 3], w[i * 3 + 1], w[i * 3 + 2])
            return p.x.isFinite && p.y.isFinite && p.z.isFinite ? p : nil
        }

        /// The world landmark of each layout joint present in `present` (parts averaged as
        /// in the 2-D mapping); nil where missing or not finite.
        func layoutPoints(_ w: [Float], present: [Float]) -> [SIMD3<Float>?] {
            sources.enumerated().map { k, s -> SIMD3<Float>? in
                guard present[k * 3 + 2] > 0 else { return nil }
                let parts: [Int]
                switch s {
                case .index(let i): parts = [i]
                case .mean(let p), .headMean(let p): parts = p
                case .none: return nil
                }
                let points = parts.compactMap { Self.worldPoint(w, $0) }
                guard points.count == parts.count, !points.isEmpty else { return nil }
                return points.reduce(SIMD3<Float>(repeating: 0), +) / Float(points.count)
            }
        }

        /// Each present joint's depth (world z relative to the hips) in pixels: world metres
        /// to pixels by the least-squares scale between the joints' world x-y and their 2-D
        /// offsets from `root` (weak perspective). Empty when the scale cannot be fitted.
        func cameraDepth(_ w: [Float], present: [Float], root: (Float, Float), width: Float, height: Float) -> [Float] {
            // Offsets from between the hips, in the world as in the picture.
            let origin = Self.worldPoint(w, leftHip).flatMap { l in Self.worldPoint(w, rightHip).map { (l + $0) / 2 } } ?? .zero
            let points = layoutPoints(w, present: present).map { $0.map { $0 - origin } }
            var num: Float = 0, den: Float = 0
            for (k, p) in points.enumerated() {
                guard let p else { continue }
                num += (present[k * 3] * width - root.0) * p.x + (present[k * 3 + 1] * height - root.1) * p.y
                den += p.x * p.x + p.y * p.y
            }
            guard den > 1e-8, num > 0 else { return [] }
            let pixelsPerMetre = num / den
            return points.map { ($0?.z ?? 0) * pixelsPerMetre }
        }

        /// The `world` feature of one frame: each layout joint present in `present` (the
        /// mapped 2-D frame) in the body frame (see `Feature.world`); empty when the hips and
        /// shoulders do not give one (no world landmarks, or a degenerate body).
        func bodyFrame(_ w: [Float], present: [Float]) -> [Float] {
            func point(_ i: Int?) -> SIMD3<Float>? { Self.worldPoint(w, i) }
            guard let lh = point(leftHip), let rh = point(rightHip), let ls = point(leftShoulder), let rs = point(rightShoulder)
            else { return [] }
            func length(_ v: SIMD3<Float>) -> Float { (v * v).sum().squareRoot() }
            let origin = (lh + rh) / 2
            var up = (ls + rs) / 2 - origin
            let torso = length(up)
            guard torso > 1e-4 else { return [] }
            up /= torso
            var across = rh - lh
            across -= (across * up).sum() * up
            let width = length(across)
            guard width > 1e-4 else { return [] }
            across /= width
            // up × across: towards the front or the back, the same for every frame of a body.
            let depth = SIMD3(up.y * across.z - up.z * across.y, up.z * across.x - up.x * across.z, up.x * across.y - up.y * across.x)
            var out = [Float](repeating: 0, count: sources.count * 3)
            for (k, p) in layoutPoints(w, present: present).enumerated() {
                guard let p else { continue }
                let d = p - origin
                out[k * 3] = (d * across).sum() / torso
                out[k * 3 + 1] = (d * up).sum() / torso
                out[k * 3 + 2] = (d * depth).sum() / torso
            }
            return out
        }
    }

    // MARK: 2. resample

    // (`StreamingPreprocessor.append` resamples, frame by frame.)

    /// How many model frames resampling makes of `times` at `fps`; nil when the times do not
    /// span a finite, non-negative time or would make over `KeypointChecks.maxFrame` frames
    /// (one absurd time would otherwise ask for terabytes).
    static func resampledCount(_ times: [Double], fps: Double) -> Int? {
        guard let first = times.first, let last = times.last else { return 0 }
        let frames = ((last - first) * fps + 1e-6).rounded(.down) + 1
        guard frames.isFinite, frames >= 1, frames <= Double(KeypointChecks.maxFrame) else { return nil }
        return Int(frames)
    }

    // MARK: 3. mark missing

    /// A frame with fewer than `minJointShare` of the `provided` joints becomes missing.
    static func markMissing(_ frame: inout Frame, provided: Int, spec: PreprocessingSpec) {
        guard frame.real else { return }
        let need = max(1, Int((spec.minJointShare * Double(provided) - 1e-9).rounded(.up)))
        var present = 0
        for j in 0..<spec.joints.count where frame.joints[j * 3 + 2] > 0 { present += 1 }
        if provided == 0 || present < need { frame = .missing(spec.joints.count) }
    }

    // MARK: 4. cut

    /// Window starts for `count` frames: 0, stride, … while the window fits; one (padded)
    /// window for a clip shorter than a window; none for an empty clip.
    public static func cut(_ count: Int, spec: PreprocessingSpec) -> [Int] {
        guard count > 0 else { return [] }
        if count <= spec.window { return [0] }
        return Array(Swift.stride(from: 0, through: count - spec.window, by: spec.stride))
    }

    // MARK: 5. keep

    static func keep(_ window: [Frame], spec: PreprocessingSpec) -> Bool {
        window.filter(\.real).count >= spec.minPoseFrames
    }

    // MARK: 6. normalise

    /// `rootTorso`: present joints to pixels, minus the mean root of the real frames, divided
    /// by their mean or median torso length (`spec.torso`; fallbacks: shoulder width, then the
    /// joints' largest extent, then 1); centre fallback: the mean of all present joints. With
    /// `centre: frame` each frame also records its own root, which `format` takes off the
    /// positions only (velocities stay those of the window-centred body). `none`: as is.
    static func normalize(_ window: [Frame], width: Int, height: Int, spec: PreprocessingSpec) -> [Frame] {
        guard spec.normalization == .rootTorso else { return window }
        let real = window.filter(\.real)
        let n = spec.joints.count
        let w = Float(max(width, 1)), h = Float(max(height, 1))
        var cx: Float = 0, cy: Float = 0
        let roots = real.compactMap(\.root)
        var px: [(Float, Float)] = []
        for f in real { for j in 0..<n where f.joints[j * 3 + 2] > 0 { px.append((f.joints[j * 3] * w, f.joints[j * 3 + 1] * h)) } }
        if !roots.isEmpty {
            cx = roots.map(\.0).reduce(0, +) / Float(roots.count); cy = roots.map(\.1).reduce(0, +) / Float(roots.count)
        } else if !px.isEmpty {
            cx = px.map(\.0).reduce(0, +) / Float(px.count); cy = px.map(\.1).reduce(0, +) / Float(px.count)
        }
        var scale: Float = 1
        let torsos = real.compactMap(\.torso), shoulders = real.compactMap(\.shoulderWidth)
        func typical(_ v: [Float]) -> Float {
            guard spec.torso == .median else { return v.reduce(0, +) / Float(v.count) }
            let s = v.sorted(), m = s.count / 2
            return s.count % 2 == 1 ? s[m] : (s[m - 1] + s[m]) / 2
        }
        if !torsos.isEmpty { scale = typical(torsos) }
        else if !shoulders.isEmpty { scale = typical(shoulders) }
        else if let minX = px.map(\.0).min(), let maxX = px.map(\.0).max(), let minY = px.map(\.1).min(), let maxY = px.map(\.1).max(),
                max(maxX - minX, maxY - minY) > 0 {
            scale = max(maxX - minX, maxY - minY)
        }
        return window.map { f in
            guard f.real else { return f }
            var g = f
            for j in 0..<n where f.joints[j * 3 + 2] > 0 {
                g.joints[j * 3] = (f.joints[j * 3] * w - cx) / scale
                g.joints[j * 3 + 1] = (f.joints[j * 3 + 1] * h - cy) / scale
            }
            g.depth = f.depth.map { $0 / scale }
            if spec.centre == .frame {
                if let r = f.root {
                    g.centre = ((r.0 - cx) / scale, (r.1 - cy) / scale)
                } else {
                    let present = (0..<n).filter { f.joints[$0 * 3 + 2] > 0 }
                    if !present.isEmpty {
                        g.centre = (present.map { g.joints[$0 * 3] }.reduce(0, +) / Float(present.count),
                                    present.map { g.joints[$0 * 3 + 1] }.reduce(0, +) / Float(present.count))
                    }
                }
            }
            return g
        }
    }

    // MARK: 7. format

    /// Each layout joint's parent for the `bone` feature (empty when the spec has none).
    static func boneParents(_ spec: PreprocessingSpec) -> [Int?] {
        spec.features.contains(.bone) || spec.features.contains(.boneVelocity) ? Skeleton.parentPositions(of: spec.joints) : []
    }

    /// `parents`: `boneParents(spec)`, looked up once per clip rather than per window.
    static func format(_ window: [Frame], spec: PreprocessingSpec, parents: [Int?]) -> [Float] {
        let n = spec.joints.count, fpj = spec.featuresPerJoint
        var out = [Float](repeating: 0, count: window.count * n * fpj)
        let velScale: Float = spec.velocityUnit == .perSecond ? Float(spec.fps) : 1
        for (t, f) in window.enumerated() where f.real {
            for j in 0..<n where f.joints[j * 3 + 2] > 0 {
                var o = (t * n + j) * fpj
                for feature in spec.features {
                    switch feature {
                    case .position:
                        out[o] = f.joints[j * 3] - f.centre.0; out[o + 1] = f.joints[j * 3 + 1] - f.centre.1
                    case .confidence:
                        out[o] = f.joints[j * 3 + 2]
                    case .presence:
                        out[o] = 1
                    case .velocity:
                        if t > 0, window[t - 1].real, window[t - 1].joints[j * 3 + 2] > 0 {
                            out[o] = velScale * (f.joints[j * 3] - window[t - 1].joints[j * 3])
                            out[o + 1] = velScale * (f.joints[j * 3 + 1] - window[t - 1].joints[j * 3 + 1])
                        }
                    case .bone:
                        if let p = parents[j], f.joints[p * 3 + 2] > 0 {
                            out[o] = f.joints[j * 3] - f.joints[p * 3]
                            out[o + 1] = f.joints[j * 3 + 1] - f.joints[p * 3 + 1]
                        }
                    case .boneVelocity:
                        if t > 0, let p = parents[j], f.joints[p * 3 + 2] > 0, window[t - 1].real {
                            let g = window[t - 1].joints
                            if g[j * 3 + 2] > 0 && g[p * 3 + 2] > 0 {
                                out[o] = velScale * ((f.joints[j * 3] - f.joints[p * 3]) - (g[j * 3] - g[p * 3]))
                                out[o + 1] = velScale * ((f.joints[j * 3 + 1] - f.joints[p * 3 + 1]) - (g[j * 3 + 1] - g[p * 3 + 1]))
                            }
                        }
                    case .world:
                        if !f.world.isEmpty {
                            out[o] = f.world[j * 3]; out[o + 1] = f.world[j * 3 + 1]; out[o + 2] = f.world[j * 3 + 2]
                        }
                    }
                    o += feature.width
                }
            }
        }
        return out
    }

    /// The x-y features with a depth component (position, velocity, bone, bone velocity), in
    /// `features` order.
    public static func depthFeatures(_ features: [Feature]) -> [Feature] {
        features.filter { $0 == .position || $0 == .velocity || $0 == .bone || $0 == .boneVelocity }
    }

    /// `Window.depth` of a normalised window: the depth component of each x-y feature,
    /// made as `format` makes its x and y; nil when a real frame has no depth.
    static func formatDepth(_ window: [Frame], spec: PreprocessingSpec, parents: [Int?]) -> [Float]? {
        let n = spec.joints.count, features = depthFeatures(spec.features), l = features.count
        guard l > 0, window.allSatisfy({ !$0.real || $0.depth.count == n }) else { return nil }
        var out = [Float](repeating: 0, count: window.count * n * l)
        let velScale: Float = spec.velocityUnit == .perSecond ? Float(spec.fps) : 1
        for (t, f) in window.enumerated() where f.real {
            for j in 0..<n where f.joints[j * 3 + 2] > 0 {
                for (i, feature) in features.enumerated() {
                    let o = (t * n + j) * l + i
                    switch feature {
                    case .position: out[o] = f.depth[j]
                    case .velocity:
                        if t > 0, window[t - 1].real, window[t - 1].joints[j * 3 + 2] > 0 {
                            out[o] = velScale * (f.depth[j] - window[t - 1].depth[j])
                        }
                    case .bone:
                        if let p = parents[j], f.joints[p * 3 + 2] > 0 { out[o] = f.depth[j] - f.depth[p] }
                    case .boneVelocity:
                        if t > 0, let p = parents[j], f.joints[p * 3 + 2] > 0, window[t - 1].real {
                            let g = window[t - 1]
                            if g.joints[j * 3 + 2] > 0 && g.joints[p * 3 + 2] > 0 {
                                out[o] = velScale * ((f.depth[j] - f.depth[p]) - (g.depth[j] - g.depth[p]))
                            }
                        }
                    default: break
                    }
                }
            }
        }
        return out
    }
}
