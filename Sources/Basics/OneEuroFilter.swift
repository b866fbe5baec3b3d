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

/// Smooths one pose's points from frame to frame the way MediaPipe's pose tracking does
/// (`PoseLandmarkFiltering` / the pose landmarker task), whatever the points' type (the
/// pose pipeline's landmarks, a keypoint store's rows):
///
/// 1. visibility (a row's confidence) through a plain low-pass,
///    `v̂ = α·v + (1 − α)·v̂_prev` with α = 0.1 (`VisibilitySmoothingCalculator`);
/// 2. each coordinate of every point through its own One-Euro filter (min cutoff 0.05,
///    β 80, derivative cutoff 1: MediaPipe's pose landmarker's values), with MediaPipe's
///    scale rule (`LandmarksSmoothingCalculator`): coordinates are filtered in pixels, and
///    the speed that drives the cutoff is divided by the pose's size, `objectScale =
///    (bbox width + bbox height) / 2` of the points in pixels, so β means the same for a
///    person near the camera and one far away. Below `minAllowedObjectScale` (1e-6, a
///    degenerate pose) the coordinates pass through unfiltered.
///
/// The first frame, and any frame whose time is not after the previous one, come out
/// unchanged; the latter leaves all state alone. An empty frame (no pose) resets the
/// smoother, as MediaPipe does on an empty landmark packet; so does a change in the
/// number of points. A point marked absent (an imported skeleton's missing joint) passes
/// through and its filters start afresh when it returns.
public final class PoseSmoother {
    public let minCutoff: Double
    public let beta: Double
    public let derivativeCutoff: Double
    /// Weight of the new visibility in its low-pass.
    public let visibilityAlpha: Float
    /// Below this object scale (pixels) coordinates are not filtered.
    public let minAllowedObjectScale: Float
    /// Coordinates per point (x, y; x, y, z).
    public let dimensions: Int

    private var filters: [OneEuroFilter] = []
    private var visibility: [Float] = []
    /// Whether each point has a visibility to low-pass (it was present in an earlier frame).
    private var seen: [Bool] = []
    private var lastTime: Double?

    public init(dimensions: Int = 3, minCutoff: Double = 0.05, beta: Double = 80, derivativeCutoff: Double = 1,
                visibilityAlpha: Float = 0.1, minAllowedObjectScale: Float = 1e-6) {
        precondition(dimensions >= 1, "PoseSmoother: at least one coordinate per point")
        self.dimensions = dimensions
        self.minCutoff = minCutoff; self.beta = beta; self.derivativeCutoff = derivativeCutoff
        self.visibilityAlpha = visibilityAlpha; self.minAllowedObjectScale = minAllowedObjectScale
    }

    /// Forgets the past: the next frame passes through as a first one.
    public func reset() {
        filters = []; visibility = []; seen = []; lastTime = nil
    }

    /// MediaPipe's object scale: the mean of the width and height of the axis-aligned box
    /// around the points (x, y the first two of each point's `dimensions`), in pixels.
    public static func objectScale(_ coordinates: [Float], dimensions: Int, present: [Bool]? = nil) -> Float {
        var x0 = Float.infinity, x1 = -Float.infinity, y0 = Float.infinity, y1 = -Float.infinity
        for p in 0..<(coordinates.count / dimensions) where present?[p] ?? true {
            let x = coordinates[p * dimensions], y = coordinates[p * dimensions + 1]
            x0 = min(x0, x); x1 = max(x1, x); y0 = min(y0, y); y1 = max(y1, y)
        }
        return x0 <= x1 ? ((x1 - x0) + (y1 - y0)) / 2 : 0
    }

    /// Smooths one frame taken at `time` seconds, in place: `coordinates` holds `dimensions`
    /// values per point (pixels; z on x's scale), `visibility` one per point. `present`
    /// (nil: all) marks the points the frame has. `objectScale` overrides the size computed
    /// from the points.
    public func smooth(coordinates: inout [Float], visibility v: inout [Float], present: [Bool]? = nil, time: Double,
                       objectScale: Float? = nil) {
        let points = v.count
        if points == 0 { reset(); return }
        precondition(coordinates.count == points * dimensions && (present?.count ?? points) == points,
                     "PoseSmoother: \(coordinates.count) coordinates, \(points) visibilities")
        if let t0 = lastTime, !(time > t0) { return }
        if filters.count != points * dimensions {
            reset()
            filters = Array(repeating: OneEuroFilter(minCutoff: minCutoff, beta: beta, derivativeCutoff: derivativeCutoff),
                            count: points * dimensions)
        }
        if lastTime == nil { visibility = v; seen = [Bool](repeating: false, count: points) }
        lastTime = time
        // 1. Visibility low-pass (a point's first frame, or its return: passes through).
        for i in 0..<points {
            if let present, !present[i] { seen[i] = false; continue }
            if seen[i] {
                visibility[i] = visibilityAlpha * v[i] + (1 - visibilityAlpha) * visibility[i]
                v[i] = visibility[i]
            } else {
                visibility[i] = v[i]; seen[i] = true
            }
        }
        // 2. Coordinates, with the speed measured in object sizes.
        let scale = objectScale ?? Self.objectScale(coordinates, dimensions: dimensions, present: present)
        guard scale >= minAllowedObjectScale else { return }
        let valueScale = 1 / Double(scale)
        for i in 0..<points {
            if let present, !present[i] {
                for d in 0..<dimensions { filters[i * dimensions + d].reset() }
                continue
            }
            for d in 0..<dimensions {
                let k = i * dimensions + d
                coordinates[k] = Float(filters[k].filter(Double(coordinates[k]), time: time, valueScale: valueScale))
            }
        }
    }
}
