import Foundation

/// The one place a `DecodingError` becomes a line for a user: the file first, then the coded
/// path as a reader of the file would write it (`annotations[3].keypoints`), then what is wrong.
extension DecodingError {
    /// The coded path of `codingPath`: keys joined by `.`, array positions as `[i]`.
    public static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let i = key.intValue, key.stringValue.hasPrefix("Index ") || key.stringValue == String(i) {
                text += "[\(i)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text
    }

    /// The path the error happened at (for a missing key, the key itself).
    public var codedPath: String {
        switch self {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c):
            return Self.path(c.codingPath)
        case .keyNotFound(let key, let c):
            return Self.path(c.codingPath + [key])
        @unknown default:
            return ""
        }
    }

    /// True when the bytes are not JSON at all (as opposed to JSON of the wrong shape).
    public var isSyntaxError: Bool {
        if case .dataCorrupted(let c) = self, c.codingPath.isEmpty { return true }
        return false
    }

    /// `file: path: what` with `expected` saying what the path should hold, and `fix` (what to
    /// do) last. A syntax error says "not valid JSON" with the reason: JSONDecoder on Linux
    /// gives none, so `data`, when given, is handed to JSONSerialization's parser, which says
    /// what it met and where.
    public func oneLine(file: String, expected: String, fix: String = "", data: Data? = nil) -> String {
        let tail = fix.isEmpty ? "" : "; \(fix)"
        if isSyntaxError, case .dataCorrupted(let c) = self {
            var why = c.underlyingError.map { "\($0)" } ?? c.debugDescription
            if let data {
                do { _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) } catch {
                    why = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String) ?? why
                }
            }
            let first = why.split(separator: "\n").first.map(String.init) ?? ""
            return "\(file): not valid JSON (\(first.prefix(200)))\(tail)"
        }
        let at = codedPath
        switch self {
        case .keyNotFound(let key, _):
            return "\(file): \(at): missing (\(expected) needs '\(key.stringValue)')\(tail)"
        default:
            return "\(file): \(at.isEmpty ? "top level" : at): expected \(expected)\(tail)"
        }
    }
}

/// A coding key for objects whose keys are not fixed (read by name, aliases, any case).
public struct AnyCodingKey: CodingKey, Hashable, Sendable {
    public var stringValue: String
    public var intValue: Int?
    public init(_ string: String) { stringValue = string; intValue = nil }
    public init?(stringValue: String) { self.stringValue = stringValue; intValue = nil }
    public init?(intValue: Int) { stringValue = String(intValue); self.intValue = intValue }
}
