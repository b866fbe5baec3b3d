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
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        guard let first = lines.first else { throw TimelineError("\(file): empty (the occurrences array is its first line)") }
        func read<T: Decodable>(_ type: T.Type, _ line: String, number: Int, expected: String) throws -> T {
            do { return try JSONLines.decode(type, from: line) } catch let error as DecodingError {
                throw TimelineError(error.oneLine(file: "\(file) line \(number)", expected: expected, data: Data(line.utf8)))
            }
        }
        occurrences = try read([OccurrenceLine].self, first, number: 1, expected: "the occurrences array")
        throwsMade = try lines.enumerated().dropFirst().map { try read(ThrowLine.self, $1, number: $0 + 1, expected: "a throw") }
    }
}

public struct TimelineError: Error, CustomStringConvertible {
    public let description: String
    init(_ d: String) { description = d }
}
