import Evaluation
import Foundation

// The lines `live --json` prints as things happen, and the ones `annotate --timeline` keeps:
// each a JSON object whose "type" says its kind. The CLI writes them from its pipeline's
// events (Sources/poseact/CoachLines.swift); the studio and the tests read them back here.

/// A window's prediction for one person: {"type": "prediction", "time", "person", …}.
public struct PredictionLine: Codable, Equatable, Sendable {
    public private(set) var type = "prediction"
    public var time: Double
    /// The person's track id (-1: nobody).
    public var person: Int
    public var label: String
    public var confidence: Double
    public var fps: Double
    public var dropped: Int

    public init(time: Double, person: Int, label: String, confidence: Double, fps: Double, dropped: Int) {
        self.time = time; self.person = person; self.label = label; self.confidence = confidence; self.fps = fps; self.dropped = dropped
    }
}

/// A person's state changed: {"type": "state", "time", "person", "from", "to"}.
public struct StateLine: Codable, Equatable, Sendable {
    public private(set) var type = "state"
    public var time: Double
    public var person: Int
    public var from: String
    public var to: String

    public init(time: Double, person: Int, from: String, to: String) {
        self.time = time; self.person = person; self.from = from; self.to = to
    }
}

/// An action that ended: its label, span and confidence, and the repetitions inside it.
public struct OccurrenceLine: Codable, Equatable, Sendable {
    public private(set) var type = "occurrence"
    public var person: Int
    public var label: String
    public var start: Double
    public var end: Double
    public var peakConfidence: Double
    public var meanConfidence: Double
    public var repetitions: Int

    public init(person: Int, label: String, start: Double, end: Double, peakConfidence: Double, meanConfidence: Double, repetitions: Int) {
        self.person = person; self.label = label; self.start = start; self.end = end
        self.peakConfidence = peakConfidence; self.meanConfidence = meanConfidence; self.repetitions = repetitions
    }

    /// "#1 correct  3.90 – 7.10 s (peak 98 %, mean 91 %), 4 repetitions"
    public var text: String {
        String(format: "#%d %@  %.2f – %.2f s (peak %.0f %%, mean %.0f %%), %d repetition%@", person, label, start, end,
               peakConfidence * 100, meanConfidence * 100, repetitions, repetitions == 1 ? "" : "s")
    }

    public static let csvHeader = ["person", "label", "start", "end", "peak_confidence", "mean_confidence", "repetitions"]
    public var csvFields: [String] {
        [String(person), label] + [start, end, peakConfidence, meanConfidence].map { String(format: "%.3f", $0) } + [String(repetitions)]
    }
}

/// One repetition counted, with each followed angle's extremes over it.
public struct RepetitionLine: Codable, Equatable, Sendable {
    /// One angle over the repetition, degrees.
    public struct Angle: Codable, Equatable, Sendable {
        public var min: Double
        public var max: Double
        public var rangeOfMotion: Double
        /// At the repetition's turn (a push-up's bottom), when the joint was seen then.
        public var atTurn: Double?

        public init(min: Double, max: Double, atTurn: Double?) {
            self.min = min; self.max = max; rangeOfMotion = max - min; self.atTurn = atTurn
        }
    }

    public private(set) var type = "repetition"
    public var person: Int
    /// Its number among the person's repetitions.
    public var index: Int
    /// The occurrence it falls in, when one was under way.
    public var label: String?
    public var start: Double
    public var end: Double
    /// Seconds it took.
    public var duration: Double
    /// When it was farthest from rest (a push-up's bottom).
    public var turn: Double
    public var angles: [String: Angle]

    public init(person: Int, index: Int, label: String?, start: Double, end: Double, duration: Double, turn: Double, angles: [String: Angle]) {
        self.person = person; self.index = index; self.label = label; self.start = start; self.end = end
        self.duration = duration; self.turn = turn; self.angles = angles
    }

    /// "#1 repetition 3: 1.80 s, ends 7.20 s; body_line 160–178 (at the turn 171)"
    public func text(order: [String]) -> String {
        var s = String(format: "#%d repetition %d: %.2f s, ends %.2f s", person, index, duration, end)
        let parts = order.compactMap { name in
            angles[name].map { a in
                String(format: "%@ %.0f–%.0f°", name, a.min, a.max) + (a.atTurn.map { String(format: " (at the turn %.0f°)", $0) } ?? "")
            }
        }
        if !parts.isEmpty { s += "; " + parts.joined(separator: ", ") }
        return s
    }
}

/// A person's followed angles on one frame: {"type": "angles", "time", "person", "angles": {name: degrees or null}}.
public struct AnglesLine: Codable, Equatable, Sendable {
    public private(set) var type = "angles"
    public var person: Int
    public var time: Double
    /// Degrees, one decimal; null where a joint is missing.
    public var angles: [String: Double?]

    public init(person: Int, time: Double, angles: [String: Double?]) {
        self.person = person; self.time = time; self.angles = angles
    }
}

