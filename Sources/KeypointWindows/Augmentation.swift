import Config
import Foundation
import Keypoints
import Tensor

/// Training-time augmentation of normalised windows; each kind is a switch (a zero
/// magnitude or a 1…1 range turns it off). Deterministic for a seed. Applied in this
/// order: turn, time stretch, dropped frames, flip, occlusion, rotation, scale, translation,
/// jitter.
public struct AugmentationSpec: ConfigSection, Sendable, Equatable {
    /// Mirror horizontally with probability 0.5: x → −x, left/right joints swapped.
    public var flip: Bool = false
    /// Rotation about the window's centre, uniform in ±degrees.
    public var rotationDegrees: Double = 0
    /// Scale factor, uniform in the range.
    public var scale: ClosedRange<Double> = 1...1
    /// Shift of x and y, each uniform in ±translation (normalised units).
    public var translation: Double = 0
    /// Gaussian noise on each present joint's x and y, standard deviation (normalised units).
    public var jitter: Double = 0
    /// Playback speed factor, uniform in the range (> 1 faster); frames come from the
    /// window's own frames about its centre (nearest), outside it they are missing.
    public var timeStretch: ClosedRange<Double> = 1...1
    /// Each real frame is dropped (zeros, mask 0) with this probability.
    public var dropFrames: Double = 0
    /// With this probability a window loses one body part for its whole length (its joints
    /// made missing), as when the framing cuts off the feet or the legs of a close-up, or
    /// the head is out of the picture. The part is drawn uniformly from `occlusionParts`.
    public var occlude: Double = 0
    /// Turn the body about the picture's vertical axis, uniform in ±degrees, as a camera
    /// moved round the person would see it (side view → diagonal → front): each x-y
    /// channel's x mixes with its depth (`Window.depth`, from the world landmarks), then
    /// the window is scaled back to a mean torso length of 1, as `root_torso` does.
    public var turnDegrees: Double = 0
    /// Mixup (Zhang et al. 2018): each training batch is mixed with a shuffled copy of
    /// itself, x = λ·x₁ + (1 − λ)·x₂ and the loss λ·CE(y₁) + (1 − λ)·CE(y₂), λ ~ Beta(α, α)
    /// once per batch; this is α (0: off). A frame is real where either window's is. The
    /// trainer applies it (it needs two windows), after the per-window augmentations.
    public var mixup: Double = 0

    public init(flip: Bool = false, rotationDegrees: Double = 0, scale: ClosedRange<Double> = 1...1, translation: Double = 0,
                jitter: Double = 0, timeStretch: ClosedRange<Double> = 1...1, dropFrames: Double = 0, occlude: Double = 0,
                turnDegrees: Double = 0, mixup: Double = 0) {
        self.flip = flip; self.rotationDegrees = rotationDegrees; self.scale = scale; self.translation = translation
        self.jitter = jitter; self.timeStretch = timeStretch; self.dropFrames = dropFrames; self.occlude = occlude
        self.turnDegrees = turnDegrees; self.mixup = mixup
    }

    public init() {}

    public static let keys: [ConfigKey<AugmentationSpec>] = [
        .value("flip", \.flip), .value("rotation_degrees", \.rotationDegrees, .notNegative()), .range("scale", \.scale, .positive),
        .value("translation", \.translation, .notNegative()), .value("jitter", \.jitter, .notNegative()),
        .range("time_stretch", \.timeStretch, .positive),
        .value("drop_frames", \.dropFrames, .within(0..<1)), .value("occlude", \.occlude, .within(0...1)),
        .value("turn_degrees", \.turnDegrees, Bound("be in 0…90") { (0...90).contains($0) }),
        .value("mixup", \.mixup, Bound("be in 0…100 (0 turns it off)") { (0...100).contains($0) }),
    ]

