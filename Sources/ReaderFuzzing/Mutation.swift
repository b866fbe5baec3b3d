import Foundation
import Tensor

/// The ways a file from a stranger differs from a good one, as changes to a good file's
/// bytes. Each returns the changed bytes and a short description for the failure message.
public enum Mutation {
    /// Numbers a hostile or careless file holds where a sane one would not.
    static let hostileNumbers = ["0", "-1", "1e309", "-1e309", "nan", "NaN", "inf", "1e12", "3e38", "1e30", "-0",
                                 "99999999999999999999", "4294967296", "2147483648", "0.0000001", ""]

    /// One to four random changes: bytes set at random in the first `header` bytes (where
    /// the metadata of HDF5 and flatbuffers lives), bits flipped anywhere, a cut, a span
    /// removed, doubled or filled with 0xFF.
    public static func bytes(_ input: [UInt8], header: Int = 8192, rng: inout SplitMix64) -> (bytes: [UInt8], what: String) {
        var out = input
        var what: [String] = []
        for _ in 0..<(1 + rng.below(4)) {
            guard !out.isEmpty else { out = [UInt8(rng.below(256))]; what.append("one byte"); continue }
            switch rng.below(7) {
            case 0, 1:
                let p = rng.below(min(out.count, header))
                out[p] = UInt8(rng.below(256)); what.append("byte \(p)")
            case 2:
                let p = rng.below(out.count)
                out[p] ^= UInt8(1 << rng.below(8)); what.append("bit at \(p)")
            case 3:
                let n = rng.below(out.count); out = Array(out.prefix(n)); what.append("cut at \(n)")
            case 4:
                let a = rng.below(out.count), n = min(out.count - a, 1 + rng.below(64))
                out.removeSubrange(a..<(a + n)); what.append("\(n) bytes removed at \(a)")
            case 5:
                let a = rng.below(out.count), n = min(out.count - a, 1 + rng.below(64))
                out.insert(contentsOf: out[a..<(a + n)], at: a); what.append("\(n) bytes doubled at \(a)")
            default:
                let a = rng.below(min(out.count, header)), n = min(out.count - a, 1 + rng.below(8))
                for i in a..<(a + n) { out[i] = 0xFF }; what.append("\(n) bytes of 0xFF at \(a)")
            }
        }
        return (out, what.joined(separator: ", "))
    }

    /// Changes that keep a text file's shape: a number replaced by a hostile one, a line
    /// removed, doubled or cut, a field separator or quote added, a long run of one character.
    public static func text(_ input: [UInt8], rng: inout SplitMix64) -> (bytes: [UInt8], what: String) {
        var text = String(decoding: input, as: UTF8.self)
        var what: [String] = []
        for _ in 0..<(1 + rng.below(3)) {
            let numbers = numberRanges(text)
            var choice = rng.below(6)
            if choice < 3 && numbers.isEmpty { choice = 3 }
            switch choice {
            case 0, 1, 2:
                let r = numbers[rng.below(numbers.count)]
                let v = rng.pick(hostileNumbers)
                text.replaceSubrange(r, with: v); what.append("number → '\(v)'")
            case 3:
                var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
                guard !lines.isEmpty else { continue }
                let i = rng.below(lines.count)
                if rng.below(2) == 0 { lines.remove(at: i); what.append("line \(i + 1) removed") }
                else { lines.insert(lines[i], at: i); what.append("line \(i + 1) doubled") }
                text = lines.joined(separator: "\n")
            case 4:
                guard !text.isEmpty else { continue }
                let i = text.index(text.startIndex, offsetBy: rng.below(text.count))
                let piece = rng.pick([",", "\"", "\n", "{", "}", "[", "]", ":", "\u{0}", "é", "\t", "-"])
                text.insert(contentsOf: piece, at: i); what.append("'\(piece.debugDescription)' inserted")
            default:
                guard !text.isEmpty else { continue }
                let i = text.index(text.startIndex, offsetBy: rng.below(text.count))
                text.insert(contentsOf: String(repeating: rng.pick(["9", "[", "x", ","]), count: 1 + rng.below(5000)), at: i)
                what.append("a long run inserted")
            }
        }
        return (Array(text.utf8), what.joined(separator: ", "))
    }

    /// The ranges of the numbers in `text` (digits with sign, point and exponent).
    static func numberRanges(_ text: String) -> [Range<String.Index>] {
        var out: [Range<String.Index>] = []
        var i = text.startIndex
        while i < text.endIndex {
            if text[i].isASCII && (text[i].isNumber || text[i] == "-") {
                var j = text.index(after: i)
                while j < text.endIndex, text[j].isASCII, text[j].isNumber || ".eE+-".contains(text[j]) { j = text.index(after: j) }
                if text[i..<j].contains(where: { $0.isNumber }) { out.append(i..<j) }
                i = j
            } else {
                i = text.index(after: i)
            }
        }
        return out
    }
}