/// A thrown object's flight: its points, the fitted path, how it ended, and what the flight
/// itself says (with or without a thrower in view). A line with a `revision` above 0 amends
/// the trajectory of the same `id` (a piece seen again after it was hidden, or its hop after
/// a bounce, joined it) and holds all its points: it replaces the earlier lines of that id.
public struct TrajectoryLine: Codable, Equatable, Sendable {
    public private(set) var type = "trajectory"
    public var id: Int
    public var revision: Int
    public var start: Double
    public var end: Double
    public var ending: String
    public var confidence: Double
    /// Root mean square distance of the points from the fitted path, pixels.
    public var residual: Double
    public var objectSize: Double
    /// y = a·x² + b·x + c (pixels), as Vision gives it; absent for a vertical drop.
    public var equation: [String: Double]?
    /// [time, x, y] of each detected point.
    public var points: [[Double]]
    /// The fitted path at the points' times.
    public var projected: [[Double]]
    /// The speed along the path at the first point, in `speedUnit`; the direction of travel
    /// there, degrees above the horizontal.
    public var startSpeed: Double
    public var launchAngle: Double
    /// "m/s" with a scale (`--scale`, or `--height` with a person in view), else "px/s".
    public var speedUnit: String
    /// From the first point to the first bounce or the last point, seconds.
    public var flightTime: Double
    /// [time, x, y] of the highest point, when it was passed while followed.
    public var apex: [Double]?
    /// [time, x, y] of each bounce the trajectory went on after.
    public var bounces: [[Double]]

    public init(id: Int, revision: Int, start: Double, end: Double, ending: String, confidence: Double, residual: Double,
                objectSize: Double, equation: [String: Double]?, points: [[Double]], projected: [[Double]], startSpeed: Double,
                launchAngle: Double, speedUnit: String, flightTime: Double, apex: [Double]?, bounces: [[Double]]) {
        self.id = id; self.revision = revision; self.start = start; self.end = end; self.ending = ending; self.confidence = confidence
        self.residual = residual; self.objectSize = objectSize; self.equation = equation; self.points = points; self.projected = projected
        self.startSpeed = startSpeed; self.launchAngle = launchAngle; self.speedUnit = speedUnit; self.flightTime = flightTime
        self.apex = apex; self.bounces = bounces
    }

    /// "trajectory 3: 1.20 – 2.05 s, 26 points, 1 bounce, left the frame; 9.1 m/s at 32°" (", amended" after a revision)
    public var text: String {
        var s = String(format: "trajectory %d: %.2f – %.2f s, %d points, ", id, start, end, points.count)
        if !bounces.isEmpty { s += "\(bounces.count) bounce\(bounces.count == 1 ? "" : "s"), " }
        s += ending.replacingOccurrences(of: "_", with: " ")
        s += String(format: "; %.1f %@ at %.0f°", startSpeed, speedUnit, launchAngle)
        if revision > 0 { s += ", amended" }
        return s
    }
}

/// A throw: who threw, the release, the angles and the speed.
public struct ThrowLine: Codable, Equatable, Sendable {
    public private(set) var type = "throw"
    public var person: Int
    public var trajectory: Int
    public var release: Double
    public var releaseX: Double, releaseY: Double
    public var throwType: String?
    public var typeConfidence: Double?
    public var arm: String
    public var releaseAngle: Double?
    public var launchAngle: Double
    public var speed: Double
    public var speedUnit: String
    public var hit: Bool?

    public init(person: Int, trajectory: Int, release: Double, releaseX: Double, releaseY: Double, throwType: String?,
                typeConfidence: Double?, arm: String, releaseAngle: Double?, launchAngle: Double, speed: Double,
                speedUnit: String, hit: Bool?) {
        self.person = person; self.trajectory = trajectory; self.release = release; self.releaseX = releaseX; self.releaseY = releaseY
        self.throwType = throwType; self.typeConfidence = typeConfidence; self.arm = arm; self.releaseAngle = releaseAngle
        self.launchAngle = launchAngle; self.speed = speed; self.speedUnit = speedUnit; self.hit = hit
    }

    /// "#1 throw: overhand, 7.9 m/s, 31° (right forearm), hit"
    public var text: String {
        var s = "#\(person) throw: \(throwType ?? "?"), " + String(format: "%.1f %@", speed, speedUnit)
        s += releaseAngle.map { String(format: ", %.0f° (%@ forearm)", $0, arm) } ?? ", \(arm) arm"
        s += String(format: ", launched at %.0f°", launchAngle)
        if let hit { s += hit ? ", hit" : ", miss" }
        return s
    }
}

/// An epoch of `train --json`: the run's record of it (`EpochRecord`, as metrics.json keeps
/// it), of how many, and whether it is the model so far, in one flat object.
public struct EpochLine: Codable, Equatable, Sendable {
    public private(set) var type = "epoch"
    public var record: EpochRecord
    /// Of how many.
    public var epochs: Int
    public var best: Bool

    public init(_ record: EpochRecord, epochs: Int, best: Bool) {
        self.record = record; self.epochs = epochs; self.best = best
    }

    private enum CodingKeys: String, CodingKey { case type, epochs, best }

    public init(from decoder: Decoder) throws {
        record = try EpochRecord(from: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = try c.decode(String.self, forKey: .type)
        epochs = try c.decode(Int.self, forKey: .epochs)
        best = try c.decode(Bool.self, forKey: .best)
    }

    public func encode(to encoder: Encoder) throws {
        try record.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(type, forKey: .type)
        try c.encode(epochs, forKey: .epochs)
        try c.encode(best, forKey: .best)
    }
}