    /// The body parts `occlude` hides, as joint indices of `layout`; a part the layout has
    /// none of is left out. Each part holds the joints below it in the skeleton too (the
    /// legs hold the feet), so no remaining joint's bone points at a hidden parent.
    public static func occlusionParts(layout: [String]) -> [[Int]] {
        let feet: Set = ["left_ankle", "right_ankle", "left_heel", "right_heel", "left_foot_index", "right_foot_index"]
        let legs = feet.union(["left_knee", "right_knee"])
        let head: Set = ["head", "nose", "left_eye_inner", "left_eye", "left_eye_outer", "right_eye_inner", "right_eye",
                         "right_eye_outer", "left_ear", "right_ear", "mouth_left", "mouth_right"]
        let names = layout.map(Skeleton.canonicalName)
        return [feet, legs, head].map { part in names.indices.filter { part.contains(names[$0]) } }.filter { !$0.isEmpty }
    }

    /// No augmentation.
    public static let off = AugmentationSpec()
    /// A moderate default for training.
    public static let standard = AugmentationSpec(flip: true, rotationDegrees: 10, scale: 0.9...1.1, translation: 0.1,
                                                  jitter: 0.01, timeStretch: 0.9...1.1, dropFrames: 0.05)

    /// Flips a window (x → −x, velocity too, left/right joints swapped); flipping twice
    /// gives the window back. Joints whose partner is not in the layout stay in place.
    public static func flip(_ w: inout Window, layout: [String], features: [Feature]) {
        w.values = flipped(w.values, layout: layout, features: features)
    }

    /// A window's values (frames × joints × features) mirrored: see `flip`.
    public static func flipped(_ values: [Float], layout: [String], features: [Feature]) -> [Float] {
        WindowMirror(layout: layout, features: features).mirrored(values)
    }

    /// Augments a normalised window in place (see the order above). `layout` and
    /// `features` are the preprocessing spec's. (Training augments through one
    /// `WindowAugmenter`, which works its tables out once.)
    public static func augment(_ w: inout Window, spec: AugmentationSpec, layout: [String],
                               features: [Feature] = [.position, .confidence], rng: inout SplitMix64) {
        var augmenter = WindowAugmenter(spec: spec, layout: layout, features: features)
        augmenter.augment(&w, rng: &rng)
    }

    /// Offsets of the x channels (position, velocity, bone, bone velocity, world) within a joint's features.
    static func xChannels(_ features: [Feature]) -> [Int] {
        var o = 0, xs: [Int] = []
        for f in features {
            // `world`'s first channel is across the hips: mirrored, it changes sign too.
            if f == .position || f == .velocity || f == .bone || f == .boneVelocity || f == .world { xs.append(o) }
            o += f.width
        }
        return xs
    }

    static func offset(of feature: Feature, in features: [Feature]) -> Int? {
        var o = 0
        for f in features {
            if f == feature { return o }
            o += f.width
        }
        return nil
    }
}

/// The left-right mirror of a layout: each joint's partner and the channels whose sign
/// turns, worked out once (the classifier's flip averaging mirrors every window it scores).
public struct WindowMirror: Sendable {
    /// The joint each joint takes its values from (itself when it has no partner).
    let partner: [Int]
    let xOffsets: [Int]
    let featuresPerJoint: Int

    public init(layout: [String], features: [Feature]) {
        partner = Skeleton.mirrorPermutation(of: layout).enumerated().map { $0.element ?? $0.offset }
        xOffsets = AugmentationSpec.xChannels(features)
        featuresPerJoint = features.reduce(0) { $0 + $1.width }
    }

    /// `values` (frames × joints × features) mirrored; values of another shape as they are.
    public func mirrored(_ values: [Float]) -> [Float] {
        var out = values
        let n = partner.count, fpj = featuresPerJoint
        guard n > 0, fpj > 0, values.count % (n * fpj) == 0 else { return values }
        values.withUnsafeBufferPointer { from in out.withUnsafeMutableBufferPointer { to in
            mirror(from.baseAddress!, into: to.baseAddress!, frames: values.count / (n * fpj))
        } }
        return out
    }

