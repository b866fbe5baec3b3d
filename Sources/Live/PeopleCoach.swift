import Classifier
import Foundation
import KeypointWindows
import Movement
import Pose

/// Whom `live` and `annotate` classify.
public enum PeopleChoice: String, Sendable, CaseIterable {
    /// Every tracked person, each with a window of their own.
    case all
    /// Only the prominent person (Apple's sample): one window that follows whoever it is.
    case prominent
}

/// How the coach turns people's poses into actions, occurrences, repetitions and angles.
public struct CoachOptions: Sendable {
    public var people: PeopleChoice = .all
    /// Under this probability a prediction's state is "low confidence".
    public var minConfidence: Float = 0.6
    /// Predictions averaged into each one reported (1: none).
    public var smoothing = 1
    /// The model on a thread of its own per person (live; see `ActionRecognizer`).
    public var modelThread = false
    public var occurrences = OccurrenceRules()
    /// Angles measured on every frame and over every repetition.
    public var angles: [JointAngle] = []

    public init() {}
}

/// One counted repetition of one person, with its angles.
public struct RepetitionReport: Sendable {
    public var person: Int
    public var repetition: RepetitionCounter.Repetition
    /// The occurrence it falls in, when one was open as it was counted.
    public var label: String?
    /// Per angle name: minimum, maximum, range of motion and value at the turn.
    public var angles: [String: AngleRange]
}

/// An occurrence of one person, with the repetitions inside it (their middles).
public struct OccurrenceReport: Sendable {
    public var person: Int
    public var occurrence: Occurrence
    public var repetitions: Int
}

/// What the coach reports, frame by frame.
public enum CoachEvent: Sendable {
    case prediction(Prediction)
    case occurrence(OccurrenceReport)
    case repetition(RepetitionReport)
    /// The angles of one person on one frame (degrees, NaN where a joint is missing).
    case angles(person: Int, time: Double, values: [Float])
}

/// One person as the overlay and the page show them.
public struct PersonView: Sendable, Equatable {
    public var id: Int
    public var state: ActionState?
    /// The occurrence under way (nil: none yet, or a background label).
    public var occurrence: String?
    /// Repetitions in that occurrence (or since the person appeared, without one).
    public var repetitions: Int
    /// The last frame's angles, in `CoachOptions.angles` order.
    public var angles: [Float]
    /// Whether they are the prominent person in the last frame.
    public var isProminent = false

    public init(id: Int, state: ActionState?, occurrence: String?, repetitions: Int, angles: [Float], isProminent: Bool = false) {
        self.id = id; self.state = state; self.occurrence = occurrence; self.repetitions = repetitions
        self.angles = angles; self.isProminent = isProminent
    }
}

/// The end of a run, per person: seconds per state, occurrences, repetitions.
public struct PersonSummary: Sendable {
    public var person: Int
    public var seconds: ActionSummary
    public var occurrences: [OccurrenceReport]
    public var repetitions: Int
}

/// Everyone in view, each followed by their own recognizer (the model's window through the
/// training preprocessing), occurrence tracker, repetition counter and angles: what `live`
/// and `annotate` run on every frame.
///
/// A person is known by the tracker's id (`PersonTracker`): stable while they stay tracked,
/// kept through a few frames unseen, new after that (someone who leaves and comes back is
/// someone new). A person unseen for a window's time and one second more is closed: their
/// last occurrence ends and their summary is kept.
public final class PeopleCoach {
    public let classifier: ActionClassifier
    public let options: CoachOptions
    /// Occurrences are placed where their windows' middles lie (a prediction speaks for the
    /// window behind it): `-window / fps / 2` seconds from the prediction.
    public let occurrenceShift: Double
    private var followed: [Int: Followed] = [:]
    private var order: [Int] = []
    private var closed: [PersonSummary] = []
    /// The closed people's seconds per action, added up.
    private var closedSeconds = ActionSummary()
    /// Whom `.prominent` follows now.
    private var prominentID: Int?
    /// The prominent person of the last frame.
    private var prominentNow: Int?
    private var skippedByClosed = 0
    private var lastTime: Double?
    /// Frames pushed since the last reset (a prediction's `frame` counts from the first).
    fileprivate private(set) var frames = 0

