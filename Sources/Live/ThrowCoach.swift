import Foundation
import Pose
import Trajectories

/// How pixels become metres.
public enum MetricScale: Sendable, Equatable {
    /// Two points of the picture a known distance apart (the Action & Vision app's board).
    case reference(x1: Float, y1: Float, x2: Float, y2: Float, metres: Double)
    /// The thrower's own standing height, through the pose: nose to heels is
    /// `PersonHeight.noseToHeels` of it.
    case personHeight(metres: Double)

    /// Metres per pixel for a person of `pixelHeight` (nose to heels, pixels; ignored by a reference).
    func metresPerPixel(pixelHeight: Double?) -> Double? {
        switch self {
        case .reference(let x1, let y1, let x2, let y2, let metres):
            let d = Double(hypot(x2 - x1, y2 - y1))
            return d > 0 ? metres / d : nil
        case .personHeight(let metres):
            guard let h = pixelHeight, h > 10 else { return nil }
            return metres * PersonHeight.noseToHeels / h
        }
    }
}

public enum PersonHeight {
    /// Nose to heels over standing height: the nose is at about 0.91 of a standing adult's
    /// height and the heel landmark about 0.02 above the floor (anthropometric tables, e.g.
    /// Drillis and Contini's segment proportions).
    public static let noseToHeels = 0.89
}

/// What `--trajectories` adds to live and annotate.
public struct ThrowOptions: Sendable {
    public var detector = TrajectoryOptions()
    public var scale: MetricScale?
    /// A region (a polygon, pixels) where a throw that ends inside it is a hit.
    public var target: [(x: Float, y: Float)]?
    /// Labels of the action model that are no throw's type (walking, standing…).
    public var backgroundLabels: Set<String> = ["other", "background"]
    /// How far (seconds) before its first detected point a trajectory's release is looked for.
    public var releaseSearch = 0.5

    public init() {}
}

/// One throw: a trajectory that started near a person's wrist, with what it says about the throw.
public struct ThrowReport: Sendable {
    public var person: Int
    public var trajectory: Trajectory
    /// When the object left the hand: where the fitted path passes nearest the wrist.
    public var releaseTime: Double
    public var releasePoint: (x: Double, y: Double)
    /// The action model's label over the window that ends at release (nil: the model has no
    /// label but background ones).
    public var type: String?
    public var typeConfidence: Float?
    /// The arm that threw ("left" or "right"): the one whose wrist the path passes nearest.
    public var arm: String
    /// The forearm (elbow to wrist) against the horizontal at release, degrees, positive
    /// above it, in the direction of the throw.
    public var releaseAngle: Double?
    /// The direction of flight at release, degrees above the horizontal.
    public var launchAngle: Double
    /// The speed along the fitted path at release, in `speedUnit`.
    public var speed: Double
    /// "m/s" with a scale, else "px/s".
    public var speedUnit: String
    public var metresPerPixel: Double?
    /// Whether it ended inside the target (nil: no target given).
    public var hit: Bool?
}

extension ThrowReport {
    /// The last report of each throw (by its trajectory), in the order first reported.
    public static func latest(_ reports: [ThrowReport]) -> [ThrowReport] {
        let last = Dictionary(reports.map { ($0.trajectory.id, $0) }, uniquingKeysWith: { _, b in b })
        var seen = Set<Int>()
        return reports.compactMap { r in seen.insert(r.trajectory.id).inserted ? last[r.trajectory.id] : nil }
    }
}

/// A person's throws so far. A report of a throw already counted (its trajectory was
/// amended: a piece joined it) replaces the earlier one.
public struct ThrowTally: Sendable, Equatable {
    public var person: Int
    /// Each throw's figures, in the order first reported, with its trajectory's id.
    private var entries: [Entry] = []
    public var speedUnit = "px/s"

    struct Entry: Sendable, Equatable {
        var trajectory: Int
        var type: String?
        var speed: Double
        var angle: Double?
        var hit: Bool
    }

    public var count: Int { entries.count }
    public var hits: Int { entries.filter(\.hit).count }
    public var throwsPerType: [String: Int] { entries.reduce(into: [:]) { d, e in if let t = e.type { d[t, default: 0] += 1 } } }
    public var speeds: [Double] { entries.map(\.speed) }
    public var angles: [Double] { entries.compactMap(\.angle) }
    public var lastType: String? { entries.last?.type }
    public var lastSpeed: Double? { entries.last?.speed }
    public var lastAngle: Double? { entries.last?.angle }

    public var meanSpeed: Double? { speeds.isEmpty ? nil : speeds.reduce(0, +) / Double(speeds.count) }
    public var bestSpeed: Double? { speeds.max() }
    public var meanAngle: Double? { angles.isEmpty ? nil : angles.reduce(0, +) / Double(angles.count) }
    public var hitRate: Double? { count > 0 ? Double(hits) / Double(count) : nil }

    public init(person: Int) { self.person = person }

