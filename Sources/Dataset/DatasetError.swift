import Foundation

/// A dataset that cannot be read at all (no videos, a missing required column, an
/// unreadable file). One line, saying what is accepted.
public struct DatasetError: Error, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ m: String) { message = m }
    public var description: String { message }
}
