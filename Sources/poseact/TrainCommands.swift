import ArgumentParser
import CBLAS
import Classifier
import Dataset
import Evaluation
import Foundation

/// Command-line overrides of a training config, shared by `train` and `bench train`.
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
    @Option(help: ArgumentHelp("Cross-validation: train on the train split less its i-th of k folds, test on that fold (overrides data.folds and data.fold).",
                               valueName: "i/k")) var fold: String?

    /// The config file with the flags applied, checked.
    func resolved() throws -> TrainingConfig {
        var c = try config.map { try TrainingConfig.load(path: $0) } ?? TrainingConfig()
        if let data { c.data.store = data }
        if let epochs { c.training.epochs = epochs }
        if let seed {
            guard seed >= 0 else { throw ConfigError("--seed must not be negative") }
            c.training.seed = UInt64(seed)
        }
        if let threads { c.training.threads = threads }
        if let batchSize { c.optimizer.batchSize = batchSize }
        if let learningRate { c.optimizer.learningRate = learningRate }
        if let window { c.preprocessing.window = window }
        if let stride { c.preprocessing.stride = stride }
        if let patience { c.training.patience = patience }
        if let fold {
            let parts = fold.split(separator: "/").map { Int($0) }
            guard parts.count == 2, let i = parts[0], let k = parts[1], k >= 2, (1...k).contains(i) else {
                throw ConfigError("--fold must be i/k with k ≥ 2 and i in 1…k (e.g. 2/5), not '\(fold)'")
            }
            c.data.fold = i; c.data.folds = k
        }
        if let p = c.problems.first { throw ConfigError("\(config ?? "config"): \(p)") }
        guard c.data.store != nil else {
            throw ConfigError("no data: give --data STORE.h5 (a keypoint store or windows file), or data.store in the config")
        }
        return c
    }
}

struct Train: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Train an action classifier on a keypoint store.",
        discussion: """
            Cuts the store's clips into windows (the preprocessing the model file will carry), \
            holds out data.validation_share of the training clips for validation (whole clips, \
            or whole source videos, never single windows), and trains the temporal conv net, \
            printing one line per epoch (a * marks the epoch that is the model so far: the \
            last, or with training.keep: best, the one with the highest validation accuracy). \
            training.patience > 0 stops a run after that many epochs without a better \
            validation accuracy. At the end the test split is evaluated with the model.

            The run folder (--output) holds config.yaml (what was really used), checkpoint.h5 \
            (the last epoch), model.poseact.h5 (the model), metrics.csv/.json, \
            learning-curves.svg, and evaluation.json/.md with evaluation-confusion.png. \
            Interrupted (Ctrl-C, kill), the same command goes on from the last finished epoch; \
            --restart starts anew. Same seed and threads give the same model, bit for bit.

            Every key of the YAML config is documented in configs/penn-action.yaml; flags \
            override the file. Then: poseact export RUN --output NAME.poseact.h5.
            """)

    @OptionGroup var options: ConfigOverrides
    @Option(name: .shortAndLong, help: "Run folder (default: runs/<config name>).") var output: String?
    @Flag(help: "Ignore a checkpoint in the run folder and train from scratch.") var restart = false
    @Flag(help: "Print the test evaluation as one JSON object on stdout at the end.") var json = false

    func validate() throws {
        if let output { try OutputPaths.check(output, flag: "--output", kind: .folder) }
    }

    func run() throws {
        let config = try options.resolved()
        let name = options.config.map { URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent } ?? "default"
        let folder = output ?? "runs/\(name)"
        var bar: ProgressDisplay?
        let started = Date()
        let trainer = try TrainingRun(folder: folder).train(config: config, dataPath: config.data.store!, restart: restart) { event in
            switch event {
            case .data(let d):
                func side(_ w: [Window]) -> String { "\(Set(w.map(\.clipID)).count) clips, \(w.count) windows" }
                note("\(d.labels.count) labels; train \(side(d.train)); validation \(side(d.validation)); test \(side(d.test))")
                note("model: tcn, \(config.model.channels) channels, dilations \(config.model.dilations), kernel \(config.model.kernel); "
                     + "windows of \(d.spec.window) frames × \(d.spec.channels) channels at \(d.spec.fps) fps; \(config.threads) threads")
            case .resumed(let e): note("\(folder): resuming after epoch \(e)")
            case .alreadyFinished(let e): note("\(folder): already trained (\(e) epochs); --restart trains it anew")
            case .batch(let epoch, let done, let total, let loss):
                if done == 1 { bar = ProgressDisplay(title: "epoch \(epoch)", total: total, unit: "batches") }
                bar?.update(done: done, detail: String(format: "loss %.3f", loss))
            case .epoch(let r, let best, let of):
                var line = String(format: "epoch %d/%d  loss %.4f  acc %.1f%%", r.epoch, of, r.trainLoss, r.trainAccuracy * 100)
                if let vl = r.validationLoss, let va = r.validationAccuracy {
                    line += String(format: "  val loss %.4f  val acc %.1f%%", vl, va * 100)
                }
                line += String(format: "  lr %.2e  %.1f s%@", r.learningRate, r.seconds, best ? "  *" : "")
                print(line)
                fflush(stdout)
            case .stoppedEarly(let e, let b): note("stopped early after epoch \(e): no better validation accuracy since epoch \(b)")
            case .tested(let report):
                note(String(format: "test (%@): window accuracy %.2f%%, clip accuracy %.2f%% (%d clips), macro F1 %.3f",
                            config.data.testSplit ?? "", report.windows.accuracy * 100, report.clips.accuracy * 100,
                            report.clips.count, report.clips.macroF1))
                if json { print(report.json()) }
            }
        }
        let best = trainer.history.first { $0.epoch == trainer.keptEpoch }
        note(String(format: "done in %@: %d epochs, model from epoch %d%@ → %@/model.poseact.h5",
                    ProgressDisplay.duration(Date().timeIntervalSince(started)), trainer.epochsDone, trainer.keptEpoch,
                    best?.validationAccuracy.map { String(format: " (val acc %.1f%%)", $0 * 100) } ?? "", folder))
    }
}

