import ArgumentParser
import Classifier
import Foundation

/// Command-line overrides of a training config, shared by `train`, `crossval` and `bench train`.
struct ConfigOverrides: ParsableArguments {
    @Option(help: "Training config (YAML). Without it, the built-in defaults (= configs/penn-action.yaml).")
    var config: String?
    @Option(help: "Keypoint store or windows file (overrides data.store).") var data: String?
    @Option(parsing: .unconditional, help: "Epochs (overrides training.epochs).") var epochs: Int?
    @Option(parsing: .unconditional, help: "Random seed (overrides training.seed).") var seed: Int?
    @Option(parsing: .unconditional, help: "BLAS threads, 0 = all cores (overrides training.threads).") var threads: Int?
    @Option(parsing: .unconditional, help: "Windows per batch (overrides optimizer.batch_size).") var batchSize: Int?
    @Option(parsing: .unconditional, help: "Peak learning rate (overrides optimizer.learning_rate).") var learningRate: Double?
    @Option(parsing: .unconditional, help: "Frames per window (overrides preprocessing.window).") var window: Int?
    @Option(parsing: .unconditional, help: "Frames between windows (overrides preprocessing.stride).") var stride: Int?
    @Option(parsing: .unconditional, help: "Early-stopping patience in epochs, 0 = off (overrides training.patience).") var patience: Int?
    @Option(help: ArgumentHelp("Model type: \(ModelType.names.joined(separator: ", ")) (overrides model.type).",
                               valueName: "type")) var model: ModelType?
    @Option(parsing: .unconditional,
            help: ArgumentHelp("Streams, one net each, comma-separated: \(Classifier.Stream.names.joined(separator: ", ")); 'none' for one net on preprocessing.features (overrides model.streams; model.stream_weights is kept only for the same list).",
                               valueName: "list")) var streams: StreamList?
    @Option(help: ArgumentHelp("Cross-validation: train on the train split less its i-th of k folds, test on that fold (overrides data.folds and data.fold).",
                               valueName: "i/k")) var fold: Fold?

    func validate() throws {
        if let seed, seed < 0 { throw ValidationError("--seed must not be negative (got \(seed))") }
        if let threads, threads < 0 { throw ValidationError("--threads must be 0 (all cores) or more (got \(threads))") }
    }

    /// The config file with the flags applied, checked.
    func resolved() throws -> TrainingConfig {
        var c = try config.map { try TrainingConfig.load(path: $0) } ?? TrainingConfig()
        if let data { c.data.store = data }
        if let epochs { c.training.epochs = epochs }
        if let seed { c.training.seed = UInt64(seed) }
        if let threads { c.training.threads = threads }
        if let batchSize { c.optimizer.batchSize = batchSize }
        if let learningRate { c.optimizer.learningRate = learningRate }
        if let window { c.preprocessing.window = window }
        if let stride { c.preprocessing.stride = stride }
        if let patience { c.training.patience = patience }
        if let fold { c.data.fold = fold.index; c.data.folds = fold.count }
        if let model { c.model.type = model }
        if let streams {
            if streams.streams != c.model.streams { c.model.streamWeights = [] }
            c.model.streams = streams.streams
        }
        if let p = c.problems.first { throw ConfigError("\(config ?? "config"): \(p)") }
        guard c.data.store != nil else {
            throw ConfigError("no data: give --data STORE.h5 (a keypoint store or windows file), or data.store in the config")
        }
        return c
    }
}

extension ModelType: ExpressibleByArgument {}
