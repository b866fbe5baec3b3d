import Foundation
import Live
import Trajectories

/// A thrown object's true flight, as a scene generator knows it: released at `release`
/// seconds from (x, y) pixels at `speed` pixels per second, `angle` degrees above the
/// horizontal, sideways along `direction` (±1), pulled down at `gravity` pixels per second²,
/// until `end`.
public struct TrueFlight: Sendable {
    public var release: Double
    public var x: Double, y: Double
    public var speed: Double
    public var angle: Double
    public var direction: Double
    public var gravity: Double
    public var end: Double
    /// The speed in the unit poseact reports with the scale given (m/s).
    public var metricSpeed: Double
    public var type: String
    public var bounces: Bool
    public var duringShake: Bool
    public var hit: Bool?
    /// Thrown by the figure (false: a stray ball of a cluttered scene, which no one threw).
    public var thrown: Bool

    public init(release: Double, x: Double, y: Double, speed: Double, angle: Double, direction: Double, gravity: Double,
                end: Double, metricSpeed: Double, type: String, bounces: Bool, duringShake: Bool, hit: Bool?, thrown: Bool = true) {
        self.release = release; self.x = x; self.y = y; self.speed = speed; self.angle = angle; self.direction = direction
        self.gravity = gravity; self.end = end; self.metricSpeed = metricSpeed; self.type = type; self.bounces = bounces
        self.duringShake = duringShake; self.hit = hit; self.thrown = thrown
    }

    public func position(at t: Double) -> (x: Double, y: Double) {
        let u = t - release, a = angle * .pi / 180
        return (x + direction * speed * cos(a) * u, y - speed * sin(a) * u + gravity * u * u / 2)
    }

    /// Pixels per second at `t` (in flight).
    public func speed(at t: Double) -> Double {
        let a = angle * .pi / 180
        return hypot(speed * cos(a), -speed * sin(a) + gravity * (t - release))
    }
}

/// What one clip holds and what poseact found in it.
public struct ClipOutcome: Sendable {
    public var clip: String
    public var seconds: Double
    public var flights: [TrueFlight]
    /// Intervals (seconds) while the camera shook.
    public var shaking: [ClosedRange<Double>]
    public var trajectories: [Trajectory]
    public var throwsFound: [ThrowReport]

    public init(clip: String, seconds: Double, flights: [TrueFlight], shaking: [ClosedRange<Double>], trajectories: [Trajectory],
                throwsFound: [ThrowReport]) {
        self.clip = clip; self.seconds = seconds; self.flights = flights; self.shaking = shaking
        self.trajectories = trajectories; self.throwsFound = throwsFound
    }
}

/// How found throws and trajectories compare with the truth, over many clips.
///
/// - A true throw is **found** when a reported throw has its release within 0.25 s of the
///   true one and goes the same way sideways. Throws released while the camera shook are
///   not counted (none is to be reported there) but listed.
/// - A trajectory is **true** when it starts at most 0.15 s before a true flight's release
///   (it may take the object's last frames in the hand) and its points lie, on median,
///   within max(6 px, twice the object's size) of the flight at their times; the piece after a bounce (it starts
///   within a second after a bouncing flight's end, near where it ended) is a true one too.
///   Every other trajectory is **false**.
/// - Speed error: |found − true| / true at release; angle errors: the forearm's angle (the
///   app's release angle) and the direction of flight against the true launch angle, degrees.
/// - A flight (the figure's throws and the strays of cluttered scenes) is **one trajectory**
///   when exactly one trajectory is true of it (follows it, or is the piece after its
///   bounce and follows no other flight); its **start speed** error is |the trajectory's
///   speed at its first point − the true speed then| / the true speed then.
public struct ThrowScore: Codable, Sendable {
    public var clips = 0
    public var seconds = 0.0
    public var throwsTrue = 0
    public var throwsFound = 0
    public var throwsDuringShake = 0
    public var missed: [String] = []
    /// True flights (not while shaking) that a true trajectory follows, found by the
    /// detector whether or not a throw was made of it.
    public var flightsTracked = 0
    public var untracked: [String] = []
    public var trajectories = 0
    public var falseTrajectories = 0
    public var falseTrajectoryClips: [String] = []
    /// Trajectories with a point while the camera shook.
    public var trajectoriesWhileShaking = 0
    public var whileShakingClips: [String] = []
    public var speedErrors: [Double] = []
    public var releaseAngleErrors: [Double] = []
    public var launchAngleErrors: [Double] = []
    /// Flights (not while shaking) and those that make exactly one trajectory; the others,
    /// with how many trajectories they make.
    public var flightsScored = 0
    public var flightsAsOne = 0
    public var notOne: [String] = []
    public var startSpeedErrors: [Double] = []
    public var typesRight = 0
    public var typesScored = 0
    public var hitsRight = 0
    public var hitsScored = 0

    public init() {}

