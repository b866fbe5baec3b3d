import Classifier
import Foundation
import Media
import Movement
import Pose
import Trajectories

/// The share of annotated time on which a timeline agrees with an annotation file, leaving
/// out `margin` seconds on each side of every change of annotated label (where a 1-second
/// window cannot be right yet) and the time outside every annotated range.
public enum TimelineAgreement {
    public static func compute(_ timeline: [TimelineRange], annotations: [(start: Double, end: Double, label: String)],
                               margin: Double = 1, step: Double = 0.05) -> (agreement: Double, seconds: Double) {
        let sorted = annotations.sorted { $0.start < $1.start }
        var changes: [Double] = []
        for (a, b) in zip(sorted, sorted.dropFirst()) where a.label != b.label { changes.append(b.start) }
        var counted = 0, agreed = 0
        for a in sorted {
            var t = a.start + step / 2
            while t < a.end {
                defer { t += step }
                if changes.contains(where: { abs($0 - t) < margin }) { continue }
                counted += 1
                if let r = timeline.first(where: { $0.start <= t && t < $0.end }), r.label == a.label { agreed += 1 }
            }
        }
        return (counted > 0 ? Double(agreed) / Double(counted) : 0, Double(counted) * step)
    }
}

/// How one person's occurrences match an annotation file's segments: the same number, the
/// same labels in order, and how far each boundary (every start and end) lies from its
/// annotated one.
public struct OccurrenceMatch: Codable, Equatable, Sendable {
    public var occurrences: Int
    public var segments: Int
    /// Whether the labels agree one to one, in order (only when the counts are equal).
    public var sameLabels: Bool
    /// The largest distance of a boundary from its annotated one, seconds (only when the
    /// counts are equal).
    public var maxBoundaryError: Double?
    public var meanBoundaryError: Double?

    public static func compute(_ occurrences: [Occurrence], annotations: [(start: Double, end: Double, label: String)]) -> OccurrenceMatch {
        let a = annotations.sorted { $0.start < $1.start }, o = occurrences.sorted { $0.start < $1.start }
        var match = OccurrenceMatch(occurrences: o.count, segments: a.count, sameLabels: false)
        guard o.count == a.count, !a.isEmpty else { return match }
        match.sameLabels = zip(o, a).allSatisfy { $0.label == $1.label }
        let errors = zip(o, a).flatMap { [abs($0.start - $1.start), abs($0.end - $1.end)] }
        match.maxBoundaryError = errors.max()
        match.meanBoundaryError = errors.reduce(0, +) / Double(errors.count)
        return match
    }
}

/// `poseact annotate`: a recorded video through the pose pipeline and the coach, frame by
/// frame at the model's rate, with the overlay written to a video and everything reported kept.
public final class Annotator {
    public let pipeline: PosePipeline
    public let coach: PeopleCoach
    /// Trajectories and throws (`--trajectories`).
    public var throwCoach: ThrowCoach?

    public struct Result {
        public var predictions: [Prediction]
        /// Seconds per state, everyone's summed.
        public var summary: ActionSummary
        public var frames: Int
        public var duration: Double
        /// The label ranges of the prominent person (whoever it is at the time).
        public var timeline: [TimelineRange]
        /// Everyone who was the prominent person at some time.
        public var prominent: Set<Int>
        public var occurrences: [OccurrenceReport]
        public var repetitions: [RepetitionReport]
        public var people: [PersonSummary]
        public var trajectories: [Trajectory] = []
        public var throwsMade: [ThrowReport] = []
        /// Per thrower.
        public var throwers: [ThrowTally] = []
    }

    public init(pipeline: PosePipeline, coach: PeopleCoach) {
        self.pipeline = pipeline
        self.coach = coach
    }

    /// `progress(frame, frames?)` after each frame.
    public func run(input: String, output: String?, progress: ((Int, Int?) -> Void)? = nil) throws -> Result {
        let fps = coach.spec.fps
        let reader = try VideoReader(input, options: ReaderOptions(targetFPS: fps))
        defer { reader.close() }
        let info = reader.info
        // VideoWriter writes to a temporary file and renames it when finished.
        let writer = try output.map { try VideoWriter(path: $0, width: info.width, height: info.height, fps: fps) }
        var predictions: [Prediction] = [], occurrences: [OccurrenceReport] = [], repetitions: [RepetitionReport] = []
        func take(_ events: [CoachEvent]) {
            for e in events {
                switch e {
                case .prediction(let p): predictions.append(p)
                case .occurrence(let o): occurrences.append(o)
                case .repetition(let r): repetitions.append(r)
                case .angles: break
                }
            }
        }
        var n = 0
        var prominentAt: [Int?] = []
        var trajectories: [Trajectory] = [], made: [ThrowReport] = []
        let total = info.duration.map { Int($0 * fps) }
        var loop = FrameLoop(pipeline: pipeline, coach: coach, drawOverlay: writer != nil)
        loop.throwCoach = throwCoach
        // Frame i covers [i/fps, (i+1)/fps): it is pushed at the end of its time.
        let ending = try loop.run(reader, time: { Double($0.index + 1) / fps }) { step in
                take(step.events)
                trajectories += step.trajectories
                made += step.throwsMade
                prominentAt.append(step.persons.first(where: \.isProminent)?.id)
                if let image = step.overlay { try writer?.write(image) }
                n += 1
                progress?(n, total)
                return true
            }
        try writer?.finish()
        // An amended trajectory (or throw) replaces what was reported of it before.
        trajectories = Trajectory.latest(trajectories + ending.trajectories)
        made = ThrowReport.latest(made + ending.throwsMade)
        let duration = Double(n) / fps
        take(coach.finish(at: duration))
        let people = coach.summaries
        let window = Double(coach.spec.window) / fps
        // The timeline follows the prominent person: their predictions, and "no person" while there is none.
        let theirs = predictions.filter { p in
            let id = p.frame < prominentAt.count ? prominentAt[p.frame] : nil
            if case .noPerson = p.state { return id == nil || id == p.personID }
            return id == p.personID
        }
        return Result(predictions: predictions, summary: .total(people.map(\.seconds)), frames: n, duration: duration,
                      timeline: TimelineRange.ranges(theirs, end: duration, shift: -window / 2,
                                                     start: theirs.first.map { $0.time - window }),
                      prominent: Set(prominentAt.compactMap { $0 }),
                      occurrences: occurrences.sorted { ($0.occurrence.start, $0.person) < ($1.occurrence.start, $1.person) },
                      repetitions: repetitions, people: people, trajectories: trajectories, throwsMade: made,
                      throwers: (throwCoach?.tallies.values).map { $0.sorted { $0.person < $1.person } } ?? [])
    }
}
