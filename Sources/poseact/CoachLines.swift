import Foundation
import Live
import Movement
import Trajectories

// What `live` and `annotate` print about occurrences, repetitions, angles and people, as
// JSON Lines (`--json`) and as text.

struct OccurrenceLine: Encodable {
    let type = "occurrence"
    var person: Int
    var label: String
    var start: Double
    var end: Double
    var peakConfidence: Double
    var meanConfidence: Double
    var repetitions: Int

    init(_ r: OccurrenceReport) {
        person = r.person; label = r.occurrence.label
        start = round3(r.occurrence.start); end = round3(r.occurrence.end)
        peakConfidence = round3(r.occurrence.peakConfidence); meanConfidence = round3(r.occurrence.meanConfidence)
        repetitions = r.repetitions
    }

    /// "#1 correct  3.90 – 7.10 s (peak 98 %, mean 91 %), 4 repetitions"
    var text: String {
        String(format: "#%d %@  %.2f – %.2f s (peak %.0f %%, mean %.0f %%), %d repetition%@", person, label, start, end,
               peakConfidence * 100, meanConfidence * 100, repetitions, repetitions == 1 ? "" : "s")
    }

    static let csvHeader = ["person", "label", "start", "end", "peak_confidence", "mean_confidence", "repetitions"]
    var csvFields: [String] {
        [String(person), label] + [start, end, peakConfidence, meanConfidence].map { String(format: "%.3f", $0) } + [String(repetitions)]
    }
}

struct RepetitionLine: Encodable {
    let type = "repetition"
    var person: Int
    /// Its number among the person's repetitions.
    var index: Int
    /// The occurrence it falls in, when one was under way.
    var label: String?
    var start: Double
    var end: Double
    /// Seconds it took.
    var duration: Double
    /// When it was farthest from rest (a push-up's bottom).
    var turn: Double
    var angles: [String: AngleRange]

    init(_ r: RepetitionReport) {
        person = r.person; index = r.repetition.index; label = r.label
        start = round3(r.repetition.start); end = round3(r.repetition.end); duration = round3(r.repetition.duration)
        turn = round3(r.repetition.turn); angles = r.angles
    }

    /// "#1 repetition 3: 1.80 s, ends 7.20 s; body_line 160–178 (at the turn 171)"
    func text(order: [String]) -> String {
        var s = String(format: "#%d repetition %d: %.2f s, ends %.2f s", person, index, duration, end)
        let parts = order.compactMap { name in
            angles[name].map { a in
                String(format: "%@ %.0f–%.0f°", name, a.minimum, a.maximum) + (a.atTurn.map { String(format: " (at the turn %.0f°)", $0) } ?? "")
            }
        }
        if !parts.isEmpty { s += "; " + parts.joined(separator: ", ") }
        return s
    }
}

struct AnglesLine: Encodable {
    let type = "angles"
    var person: Int
    var time: Double
    /// Degrees, one decimal; null where a joint is missing.
    var angles: [String: Double?]

    init(person: Int, time: Double, names: [String], values: [Float]) {
        self.person = person; self.time = round3(time)
        var out: [String: Double?] = [:]
        for (n, v) in zip(names, values) { out[n] = v.isFinite ? (Double(v) * 10).rounded() / 10 : nil }
        angles = out
    }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(type, forKey: .type)
        try c.encode(person, forKey: .person)
        try c.encode(time, forKey: .time)
        var nested = c.nestedContainer(keyedBy: AnyKey.self, forKey: .angles)
        for (k, v) in angles.sorted(by: { $0.key < $1.key }) {
            if let v { try nested.encode(v, forKey: AnyKey(k)) } else { try nested.encodeNil(forKey: AnyKey(k)) }
        }
    }
    enum CodingKeys: String, CodingKey { case type, person, time, angles }
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ s: String) { stringValue = s }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

/// One person's part of a summary.
struct PersonLine: Encodable {
    var person: Int
    /// Seconds per state.
    var seconds: [String: Double]
    var repetitions: Int
    var occurrences: [OccurrenceLine]

    init(_ s: PersonSummary) {
        person = s.person
        seconds = s.seconds.seconds.mapValues(round3)
        repetitions = s.repetitions
        occurrences = s.occurrences.map(OccurrenceLine.init)
    }

    /// "#1: 12 repetitions; correct 9.3 s, no person 1.2 s" and one line per occurrence.
    var lines: [String] {
        var head = "#\(person): \(repetitions) repetition\(repetitions == 1 ? "" : "s")"
        let states = s(seconds)
        if !states.isEmpty { head += "; " + states }
        return [head] + occurrences.map { "    " + $0.text.replacingOccurrences(of: "#\(person) ", with: "") }
    }

