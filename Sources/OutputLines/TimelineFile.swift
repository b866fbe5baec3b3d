import Basics
import Foundation

/// `annotate --timeline NAME.json`: the occurrences as one JSON array on the first line, then
/// one line per throw. The studio reads a model's proposals for a video from it.
public struct TimelineFile: Equatable, Sendable {
    public var occurrences: [OccurrenceLine]
    public var throwsMade: [ThrowLine]

    public init(occurrences: [OccurrenceLine], throwsMade: [ThrowLine]) {
        self.occurrences = occurrences; self.throwsMade = throwsMade
    }

    public var text: String {
        ([JSONLines.encode(occurrences)] + throwsMade.map { JSONLines.encode($0) }).joined(separator: "\n") + "\n"
    }

    /// `file`'s text; what is not this layout is refused in one line that names the line.
    public init(text: String, file: String) throws {
        let lines = Self.lines(text)
        guard let first = lines.first else { throw TimelineError("\(file): empty (the occurrences array is its first line)") }
        occurrences = try Self.read([OccurrenceLine].self, first, file: file, expected: "the occurrences array")
        throwsMade = try lines.dropFirst().map { try Self.read(ThrowLine.self, $0, file: file, expected: "a throw") }
    }

    /// The occurrences alone (the first line), for a reader that has no use for the throws.
    public static func occurrences(text: String, file: String) throws -> [OccurrenceLine] {
        guard let first = lines(text).first else { throw TimelineError("\(file): empty (the occurrences array is its first line)") }
        return try read([OccurrenceLine].self, first, file: file, expected: "the occurrences array")
    }

    /// The lines that hold something, each with its number in the file.
    private static func lines(_ text: String) -> [(number: Int, text: String)] {
        text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            .filter { !$0.element.allSatisfy(\.isWhitespace) }.map { ($0.offset + 1, String($0.element)) }
    }

    private static func read<T: Decodable>(_ type: T.Type, _ line: (number: Int, text: String), file: String, expected: String) throws -> T {
        do { return try JSONLines.decode(type, from: line.text) } catch let error as DecodingError {
            throw TimelineError(error.oneLine(file: "\(file) line \(line.number)", expected: expected, data: Data(line.text.utf8)))
        }
    }
}

public struct TimelineError: Error, CustomStringConvertible {
    public let description: String
    init(_ d: String) { description = d }
}
