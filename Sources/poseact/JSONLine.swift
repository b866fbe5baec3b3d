import Foundation

/// One JSON object on one line, keys in the order given (what benchmarks print).
struct JSONLine {
    private var parts: [String] = []

    mutating func add(_ key: String, _ value: Any) {
        parts.append("\(Self.encode(key)): \(Self.encode(value))")
    }

    var text: String { "{" + parts.joined(separator: ", ") + "}" }

    static func encode(_ value: Any) -> String {
        switch value {
        case let s as String:
            let data = try! JSONSerialization.data(withJSONObject: [s], options: [.withoutEscapingSlashes])
            return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
        case let d as Double: return d.isFinite ? String(d) : "null"
        case let b as Bool: return b ? "true" : "false"
        case let i as Int: return String(i)
        default:
            let data = (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("null".utf8)
            return String(decoding: data, as: UTF8.self)
        }
    }
}
