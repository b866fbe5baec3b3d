import Foundation

/// Something to know about one clip that did not keep it out (a low frame rate, a range cut
/// at the video's end, a decoding hiccup).
public struct ClipWarning: Sendable, Equatable, CustomStringConvertible {
    public var clip: String
    public var message: String

    public init(clip: String, _ message: String) { self.clip = clip; self.message = message }

    public var description: String { "\(clip): \(message)" }

    /// One line per message, the clips that share it counted and a few named: one line for a
    /// hundred clips at 25 fps, not a hundred.
    public static func grouped(_ warnings: [ClipWarning]) -> [String] {
        var clips: [String: [String]] = [:], order: [String] = []
        for w in warnings {
            if clips[w.message] == nil { order.append(w.message) }
            clips[w.message, default: []].append(w.clip)
        }
        return order.map { message in
            let named = clips[message]!
            if named.count == 1 { return "\(named[0]): \(message)" }
            let examples = named.prefix(3).joined(separator: ", ")
            return "\(named.count) clips: \(message) (\(examples)\(named.count > 3 ? ", …" : ""))"
        }
    }
}

/// A clip left out of the store, and why.
public struct SkippedClip: Codable, Sendable, Equatable {
    public var id: String
    public var reason: String

    public init(id: String, reason: String) { self.id = id; self.reason = reason }
}
