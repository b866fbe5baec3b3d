import Basics
import Foundation
import Images
import Live
import Media
import PageServing

/// What the page says of a person (`state` in the JSON): "starting" before the first
/// prediction, "no person", "low confidence", or the action's label.
public enum PageState: RawRepresentable, Codable, Equatable, Sendable {
    case starting
    case noPerson
    case lowConfidence
    case action(String)

    public init(_ state: ActionState?) {
        switch state {
        case nil: self = .starting
        case .noPerson?: self = .noPerson
        case .lowConfidence?: self = .lowConfidence
        case .action(let label, _)?: self = .action(label)
        }
    }

    /// (A label spelled as one of the other states reads back as that state: the JSON has
    /// always been one string.)
    public init(rawValue: String) {
        self = [.starting, .noPerson, .lowConfidence].first { $0.rawValue == rawValue } ?? .action(rawValue)
    }

    public var rawValue: String {
        switch self {
        case .starting: return "starting"
        case .noPerson: return "no person"
        case .lowConfidence: return "low confidence"
        case .action(let label): return label
        }
    }
}

/// What a viewer shows beside the picture: the prominent person's state, everyone's state
/// and repetitions, the rates, the seconds per action so far, and a message when the input
/// has stopped.
public struct BoardState: Codable, Equatable, Sendable {
    public struct ActionTime: Codable, Equatable, Sendable {
        public var label: String
        public var seconds: Double
    }

    public var model = ""
    public var state = PageState.starting
    /// The most likely action (also under "low confidence"); nil before the first prediction
    /// and when there is no person.
    public var label: String?
    public var confidence: Double?
    public var person: Int?
    /// Input time of the newest frame, seconds.
    public var time = 0.0
    public var fps = 0.0
    public var dropped = 0
    public var summary: [ActionTime] = []
    /// Everyone followed: their state, repetitions and angles.
    public var people: [PersonState] = []

    public struct PersonState: Codable, Equatable, Sendable {
        public var id: Int
        public var state: PageState
        public var label: String?
        public var confidence: Double?
        /// The occurrence under way.
        public var occurrence: String?
        public var repetitions: Int
        /// Degrees, one decimal, by name (absent when a joint is missing).
        public var angles: [String: Double]

        init(_ v: PersonView, angleNames: [String]) {
            id = v.id
            state = PageState(v.state)
            switch v.state {
            case .lowConfidence(let l, let c)?, .action(let l, let c)?: label = l; confidence = (Double(c) * 1000).rounded() / 1000
            default: break
            }
            occurrence = v.occurrence
            repetitions = v.repetitions
            var a: [String: Double] = [:]
            for (n, x) in zip(angleNames, v.angles) where x.isFinite { a[n] = (Double(x) * 10).rounded() / 10 }
            angles = a
        }
    }
    /// Set when the input has ended or stopped ("the input stopped: …").
    public var message: String?
    /// Everyone who threw (`--trajectories`): throws, the last one's type, speed and angle, hits.
    public var throwers: [Thrower] = []
    /// Why no trajectory is looked for now ("camera moving"), if so.
    public var scene: String?

    public struct Thrower: Codable, Equatable, Sendable {
        public var id: Int
        public var throwCount: Int
        public var lastType: String?
        /// The last throw's release speed, in `speedUnit`, and release angle (degrees).
        public var lastSpeed: Double?
        public var speedUnit: String
        public var lastAngle: Double?
        public var bestSpeed: Double?
        /// Hits in the target; nil without a target.
        public var hits: Int?

        enum CodingKeys: String, CodingKey {
            case id, lastType, lastSpeed, speedUnit, lastAngle
            case throwCount = "throws", bestSpeed, hits
        }

        init(_ t: ThrowTally, hasTarget: Bool) {
            func r1(_ x: Double?) -> Double? { x.map { ($0 * 10).rounded() / 10 } }
            id = t.person; throwCount = t.count; lastType = t.lastType; lastSpeed = r1(t.lastSpeed); speedUnit = t.speedUnit
            lastAngle = r1(t.lastAngle); bestSpeed = r1(t.bestSpeed); hits = hasTarget ? t.hits : nil
        }
    }

    static func rows(_ summary: ActionSummary) -> [ActionTime] {
        summary.longestFirst.map { ActionTime(label: $0.label, seconds: ($0.seconds * 10).rounded() / 10) }
    }
}