/// One line on stderr.
func note(_ s: String) { FileHandle.standardError.write(Data((s + "\n").utf8)) }

/// A weights file, or a run folder (its model.poseact.h5).
func modelPath(_ path: String) -> String {
    var isDir: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue { return path + "/model.poseact.h5" }
    return path
}

struct Evaluate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure a trained model on held-out clips.",
        discussion: """
            Cuts the clips of --split with the model's own preprocessing (from its file), and \
            reports window-level and clip-level accuracy (a clip's label is the argmax of the \
            mean of its windows' probabilities), per-class precision, recall and F1, and the \
            confusion matrix, then the misclassified clips, the surest mistakes first (worth a \
            look for a wrong label or a bad pose track). --report FOLDER writes evaluation.json, \
            evaluation.md and evaluation-confusion.png there. Clips of labels the model does not \
            know are left out, with a warning.
            """)

    @Argument(help: "A weights file (.poseact.h5) or a run folder.") var model: String
    @Option(help: "Keypoint store (or windows file) to evaluate on.") var data: String
    @Option(help: "Split to evaluate ('all' for every clip).") var split = "test"
    @Option(help: "Folder for the Markdown report and the confusion-matrix picture.") var report: String?
    @Option(parsing: .unconditional, help: "BLAS threads (0 = all cores).") var threads = 0
    @Flag(help: "Print one JSON object instead of text.") var json = false

    func validate() throws {
        guard threads >= 0 else { throw ValidationError("--threads must be 0 (all cores) or more (got \(threads))") }
        if let report { try OutputPaths.check(report, flag: "--report", kind: .folder) }
    }

    func run() throws {
        openblas_set_num_threads(Int32(threads > 0 ? threads : ProcessInfo.processInfo.activeProcessorCount))
        let path = modelPath(model)
        let classifier = try ActionClassifier.load(path: path)
        let (windows, unknown, unscored) = try classifier.windows(fromData: data, split: split == "all" ? nil : split)
        if !unknown.isEmpty { note("warning: \(data): labels the model does not know are left out: \(unknown.joined(separator: ", "))") }
        if !unscored.isEmpty {
            note("note: \(unscored.count) clip\(unscored.count == 1 ? "" : "s") gave no window of \(classifier.spec.window) frames with "
                 + "\(Int(classifier.spec.minPoseShare * 100)) % real poses (too short or too few poses) and \(unscored.count == 1 ? "is" : "are") not scored")
        }
        guard !windows.isEmpty else {
            throw ConfigError("\(data): no windows of split '\(split)' under the model's preprocessing (window \(classifier.spec.window) frames)")
        }
        let result = classifier.evaluate(windows, modelPath: path, dataPath: data, split: split == "all" ? nil : split)
        if let report {
            let paths = try result.write(to: report, title: "\(URL(fileURLWithPath: path).lastPathComponent): \(split)")
            note("report: \(paths.joined(separator: ", "))")
        }
        if json {
            var object = result.jsonObject()
            object["unscored_clips"] = unscored.count
            let text = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: text, as: UTF8.self))
            return
        }
        print(String(format: "%@ on %@ (%@): %d windows, %d clips", path, data, split, result.windows.count, result.clips.count))
        print(String(format: "window accuracy %.2f%%   clip accuracy %.2f%%   clip macro F1 %.3f",
                     result.windows.accuracy * 100, result.clips.accuracy * 100, result.clips.macroF1))
        let width = max(5, classifier.labels.map(\.count).max() ?? 5)
        print("label".padding(toLength: width, withPad: " ", startingAt: 0) + "  precision  recall     F1  clips")
        for c in result.clips.perClass {
            print(c.label.padding(toLength: width, withPad: " ", startingAt: 0)
                  + String(format: "  %9.3f  %6.3f  %5.3f  %5d", c.precision, c.recall, c.f1, c.support))
        }
        print("confusion (clips; rows: true label, columns: predicted, in the order above):")
        for (label, row) in zip(classifier.labels, result.clips.confusion) {
            print(label.padding(toLength: width, withPad: " ", startingAt: 0) + row.map { String(format: "%5d", $0) }.joined())
        }
        // The clips worth a look first (a wrong label, a bad pose track): the surest mistakes.
        let wrong = result.misclassified ?? []
        if !wrong.isEmpty {
            let shown = wrong.prefix(10)
            print("misclassified clips (\(wrong.count); the surest first\(wrong.count > shown.count ? ", all of them in --report or --json" : "")):")
            for m in shown {
                print(String(format: "  %@  %@ taken for %@ (%.0f%%, %d windows)", m.clip, m.label, m.predicted, m.confidence * 100, m.windows))
            }
        }
    }
}

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a run's model as a self-contained weights file; several runs make an ensemble.",
        discussion: """
            The weights file (HDF5) carries everything `evaluate` and `live` need: labels, \
            joint layout, frame rate, window, stride, normalisation, architecture, the weights, \
            and the run's record (config, data, metrics). `poseact model inspect FILE` shows \
            it; h5py or h5dump read it without poseact. Written to a temp file and renamed.

            Given several runs (the same config trained with different --seed), it writes an \
            ensemble: every window goes through each net and their probabilities are averaged. \
            On a small dataset, where one net's result depends much on its seed, that is steadier \
            than any one of them; it costs one forward pass per net. The runs must share labels, \
            preprocessing and architecture.
            """)

    @Argument(help: "Run folders (poseact train --output) or weights files; two or more make an ensemble.") var sources: [String]
    @Option(name: .shortAndLong, help: "The weights file to write (NAME.poseact.h5).") var output: String

    func validate() throws {
        guard !sources.isEmpty else { throw ValidationError("give a run folder or a weights file to export") }
        for source in sources where !FileManager.default.fileExists(atPath: source) {
            throw PathError("\(source) does not exist: give a run folder (poseact train --output) or a weights file")
        }
        try OutputPaths.check(output, flag: "--output", inputs: sources.map { ("a model to export", modelPath($0)) })
    }

    func run() throws {
        var classifiers: [ActionClassifier] = []
        for source in sources {
            let path = modelPath(source)
            guard FileManager.default.fileExists(atPath: path) else {
                throw ConfigError("\(source): no model.poseact.h5 in it yet (train until one epoch has finished)")
            }
            classifiers.append(try ActionClassifier.load(path: path))
        }
        let classifier: ActionClassifier
        do {
            classifier = classifiers.count == 1 ? classifiers[0] : try ActionClassifier(ensemble: classifiers)
        } catch let e as ModelFileError {
            throw ConfigError("\(sources.joined(separator: ", ")): not one ensemble: \(e.message)")
        }
        try classifier.save(to: output)
        // Check what was written reads back to the same tensors.
        let back = try ActionClassifier.load(path: output)
        for (x, y) in zip(classifier.members, back.members) {
            for (a, b) in zip(x.state, y.state) where a.buffer.array != b.buffer.array {
                unlink(output)
                throw ConfigError("\(output): \(a.name) did not read back the same; nothing written")
            }
        }
        let nets = classifier.members.count > 1 ? "an ensemble of \(classifier.members.count) nets, " : ""
        note("\(output): \(classifier.labels.count) labels (\(classifier.labels.joined(separator: ", "))), \(nets)"
             + "\(classifier.parameterCount) parameters, window \(classifier.spec.window) frames at \(classifier.spec.fps) fps")
    }
}

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
        var line = JSONLine()
        line.add("seconds_per_epoch", round3(median))
        line.add("windows_per_second", (Double(data.train.count) / median).rounded())
        line.add("windows", data.train.count)
        line.add("parameters", trainer.model.parameterCount)
        line.add("epochs", seconds.count)
        line.add("epoch_seconds", seconds.map(round3))
        line.add("threads", config.threads)
        line.add("batch_size", config.optimizer.batchSize)
        print(line.text)
    }
}
