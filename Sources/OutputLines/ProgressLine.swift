import Foundation

/// A long job's progress as one line, "extract: 12/54 clips  3.10 clips/s  ETA 14s": the
/// command line writes it on stderr when stderr is not a terminal, and the studio, which
/// reads its commands' stderr through a pipe, reads it back here. One spelling for both
/// sides, so the studio never guesses at the words.
public struct ProgressLine: Equatable, Sendable, Encodable {
    public var title: String
    public var done: Int
    public var total: Int
    public var unit: String
    /// Units a second so far.
    public var rate: Double
    /// Seconds left at that rate; nil when the line says "?".
    public var eta: Double?

    public init(title: String, done: Int, total: Int, unit: String, rate: Double, eta: Double?) {
        self.title = title; self.done = done; self.total = total; self.unit = unit; self.rate = rate; self.eta = eta
    }

    /// On the wire (the studio's state): the fields and the line as the command printed it.
    enum CodingKeys: String, CodingKey { case title, done, total, unit, rate, eta, text }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(title, forKey: .title); try c.encode(done, forKey: .done); try c.encode(total, forKey: .total)
        try c.encode(unit, forKey: .unit); try c.encode(rate, forKey: .rate); try c.encode(eta, forKey: .eta)
        try c.encode(text, forKey: .text)
    }

    /// "12/54 clips  3.10 clips/s  ETA 14s": the counts, what the terminal's bar shows beside it.
    public var counts: String {
        String(format: "%d/%d %@  %.2f %@/s  ETA %@", done, total, unit, rate, unit, Self.duration(eta ?? .nan))
    }

    /// The whole line, as written to a file or a pipe.
    public var text: String { "\(title): \(counts)" }

    private static let pattern = try! NSRegularExpression(
        pattern: #"^(.+): (\d+)/(\d+) (\S+)  ([0-9.]+) \S+/s  ETA (\?|(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?)$"#)

    /// The line `text` wrote, or nil for any other line.
    public init?(parsing line: String) {
        let range = NSRange(line.startIndex..., in: line)
        guard let m = Self.pattern.firstMatch(in: line, range: range) else { return nil }
        func group(_ i: Int) -> String? { Range(m.range(at: i), in: line).map { String(line[$0]) } }
        guard let title = group(1), let done = group(2).flatMap({ Int($0) }), let total = group(3).flatMap({ Int($0) }),
              let unit = group(4), let rate = group(5).flatMap({ Double($0) }), let eta = group(6) else { return nil }
        let h = group(7).flatMap { Double($0) } ?? 0, mins = group(8).flatMap { Double($0) } ?? 0, s = group(9).flatMap { Double($0) } ?? 0
        self.init(title: title, done: done, total: total, unit: unit, rate: rate, eta: eta == "?" || eta.isEmpty ? nil : h * 3600 + mins * 60 + s)
    }

    /// "14s", "3m05s", "2h07m"; "?" when not finite.
    public static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "?" }
        let s = Int(seconds.rounded())
        return s >= 3600 ? String(format: "%dh%02dm", s / 3600, s % 3600 / 60) : s >= 60 ? String(format: "%dm%02ds", s / 60, s % 60) : "\(s)s"
    }
}