    /// Writes the mirror of `frames` frames at `from` to `to` (not the same memory).
    func mirror(_ from: UnsafePointer<Float>, into to: UnsafeMutablePointer<Float>, frames: Int) {
        let n = partner.count, fpj = featuresPerJoint
        for t in 0..<frames {
            for j in 0..<n {
                let src = (t * n + partner[j]) * fpj, dst = (t * n + j) * fpj
                for c in 0..<fpj { to[dst + c] = from[src + c] }
                for x in xOffsets { to[dst + x] = -to[dst + x] }
            }
        }
    }
}

/// The augmentation of one preprocessing layout with its tables worked out once (the
/// mirror, the body parts, the channels' offsets) and its scratch kept: augmenting the
/// windows of a training batch allocates nothing after the first. The random draws are
/// made in `AugmentationSpec`'s order, so a seed gives the same windows.
public struct WindowAugmenter {
    public let spec: AugmentationSpec
    let joints: Int, featuresPerJoint: Int
    let mirror: WindowMirror
    let occlusionParts: [[Int]]
    let position: Int?, velocity: Int?, bone: Int?, boneVelocity: Int?
    /// The offsets of the x-y channels `Window.depth` gives a depth for (turn).
    let depthOffsets: [Int]
    /// neck, root, left and right shoulder, left and right hip (turn's torso length).
    let torso: (neck: Int?, root: Int?, leftShoulder: Int?, rightShoulder: Int?, leftHip: Int?, rightHip: Int?)
    private var scratch: [Float] = [], scratchMask: [Float] = [], presence: [Bool] = []

    public init(spec: AugmentationSpec, layout: [String], features: [Feature]) {
        self.spec = spec
        joints = layout.count; featuresPerJoint = features.reduce(0) { $0 + $1.width }
        mirror = WindowMirror(layout: layout, features: features)
        occlusionParts = AugmentationSpec.occlusionParts(layout: layout)
        position = AugmentationSpec.offset(of: .position, in: features); velocity = AugmentationSpec.offset(of: .velocity, in: features)
        bone = AugmentationSpec.offset(of: .bone, in: features); boneVelocity = AugmentationSpec.offset(of: .boneVelocity, in: features)
        depthOffsets = Preprocessing.depthFeatures(features).map { AugmentationSpec.offset(of: $0, in: features)! }
        func index(_ name: String) -> Int? { Skeleton.index(of: name, in: layout) }
        torso = (index("neck"), index("root"), index("left_shoulder"), index("right_shoulder"), index("left_hip"), index("right_hip"))
    }

    /// Augments `w` in place.
    public mutating func augment(_ w: inout Window, rng: inout SplitMix64) {
        let depth = w.depth
        w.values.withUnsafeMutableBufferPointer { values in
            w.mask.withUnsafeMutableBufferPointer { mask in augment(values: values, mask: mask, depth: depth, rng: &rng) }
        }
    }

