import Foundation

/// How poseact writes JSON, everywhere: every `--json` line, the run's record in a weights
/// file, evaluation.json, crossval.json. One object on one line (so that `| tail -1 | jq`
/// works), keys sorted, slashes as they are, and a number that is not finite (the median of
/// no latencies) as null.
public enum JSONLines {
    /// JSONEncoder can only refuse a NaN or write it as a string; it writes this string,
    /// which no label or path holds (U+FFFF is a noncharacter), and that string becomes null.
    private static let nonFinite = "\u{FFFF}non-finite\u{FFFF}"

    private static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        e.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: nonFinite, negativeInfinity: nonFinite,
                                                                nan: nonFinite)
        return e
    }()

    /// `value` as one line of JSON (no newline).
    public static func encode(_ value: some Encodable) -> String {
        // With non-finite numbers written as strings, nothing poseact encodes can fail.
        let text = String(decoding: try! encoder.encode(value), as: UTF8.self)
        return text.replacingOccurrences(of: "\"\(nonFinite)\"", with: "null")
    }

    /// A value of `type` from JSON text.
    public static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }
}
