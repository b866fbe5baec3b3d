import ArgumentParser
import CBLAS
import Classifier
import Foundation
import JSONLines

struct TrainBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train",
        abstract: "Time training epochs on a keypoint store or windows file.",
        discussion: """
            Trains --epochs epochs (no validation, checkpoints or files) and prints one JSON \
            object: seconds_per_epoch (median of the epochs' training passes: forward, \
            backward and optimiser step over every training window), windows_per_second, \
            parameters, windows, epochs, threads.
            """)

    @OptionGroup var options: ConfigOverrides

    /// What it prints.
    struct Timing: Encodable {
        var secondsPerEpoch: Double, windowsPerSecond: Double
        var windows: Int, parameters: Int, epochs: Int
        var epochSeconds: [Double]
        var threads: Int, batchSize: Int

        enum CodingKeys: String, CodingKey {
            case windows, parameters, epochs, threads
            case secondsPerEpoch = "seconds_per_epoch", windowsPerSecond = "windows_per_second"
            case epochSeconds = "epoch_seconds", batchSize = "batch_size"
        }
    }

    func run() throws {
        var config = try options.resolved()
        if options.epochs == nil { config.training.epochs = 3 }
        config.data.validationShare = 0
        openblas_set_num_threads(Int32(config.threads))
        let data = try TrainingData.load(path: config.data.store!, config: config)
        let trainer = Trainer(config: config, data: data)
        var seconds: [Double] = []
        for _ in 0..<config.training.epochs {
            let r = trainer.runEpoch()
            seconds.append(r.seconds)
            note(String(format: "epoch %d: %.2f s, loss %.4f, acc %.1f%%", r.epoch, r.seconds, r.trainLoss, r.trainAccuracy * 100))
        }
        let median = percentile(seconds.sorted(), 0.5)
        print(JSONLines.encode(Timing(
            secondsPerEpoch: round3(median), windowsPerSecond: (Double(data.train.count) / median).rounded(), windows: data.train.count,
            parameters: trainer.model.parameterCount, epochs: seconds.count, epochSeconds: seconds.map(round3),
            threads: config.threads, batchSize: config.optimizer.batchSize)))
    }
}