    public init(classifier: ActionClassifier, options: CoachOptions) {
        self.classifier = classifier
        self.options = options
        occurrenceShift = -Double(classifier.spec.window) / classifier.spec.fps / 2
    }

    public var spec: PreprocessingSpec { classifier.spec }

    /// Windows the background models skipped (a newer one was due before they got to it).
    public var skippedWindows: Int { followed.values.reduce(0) { $0 + $1.recognizer.skippedWindows } + skippedByClosed }
    /// Everyone's model runs, milliseconds per window (since the last reset).
    let modelTimes = SharedTimes()

    public func reset() {
        for f in followed.values { _ = f.recognizer.finish() }
        followed = [:]; order = []; closed = []; prominentID = nil; skippedByClosed = 0; lastTime = nil; frames = 0; prominentNow = nil
        modelTimes.reset()
    }
    /// The time of the last frame pushed.
    public var lastFrameTime: Double? { lastTime }

    /// One frame with the people found in it.
    public func push(persons: [Person], width: Int, height: Int, time: Double) -> [CoachEvent] {
        lastTime = time
        defer { frames += 1 }
        prominentNow = persons.first(where: \.isProminent)?.id
        var events: [CoachEvent] = []
        switch options.people {
        case .prominent:
            let person = persons.first(where: \.isProminent) ?? persons.first
            let slot = follow(0)
            if let person, person.id != prominentID {
                // Another person: the counter and the angles start over (the window goes on, as in Apple's sample).
                prominentID = person.id
                slot.restartMovement()
            }
            slot.id = prominentID ?? 0
            events += slot.push(person, width: width, height: height, time: time)
        case .all:
            for person in persons { events += follow(person.id).push(person, width: width, height: height, time: time) }
            let seen = Set(persons.map(\.id))
            for id in order where !seen.contains(id) {
                let f = followed[id]!
                events += f.push(nil, width: width, height: height, time: time)
                if time - f.lastSeen > Double(spec.window) / spec.fps + 1 { events += close(id, at: f.lastSeen) }
            }
        }
        return events
    }

    /// The end of the input at `time`: the background models' last predictions, and every
    /// open occurrence ended.
    public func finish(at time: Double) -> [CoachEvent] {
        var events: [CoachEvent] = []
        for id in order { events += close(id, at: time) }
        return events
    }

    /// Everyone followed now, in the order they appeared.
    public var views: [PersonView] {
        order.compactMap { followed[$0]?.view }.map { v in var v = v; v.isProminent = v.id == prominentNow; return v }
    }
    /// Everyone's seconds per action so far, as `summaries` would total them: kept for those
    /// closed, so that asking every frame costs the people in view, not everyone ever seen.
    public var secondsSoFar: ActionSummary { .total([closedSeconds] + order.compactMap { followed[$0]?.seconds }) }

    /// Everyone's summary so far: those closed, then those followed.
    public var summaries: [PersonSummary] {
        (closed + order.compactMap { followed[$0]?.summary }).sorted { $0.person < $1.person }
    }

    fileprivate var followedCount: Int { followed.count }

    private func follow(_ id: Int) -> Followed {
        if let f = followed[id] { return f }
        let f = Followed(id: id, coach: self)
        followed[id] = f
        order.append(id)
        return f
    }

    private func close(_ id: Int, at time: Double) -> [CoachEvent] {
        guard let f = followed.removeValue(forKey: id) else { return [] }
        order.removeAll { $0 == id }
        let events = f.finish(at: time)
        skippedByClosed += f.recognizer.skippedWindows
        closed.append(f.summary)
        closedSeconds = .total([closedSeconds, f.seconds])
        return events
    }
}

/// One person followed by the coach.
private final class Followed {
    var id: Int
    let recognizer: ActionRecognizer
    let occurrences: OccurrenceTracker
    let counter = RepetitionCounter()
    let angles: [JointAngle]
    let shift: Double
    /// The coach's frame this person's recognizer got first (its frames count from there).
    let firstFrame: Int
    var lastSeen = -Double.infinity
    var state: ActionState?
    var seconds = ActionSummary()
    var ended: [OccurrenceReport] = []
    var repetitions: [RepetitionCounter.Repetition] = []
    var lastAngles: [Float]
    /// Recent frames' angles (per angle) and times, for the repetitions' ranges.
    var angleTimes: [Double] = []
    var angleValues: [[Float]]

