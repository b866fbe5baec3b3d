import Foundation

/// The One-Euro filter (Casiez, Roussel, Vogel, CHI 2012) on one scalar signal, as
/// MediaPipe implements it (`mediapipe/util/filtering/one_euro_filter.cc`): an
/// exponential low-pass whose cutoff rises with the signal's speed, so that a still signal
/// is smoothed hard (little jitter) and a moving one lightly (little lag).
///
/// Per sample at time t (seconds), with `f = 1 / (t − t_prev)`:
///
///     dx     = (x − x_prev_raw) · valueScale · f        (0 on the first sample)
///     dx̂     = lowpass(dx, α(derivativeCutoff))
///     cutoff = minCutoff + beta · |dx̂|
///     x̂      = lowpass(x, α(cutoff))
///     α(fc)  = 1 / (1 + τ/Tₑ),  τ = 1 / (2π·fc),  Tₑ = 1/f
///
/// A low-pass passes its first sample through, so the first value comes out unchanged.
/// A sample whose time is not after the previous one is returned unchanged and leaves the
/// state alone (MediaPipe does the same). `valueScale` turns the speed into the unit
/// `beta` is tuned for: MediaPipe passes 1 / (the object's size in pixels), see
/// `LandmarkSmoother`.
public struct OneEuroFilter: Sendable {
    public var minCutoff: Double
    public var beta: Double
    public var derivativeCutoff: Double
    /// Sampling rate assumed before two timestamps are known (MediaPipe's default, 30 Hz).
    /// It only sets the α of the first sample, which a fresh low-pass ignores anyway.
    public var initialFrequency: Double

    private var frequency: Double
    private var lastTime: Double?
    private var lastRaw: Double?
    private var lastFiltered: Double = 0
    private var lastDerivative: Double?

    public init(minCutoff: Double = 0.05, beta: Double = 80, derivativeCutoff: Double = 1, initialFrequency: Double = 30) {
        precondition(minCutoff > 0 && derivativeCutoff > 0 && initialFrequency > 0, "OneEuroFilter: cutoffs and frequency must be > 0")
        self.minCutoff = minCutoff; self.beta = beta; self.derivativeCutoff = derivativeCutoff
        self.initialFrequency = initialFrequency
        self.frequency = initialFrequency
    }

    /// Whether a sample has been taken since creation or `reset()`.
    public var isInitialized: Bool { lastRaw != nil }

    /// Filters one sample taken at `time` seconds.
    public mutating func filter(_ value: Double, time: Double, valueScale: Double = 1) -> Double {
        if let t0 = lastTime {
            guard time > t0 else { return value }
            frequency = 1 / (time - t0)
        }
        lastTime = time

        // Speed in valueScale units per second, then its low-pass (which passes its
        // first sample, 0 on the first frame, through).
        let dx = lastRaw.map { (value - $0) * valueScale * frequency } ?? 0
        let edx: Double
        if let d = lastDerivative {
            let a = Self.alpha(cutoff: derivativeCutoff, frequency: frequency)
            edx = a * dx + (1 - a) * d
        } else {
            edx = dx
        }
        lastDerivative = edx

        let cutoff = minCutoff + beta * abs(edx)
        let out: Double
        if lastRaw != nil {
            let a = Self.alpha(cutoff: cutoff, frequency: frequency)
            out = a * value + (1 - a) * lastFiltered
        } else {
            out = value
        }
        lastRaw = value
        lastFiltered = out
        return out
    }

    /// Forgets the signal: the next sample passes through as a first one.
    public mutating func reset() {
        lastTime = nil; lastRaw = nil; lastDerivative = nil; lastFiltered = 0
        frequency = initialFrequency
    }

    /// The weight of the new sample in an exponential low-pass of cutoff `cutoff` Hz
    /// sampled at `frequency` Hz.
    @inline(__always) public static func alpha(cutoff: Double, frequency: Double) -> Double {
        let te = 1 / frequency
        let tau = 1 / (2 * Double.pi * cutoff)
        return 1 / (1 + tau / te)
    }
}