    /// Augments a window held elsewhere (a row of a training batch): `values` frames ×
    /// joints × features, `mask` a frame each, `depth` as `Window.depth`. The steps in
    /// `AugmentationSpec`'s order, each drawing from `rng` only when it is on.
    public mutating func augment(values: UnsafeMutableBufferPointer<Float>, mask: UnsafeMutableBufferPointer<Float>,
                                 depth: [Float]?, rng: inout SplitMix64) {
        guard joints > 0, featuresPerJoint > 0, values.count == mask.count * joints * featuresPerJoint else { return }
        let v = values.baseAddress!, m = mask.baseAddress!, frames = mask.count
        // Turn first: it needs the window's depth, which the steps below do not carry along.
        if spec.turnDegrees > 0, let depth {
            turn(v, depth: depth, degrees: Self.uniform(-spec.turnDegrees...spec.turnDegrees, &rng), frames: frames)
        }
        if spec.timeStretch.lowerBound != 1 || spec.timeStretch.upperBound != 1 {
            stretchTime(values, mask, by: Self.uniform(spec.timeStretch, &rng))
        }
        if spec.dropFrames > 0 { dropFrames(v, m, frames: frames, rng: &rng) }
        if spec.flip && rng.uniform() < 0.5 {
            keepCopy(of: values, mask: nil)
            scratch.withUnsafeBufferPointer { mirror.mirror($0.baseAddress!, into: v, frames: frames) }
        }
        if spec.occlude > 0 && rng.uniform() < spec.occlude && !occlusionParts.isEmpty {
            let part = occlusionParts[min(occlusionParts.count - 1, Int(rng.uniform() * Double(occlusionParts.count)))]
            for t in 0..<frames { for j in part { (v + (t * joints + j) * featuresPerJoint).update(repeating: 0, count: featuresPerJoint) } }
        }
        markPresentJoints(v, m, frames: frames)
        let angle = spec.rotationDegrees > 0 ? Self.uniform(-spec.rotationDegrees...spec.rotationDegrees, &rng) * .pi / 180 : 0
        let k = (spec.scale.lowerBound != 1 || spec.scale.upperBound != 1) ? Self.uniform(spec.scale, &rng) : 1
        let dx = spec.translation > 0 ? Self.uniform(-spec.translation...spec.translation, &rng) : 0
        let dy = spec.translation > 0 ? Self.uniform(-spec.translation...spec.translation, &rng) : 0
        if angle != 0 || k != 1 || dx != 0 || dy != 0 { rotateScaleShift(v, frames: frames, angle: angle, scale: k, dx: dx, dy: dy) }
        if spec.jitter > 0, let position {
            for t in 0..<frames {
                for j in 0..<joints where presence[t * joints + j] {
                    let o = (t * joints + j) * featuresPerJoint + position
                    v[o] += Float(rng.gaussian() * spec.jitter)
                    v[o + 1] += Float(rng.gaussian() * spec.jitter)
                }
            }
        }
    }

    static func uniform(_ r: ClosedRange<Double>, _ rng: inout SplitMix64) -> Double {
        r.lowerBound + (r.upperBound - r.lowerBound) * rng.uniform()
    }

    /// Playback at `speed`: frame t takes the window's frame nearest centre + (t − centre)·speed;
    /// outside the window it is missing.
    private mutating func stretchTime(_ values: UnsafeMutableBufferPointer<Float>, _ mask: UnsafeMutableBufferPointer<Float>, by speed: Double) {
        let frames = mask.count, stride = joints * featuresPerJoint, v = values.baseAddress!
        let centre = Double(frames - 1) / 2
        keepCopy(of: values, mask: mask)
        scratch.withUnsafeBufferPointer { old in scratchMask.withUnsafeBufferPointer { oldMask in
            for t in 0..<frames {
                let src = Int((centre + (Double(t) - centre) * speed).rounded())
                guard src >= 0, src < frames else {
                    mask[t] = 0
                    (v + t * stride).update(repeating: 0, count: stride)
                    continue
                }
                mask[t] = oldMask[src]
                (v + t * stride).update(from: old.baseAddress! + src * stride, count: stride)
            }
        } }
    }

    /// Each real frame dropped (zeros, mask 0) with probability `dropFrames`.
    private func dropFrames(_ v: UnsafeMutablePointer<Float>, _ m: UnsafeMutablePointer<Float>, frames: Int, rng: inout SplitMix64) {
        let stride = joints * featuresPerJoint
        for t in 0..<frames where rng.uniform() < spec.dropFrames && m[t] > 0 {
            m[t] = 0
            (v + t * stride).update(repeating: 0, count: stride)
        }
    }

    /// `presence`: a joint is present when its frame is real and any of its channels is
    /// non-zero (missing joints are all 0).
    private mutating func markPresentJoints(_ v: UnsafeMutablePointer<Float>, _ m: UnsafeMutablePointer<Float>, frames: Int) {
        let n = joints, fpj = featuresPerJoint
        if presence.count != frames * n { presence = [Bool](repeating: false, count: frames * n) }
        for t in 0..<frames {
            for j in 0..<n {
                let o = (t * n + j) * fpj
                presence[t * n + j] = m[t] > 0 && (0..<fpj).contains { v[o + $0] != 0 }
            }
        }
    }