/// The newest overlay frame and state of a live run, shared between the live loop (which
/// writes them) and the viewers (the browser page, which read them from other threads).
/// Every change bumps `sequence`; a viewer asks for what is newer than what it has.
public final class LiveBoard: PageFeed, @unchecked Sendable {
    private let lock = NSLock()
    private var sequence: Int { signal.sequence }
    private var image: RGBImage?
    private var imageSequence = 0
    private var state = BoardState()
    /// Per person (each a stream of predictions of its own).
    /// The prominent person's id, from the last view of everyone.
    private var prominent: Int?
    private var tallies: [Int: ThrowTally] = [:]
    // JPEG encoding happens outside `lock` (the live loop must not wait on it), under its own.
    private let encoderLock = NSLock()
    private var encoded: (sequence: Int, jpeg: Data)?
    private let encoder = JPEGEncoder()
    /// Viewers waiting for something newer (`nextUpdate`), resumed by every change.
    private let signal = ChangeSignal()

    public init(model: String) {
        state.model = model
    }

    /// Takes a live event: frames replace the picture, predictions the state.
    public func handle(_ event: LiveEvent) {
        lock.lock()
        defer { lock.unlock() }
        switch event {
        case .frame(let image, let time):
            self.image = image
            imageSequence += 1
            state.time = time
        case .prediction(let p, let fps, let dropped):
            state.fps = (fps * 10).rounded() / 10
            state.dropped = dropped
            // The headline follows the prominent person (anyone's, before one is known).
            if let prominent, p.personID != prominent { break }
            state.state = PageState(p.state)
            switch p.state {
            case .noPerson: state.label = nil; state.confidence = nil
            case .lowConfidence(let label, let c), .action(let label, let c): state.label = label; state.confidence = Double(c)
            }
            state.person = p.personID
        case .people(let views, let names, let seconds):
            prominent = views.first(where: \.isProminent)?.id ?? prominent
            let people = views.map { BoardState.PersonState($0, angleNames: names) }, summary = BoardState.rows(seconds)
            guard people != state.people || summary != state.summary else { return }
            state.people = people
            state.summary = summary
        case .throwMade(let t):
            tallies[t.person, default: ThrowTally(person: t.person)].add(t)
            state.throwers = tallies.values.sorted { $0.person < $1.person }.map { BoardState.Thrower($0, hasTarget: t.hit != nil) }
        case .scene(let stable, _):
            state.scene = stable ? nil : "camera moving: no trajectories are looked for"
        case .stateChange, .occurrence, .repetition, .angles, .trajectory:
            return
        }
        changed()
    }

    /// A new `sequence` (under `lock`): the waiting viewers go on.
    private func changed() { signal.changed() }

    /// The end of the input: the final seconds per action and why it ended.
    public func finish(summary final: ActionSummary, message: String) {
        lock.lock()
        defer { lock.unlock() }
        state.summary = BoardState.rows(final)
        state.message = message
        changed()
    }

    public var current: BoardState { lock.lock(); defer { lock.unlock() }; return state }

    /// The newest picture as JPEG (encoded once per change, whoever asks first), or nil
    /// before the first frame.
    public func jpeg() -> Data? {
        lock.lock()
        let picture = image.map { ($0, imageSequence) }
        lock.unlock()
        return picture.flatMap { encode($0.0, sequence: $0.1) }
    }

    /// One message for the page, when something is newer than `after`: a 4-byte big-endian
    /// length, the state as JSON, then the JPEG picture (absent before the first frame).
    public func update(after seen: Int) -> (sequence: Int, payload: Data)? {
        lock.lock()
        guard sequence > seen else { lock.unlock(); return nil }
        let stateJSON = Data(JSONLines.encode(state).utf8)
        let current = sequence, picture = image.map { ($0, imageSequence) }
        lock.unlock()
        var payload = Data()
        let n = UInt32(stateJSON.count)
        payload.append(contentsOf: [UInt8(n >> 24), UInt8((n >> 16) & 255), UInt8((n >> 8) & 255), UInt8(n & 255)])
        payload.append(stateJSON)
        if let picture, let jpeg = encode(picture.0, sequence: picture.1) { payload.append(jpeg) }
        return (current, payload)
    }

    /// The page's updates are binary: a length, the state JSON, a JPEG.
    public var sendsText: Bool { false }

    /// The next update newer than `seen`, waiting for it without polling; nil once the task
    /// is cancelled (the page's connection closed).
    public func nextUpdate(after seen: Int) async -> (sequence: Int, payload: Data)? {
        while !Task.isCancelled {
            if let update = update(after: seen) { return update }
            await signal.wait(after: seen)
        }
        return nil
    }

    public func stateJSON() -> Data {
        lock.lock()
        defer { lock.unlock() }
        return Data(JSONLines.encode(state).utf8)
    }

    private func encode(_ image: RGBImage, sequence: Int) -> Data? {
        encoderLock.lock()
        defer { encoderLock.unlock() }
        if let encoded, encoded.sequence == sequence { return encoded.jpeg }
        guard let jpeg = try? encoder.encode(image) else { return nil }
        encoded = (sequence, jpeg)
        return jpeg
    }
}
