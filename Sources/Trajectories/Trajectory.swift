import Foundation

/// A point of a trajectory: where the object was (pixels, the frame's top-left corner, y
/// down) at `time` seconds.
public struct TrajectoryPoint: Sendable, Equatable, Codable {
    public var time: Double
    public var x: Float, y: Float
    public init(time: Double, x: Float, y: Float) { self.time = time; self.x = x; self.y = y }
}

/// The path of a thrown (kicked, hit, dropped) object, found from its detected points: a
/// ballistic motion in image coordinates, x(t) = x0 + vx·(t − t0) and
/// y(t) = y0 + vy·(t − t0) + ay·(t − t0)²/2, with t0 the first point's time. A straight line
/// is one too (ay = 0). Like Vision's trajectories it is found after the fact: its time
/// range starts at its first detected point.
public struct Trajectory: Sendable {
    /// Why a trajectory ended.
    public enum Ending: String, Sendable, Codable {
        /// Its next point would have been outside the frame (or the region of interest).
        case leftFrame = "left_frame"
        /// No point fitted it any more: it landed, was caught, or stayed hidden longer than
        /// `TrajectoryOptions.maximumHidden`.
        case stopped
        /// The camera moved (no trajectory goes on through a moving camera).
        case cameraMoved = "camera_moved"
        case inputEnded = "input_ended"
    }

    public var id: Int
    /// 0 when first reported; each later report of the same `id` (a piece seen again after
    /// the object was hidden, or its hop after a bounce, joined it) counts one more and
    /// holds every point so far: it replaces the earlier ones.
    public var revision = 0
    /// The detected points, in time order.
    public var points: [TrajectoryPoint]
    /// The fitted motion of the flight up to the first bounce (pixels, pixels per second,
    /// pixels per second squared).
    public var motion: BallisticMotion
    /// Where and when the object bounced and went on: one point per bounce, in time order.
    public var bounces: [TrajectoryPoint] = []
    /// The fitted motion after each bounce (as many as `bounces`).
    public var hops: [BallisticMotion] = []
    /// The path as Vision gives it, y = a·x² + b·x + c (pixels); nil when the object moved
    /// less than two pixels sideways (a vertical drop), where y is no function of x.
    public var equation: (a: Double, b: Double, c: Double)?
    /// Root mean square distance of the detected points from the fitted motion, pixels.
    public var residual: Double
    /// 0…1: how well and how long the points follow the fitted motion.
    public var confidence: Double
    /// The object's median size (its bounding box's larger side), pixels.
    public var objectSize: Double
    public var ending: Ending
    /// Metres per pixel where a scale is known (`--scale`, or `--height` with a person in
    /// view); nil: speeds are in pixels per second.
    public var metresPerPixel: Double?

    public init(id: Int, points: [TrajectoryPoint], motion: BallisticMotion, equation: (a: Double, b: Double, c: Double)?,
                residual: Double, confidence: Double, objectSize: Double, ending: Ending) {
        self.id = id; self.points = points; self.motion = motion; self.equation = equation; self.residual = residual
        self.confidence = confidence; self.objectSize = objectSize; self.ending = ending
    }

    public var start: Double { points.first?.time ?? 0 }
    public var end: Double { points.last?.time ?? 0 }
    /// The motion that holds at `time`: the flight's, or the hop's after the last bounce before it.
    public func motion(at time: Double) -> BallisticMotion {
        guard let k = bounces.lastIndex(where: { $0.time <= time }), k < hops.count else { return motion }
        return hops[k]
    }
    /// The fitted motion at each detected point's time (Vision's projected points).
    public var projectedPoints: [TrajectoryPoint] {
        points.map { p in let q = motion(at: p.time).position(at: p.time); return TrajectoryPoint(time: p.time, x: Float(q.x), y: Float(q.y)) }
    }

    // What the flight itself says, with or without a thrower in view (a throw's release
    // values come from the thrower's hand instead: `ThrowReport`).

    /// The speed along the path at the first point, pixels per second.
    public var startSpeed: Double { motion.speed(at: start) }
    /// The direction of travel at the first point, degrees above the horizontal.
    public var launchAngle: Double { motion.elevation(at: start) }
    /// When the flight ended: its first bounce, or its last point.
    public var flightEnd: Double { bounces.first?.time ?? end }
    /// From the first point to the first bounce or the last point, seconds.
    public var flightTime: Double { flightEnd - start }
    /// The flight's highest point, where it stopped rising, when that happened while it was
    /// followed (nil for an object first seen already falling, or thrown downwards).
    public var apex: TrajectoryPoint? {
        guard motion.ay > 0 else { return nil }
        let t = motion.t0 - motion.vy / motion.ay
        guard t >= start, t <= flightEnd else { return nil }
        let q = motion.position(at: t)
        return TrajectoryPoint(time: t, x: Float(q.x), y: Float(q.y))
    }

