/// One occurrence of an action: a stretch of time one label held, from its start to its end
/// (seconds of the input), with the peak and the mean of that label's probability over the
/// predictions it held on.
public struct Occurrence: Codable, Equatable, Sendable {
    public var label: String
    public var start: Double
    public var end: Double
    public var peakConfidence: Double
    public var meanConfidence: Double
    /// Predictions the occurrence is made of.
    public var predictions: Int

    public var duration: Double { end - start }

    public init(label: String, start: Double, end: Double, peakConfidence: Double, meanConfidence: Double, predictions: Int) {
        self.label = label; self.start = start; self.end = end
        self.peakConfidence = peakConfidence; self.meanConfidence = meanConfidence; self.predictions = predictions
    }
}

/// When a label's predictions make an occurrence.
public struct OccurrenceRules: Sendable, Equatable {
    /// A label starts an occurrence from a prediction where it is the most likely and its
    /// probability reaches `enter`...
    public var enter: Float
    /// ...and holds it while its probability stays at `exit` or more (and no other label
    /// goes past it above `enter`). `exit` under `enter` is the hysteresis: a probability
    /// wavering around one threshold neither starts nor ends anything.
    public var exit: Float
    /// A change (another label, or none) counts only once it has lasted this long (seconds);
    /// a shorter flicker is part of the occurrence around it, and no occurrence is shorter.
    public var minimumDuration: Double
    /// Labels that are never an occurrence: the negative class ("other"), whose predictions
    /// end the occurrence before them as "no action" does.
    public var background: Set<String>

    public init(enter: Float = 0.6, exit: Float = 0.4, minimumDuration: Double = 1, background: Set<String> = ["other"]) {
        precondition(exit <= enter && minimumDuration >= 0)
        self.enter = enter; self.exit = exit; self.minimumDuration = minimumDuration; self.background = background
    }
}

/// Turns one person's stream of predictions (class probabilities at increasing times) into
/// occurrences of actions, with the hysteresis of `OccurrenceRules`.
///
/// A boundary lies halfway between the last prediction before a change and the first after
/// it. An occurrence is reported once it has ended, which is known only when what follows
/// it has lasted `minimumDuration`, or at `finish`.
public final class OccurrenceTracker {
    public let labels: [String]
    public let rules: OccurrenceRules

    /// The label being held and since when, once it has lasted `minimumDuration`.
    public var current: (label: String, start: Double)? { open.map { (labels[$0.label], $0.start) } }

    private struct Run {
        var label: Int
        var start: Double
        var peak: Float = 0, sum: Double = 0, count = 0
        /// Where it stopped holding, while it does not hold.
        var lostAt: Double?
        /// The last prediction it held on.
        var lastHeld: Double
        init(label: Int, start: Double) { self.label = label; self.start = start; lastHeld = start }
        mutating func add(_ p: Float, at time: Double) {
            peak = max(peak, p); sum += Double(p); count += 1; lostAt = nil; lastHeld = time
        }
    }
    /// The occurrence under way, once it has lasted `minimumDuration`.
    private var open: Run?
    /// The label that may come next (while none is open, or the open one does not hold): it
    /// opens once it has lasted `minimumDuration`, and survives shorter flickers as an open
    /// one does.
    private var candidate: Run?
    /// The newest run of one proposed label, which takes over from a candidate that fails.
    private var latest: Run?
    private var lastTime: Double?
    private let isBackground: [Bool]

    public init(labels: [String], rules: OccurrenceRules = .init()) {
        self.labels = labels
        self.rules = rules
        isBackground = labels.map { rules.background.contains($0) }
    }

    public func reset() { open = nil; candidate = nil; latest = nil; lastTime = nil }

    /// One prediction: `probabilities` over `labels`, or nil when there was no person (or no
    /// window). Returns the occurrence this prediction ends, if any.
    public func push(time: Double, probabilities p: [Float]?) -> Occurrence? {
        let boundary = lastTime.map { ($0 + time) / 2 } ?? time
        lastTime = time
        func update(_ run: inout Run) {
            if let p, holds(run.label, p) { run.add(p[run.label], at: time) } else if run.lostAt == nil { run.lostAt = boundary }
        }
        if var o = open {
            update(&o)
            open = o
            if o.lostAt == nil { candidate = nil; latest = nil; return nil }
        }
        if let label = p.flatMap(proposal) {
            if latest?.label != label { latest = Run(label: label, start: boundary) }
            latest!.add(p![label], at: time)
        } else {
            latest = nil
        }
        if var c = candidate {
            update(&c)
            candidate = c
            // A candidate that stopped holding gives way to the newest run once that has lasted
            // as long as the candidate had held, or after `minimumDuration` of nothing: a label
            // that held for a moment and then lost its place does not come back on one
            // prediction where it is merely above `exit`.
            if let lost = c.lostAt {
                if let l = latest, l.label != c.label, time - l.start >= c.lastHeld - c.start {
                    candidate = l
                } else if time - lost >= rules.minimumDuration {
                    candidate = latest
                }
            }
        } else {
            candidate = latest
        }
        if let c = candidate, c.lostAt == nil, time - c.start >= rules.minimumDuration {
            // The candidate has lasted: the open occurrence ends where it starts (or, when
            // nothing held for `minimumDuration` between them, where the open one stopped).
            var ended: Occurrence?
            if let o = open {
                let lost = o.lostAt ?? c.start
                ended = occurrence(o, end: c.start - lost < rules.minimumDuration ? c.start : lost)
            }
            open = c
            candidate = nil; latest = nil
            return ended
        }
        if let o = open, let lost = o.lostAt, time - lost >= rules.minimumDuration {
            open = nil
            return occurrence(o, end: lost)
        }
        return nil
    }

    /// The end of the input at `time`: the open occurrence ends (where it stopped holding,
    /// if what followed already lasted `minimumDuration`; else at `time`). A change shorter
    /// than `minimumDuration` is no occurrence.
    public func finish(at time: Double) -> Occurrence? {
        defer { reset() }
        guard let o = open else { return nil }
        if let lost = o.lostAt, time - lost >= rules.minimumDuration { return occurrence(o, end: lost) }
        return occurrence(o, end: max(time, o.start))
    }

    /// Whether label `k` keeps holding: at `exit` or more, and no other label above `enter` beats it.
    private func holds(_ k: Int, _ p: [Float]) -> Bool {
        guard p[k] >= rules.exit else { return false }
        for j in p.indices where j != k && !isBackground[j] && p[j] >= rules.enter && p[j] > p[k] { return false }
        for j in p.indices where j != k && isBackground[j] && p[j] > p[k] { return false }
        return true
    }

    /// The label a prediction proposes: the most likely, when it reaches `enter` and is no background.
    private func proposal(_ p: [Float]) -> Int? {
        guard let best = p.indices.max(by: { p[$0] < p[$1] }), p[best] >= rules.enter, !isBackground[best] else { return nil }
        return best
    }

    private func occurrence(_ r: Run, end: Double) -> Occurrence {
        Occurrence(label: labels[r.label], start: r.start, end: end, peakConfidence: Double(r.peak),
                   meanConfidence: r.count > 0 ? r.sum / Double(r.count) : 0, predictions: r.count)
    }
}