    private func s(_ seconds: [String: Double]) -> String {
        seconds.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { String(format: "%@ %.1f s", $0.key, $0.value) }
            .joined(separator: ", ")
    }
}

struct TrajectoryLine: Encodable {
    let type = "trajectory"
    var id: Int
    var start: Double
    var end: Double
    var ending: String
    var confidence: Double
    /// Root mean square distance of the points from the fitted path, pixels.
    var residual: Double
    var objectSize: Double
    /// y = a·x² + b·x + c (pixels), as Vision gives it; absent for a vertical drop.
    var equation: [String: Double]?
    /// [time, x, y] of each detected point.
    var points: [[Double]]
    /// The fitted path at the points' times.
    var projected: [[Double]]

    init(_ t: Trajectory) {
        id = t.id; start = round3(t.start); end = round3(t.end); ending = t.ending.rawValue
        confidence = round3(t.confidence); residual = round3(t.residual); objectSize = round3(t.objectSize)
        equation = t.equation.map { ["a": $0.a, "b": $0.b, "c": $0.c] }
        points = t.points.map { [round3($0.time), round3(Double($0.x)), round3(Double($0.y))] }
        projected = t.projectedPoints.map { [round3($0.time), round3(Double($0.x)), round3(Double($0.y))] }
    }

    /// "trajectory 3: 1.20 – 2.05 s, 26 points, left the frame"
    var text: String {
        String(format: "trajectory %d: %.2f – %.2f s, %d points, %@", id, start, end, points.count, ending.replacingOccurrences(of: "_", with: " "))
    }
}

struct ThrowLine: Encodable {
    let type = "throw"
    var person: Int
    var trajectory: Int
    var release: Double
    var releaseX: Double, releaseY: Double
    var throwType: String?
    var typeConfidence: Double?
    var arm: String
    var releaseAngle: Double?
    var launchAngle: Double
    var speed: Double
    var speedUnit: String
    var hit: Bool?

    init(_ r: ThrowReport) {
        person = r.person; trajectory = r.trajectory.id; release = round3(r.releaseTime)
        releaseX = round3(r.releasePoint.x); releaseY = round3(r.releasePoint.y)
        throwType = r.type; typeConfidence = r.typeConfidence.map { round3(Double($0)) }; arm = r.arm
        releaseAngle = r.releaseAngle.map { ($0 * 10).rounded() / 10 }; launchAngle = (r.launchAngle * 10).rounded() / 10
        speed = round3(r.speed); speedUnit = r.speedUnit; hit = r.hit
    }

    /// "#1 throw: overhand, 7.9 m/s, 31° (right forearm), hit"
    var text: String {
        var s = "#\(person) throw: \(throwType ?? "?"), " + String(format: "%.1f %@", speed, speedUnit)
        s += releaseAngle.map { String(format: ", %.0f° (%@ forearm)", $0, arm) } ?? ", \(arm) arm"
        s += String(format: ", launched at %.0f°", launchAngle)
        if let hit { s += hit ? ", hit" : ", miss" }
        return s
    }
}

/// One thrower's part of a summary: throws per type, mean and best speed, mean angle, hit rate.
struct ThrowerLine: Encodable {
    var person: Int
    var throwCount: Int
    var perType: [String: Int]
    var meanSpeed: Double?
    var bestSpeed: Double?
    var speedUnit: String
    var meanAngle: Double?
    var hitRate: Double?

    init(_ t: ThrowTally, hasTarget: Bool) {
        person = t.person; throwCount = t.count; perType = t.throwsPerType
        meanSpeed = t.meanSpeed.map(round3); bestSpeed = t.bestSpeed.map(round3); speedUnit = t.speedUnit
        meanAngle = t.meanAngle.map { ($0 * 10).rounded() / 10 }; hitRate = hasTarget ? t.hitRate.map(round3) : nil
    }

    enum CodingKeys: String, CodingKey {
        case person, throwCount = "throws", perType, meanSpeed, bestSpeed
        case speedUnit, meanAngle, hitRate
    }

    /// "#1: 4 throws (overhand 3, underhand 1); speed mean 7.2, best 8.1 m/s; angle mean 28°; 3 of 4 hits"
    var text: String {
        var s = "#\(person): \(throwCount) throw\(throwCount == 1 ? "" : "s")"
        if !perType.isEmpty { s += " (" + perType.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")" }
        if let m = meanSpeed, let b = bestSpeed { s += String(format: "; speed mean %.1f, best %.1f %@", m, b, speedUnit) }
        if let a = meanAngle { s += String(format: "; angle mean %.0f°", a) }
        if let h = hitRate { s += String(format: "; %.0f %% hits", h * 100) }
        return s
    }
}
