import Foundation

/// Short forms of class names for narrow table columns and plots.
enum LabelText {
    /// Filler words dropped from multi-word names ("clean_and_jerk" → "clean_jerk").
    private static let fillers: Set<String> = ["and", "of", "the", "a", "an", "with", "to"]

    /// Each label shortened to at most `maxLength` characters and kept unique: names that
    /// fit are unchanged; longer multi-word names keep the start of every word, the last
    /// (usually the distinguishing one: "tennis_forehand" / "tennis_serve") getting the most;
    /// any clashes left get their 1-based index appended.
    static func abbreviations(_ labels: [String], maxLength: Int) -> [String] {
        var out = labels.map { abbreviate($0, maxLength: maxLength) }
        let counts = Dictionary(out.map { ($0, 1) }, uniquingKeysWith: +)
        for i in out.indices where counts[out[i]]! > 1 {
            let n = String(i + 1)
            out[i] = String(out[i].prefix(max(maxLength - n.count, 1))) + n
        }
        return out
    }

    static func abbreviate(_ s: String, maxLength: Int) -> String {
        guard s.count > maxLength else { return s }
        var words = s.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init)
        let kept = words.filter { !fillers.contains($0.lowercased()) }
        if !kept.isEmpty { words = kept }
        let budget = maxLength - (words.count - 1)                 // "_" between words
        guard words.count > 1, budget >= words.count else { return String(s.prefix(maxLength)) }
        var take = words.map { min($0.count, budget / words.count) }
        var spare = budget - take.reduce(0, +)
        for i in words.indices.reversed() where spare > 0 {       // leftover to the last words first
            let more = min(spare, words[i].count - take[i])
            take[i] += more; spare -= more
        }
        return zip(words, take).map { String($0.prefix($1)) }.joined(separator: "_")
    }

    /// `s` cut to `maxLength` characters, ".." marking the cut.
    static func truncate(_ s: String, maxLength: Int) -> String {
        s.count <= maxLength ? s : String(s.prefix(max(maxLength - 2, 1))) + ".."
    }

    /// A 0…1 share as a percentage with one decimal: "87.5%".
    static func percent(_ x: Double) -> String { String(format: "%.1f%%", x * 100) }
}
