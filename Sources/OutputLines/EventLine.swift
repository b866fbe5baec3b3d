import Basics
import Foundation

/// Any line with a "type": what `live --json` and `train --json` print as they go and
/// `annotate --timeline` keeps. Reading one checks its kind and every field the kind has;
/// writing one writes the line as the command does.
public enum EventLine: Codable, Equatable, Sendable {
    case prediction(PredictionLine)
    case state(StateLine)
    case occurrence(OccurrenceLine)
    case repetition(RepetitionLine)
    case angles(AnglesLine)
    case trajectory(TrajectoryLine)
    case throwMade(ThrowLine)
    case summary(LiveSummaryLine)
    case epoch(EpochLine)

    /// Every kind's "type", in the order above.
    public static let types = ["prediction", "state", "occurrence", "repetition", "angles", "trajectory", "throw", "summary", "epoch"]

    public var type: String {
        switch self {
        case .prediction(let l): l.type
        case .state(let l): l.type
        case .occurrence(let l): l.type
        case .repetition(let l): l.type
        case .angles(let l): l.type
        case .trajectory(let l): l.type
        case .throwMade(let l): l.type
        case .summary(let l): l.type
        case .epoch(let l): l.type
        }
    }

    private enum TypeKey: String, CodingKey { case type }

    public init(from decoder: Decoder) throws {
        let type = try decoder.container(keyedBy: TypeKey.self).decode(String.self, forKey: .type)
        switch type {
        case "prediction": self = .prediction(try PredictionLine(from: decoder))
        case "state": self = .state(try StateLine(from: decoder))
        case "occurrence": self = .occurrence(try OccurrenceLine(from: decoder))
        case "repetition": self = .repetition(try RepetitionLine(from: decoder))
        case "angles": self = .angles(try AnglesLine(from: decoder))
        case "trajectory": self = .trajectory(try TrajectoryLine(from: decoder))
        case "throw": self = .throwMade(try ThrowLine(from: decoder))
        case "summary": self = .summary(try LiveSummaryLine(from: decoder))
        case "epoch": self = .epoch(try EpochLine(from: decoder))
        default:
            throw DecodingError.dataCorruptedError(forKey: .type, in: try decoder.container(keyedBy: TypeKey.self),
                                                   debugDescription: "\"\(type)\" is not a kind of line poseact prints")
        }
    }

    public func encode(to encoder: Encoder) throws {
        switch self {
        case .prediction(let l): try l.encode(to: encoder)
        case .state(let l): try l.encode(to: encoder)
        case .occurrence(let l): try l.encode(to: encoder)
        case .repetition(let l): try l.encode(to: encoder)
        case .angles(let l): try l.encode(to: encoder)
        case .trajectory(let l): try l.encode(to: encoder)
        case .throwMade(let l): try l.encode(to: encoder)
        case .summary(let l): try l.encode(to: encoder)
        case .epoch(let l): try l.encode(to: encoder)
        }
    }

    /// One printed line.
    public init(line: String) throws { self = try JSONLines.decode(EventLine.self, from: line) }

    /// The line as the command prints it.
    public var line: String { JSONLines.encode(self) }
}