    /// The linear map of rotation and scale on every present joint's positions and motions,
    /// and the shift of its position.
    private func rotateScaleShift(_ v: UnsafeMutablePointer<Float>, frames: Int, angle: Double, scale k: Double, dx: Double, dy: Double) {
        let c = Float(cos(angle) * k), s = Float(sin(angle) * k)
        func map(_ o: Int, shift: Bool) {
            let x = v[o], y = v[o + 1]
            v[o] = c * x - s * y + (shift ? Float(dx) : 0)
            v[o + 1] = s * x + c * y + (shift ? Float(dy) : 0)
        }
        for t in 0..<frames {
            for j in 0..<joints where presence[t * joints + j] {
                let o = (t * joints + j) * featuresPerJoint
                if let position { map(o + position, shift: true) }
                if let velocity { map(o + velocity, shift: false) }
                if let bone { map(o + bone, shift: false) }
                if let boneVelocity { map(o + boneVelocity, shift: false) }
            }
        }
    }

    /// The window's values (and mask) as they are now, in the scratch buffers.
    private mutating func keepCopy(of values: UnsafeMutableBufferPointer<Float>, mask: UnsafeMutableBufferPointer<Float>?) {
        if scratch.count != values.count { scratch = [Float](repeating: 0, count: values.count) }
        scratch.withUnsafeMutableBufferPointer { _ = $0.update(fromContentsOf: values) }
        if let mask {
            if scratchMask.count != mask.count { scratchMask = [Float](repeating: 0, count: mask.count) }
            scratchMask.withUnsafeMutableBufferPointer { _ = $0.update(fromContentsOf: mask) }
        }
    }

    /// Turns the values by `degrees` about the vertical axis: for each x-y channel with
    /// depth, x → x·cos + depth·sin; then all of them are scaled so that the mean torso
    /// length (neck to root, from the position channel, as `normalize` measures it) is what
    /// it was (with a position channel; the bone and motion streams have none, and keep the
    /// turned lengths). Joints without position are left as they are.
    func turn(_ v: UnsafeMutablePointer<Float>, depth: [Float], degrees: Double, frames: Int) {
        let n = joints, fpj = featuresPerJoint, l = depthOffsets.count
        guard l > 0, depth.count == frames * n * l else { return }
        let before = meanTorso(v, frames: frames)
        let c = Float(cos(degrees * .pi / 180)), s = Float(sin(degrees * .pi / 180))
        for t in 0..<frames {
            for j in 0..<n {
                let o = (t * n + j) * fpj
                // A missing joint has 0 in both, and stays 0.
                for (i, off) in depthOffsets.enumerated() { v[o + off] = c * v[o + off] + s * depth[(t * n + j) * l + i] }
            }
        }
        guard let before, let after = meanTorso(v, frames: frames), after > 1e-6 else { return }
        let k = before / after
        for t in 0..<frames { for j in 0..<n { for off in depthOffsets {
            v[(t * n + j) * fpj + off] *= k; v[(t * n + j) * fpj + off + 1] *= k
        } } }
    }

    /// The mean over frames of |neck − root| in the position channel (neck: the `neck` joint
    /// or mid-shoulders; root: the `root` joint or mid-hips); nil when no frame has both.
    func meanTorso(_ v: UnsafeMutablePointer<Float>, frames: Int) -> Float? {
        guard let pos = position else { return nil }
        let n = joints, fpj = featuresPerJoint
        var sum: Float = 0, count = 0
        for t in 0..<frames {
            func point(_ j: Int?) -> SIMD2<Float>? {
                guard let j else { return nil }
                let o = (t * n + j) * fpj
                // A joint is present when any of its channels is non-zero.
                guard (0..<fpj).contains(where: { v[o + $0] != 0 }) else { return nil }
                return SIMD2(v[o + pos], v[o + pos + 1])
            }
            func mid(_ a: Int?, _ b: Int?) -> SIMD2<Float>? { point(a).flatMap { p in point(b).map { (p + $0) / 2 } } }
            guard let a = point(torso.neck) ?? mid(torso.leftShoulder, torso.rightShoulder),
                  let b = point(torso.root) ?? mid(torso.leftHip, torso.rightHip) else { continue }
            let d = a - b
            sum += (d * d).sum().squareRoot(); count += 1
        }
        return count > 0 ? sum / Float(count) : nil
    }
}