    public mutating func add(_ report: ThrowReport) {
        let entry = Entry(trajectory: report.trajectory.id, type: report.type, speed: report.speed, angle: report.releaseAngle,
                          hit: report.hit == true)
        speedUnit = report.speedUnit
        if let k = entries.firstIndex(where: { $0.trajectory == entry.trajectory }) { entries[k] = entry } else { entries.append(entry) }
    }
}

/// Throws from trajectories and people: a trajectory whose fitted path passes near a
/// tracked person's wrist shortly before it was first seen is that person's throw. The
/// poses and predictions of the last seconds are kept to find the release, the arm, the
/// forearm's angle and the throw's type when a trajectory ends (it ends after the object
/// lands, so the release is in the past by then).
public final class ThrowCoach {
    public let options: ThrowOptions
    public let labels: [String]
    private var history: [Int: [PoseSample]] = [:]
    private var predictions: [Int: [Prediction]] = [:]
    public private(set) var tallies: [Int: ThrowTally] = [:]
    /// The trajectories that ended lately, with their throw's type (for the overlay).
    public private(set) var recent: [(trajectory: Trajectory, type: String?)] = []
    private var now = 0.0

    struct PoseSample {
        var time: Double
        /// Elbow and wrist, left then right (pixels).
        var elbows: [(x: Float, y: Float)], wrists: [(x: Float, y: Float)]
        /// Nose to the heels' middle, pixels.
        var height: Float
        var boxHeight: Float
    }

    public init(options: ThrowOptions, labels: [String]) {
        self.options = options
        self.labels = labels
    }

    public func reset() { history = [:]; predictions = [:]; tallies = [:]; recent = []; now = 0 }

    /// One frame's people (BlazePose's 33 landmarks, pixels).
    public func push(persons: [Person], time: Double) {
        now = time
        for p in persons where p.landmarks.count >= 33 {
            let l = p.landmarks
            let heels = (l[29].y + l[30].y) / 2
            history[p.id, default: []].append(PoseSample(time: time, elbows: [(l[13].x, l[13].y), (l[14].x, l[14].y)],
                                                         wrists: [(l[15].x, l[15].y), (l[16].x, l[16].y)],
                                                         height: heels - l[0].y, boxHeight: p.box.height))
        }
        // Kept: the last four seconds, for anyone seen in them.
        for (id, samples) in history {
            let kept = samples.drop { $0.time < time - 4 }
            if kept.isEmpty { history[id] = nil } else if kept.count != samples.count { history[id] = Array(kept) }
        }
        for (id, ps) in predictions {
            let kept = ps.drop { $0.time < time - 6 }
            if kept.isEmpty { predictions[id] = nil } else if kept.count != ps.count { predictions[id] = Array(kept) }
        }
        recent.removeAll { $0.trajectory.end < time - 2 }
    }

    public func push(prediction p: Prediction) {
        guard let id = p.personID, !p.probabilities.isEmpty else { return }
        predictions[id, default: []].append(p)
    }

    /// A trajectory that ended (or an amendment of one: the same id, a later revision): the
    /// trajectory with its scale (metres per pixel, from `--scale`, or from `--height` and
    /// its thrower or else the people in view), and the throw it was, if it started at
    /// someone's hand. An amended throw replaces the earlier report in its thrower's tally.
    public func take(_ trajectory: Trajectory) -> (trajectory: Trajectory, throwMade: ThrowReport?) {
        var trajectory = trajectory
        let report = findThrow(trajectory)
        trajectory.metresPerPixel = report?.metresPerPixel ?? options.scale?.metresPerPixel(pixelHeight: medianHeight(of: Array(history.keys)))
        recent.removeAll { $0.trajectory.id == trajectory.id }
        recent.append((trajectory, report?.type))
        if let report { tallies[report.person, default: ThrowTally(person: report.person)].add(report) }
        return (trajectory, report)
    }

    /// The median nose-to-heels height (pixels) of these people over the last seconds.
    private func medianHeight(of people: [Int]) -> Double? {
        let heights = people.flatMap { history[$0] ?? [] }.map { Double($0.height) }.filter { $0 > 0 }.sorted()
        return heights.isEmpty ? nil : heights[heights.count / 2]
    }

