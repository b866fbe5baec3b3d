import Foundation

/// How poseact writes and reads its own JSON, everywhere: every `--json` line, the records in
/// a weights file, evaluation.json, crossval.json, the live page's and the studio's state,
/// the studio's settings, a rendered scene's truth. One object on one line (so that
/// `| tail -1 | jq` works), keys sorted, slashes as they are, a number that is not finite
/// (the median of no latencies) as null.
///
/// **Keys are snake_case on the wire, set here once**: a property `clipAccuracy` is written
/// `clip_accuracy` and read back from it, so a type needs no `CodingKeys` to spell its keys.
/// A `CodingKeys` case is left only where the wire name is not the property's, and its raw
/// value is then the camelCase form the conversion turns into that name (`speedMps` for
/// `speed_mps`; `latencyMsP95` for `latency_ms_p95`, which `latencyMSP95` would not give).
/// Records written before this rule, with camelCase keys, still read: a key without an
/// underscore is left as it is. Dictionary keys (labels, joint names) are never converted.
///
/// Not here, on purpose: other tools' JSON (COCO, OpenPose, MediaPipe, Create ML's
/// annotations), read with their own vocabulary, and the extraction cache's key, a hash
/// input whose spelling must never change.
public enum JSONLines {
    /// JSONEncoder can only refuse a NaN or write it as a string; it writes this string,
    /// which no label or path holds (U+FFFF is a noncharacter), and that string becomes null.
    private static let nonFinite = "\u{FFFF}non-finite\u{FFFF}"

    private static func makeEncoder(_ formatting: JSONEncoder.OutputFormatting) -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = formatting.union([.sortedKeys, .withoutEscapingSlashes])
        e.keyEncodingStrategy = .convertToSnakeCase
        e.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: nonFinite, negativeInfinity: nonFinite,
                                                                nan: nonFinite)
        return e
    }

    private static let encoder = makeEncoder([])
    private static let documentEncoder = makeEncoder([.prettyPrinted])

    private static func nulled(_ data: Data) -> String {
        String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\"\(nonFinite)\"", with: "null")
    }

    /// `value` as one line of JSON (no newline).
    public static func encode(_ value: some Encodable) -> String {
        // With non-finite numbers written as strings, nothing poseact encodes can fail.
        nulled(try! encoder.encode(value))
    }

    /// `value` as an indented document, for a file a person opens (the studio's settings, a
    /// scene's truth): the same keys and values as `encode`, over several lines.
    public static func document(_ value: some Encodable) -> Data {
        Data(nulled(try! documentEncoder.encode(value)).utf8)
    }

    /// A value of `type` from JSON text.
    public static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        try decode(type, from: Data(text.utf8))
    }

    /// A value of `type` from JSON bytes.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let d = JSONDecoder()
        d.keyDecodingStrategy = .convertFromSnakeCase
        return try d.decode(type, from: data)
    }
}