/// Smooths one person's 33 landmarks from frame to frame the way MediaPipe's pose
/// tracking does (`PoseLandmarkFiltering` / the pose landmarker task):
///
/// 1. visibility through a plain low-pass, `v̂ = α·v + (1 − α)·v̂_prev` with α = 0.1
///    (`VisibilitySmoothingCalculator`);
/// 2. x, y and z of every landmark through its own One-Euro filter (min cutoff 0.05,
///    β 80, derivative cutoff 1 — the values of MediaPipe's pose landmarker for pose
///    landmarks), with MediaPipe's scale rule (`LandmarksSmoothingCalculator`):
///    coordinates are filtered in pixels (z on x's scale), and the speed that drives the
///    cutoff is divided by the pose's size, `objectScale = (bbox width + bbox height) / 2`
///    of all the landmarks in pixels — so β means the same for a person near the camera
///    and one far away, and the speed is measured in body sizes per second. When that
///    size is below `minAllowedObjectScale` (1e-6, a degenerate pose) the coordinates
///    pass through unfiltered. A caller may give its own object scale instead (MediaPipe's
///    task graph uses the tracking ROI's `(width + height) / 2`).
///
/// Presence is passed through (MediaPipe does not smooth it). The first frame, and any
/// frame whose time is not after the previous one, come out unchanged; the latter leaves
/// all state alone (MediaPipe would still low-pass the visibility — poseact treats such a
/// frame as not part of the sequence at all). An empty frame (no pose) resets the
/// smoother, as MediaPipe does on an empty landmark packet; so does a change in the number
/// of landmarks.
public final class LandmarkSmoother {
    public let minCutoff: Double
    public let beta: Double
    public let derivativeCutoff: Double
    /// Weight of the new visibility in its low-pass.
    public let visibilityAlpha: Float
    /// Below this object scale (pixels) coordinates are not filtered.
    public let minAllowedObjectScale: Float

    private var xs: [OneEuroFilter] = [], ys: [OneEuroFilter] = [], zs: [OneEuroFilter] = []
    private var visibility: [Float] = []
    private var lastTime: Double?

    public init(minCutoff: Double = 0.05, beta: Double = 80, derivativeCutoff: Double = 1,
                visibilityAlpha: Float = 0.1, minAllowedObjectScale: Float = 1e-6) {
        self.minCutoff = minCutoff; self.beta = beta; self.derivativeCutoff = derivativeCutoff
        self.visibilityAlpha = visibilityAlpha; self.minAllowedObjectScale = minAllowedObjectScale
    }

    /// Forgets the past: the next frame passes through as a first one.
    public func reset() {
        xs = []; ys = []; zs = []; visibility = []; lastTime = nil
    }

    /// MediaPipe's object scale: the mean of the width and height of the axis-aligned box
    /// around all the landmarks (visible or not), in the landmarks' unit (pixels).
    public static func objectScale(of landmarks: [Landmark]) -> Float {
        guard let first = landmarks.first else { return 0 }
        var x0 = first.x, x1 = first.x, y0 = first.y, y1 = first.y
        for l in landmarks.dropFirst() {
            x0 = min(x0, l.x); x1 = max(x1, l.x); y0 = min(y0, l.y); y1 = max(y1, l.y)
        }
        return ((x1 - x0) + (y1 - y0)) / 2
    }

    /// Smooths one frame's landmarks taken at `time` seconds. `objectScale` overrides the
    /// size computed from the landmarks (see the type's documentation).
    public func smooth(_ landmarks: [Landmark], time: Double, objectScale: Float? = nil) -> [Landmark] {
        if landmarks.isEmpty { reset(); return landmarks }
        if let t0 = lastTime, !(time > t0) { return landmarks }
        if xs.count != landmarks.count {
            reset()
            let f = OneEuroFilter(minCutoff: minCutoff, beta: beta, derivativeCutoff: derivativeCutoff)
            xs = Array(repeating: f, count: landmarks.count); ys = xs; zs = xs
        }
        let first = lastTime == nil
        lastTime = time

        var out = landmarks
        // 1. Visibility low-pass (first frame: passes through).
        if first {
            visibility = landmarks.map(\.visibility)
        } else {
            let a = visibilityAlpha
            for i in out.indices {
                let v = a * landmarks[i].visibility + (1 - a) * visibility[i]
                visibility[i] = v
                out[i].visibility = v
            }
        }

        // 2. Coordinates, with the speed measured in object sizes.
        let scale = objectScale ?? Self.objectScale(of: landmarks)
        guard scale >= minAllowedObjectScale else { return out }
        let valueScale = 1 / Double(scale)
        for i in out.indices {
            let l = landmarks[i]
            out[i].x = Float(xs[i].filter(Double(l.x), time: time, valueScale: valueScale))
            out[i].y = Float(ys[i].filter(Double(l.y), time: time, valueScale: valueScale))
            out[i].z = Float(zs[i].filter(Double(l.z), time: time, valueScale: valueScale))
        }
        return out
    }
}
