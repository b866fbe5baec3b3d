import Basics
import Foundation
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
        let n = layout.count, fpj = features.reduce(0) { $0 + $1.width }
        guard n > 0, fpj > 0, values.count % (n * fpj) == 0 else { return values }
        let perm = Skeleton.mirrorPermutation(of: layout).enumerated().map { $0.element ?? $0.offset }
        let xOffsets = xChannels(features)
        let frames = values.count / (n * fpj)
        var out = values
        for t in 0..<frames {
            for j in 0..<n {
                let src = (t * n + perm[j]) * fpj, dst = (t * n + j) * fpj
                for c in 0..<fpj { out[dst + c] = values[src + c] }
                for x in xOffsets { out[dst + x] = -out[dst + x] }
            }
        }
        return out
    }

    /// Turns a window's values by `degrees` about the vertical axis: for each x-y channel
    /// with depth, x → x·cos + depth·sin; then all of them are scaled so that the mean
    /// torso length (neck to root, from the position channel, as `normalize` measures it)
    /// is what it was (with a position channel; the bone and motion streams have none, and
    /// keep the turned lengths). Joints without position are left as they are.
    static func turn(_ values: inout [Float], depth: [Float], degrees: Double, frames: Int, layout: [String], features: [Feature]) {
        let n = layout.count, fpj = features.reduce(0) { $0 + $1.width }
        let xy = Preprocessing.depthFeatures(features), l = xy.count
        guard l > 0, depth.count == frames * n * l, values.count == frames * n * fpj else { return }
        let offsets = xy.map { offset(of: $0, in: features)! }
        let before = meanTorso(values, frames: frames, layout: layout, features: features)
        let c = Float(cos(degrees * .pi / 180)), s = Float(sin(degrees * .pi / 180))
        for t in 0..<frames {
            for j in 0..<n {
                let o = (t * n + j) * fpj
                // A missing joint has 0 in both, and stays 0.
                for (i, off) in offsets.enumerated() { values[o + off] = c * values[o + off] + s * depth[(t * n + j) * l + i] }
            }
        }
        guard let before, let after = meanTorso(values, frames: frames, layout: layout, features: features), after > 1e-6 else { return }
        let k = before / after
        for t in 0..<frames { for j in 0..<n { for off in offsets {
            values[(t * n + j) * fpj + off] *= k; values[(t * n + j) * fpj + off + 1] *= k
        } } }
    }

    /// The mean over frames of |neck − root| in the position channel (neck: the `neck` joint
    /// or mid-shoulders; root: the `root` joint or mid-hips); nil when no frame has both.
    static func meanTorso(_ values: [Float], frames: Int, layout: [String], features: [Feature]) -> Float? {
        guard let pos = offset(of: .position, in: features) else { return nil }
        let n = layout.count, fpj = features.reduce(0) { $0 + $1.width }
        func idx(_ name: String) -> Int? { Skeleton.index(of: name, in: layout) }
        let neck = idx("neck"), root = idx("root"), ls = idx("left_shoulder"), rs = idx("right_shoulder")
        let lh = idx("left_hip"), rh = idx("right_hip")
        var sum: Float = 0, count = 0
        for t in 0..<frames {
            func point(_ j: Int?) -> SIMD2<Float>? {
                guard let j else { return nil }
                let o = (t * n + j) * fpj
                // A joint is present when any of its channels is non-zero.
                guard (0..<fpj).contains(where: { values[o + $0] != 0 }) else { return nil }
                return SIMD2(values[o + pos], values[o + pos + 1])
            }
            func mid(_ a: Int?, _ b: Int?) -> SIMD2<Float>? { point(a).flatMap { p in point(b).map { (p + $0) / 2 } } }
            guard let a = point(neck) ?? mid(ls, rs), let b = point(root) ?? mid(lh, rh) else { continue }
            let d = a - b
            sum += (d * d).sum().squareRoot(); count += 1
        }
        return count > 0 ? sum / Float(count) : nil
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

    /// Augments a normalised window in place (see the order above). `layout` and
    /// `features` are the preprocessing spec's.
    public static func augment(_ w: inout Window, spec: AugmentationSpec, layout: [String],
                               features: [Feature] = [.position, .confidence], rng: inout SplitMix64) {
        let n = layout.count, fpj = features.reduce(0) { $0 + $1.width }
        guard n > 0, fpj > 0, w.values.count == w.mask.count * n * fpj else { return }
        let frames = w.mask.count, stride = n * fpj
        func uniform(_ r: ClosedRange<Double>) -> Double { r.lowerBound + (r.upperBound - r.lowerBound) * rng.uniform() }
        // A joint is present when any of its channels is non-zero (missing joints are all 0).
        func present(_ t: Int, _ j: Int) -> Bool {
            guard w.mask[t] > 0 else { return false }
            let o = (t * n + j) * fpj
            return (0..<fpj).contains { w.values[o + $0] != 0 }
        }

        // Turn (first: it needs the window's depth, which the steps below do not carry along).
        if spec.turnDegrees > 0, let depth = w.depth {
            turn(&w.values, depth: depth, degrees: uniform(-spec.turnDegrees...spec.turnDegrees), frames: frames,
                 layout: layout, features: features)
        }
        // Time stretch.
        if spec.timeStretch.lowerBound != 1 || spec.timeStretch.upperBound != 1 {
            let s = uniform(spec.timeStretch)
            let centre = Double(frames - 1) / 2
            var values = [Float](repeating: 0, count: w.values.count), mask = [Float](repeating: 0, count: frames)
            for t in 0..<frames {
                let src = Int((centre + (Double(t) - centre) * s).rounded())
                guard src >= 0, src < frames else { continue }
                mask[t] = w.mask[src]
                for c in 0..<stride { values[t * stride + c] = w.values[src * stride + c] }
            }
            w.values = values; w.mask = mask
        }
        // Dropped frames.
        if spec.dropFrames > 0 {
            for t in 0..<frames where rng.uniform() < spec.dropFrames && w.mask[t] > 0 {
                w.mask[t] = 0
                for c in 0..<stride { w.values[t * stride + c] = 0 }
            }
        }
        // Flip.
        if spec.flip && rng.uniform() < 0.5 { flip(&w, layout: layout, features: features) }
        // Occlusion: one body part missing in every frame.
        if spec.occlude > 0 && rng.uniform() < spec.occlude {
            let parts = occlusionParts(layout: layout)
            if !parts.isEmpty {
                let part = parts[min(parts.count - 1, Int(rng.uniform() * Double(parts.count)))]
                for t in 0..<frames { for j in part { for c in 0..<fpj { w.values[(t * n + j) * fpj + c] = 0 } } }
            }
        }

        let pos = offset(of: .position, in: features), vel = offset(of: .velocity, in: features)
        let bone = offset(of: .bone, in: features), boneVelocity = offset(of: .boneVelocity, in: features)
        var presence = [Bool](repeating: false, count: frames * n)
        for t in 0..<frames { for j in 0..<n { presence[t * n + j] = present(t, j) } }
        // Rotation and scale (a linear map of positions and velocities).
        let angle = spec.rotationDegrees > 0 ? uniform(-spec.rotationDegrees...spec.rotationDegrees) * .pi / 180 : 0
        let k = (spec.scale.lowerBound != 1 || spec.scale.upperBound != 1) ? uniform(spec.scale) : 1
        let dx = spec.translation > 0 ? uniform(-spec.translation...spec.translation) : 0
        let dy = spec.translation > 0 ? uniform(-spec.translation...spec.translation) : 0
        if angle != 0 || k != 1 || dx != 0 || dy != 0 {
            let c = Float(cos(angle) * k), s = Float(sin(angle) * k)
            for t in 0..<frames {
                for j in 0..<n where presence[t * n + j] {
                    let o = (t * n + j) * fpj
                    for (off, shift) in [(pos, true), (vel, false), (bone, false), (boneVelocity, false)] {
                        guard let off else { continue }
                        let x = w.values[o + off], y = w.values[o + off + 1]
                        w.values[o + off] = c * x - s * y + (shift ? Float(dx) : 0)
                        w.values[o + off + 1] = s * x + c * y + (shift ? Float(dy) : 0)
                    }
                }
            }
        }
        // Jitter.
        if spec.jitter > 0, let pos {
            for t in 0..<frames {
                for j in 0..<n where presence[t * n + j] {
                    let o = (t * n + j) * fpj + pos
                    w.values[o] += Float(rng.gaussian() * spec.jitter)
                    w.values[o + 1] += Float(rng.gaussian() * spec.jitter)
                }
            }
        }
    }
}