    init(id: Int, coach: PeopleCoach) {
        self.id = id
        let o = coach.options
        recognizer = ActionRecognizer(classifier: coach.classifier, minConfidence: o.minConfidence, smoothing: o.smoothing,
                                      background: o.modelThread, modelTimes: coach.modelTimes)
        // Spread over the stride the frames people's models run on (people found together
        // would otherwise all be classified on one frame, which then takes that much longer).
        if o.modelThread { recognizer.phase = coach.followedCount % max(1, coach.spec.stride) }
        occurrences = OccurrenceTracker(labels: coach.classifier.labels, rules: o.occurrences)
        angles = o.angles
        shift = coach.occurrenceShift
        firstFrame = coach.frames
        lastAngles = [Float](repeating: .nan, count: o.angles.count)
        angleValues = [[Float]](repeating: [], count: o.angles.count)
    }

    func restartMovement() {
        counter.reset()
        angleTimes = []
        angleValues = angleValues.map { _ in [] }
    }

    func push(_ person: Person?, width: Int, height: Int, time: Double) -> [CoachEvent] {
        var events: [CoachEvent] = []
        if person != nil { lastSeen = time }
        for p in recognizer.push(person: person, width: width, height: height, time: time).map({ [$0] }) ?? [] {
            events += take(p)
        }
        guard let person else { return events }
        let joints = person.landmarks.flatMap { [$0.x, $0.y] }
        if !angles.isEmpty {
            lastAngles = angles.map { $0.degrees(joints) }
            angleTimes.append(time)
            for k in angles.indices { angleValues[k].append(lastAngles[k]) }
            // Kept for a repetition's span: at most the counter's window, and a little.
            let keep = counter.window + 2
            if let first = angleTimes.firstIndex(where: { $0 >= time - keep }), first > 0 {
                angleTimes.removeFirst(first)
                for k in angles.indices { angleValues[k].removeFirst(first) }
            }
            events.append(.angles(person: id, time: time, values: lastAngles))
        }
        for r in counter.push(joints: joints, time: time) {
            repetitions.append(r)
            var ranges: [String: AngleRange] = [:]
            for (k, a) in angles.enumerated() {
                ranges[a.name] = AngleRange.over(angleValues[k], times: angleTimes, start: r.start, end: r.end, turn: r.turn)
            }
            let open = occurrences.current
            let label = open.flatMap { $0.start <= r.start + r.duration / 2 ? $0.label : nil }
            events.append(.repetition(RepetitionReport(person: id, repetition: r, label: label, angles: ranges)))
        }
        return events
    }

    private func take(_ p: Prediction) -> [CoachEvent] {
        var p = p
        p.personID = p.personID ?? id
        p.frame += firstFrame
        state = p.state
        seconds.add(p)
        var events: [CoachEvent] = [.prediction(p)]
        let probabilities: [Float]? = { if case .noPerson = p.state { return nil }; return p.probabilities }()
        if let o = occurrences.push(time: p.time + shift, probabilities: probabilities) { events.append(.occurrence(report(o))) }
        return events
    }

    func finish(at time: Double) -> [CoachEvent] {
        var events: [CoachEvent] = []
        for p in recognizer.finish() { events += take(p) }
        seconds.finish(at: time)
        if let o = occurrences.finish(at: time) { events.append(.occurrence(report(o))) }
        return events
    }

    private func report(_ o: Occurrence) -> OccurrenceReport {
        let n = repetitions.filter { let mid = $0.end - $0.duration / 2; return mid >= o.start && mid < o.end }.count
        let r = OccurrenceReport(person: id, occurrence: o, repetitions: n)
        ended.append(r)
        return r
    }

    var view: PersonView {
        let since = occurrences.current?.start
        // Repetitions come in time order: those of the occurrence are the last ones (per frame, so not a scan of all).
        let n = since.map { s in repetitions.reversed().prefix { $0.end - $0.duration / 2 >= s }.count } ?? repetitions.count
        return PersonView(id: id, state: state, occurrence: occurrences.current?.label, repetitions: n, angles: lastAngles)
    }

    var summary: PersonSummary {
        PersonSummary(person: id, seconds: seconds, occurrences: ended, repetitions: repetitions.count)
    }
}
