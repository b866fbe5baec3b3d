import ArgumentParser
import Basics
import Classifier
import Foundation
import KeypointWindows
import Tensor

struct Pretrain: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Pretrain a TCN without labels, on poses of any stores, for runs to start from.",
        discussion: """
            Masked joints: in each window some joints of some frames are hidden (--mask-ratio of \
            them), and the net learns to give them back from the rest of the body and the \
            neighbouring frames. No label is read. The config gives the net (model: type tcn), \
            the preprocessing, the optimiser, the epochs and the augmentation; the windows of \
            every --data store (their --split, or every clip with --split all) are learnt from \
            together, so a store of another joint layout serves as long as the config's \
            preprocessing.joints maps it.

            The output is a weights file to name in a run's model.pretrained (with the same \
            model and preprocessing keys). Its head is untrained and its labels only name the \
            head's outputs: it is not a classifier.
            """)

    @Option(help: "Training config (YAML): model, preprocessing, optimiser, epochs, augmentation.") var config: String?
    @Option(help: "A keypoint store or windows file; give --data several times to learn from several.") var data: [String] = []
    @Option(name: .shortAndLong, help: "The weights file to write (NAME.poseact.h5).") var output: String
    @Option(help: "The split of each store learnt from ('all': every clip).") var split = "train"
    @Option(help: "The share of each real frame's joints hidden (0 < r < 1).") var maskRatio = 0.5
    @Option(parsing: .unconditional, help: "Epochs (overrides training.epochs).") var epochs: Int?
    @Option(parsing: .unconditional, help: "Random seed (overrides training.seed).") var seed: Int?
    @Option(parsing: .unconditional, help: "Threads, 0 = all cores (overrides training.threads).") var threads: Int?
    @Flag(help: "Print each epoch as one JSON object per line.") var json = false

    func validate() throws {
        guard !data.isEmpty else { throw ValidationError("give --data STORE.h5 (one or more)") }
        guard maskRatio > 0 && maskRatio < 1 else { throw ValidationError("--mask-ratio must be between 0 and 1, both excluded (got \(maskRatio))") }
        if let epochs, epochs < 1 { throw ValidationError("--epochs must be 1 or more (got \(epochs))") }
        if let seed, seed < 0 { throw ValidationError("--seed must not be negative (got \(seed))") }
        if let threads, threads < 0 { throw ValidationError("--threads must be 0 (all cores) or more (got \(threads))") }
        try OutputPaths.check(output, flag: "--output", inputs: data.map { ("--data", $0) } + (config.map { [("--config", $0)] } ?? []))
        if !output.lowercased().hasSuffix(".h5") { throw ValidationError("--output \(output): a weights file, NAME.poseact.h5") }
    }

    func run() throws {
        let lock = try OutputPaths.lock(output)
        defer { withExtendedLifetime(lock) {} }
        var c = try config.map { try TrainingConfig.load(path: $0) } ?? TrainingConfig()
        if let epochs { c.training.epochs = epochs }
        if let seed { c.training.seed = UInt64(seed) }
        if let threads { c.training.threads = threads }
        c.data.trainSplit = split
        guard c.model.type == .tcn, c.model.streams.isEmpty else {
            throw ConfigError("\(config ?? "config"): pretrain trains one TCN (model.type tcn, no streams), not \(c.model.type.rawValue)")
        }
        if let p = c.problems.first { throw ConfigError("\(config ?? "config"): \(p)") }
        let started = Date()
        LayerThreads.set(c.threads)
        defer { BLAS.useSingleThread() }
        var windows: [Window] = [], labels = Set<String>()
        for path in data {
            let ws = try TrainingData.trainingWindows(path: path, config: c, everySplit: split == "all")
            windows += ws
            labels.formUnion(ws.map(\.label))
            note("\(path): \(Set(ws.map(\.clipID)).count) clips, \(ws.count) windows")
        }
        guard windows.count >= 2 else { throw ConfigError("\(data.joined(separator: ", ")): \(windows.count) window; pretraining needs more") }
        var names = labels.sorted()
        if names.count < 2 { names.append("(unused)") }
        let run = MaskedJointPretraining(config: c, windows: windows, spec: c.preprocessing, classes: names.count, maskRatio: maskRatio)
        var losses: [Double] = []
        for epoch in 1...c.training.epochs {
            let epochStart = Date()
            let display = ProgressDisplay(title: "epoch \(epoch)", total: run.stepsPerEpoch, unit: "batches")
            let loss = run.runEpoch { done, _, _ in display.update(done: done) }
            guard loss.isFinite else { throw ConfigError("epoch \(epoch): the loss is not a number; lower optimizer.learning_rate") }
            losses.append(loss)
            let seconds = Date().timeIntervalSince(epochStart)
            if json { print(JSONLines.encode(PretrainEpoch(epoch: epoch, loss: loss, seconds: seconds))) }
            note(String(format: "epoch %d/%d  masked-joint loss %.4f  %.1f s", epoch, c.training.epochs, loss, seconds))
        }
        let record = TrainingRecord(config: c, epochs: c.training.epochs,
                                    pretraining: PretrainingRecord(objective: "masked_joints", maskRatio: maskRatio, data: data,
                                                                   windows: windows.count, loss: losses))
        try run.classifier(labels: names, record: record).saveCheckingReadBack(to: output)
        note(String(format: "done in %.0f s: %d epochs on %d windows, masked-joint loss %.4f → %.4f → %@",
                    Date().timeIntervalSince(started), c.training.epochs, windows.count, losses.first ?? 0, losses.last ?? 0, output))
    }
}

/// `pretrain --json`'s line a epoch.
struct PretrainEpoch: Encodable {
    let epoch: Int, loss: Double, seconds: Double
}
