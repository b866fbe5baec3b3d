/// The error poseact shows a user: one line that names the file, the row or the value, says
/// what is wrong and, where it can, what to do. Every part of poseact throws this one type;
/// `Source` (an empty enum per part, e.g. `OneLineError<StoreFailure>`, spelled `StoreError`)
/// only keeps the parts apart where a caller catches one of them: a video that cannot be
/// read skips its clip, while a damaged store stops the run.
public struct OneLineError<Source>: Error, CustomStringConvertible, Equatable, Sendable {
    public let message: String
    public init(_ message: String) { self.message = OneLine.clean(message) }
    public var description: String { message }
}

/// What keeps a message one short line whatever a file put into it: a message often quotes
/// a value from a file (a label, a key, a row), and a hostile file's value can be 3 kB of
/// binary, line breaks, or terminal escape sequences.
public enum OneLine {
    /// Longer messages keep their start (the file and what is wrong) and their end (what to do).
    public static let maxLength = 500

    /// Line breaks and tabs become spaces, other control characters U+FFFD; a message over
    /// `maxLength` characters loses its middle.
    public static func clean(_ message: String) -> String {
        var scalars = String.UnicodeScalarView()
        var dirty = false
        for s in message.unicodeScalars {
            if s.properties.generalCategory == .control {
                dirty = true
                scalars.append(s == "\n" || s == "\r" || s == "\t" ? " " : "\u{FFFD}")
            } else {
                scalars.append(s)
            }
        }
        let text = dirty ? String(scalars) : message
        guard text.count > maxLength else { return text }
        return String(text.prefix(maxLength - 80)) + " … " + String(text.suffix(77))
    }

    /// Characters of a file's own text that a message quotes.
    public static let excerptLength = 40

    /// A value a message quotes from a file: at most `excerptLength` characters, anything
    /// unprintable as '?', so a message shows what it found without echoing a binary file
    /// into the terminal. (`clean` then guards the whole message.)
    public static func excerpt<S: StringProtocol>(_ text: S) -> String {
        var out = ""
        for (n, ch) in text.enumerated() {
            if n == excerptLength { out += "…"; break }
            let printable = ch.unicodeScalars.allSatisfy { !$0.properties.generalCategory.isControlOrUnassigned && $0 != "\u{FFFD}" }
            out.append(printable ? ch : "?")
        }
        return out
    }
}

extension Unicode.GeneralCategory {
    /// What a terminal does not show as itself: controls, format characters, surrogates,
    /// private use, unassigned code points, line and paragraph separators.
    public var isControlOrUnassigned: Bool {
        switch self {
        case .control, .format, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }
}