    public var foundShare: Double { throwsTrue > 0 ? Double(throwsFound) / Double(throwsTrue) : 0 }
    public var asOneShare: Double { flightsScored > 0 ? Double(flightsAsOne) / Double(flightsScored) : 0 }
    public var falsePerTenMinutes: Double { seconds > 0 ? Double(falseTrajectories) / (seconds / 600) : 0 }

    public mutating func add(_ o: ClipOutcome) {
        clips += 1
        seconds += o.seconds
        trajectories += o.trajectories.count
        let shaking = { (t: Double) in o.shaking.contains { $0.contains(t) } }
        for t in o.trajectories where t.points.contains(where: { shaking($0.time) }) {
            trajectoriesWhileShaking += 1
            whileShakingClips.append(String(format: "%@ %.2f–%.2f s", o.clip, t.start, t.end))
        }
        for t in o.trajectories where !isTrue(t, o.flights) {
            falseTrajectories += 1
            falseTrajectoryClips.append(String(format: "%@ %.2f–%.2f s", o.clip, t.start, t.end))
        }
        for f in o.flights where !f.duringShake {
            if o.trajectories.contains(where: { follows($0, f) }) { flightsTracked += 1 }
            else { untracked.append(String(format: "%@ %.2f s", o.clip, f.release)) }
            flightsScored += 1
            // A trajectory that follows another flight is that flight's, even where it starts
            // near where this one came down.
            let its = o.trajectories.filter { t in follows(t, f) || (isHop(t, of: f) && !o.flights.contains { follows(t, $0) }) }
            guard its.count == 1, let t = its.first else {
                notOne.append(String(format: "%@ %.2f s: %d trajectories", o.clip, f.release, its.count))
                continue
            }
            flightsAsOne += 1
            if follows(t, f) {
                let truth = f.speed(at: max(t.start, f.release))
                startSpeedErrors.append(abs(t.startSpeed - truth) / truth)
            }
        }
        var unused = Array(o.throwsFound.indices)
        for f in o.flights.sorted(by: { $0.release < $1.release }) where f.thrown {
            if f.duringShake { throwsDuringShake += 1; continue }
            throwsTrue += 1
            let candidates = unused.filter { i in
                let r = o.throwsFound[i]
                return abs(r.releaseTime - f.release) <= 0.25 && (r.trajectory.motion.vx >= 0) == (f.direction > 0)
            }
            guard let i = candidates.min(by: { abs(o.throwsFound[$0].releaseTime - f.release) < abs(o.throwsFound[$1].releaseTime - f.release) })
            else { missed.append(String(format: "%@ %.2f s", o.clip, f.release)); continue }
            unused.removeAll { $0 == i }
            let r = o.throwsFound[i]
            throwsFound += 1
            let truthSpeed = r.speedUnit == "m/s" ? f.metricSpeed : f.speed
            speedErrors.append(abs(r.speed - truthSpeed) / truthSpeed)
            if let a = r.releaseAngle { releaseAngleErrors.append(abs(a - f.angle)) }
            launchAngleErrors.append(abs(r.launchAngle - f.angle))
            if let type = r.type { typesScored += 1; if type == f.type { typesRight += 1 } }
            if let hit = r.hit, let truth = f.hit { hitsScored += 1; if hit == truth { hitsRight += 1 } }
        }
    }

    /// Its flight's points (those before a bounce it went on after) lie near the flight.
    private func follows(_ t: Trajectory, _ f: TrueFlight) -> Bool {
        let d = t.points.filter { $0.time <= t.flightEnd }
            .map { p -> Double in let q = f.position(at: p.time); return hypot(Double(p.x) - q.x, Double(p.y) - q.y) }.sorted()
        return !d.isEmpty && t.start >= f.release - 0.15 && t.start <= f.end + 0.05 && d[d.count / 2] <= max(6, 2 * t.objectSize)
    }

    /// It starts after a bouncing flight's end, near where it came down: the hop, on its own.
    private func isHop(_ t: Trajectory, of f: TrueFlight) -> Bool {
        guard f.bounces, t.start >= f.end - 0.1, t.start <= f.end + 1 else { return false }
        let landing = f.position(at: f.end), first = t.points[0]
        return hypot(Double(first.x) - landing.x, Double(first.y) - landing.y) <= 0.25 * abs(f.speed)
    }

    private func isTrue(_ t: Trajectory, _ flights: [TrueFlight]) -> Bool {
        flights.contains { follows(t, $0) || isHop(t, of: $0) }
    }

    /// The median and 95th percentile of `values` (nil when empty).
    public static func spread(_ values: [Double]) -> (median: Double, p95: Double)? {
        guard !values.isEmpty else { return nil }
        let s = values.sorted()
        return (s[s.count / 2], s[min(s.count - 1, Int((Double(s.count) * 0.95).rounded(.up)) - 1)])
    }
}