    private func findThrow(_ trajectory: Trajectory) -> ThrowReport? {
        let motion = trajectory.motion
        let from = trajectory.start - options.releaseSearch, to = trajectory.start + 0.05
        var best: (distance: Float, person: Int, arm: Int, time: Double, samples: (PoseSample, PoseSample, Double))?
        for (id, samples) in history {
            let inRange = samples.filter { $0.time >= from - 0.1 && $0.time <= to + 0.1 }
            guard inRange.count >= 2 else { continue }
            // The wrist between frames is the straight line between them: the release is
            // found to a millisecond, not to a frame (a frame's error in the release time is
            // 1 to 2 % of the speed through gravity).
            for (a, b) in zip(inRange, inRange.dropFirst()) {
                var t = max(a.time, from)
                while t <= min(b.time, to) {
                    let u = (t - a.time) / max(1e-9, b.time - a.time)
                    let q = motion.position(at: t)
                    for arm in 0..<2 {
                        let wx = a.wrists[arm].x + Float(u) * (b.wrists[arm].x - a.wrists[arm].x)
                        let wy = a.wrists[arm].y + Float(u) * (b.wrists[arm].y - a.wrists[arm].y)
                        let d = hypot(Float(q.x) - wx, Float(q.y) - wy)
                        if d < (best?.distance ?? .infinity) { best = (d, id, arm, t, (a, b, u)) }
                    }
                    t += 0.002
                }
            }
        }
        guard let best else { return nil }
        let (a, b, u) = best.samples
        // Near: within a sixth of the person's height (a hand's length and a little), and
        // never farther than the object's size would allow for its centre in a hand.
        let reach = max(Float(0.17) * max(a.boxHeight, 1), 3 * Float(trajectory.objectSize))
        guard best.distance <= reach else { return nil }
        let t = best.time
        let direction: Double = motion.vx >= 0 ? 1 : -1
        let ex = Double(a.elbows[best.arm].x) + u * Double(b.elbows[best.arm].x - a.elbows[best.arm].x)
        let ey = Double(a.elbows[best.arm].y) + u * Double(b.elbows[best.arm].y - a.elbows[best.arm].y)
        let wx = Double(a.wrists[best.arm].x) + u * Double(b.wrists[best.arm].x - a.wrists[best.arm].x)
        let wy = Double(a.wrists[best.arm].y) + u * Double(b.wrists[best.arm].y - a.wrists[best.arm].y)
        let forearm = hypot(wx - ex, wy - ey)
        let angle = forearm > 1 ? atan2(ey - wy, (wx - ex) * direction) * 180 / .pi : nil
        let metresPerPixel = options.scale?.metresPerPixel(pixelHeight: medianHeight(of: [best.person]))
        let speed = motion.speed(at: t) * (metresPerPixel ?? 1)
        let q = motion.position(at: t)
        let (type, confidence) = throwType(person: best.person, release: t)
        return ThrowReport(person: best.person, trajectory: trajectory, releaseTime: t, releasePoint: q, type: type,
                           typeConfidence: confidence, arm: best.arm == 0 ? "left" : "right", releaseAngle: angle,
                           launchAngle: motion.elevation(at: t), speed: speed, speedUnit: metresPerPixel == nil ? "px/s" : "m/s",
                           metresPerPixel: metresPerPixel, hit: options.target.map { hits($0, trajectory) })
    }

    /// The label (not a background one) with the highest mean probability over the person's
    /// predictions whose windows end from 0.2 s before the release to 0.5 s after it (the
    /// window that ends at release, and its neighbours as the model sees them).
    private func throwType(person: Int, release: Double) -> (String?, Float?) {
        let near = (predictions[person] ?? []).filter { $0.time >= release - 0.2 && $0.time <= release + 0.5 }
        guard !near.isEmpty, let n = near.first?.probabilities.count, n == labels.count else { return (nil, nil) }
        var mean = [Float](repeating: 0, count: n)
        for p in near where p.probabilities.count == n { for k in 0..<n { mean[k] += p.probabilities[k] / Float(near.count) } }
        let candidates = labels.indices.filter { !options.backgroundLabels.contains(labels[$0]) }
        guard let k = candidates.max(by: { mean[$0] < mean[$1] }) else { return (nil, nil) }
        return (labels[k], mean[k])
    }

    /// Whether the flight ends inside the target: where it first bounced; else its last
    /// point, or its fitted path over the next 0.1 s (it landed between two frames).
    private func hits(_ polygon: [(x: Float, y: Float)], _ trajectory: Trajectory) -> Bool {
        if let bounce = trajectory.bounces.first { return Self.inside(polygon, Double(bounce.x), Double(bounce.y)) }
        guard let last = trajectory.points.last else { return false }
        if Self.inside(polygon, Double(last.x), Double(last.y)) { return true }
        return stride(from: trajectory.end, through: trajectory.end + 0.1, by: 0.005).contains { t in
            let q = trajectory.motion.position(at: t)
            return Self.inside(polygon, q.x, q.y)
        }
    }

    /// Even–odd rule.
    static func inside(_ polygon: [(x: Float, y: Float)], _ x: Double, _ y: Double) -> Bool {
        var inside = false
        var j = polygon.count - 1
        for i in polygon.indices {
            let (xi, yi) = (Double(polygon[i].x), Double(polygon[i].y)), (xj, yj) = (Double(polygon[j].x), Double(polygon[j].y))
            if (yi > y) != (yj > y), x < (xj - xi) * (y - yi) / (yj - yi) + xi { inside.toggle() }
            j = i
        }
        return inside
    }
}
