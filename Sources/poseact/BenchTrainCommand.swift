import ArgumentParser
import Basics
import Classifier
import Foundation
import Media
import Tensor

struct TrainBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train",
        abstract: "Time training epochs on a keypoint store or windows file.",
        discussion: """
            Trains --epochs epochs (no validation, checkpoints or files) and prints one JSON \
            object: seconds_per_epoch (median of the epochs' training passes: forward, \
            backward and optimiser step over every training window), windows_per_second, \
            parameters, windows, epochs, threads, and ms_per_window: the trained model's \
            probabilities for one window at a time, as live asks for them (the median over \
            up to 200 test windows, flip averaging included when the model has it).
            """)

    @OptionGroup var options: ConfigOverrides

    /// What it prints.
    struct Timing: Encodable {
        var secondsPerEpoch: Double, windowsPerSecond: Double
        var windows: Int, parameters: Int, epochs: Int
        var epochSeconds: [Double]
        var threads: Int, batchSize: Int
        var msPerWindow: Double?
    }

    func run() throws {
        var config = try options.resolved()
        if options.epochs == nil { config.training.epochs = 3 }
        config.data.validationShare = 0
        LayerThreads.set(config.threads)
        let data = try TrainingData.load(path: config.data.store!, config: config)
        let trainer = Trainer(config: config, data: data)
        var seconds: [Double] = []
        for _ in 0..<config.training.epochs {
            let r = trainer.runEpoch()
            seconds.append(r.seconds)
            note(String(format: "epoch %d: %.2f s, loss %.4f, acc %.1f%%", r.epoch, r.seconds, r.trainLoss, r.trainAccuracy * 100))
        }
        let median = percentile(seconds.sorted(), 0.5)
        let sample = (data.test.isEmpty ? data.train : data.test).prefix(200)
        let perWindow: [Double] = trainer.withModelWeights {
            sample.map { w in
                let start = monotonicSeconds()
                _ = trainer.classifier.probabilities(values: [w.values], masks: [w.mask])
                return (monotonicSeconds() - start) * 1000
            }
        }
        print(JSONLines.encode(Timing(
            secondsPerEpoch: round3(median), windowsPerSecond: (Double(data.train.count) / median).rounded(), windows: data.train.count,
            parameters: trainer.model.parameterCount, epochs: seconds.count, epochSeconds: seconds.map(round3),
            threads: config.threads, batchSize: config.optimizer.batchSize,
            msPerWindow: perWindow.isEmpty ? nil : round3(percentile(perWindow.sorted(), 0.5)))))
    }
}
