import Foundation

/// A field of a CSV record: byte offsets of its text (without the enclosing quotes).
struct CSVField {
    var start: Int
    var end: Int
    /// Quoted, with `""` inside to be turned into `"`.
    var escaped: Bool
}

/// An RFC 4180 CSV reader over bytes: `,` between fields, `\n`, `\r\n` or `\r` between
/// records, fields optionally in double quotes (then holding commas, line breaks and
/// `""` for a quote). Lenient: a UTF-8 byte-order mark is skipped, blank lines are
/// skipped, an unterminated quote runs to the end of the file, text after a closing
/// quote is dropped and `malformed` set for the record.
struct CSVCursor {
    let b: UnsafeBufferPointer<UInt8>
    var pos = 0
    /// Line number (1-based) at `pos`.
    var line = 1
    /// The last record had text after a closing quote, or an unterminated quote.
    var malformed = false

    init(_ buffer: UnsafeBufferPointer<UInt8>) {
        b = buffer
        if b.count >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF { pos = 3 }
    }

    /// Reads the next record into `fields`; returns the line it starts on, nil at the end.
    mutating func next(_ fields: inout [CSVField]) -> Int? {
        let n = b.count
        let comma = UInt8(ascii: ","), quote = UInt8(ascii: "\""), lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        while true {
            fields.removeAll(keepingCapacity: true)
            malformed = false
            // Skip line breaks (blank lines).
            while pos < n && (b[pos] == lf || b[pos] == cr) {
                if b[pos] == cr && pos + 1 < n && b[pos + 1] == lf { pos += 1 }
                pos += 1; line += 1
            }
            if pos >= n { return nil }
            let startLine = line
            while true {
                if pos < n && b[pos] == quote {
                    pos += 1
                    let s = pos
                    var escaped = false
                    var e = n
                    while pos < n {
                        let c = b[pos]
                        if c == quote {
                            if pos + 1 < n && b[pos + 1] == quote { escaped = true; pos += 2; continue }
                            e = pos; pos += 1; break
                        }
                        if c == lf { line += 1 }
                        pos += 1
                    }
                    if e == n { malformed = true }
                    while pos < n && b[pos] != comma && b[pos] != lf && b[pos] != cr { malformed = true; pos += 1 }
                    fields.append(CSVField(start: s, end: e, escaped: escaped))
                } else {
                    let s = pos
                    while pos < n {
                        let c = b[pos]
                        if c == comma || c == lf || c == cr { break }
                        pos += 1
                    }
                    fields.append(CSVField(start: s, end: pos, escaped: false))
                }
                if pos < n && b[pos] == comma { pos += 1; continue }
                // End of record.
                if pos < n {
                    if b[pos] == cr && pos + 1 < n && b[pos + 1] == lf { pos += 1 }
                    pos += 1; line += 1
                }
                break
            }
            // A line of only spaces is blank too.
            if fields.count == 1 && isBlank(fields[0]) { continue }
            return startLine
        }
    }

    func isBlank(_ f: CSVField) -> Bool {
        var i = f.start
        while i < f.end { if b[i] != 0x20 && b[i] != 0x09 { return false }; i += 1 }
        return true
    }

    func string(_ f: CSVField) -> String {
        let s = String(decoding: UnsafeBufferPointer(rebasing: b[f.start..<f.end]), as: UTF8.self)
        return f.escaped ? s.replacingOccurrences(of: "\"\"", with: "\"") : s
    }

    /// The field's bytes equal `other`.
    func equals(_ f: CSVField, _ other: [UInt8]) -> Bool {
        if f.escaped { return bytes(f) == other }   // (its `""` stand for one quote each)
        guard f.end - f.start == other.count else { return false }
        return other.withUnsafeBufferPointer { o in
            o.count == 0 || memcmp(b.baseAddress! + f.start, o.baseAddress!, o.count) == 0
        }
    }

    func bytes(_ f: CSVField) -> [UInt8] {
        f.escaped ? Array(string(f).utf8) : Array(b[f.start..<f.end])
    }
}
