import Foundation

// What `live --json` prints last, and what `annotate --json` gives per person and thrower.

/// One person's part of a summary: seconds per state, repetitions, occurrences.
public struct PersonLine: Codable, Equatable, Sendable {
    public var person: Int
    /// Seconds per state.
    public var seconds: [String: Double]
    public var repetitions: Int
    public var occurrences: [OccurrenceLine]

    public init(person: Int, seconds: [String: Double], repetitions: Int, occurrences: [OccurrenceLine]) {
        self.person = person; self.seconds = seconds; self.repetitions = repetitions; self.occurrences = occurrences
    }

    /// "#1: 12 repetitions; correct 9.3 s, no person 1.2 s" and one line per occurrence.
    public var lines: [String] {
        var head = "#\(person): \(repetitions) repetition\(repetitions == 1 ? "" : "s")"
        let states = seconds.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { String(format: "%@ %.1f s", $0.key, $0.value) }
        if !states.isEmpty { head += "; " + states.joined(separator: ", ") }
        return [head] + occurrences.map { "    " + $0.text.replacingOccurrences(of: "#\(person) ", with: "") }
    }
}

/// One thrower's part of a summary: throws per type, mean and best speed, mean angle, hit rate.
public struct ThrowerLine: Codable, Equatable, Sendable {
    public var person: Int
    public var throwCount: Int
    public var perType: [String: Int]
    public var meanSpeed: Double?
    public var bestSpeed: Double?
    public var speedUnit: String
    public var meanAngle: Double?
    public var hitRate: Double?

    enum CodingKeys: String, CodingKey {
        case person, throwCount = "throws", perType, meanSpeed, bestSpeed, speedUnit, meanAngle, hitRate
    }

    public init(person: Int, throwCount: Int, perType: [String: Int], meanSpeed: Double?, bestSpeed: Double?, speedUnit: String,
                meanAngle: Double?, hitRate: Double?) {
        self.person = person; self.throwCount = throwCount; self.perType = perType; self.meanSpeed = meanSpeed
        self.bestSpeed = bestSpeed; self.speedUnit = speedUnit; self.meanAngle = meanAngle; self.hitRate = hitRate
    }

    /// "#1: 4 throws (overhand 3, underhand 1); speed mean 7.2, best 8.1 m/s; angle mean 28°; 3 of 4 hits"
    public var text: String {
        var s = "#\(person): \(throwCount) throw\(throwCount == 1 ? "" : "s")"
        if !perType.isEmpty { s += " (" + perType.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")" }
        if let m = meanSpeed, let b = bestSpeed { s += String(format: "; speed mean %.1f, best %.1f %@", m, b, speedUnit) }
        if let a = meanAngle { s += String(format: "; angle mean %.0f°", a) }
        if let h = hitRate { s += String(format: "; %.0f %% hits", h * 100) }
        return s
    }
}

/// `live --json`'s last line: {"type": "summary", "frames", "fps", …, "people": […]}.
public struct LiveSummaryLine: Codable, Equatable, Sendable {
    public private(set) var type = "summary"
    public var frames: Int
    public var droppedFrames: Int
    public var fps: Double
    public var latencyMsMedian: Double
    public var latencyMsP95: Double
    /// Capture of a window's last frame to its prediction.
    public var predictionLatencyMsP95: Double
    /// Seconds per state, everyone's summed.
    public var seconds: [String: Double]
    /// Per person: seconds per state, repetitions, occurrences.
    public var people: [PersonLine]
    /// With --trajectories: trajectories found, the detector's cost per frame (on its own
    /// thread), frames it had no room for, and per thrower their throws.
    public var trajectories: Int?
    public var trajectoryMsMedian: Double?
    public var trajectoryMsP95: Double?
    public var trajectoryFramesDropped: Int?
    public var throwers: [ThrowerLine]?

    public init(frames: Int, droppedFrames: Int, fps: Double, latencyMsMedian: Double, latencyMsP95: Double,
                predictionLatencyMsP95: Double, seconds: [String: Double], people: [PersonLine], trajectories: Int? = nil,
                trajectoryMsMedian: Double? = nil, trajectoryMsP95: Double? = nil, trajectoryFramesDropped: Int? = nil,
                throwers: [ThrowerLine]? = nil) {
        self.frames = frames; self.droppedFrames = droppedFrames; self.fps = fps; self.latencyMsMedian = latencyMsMedian
        self.latencyMsP95 = latencyMsP95; self.predictionLatencyMsP95 = predictionLatencyMsP95; self.seconds = seconds
        self.people = people; self.trajectories = trajectories; self.trajectoryMsMedian = trajectoryMsMedian
        self.trajectoryMsP95 = trajectoryMsP95; self.trajectoryFramesDropped = trajectoryFramesDropped; self.throwers = throwers
    }
}
