import Basics
import Evaluation
import Foundation

/// The record of the run that made a model, kept in its weights file (the `training`
/// attribute, JSON): the config, the data, the epochs, the validation figures of the kept
/// epoch and the test figures. An ensemble's record holds its members' under "members" and
/// nothing else.
///
/// Files written by older poseacts have fewer keys, and their config or data may be of
/// another shape: every key is optional, and one that does not read is left out rather than
/// making the file unreadable.
public struct TrainingRecord: Codable, Equatable, Sendable {
    public var config: TrainingConfig?
    public var data: DataSummary?
    /// Epochs trained.
    public var epochs: Int?
    /// The epoch with the best validation accuracy.
    public var bestEpoch: Int?
    /// The epoch that is the model (absent in records older than training.keep: the best).
    public var keptEpoch: Int?
    public var history: [EpochRecord]?
    public var parameters: Int?
    /// The kept epoch's validation figures (null without validation).
    public var validationAccuracy: Double?
    public var validationLoss: Double?
    /// The test split, evaluated with the model at the end of the run.
    public var test: EvaluationReport?
    public var members: [TrainingRecord]?
    /// The labels `poseact enroll` added, one record a call.
    public var enrolled: [EnrolmentRecord]?

    public init(config: TrainingConfig? = nil, data: DataSummary? = nil, epochs: Int? = nil, bestEpoch: Int? = nil,
                keptEpoch: Int? = nil, history: [EpochRecord]? = nil, parameters: Int? = nil, validationAccuracy: Double? = nil,
                validationLoss: Double? = nil, test: EvaluationReport? = nil, members: [TrainingRecord]? = nil) {
        self.config = config; self.data = data; self.epochs = epochs; self.bestEpoch = bestEpoch; self.keptEpoch = keptEpoch
        self.history = history; self.parameters = parameters; self.validationAccuracy = validationAccuracy
        self.validationLoss = validationLoss; self.test = test; self.members = members
    }

    /// The record in a weights file's text; a text that is no JSON object reads as an empty record.
    public init(json text: String) {
        self = (try? JSONLines.decode(TrainingRecord.self, from: text)) ?? TrainingRecord()
    }

    enum CodingKeys: String, CodingKey {
        case config, data, epochs, history, parameters, test, members, enrolled
        case bestEpoch, keptEpoch
        case validationAccuracy, validationLoss
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func field<T: Decodable>(_ key: CodingKeys) -> T? { (try? c.decodeIfPresent(T.self, forKey: key)) ?? nil }
        config = field(.config)
        data = field(.data)
        epochs = field(.epochs)
        bestEpoch = field(.bestEpoch)
        keptEpoch = field(.keptEpoch)
        history = field(.history)
        parameters = field(.parameters)
        validationAccuracy = field(.validationAccuracy)
        validationLoss = field(.validationLoss)
        test = field(.test)
        members = field(.members)
        enrolled = field(.enrolled)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(config, forKey: .config)
        try encodeRun(to: encoder)
        try c.encodeIfPresent(history, forKey: .history)
        try c.encodeIfPresent(parameters, forKey: .parameters)
        try c.encodeIfPresent(test, forKey: .test)
        try c.encodeIfPresent(members, forKey: .members)
    }

    /// The run in brief: data, epochs, best and kept epoch, the kept epoch's validation
    /// figures, the labels enrolled since. `model inspect --json` writes these keys beside its own, as the record has them.
    public func encodeRun(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(data, forKey: .data)
        try c.encodeIfPresent(epochs, forKey: .epochs)
        try c.encodeIfPresent(bestEpoch, forKey: .bestEpoch)
        try c.encodeIfPresent(keptEpoch, forKey: .keptEpoch)
        if epochs != nil {
            // A run's record has always had both keys, null without validation.
            try c.encode(validationAccuracy, forKey: .validationAccuracy)
            try c.encode(validationLoss, forKey: .validationLoss)
        }
        try c.encodeIfPresent(enrolled, forKey: .enrolled)
    }
}
