import Foundation
import Live
import OutputLines
import Trajectories

// What `live` and `annotate` print about occurrences, repetitions, angles and people: the
// shared line types (OutputLines) made from the pipeline's reports, each number rounded to
// what it means.

extension OccurrenceLine {
    init(_ r: OccurrenceReport) {
        self.init(person: r.person, label: r.occurrence.label, start: round3(r.occurrence.start), end: round3(r.occurrence.end),
                  peakConfidence: round3(r.occurrence.peakConfidence), meanConfidence: round3(r.occurrence.meanConfidence),
                  repetitions: r.repetitions)
    }
}

extension RepetitionLine {
    init(_ r: RepetitionReport) {
        self.init(person: r.person, index: r.repetition.index, label: r.label, start: round3(r.repetition.start),
                  end: round3(r.repetition.end), duration: round3(r.repetition.duration), turn: round3(r.repetition.turn),
                  angles: r.angles.mapValues { Angle(min: $0.minimum, max: $0.maximum, atTurn: $0.atTurn) })
    }
}

extension AnglesLine {
    /// Degrees to one decimal; a joint not seen is null.
    init(person: Int, time: Double, names: [String], values: [Float]) {
        var angles: [String: Double?] = [:]
        for (n, v) in zip(names, values) { angles[n] = v.isFinite ? (Double(v) * 10).rounded() / 10 : nil }
        self.init(person: person, time: round3(time), angles: angles)
    }
}

extension PersonLine {
    init(_ s: PersonSummary) {
        self.init(person: s.person, seconds: s.seconds.seconds.mapValues(round3), repetitions: s.repetitions,
                  occurrences: s.occurrences.map(OccurrenceLine.init))
    }
}

extension TrajectoryLine {
    init(_ t: Trajectory) {
        let point = { (p: TrajectoryPoint) in [round3(p.time), round3(Double(p.x)), round3(Double(p.y))] }
        let scale = t.metresPerPixel ?? 1
        self.init(id: t.id, revision: t.revision, start: round3(t.start), end: round3(t.end), ending: t.ending.rawValue,
                  confidence: round3(t.confidence), residual: round3(t.residual), objectSize: round3(t.objectSize),
                  equation: t.equation.map { ["a": $0.a, "b": $0.b, "c": $0.c] },
                  points: t.points.map(point), projected: t.projectedPoints.map(point),
                  startSpeed: round3(t.startSpeed * scale), launchAngle: (t.launchAngle * 10).rounded() / 10,
                  speedUnit: t.metresPerPixel == nil ? "px/s" : "m/s", flightTime: round3(t.flightTime),
                  apex: t.apex.map(point), bounces: t.bounces.map(point))
    }
}

extension ThrowLine {
    init(_ r: ThrowReport) {
        self.init(person: r.person, trajectory: r.trajectory.id, release: round3(r.releaseTime),
                  releaseX: round3(r.releasePoint.x), releaseY: round3(r.releasePoint.y), throwType: r.type,
                  typeConfidence: r.typeConfidence.map { round3(Double($0)) }, arm: r.arm,
                  releaseAngle: r.releaseAngle.map { ($0 * 10).rounded() / 10 }, launchAngle: (r.launchAngle * 10).rounded() / 10,
                  speed: round3(r.speed), speedUnit: r.speedUnit, hit: r.hit)
    }
}

extension ThrowerLine {
    init(_ t: ThrowTally, hasTarget: Bool) {
        self.init(person: t.person, throwCount: t.count, perType: t.throwsPerType, meanSpeed: t.meanSpeed.map(round3),
                  bestSpeed: t.bestSpeed.map(round3), speedUnit: t.speedUnit, meanAngle: t.meanAngle.map { ($0 * 10).rounded() / 10 },
                  hitRate: hasTarget ? t.hitRate.map(round3) : nil)
    }
}