    /// The last report of each trajectory, in the order they were first reported: what a
    /// list of reports (amendments included) comes to.
    public static func latest(_ reports: [Trajectory]) -> [Trajectory] {
        var order: [Int] = [], last: [Int: Trajectory] = [:]
        for t in reports {
            if last[t.id] == nil { order.append(t.id) }
            last[t.id] = t
        }
        return order.compactMap { last[$0] }
    }
}

/// x(t) = x0 + vx·(t − t0), y(t) = y0 + vy·(t − t0) + ay·(t − t0)²/2: the motion of an object in
/// free flight seen side-on (gravity pulls along +y, the image's down, at ay).
public struct BallisticMotion: Sendable, Equatable {
    public var t0: Double
    public var x0: Double, vx: Double
    public var y0: Double, vy: Double, ay: Double

    public func position(at t: Double) -> (x: Double, y: Double) {
        let u = t - t0
        return (x0 + vx * u, y0 + vy * u + ay * u * u / 2)
    }
    public func velocity(at t: Double) -> (x: Double, y: Double) { (vx, vy + ay * (t - t0)) }
    /// Pixels per second at `t`.
    public func speed(at t: Double) -> Double { let v = velocity(at: t); return (v.x * v.x + v.y * v.y).squareRoot() }
    /// Degrees above the horizontal of the direction of travel at `t`, whichever way it goes sideways.
    public func elevation(at t: Double) -> Double {
        let v = velocity(at: t)
        return atan2(-v.y, abs(v.x)) * 180 / .pi
    }

    /// The least-squares fit of `points` (at least three; two when `ay` is given, or is to be
    /// 0 for a straight line): x linear in time, y quadratic. Nil when the times do not spread.
    public static func fit(_ points: [TrajectoryPoint], straight: Bool = false, ay given: Double? = nil) -> BallisticMotion? {
        let given = straight ? 0 : given
        guard let first = points.first, points.count >= (given != nil ? 2 : 3) else { return nil }
        let t0 = first.time
        // Normal equations on u = t − t0 (sums of powers of u), solved by Cramer's rule.
        var s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0
        var sx = 0.0, sxu = 0.0, sy = 0.0, syu = 0.0, syu2 = 0.0
        for p in points {
            let u = p.time - t0, u2 = u * u
            // (With ay given, y less its pull is linear in u.)
            let y = Double(p.y) - (given ?? 0) * u2 / 2
            s0 += 1; s1 += u; s2 += u2; s3 += u2 * u; s4 += u2 * u2
            sx += Double(p.x); sxu += Double(p.x) * u
            sy += y; syu += y * u; syu2 += y * u2
        }
        let d2 = s0 * s2 - s1 * s1
        guard d2 > 1e-12 else { return nil }
        let vx = (s0 * sxu - s1 * sx) / d2, x0 = (sx - vx * s1) / s0
        if let given {
            let vy = (s0 * syu - s1 * sy) / d2, y0 = (sy - vy * s1) / s0
            return BallisticMotion(t0: t0, x0: x0, vx: vx, y0: y0, vy: vy, ay: given)
        }
        // y = c0 + c1·u + c2·u²: [s0 s1 s2; s1 s2 s3; s2 s3 s4]·c = [sy syu syu2]
        let det = s0 * (s2 * s4 - s3 * s3) - s1 * (s1 * s4 - s3 * s2) + s2 * (s1 * s3 - s2 * s2)
        guard abs(det) > 1e-18 * max(1, s4 * s4) else { return nil }
        let c0 = (sy * (s2 * s4 - s3 * s3) - s1 * (syu * s4 - s3 * syu2) + s2 * (syu * s3 - s2 * syu2)) / det
        let c1 = (s0 * (syu * s4 - syu2 * s3) - sy * (s1 * s4 - s3 * s2) + s2 * (s1 * syu2 - syu * s2)) / det
        let c2 = (s0 * (s2 * syu2 - s3 * syu) - s1 * (s1 * syu2 - s2 * syu) + sy * (s1 * s3 - s2 * s2)) / det
        return BallisticMotion(t0: t0, x0: x0, vx: vx, y0: c0, vy: c1, ay: 2 * c2)
    }

    /// Root mean square distance of `points` from the motion, pixels.
    public func residual(_ points: [TrajectoryPoint]) -> Double {
        guard !points.isEmpty else { return 0 }
        let sum = points.reduce(0.0) { s, p in
            let q = position(at: p.time), dx = Double(p.x) - q.x, dy = Double(p.y) - q.y
            return s + dx * dx + dy * dy
        }
        return (sum / Double(points.count)).squareRoot()
    }

    /// The path as y = a·x² + b·x + c, from the motion (nil when vx is under `minimumSideways`
    /// pixels over `duration`).
    public func equation(duration: Double, minimumSideways: Double = 2) -> (a: Double, b: Double, c: Double)? {
        guard abs(vx) * duration >= minimumSideways else { return nil }
        // t − t0 = (x − x0)/vx, so y = y0 + vy·(x − x0)/vx + ay·(x − x0)²/(2·vx²).
        let k1 = vy / vx, k2 = ay / (2 * vx * vx)
        return (k2, k1 - 2 * k2 * x0, y0 - k1 * x0 + k2 * x0 * x0)
    }
}
