import Basics
import Foundation

/// A dataset that cannot be read at all (no videos, a missing required column, an
/// unreadable file). One line, saying what is accepted.
public enum DatasetFailure {}
public typealias DatasetError = OneLineError<DatasetFailure>
