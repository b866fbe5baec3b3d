import ArgumentParser
import Basics
import Classifier
import Foundation
import Keypoints

extension DatasetCommand {
    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Clips and frames per label and split, and the warnings to read before training.")
        @Argument(help: "A keypoint store (.h5).") var store: String
        @Option(parsing: .unconditional, help: "The training window, in frames, to flag clips shorter than it.") var window = 32
        @Option(help: "The training config for the line on where train would start (default: the built-in one).") var config: String?
        @Flag(help: "Print one JSON object instead of text.") var json = false

        func validate() throws {
            guard window >= 1 else { throw ValidationError("--window must be at least 1 frame (got \(window))") }
        }

        func run() throws {
            var report = try DatasetReport(store: KeypointStore(path: store), window: window)
            report.pretrained = try start(report)
            print(json ? JSONLines.encode(report) : report.text())
        }

        /// Where `train --config` on this store would start, and why (model.pretrained).
        func start(_ report: DatasetReport) throws -> String {
            let c = try config.map { try TrainingConfig.load(path: $0) } ?? TrainingConfig()
            let which = config.map { "train --config \($0)" } ?? "train (the built-in config)"
            guard c.model.pretrained == "auto" else {
                return "\(which): " + (c.model.pretrained == "none" ? "from random weights (model.pretrained: none)" : "from \(c.model.pretrained)")
            }
            let hasTrain = report.labels.values.contains { $0.bySplit["train"] != nil }
            let clips = report.labels.mapValues { hasTrain ? ($0.bySplit["train"]?.clips ?? 0) : $0.clips }
            let (path, reason) = Backbone.auto(shipped: Train.shippedBackbones, config: c, spec: c.preprocessing, labelClips: clips)
            return "\(which): " + (path.map { "from the shipped backbone \($0)" } ?? "from random weights") + " (\(reason))"
        }
    }
}
