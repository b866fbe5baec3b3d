import Foundation

/// Parses a time as Create ML accepts them, in seconds: `3`, `3.14` (seconds), `01:03`,
/// `1:03`, `01:03.14` (minutes:seconds), `05:01:03`, `5:01:03.5` (hours:minutes:seconds).
/// After a colon, minutes and seconds have two digits and are below 60; the leading part
/// may be any number of digits. Surrounding spaces are allowed. Nil if malformed or negative.
public func parseTime(_ text: String) -> Double? {
    let t = text.trimmingCharacters(in: .whitespaces)
    let parts = t.split(separator: ":", omittingEmptySubsequences: false)
    guard (1...3).contains(parts.count) else { return nil }
    // Each part: digits, and only the last may have a fraction.
    var total = 0.0
    for (i, p) in parts.enumerated() {
        let last = i == parts.count - 1
        let pieces = p.split(separator: ".", omittingEmptySubsequences: false)
        guard let whole = pieces.first, !whole.isEmpty, whole.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        if pieces.count > 2 || (pieces.count == 2 && !last) { return nil }
        if pieces.count == 2 {
            guard !pieces[1].isEmpty, pieces[1].allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        }
        if i > 0 { guard whole.count == 2 else { return nil } }
        guard let v = Double(p) else { return nil }
        if i > 0 && v >= 60 { return nil }
        total = total * 60 + v
    }
    return total
}
