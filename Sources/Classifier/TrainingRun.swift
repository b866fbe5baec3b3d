import Basics
import Evaluation
import Foundation
import Keypoints
import KeypointWindows
import Tensor

/// A training run in a folder, resumable:
///
///     RUN/config.yaml             the effective config (file + flags)
///     RUN/checkpoint.h5           the last finished epoch: weights, optimiser, history
///     RUN/model.poseact.h5        the kept epoch (training.keep: the last, or the best on validation)
///     RUN/metrics.csv, .json      one row per epoch
///     RUN/learning-curves.svg     loss and accuracy per epoch
///     RUN/evaluation.json, .md, evaluation-confusion.png   the test split, with the best model
///
/// With `model.streams`, each stream is a run of its own in RUN/streams/NAME (the config
/// with that stream's features), and RUN/model.poseact.h5 is their weighted ensemble, whose
/// test evaluation is RUN's. The streams can be trained by several tasks at once (an
/// array job's `share` each, into the same RUN), and the ensemble made by a last step that
/// trains nothing (`poolOnly`).
///
/// Every file is written to a temp file and renamed, so an interrupted run leaves the
/// last finished epoch behind, and running the same command again goes on from it.
public struct TrainingRun {
    public enum Event {
        case data(TrainingData)
        case resumed(epoch: Int)
        case alreadyFinished(epochs: Int)
        case batch(epoch: Int, done: Int, total: Int, loss: Double)
        case epoch(EpochRecord, best: Bool, of: Int)
        case stoppedEarly(epoch: Int, bestEpoch: Int)
        case tested(EvaluationReport)
        /// The events that follow are the run of stream `number` (1-based) of `of`.
        case stream(Stream, number: Int, of: Int)
        /// `model.pretrained: auto` chose this backbone (nil: random weights), for this reason.
        case pretrained(String?, reason: String)
    }

    public let folder: String
    public var checkpoint: String { folder + "/checkpoint.h5" }
    public var model: String { folder + "/model.poseact.h5" }

    /// The backbones `model.pretrained: auto` may choose from (`Backbone.shipped`).
    public var shippedBackbones: [String] = []

    public init(folder: String, shippedBackbones: [String] = []) { self.folder = folder; self.shippedBackbones = shippedBackbones }

    /// Trains (or goes on training) per `config` on the data at `dataPath`. `restart`
    /// ignores an existing checkpoint. With streams, `share` trains only that task's streams
    /// (and no ensemble), and `poolOnly` trains nothing: it makes the ensemble of the
    /// streams' finished runs. Returns the trainers at the end: one, or one per stream trained.
    @discardableResult
    public func train(config: TrainingConfig, dataPath: String, restart: Bool = false, share: ArrayTask = .whole,
                      poolOnly: Bool = false, events: (Event) -> Void = { _ in }) throws -> [Trainer] {
        if let p = config.problems.first { throw ConfigError("config: \(p)") }
        guard !config.model.streams.isEmpty else {
            guard share.count == 1, !poolOnly else {
                throw ConfigError("tasks and pooling split a run's streams (model.streams), and this config trains one net: "
                    + "give --streams, or split seeds and folds with crossval --task")
            }
            return [try trainNet(config: config, dataPath: dataPath, restart: restart, events: events)]
        }
        if WindowsFile.isWindowsFile(dataPath) {
            throw ConfigError("\(dataPath): a windows file holds one set of features, and each of model.streams needs its own: "
                + "train the streams on the keypoint store")
        }
        var trainers: [Trainer] = []
        let streams = config.model.streams
        for (i, stream) in streams.enumerated() where poolOnly || share.owns(i) {
            events(.stream(stream, number: i + 1, of: streams.count))
            trainers.append(try TrainingRun(folder: Self.streamFolder(folder, stream), shippedBackbones: shippedBackbones)
                .trainNet(config: Self.streamConfig(config, stream), dataPath: dataPath, restart: restart && !poolOnly,
                          finishedOnly: poolOnly, events: events))
        }
        if share.count > 1 { return trainers }   // the ensemble waits for every task: poolOnly
        // The ensemble: each stream's kept model, weighted; its test split as the run's.
        try AtomicFile.write(config.yaml(), to: folder + "/config.yaml")
        let nets = try streams.map { try ActionClassifier.load(path: TrainingRun(folder: Self.streamFolder(folder, $0)).model) }
        let weights = config.model.streamWeights.isEmpty ? nil : config.model.streamWeights
        let ensemble = try ActionClassifier(ensemble: nets, weights: weights, streams: streams)
        let data = trainers[0].data
        if !data.test.isEmpty {
            // The windows again, with every stream's features together (the ensemble's spec).
            var all = config
            all.preprocessing.features = ensemble.spec.features
            let test = try TrainingData.load(path: dataPath, config: all).test
            let report = ensemble.evaluate(test, modelPath: model, dataPath: dataPath, split: config.data.testSplit)
            try report.write(to: folder, title: "\(URL(fileURLWithPath: folder).lastPathComponent): \(config.data.testSplit ?? "test")")
            ensemble.training.test = report
            events(.tested(report))
        }
        try ensemble.saveCheckingReadBack(to: model)
        return trainers
    }

    /// RUN/streams/NAME.
    public static func streamFolder(_ folder: String, _ stream: Stream) -> String { "\(folder)/streams/\(stream.rawValue)" }

    /// The config of one stream's run: the stream's features, one net.
    public static func streamConfig(_ config: TrainingConfig, _ stream: Stream) -> TrainingConfig {
        var c = config
        c.preprocessing.features = stream.features
        c.model.streams = []
        c.model.streamWeights = []
        return c
    }

    /// One net's run in `folder`; with `finishedOnly`, a run that is not finished is an error.
    func trainNet(config given: TrainingConfig, dataPath: String, restart: Bool, finishedOnly: Bool = false,
                  events: (Event) -> Void) throws -> Trainer {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), !isDir.boolValue {
            throw ConfigError("\(folder): exists and is not a folder; choose another --output")
        }
        // The GEMMs and the layers' loops on `training.threads` cores for the run; then back to
        // one thread (the pose engine's setting), so idle OpenBLAS workers do not spin beside it.
        LayerThreads.set(given.threads)
        defer { BLAS.useSingleThread() }
        let data = try TrainingData.load(path: dataPath, config: given)
        // auto becomes what it chose before anything compares or records the config: the
        // run folder's config.yaml says which backbone, and a resumed run chooses the same.
        var config = given
        if config.model.pretrained == "auto" {
            let clips = Dictionary(grouping: data.train + data.validation, by: \.label).mapValues { Set($0.map(\.clipID)).count }
            let (path, reason) = Backbone.auto(shipped: shippedBackbones, config: config, spec: data.spec, labelClips: clips)
            config.model.pretrained = path ?? "none"
            events(.pretrained(path, reason: reason))
        }
        let resumeFrom = try resumableCheckpoint(config: config, restart: restart, finishedOnly: finishedOnly)
        let unfinished = "\(folder): not trained to the end; run its task (the same train command with --task) before pooling"
        if finishedOnly && resumeFrom == nil { throw ConfigError(unfinished) }
        // Checked with the data, before anything is said or the run folder is touched.
        let backbone = resumeFrom != nil || config.model.pretrained == "none" ? nil
            : try Backbone(path: config.model.pretrained, spec: data.spec, architecture: Architecture(config: config, classes: data.labels.count))
        events(.data(data))
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // Taken once the data is known to be good, so that a refused run leaves no folder.
        let lock = try FileLock(folder + "/.lock", what: "the run folder \(folder)")
        defer { withExtendedLifetime(lock) {} }
        // A run killed while writing leaves a temp file behind: never a file of the run.
        for f in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where f.hasSuffix(".tmp") {
            unlink(folder + "/" + f)
        }
        try AtomicFile.write(config.yaml(), to: folder + "/config.yaml")

        let trainer: Trainer
        if let resumeFrom {
            trainer = try Trainer.resume(from: resumeFrom, config: config, data: data)
            if finishedOnly && !trainer.finished { throw ConfigError(unfinished) }
            if trainer.finished { events(.alreadyFinished(epochs: trainer.epochsDone)) }
            else { events(.resumed(epoch: trainer.epochsDone)) }
        } else {
            for f in ["checkpoint.h5", "model.poseact.h5", "metrics.csv", "metrics.json", "learning-curves.svg",
                      "evaluation.json", "evaluation.md", "evaluation-confusion.png"] {
                unlink(folder + "/" + f)
            }
            trainer = Trainer(config: config, data: data, backbone: backbone)
        }
        try trainToTheEnd(trainer, epochs: config.training.epochs, events: events)
        try finish(trainer, data: data, dataPath: dataPath, split: config.data.testSplit, events: events)
        return trainer
    }

    /// The checkpoint to resume from: the folder's, when it holds a run of the very same
    /// config (epochs may grow, the schedule then differs; with `finishedOnly` not even that).
    private func resumableCheckpoint(config: TrainingConfig, restart: Bool, finishedOnly: Bool) throws -> String? {
        guard !restart, FileManager.default.fileExists(atPath: checkpoint) else { return nil }
        // (A checkpoint of another poseact version may not even decode: another config too.)
        var a = try? Trainer.checkpointConfig(path: checkpoint), b = config
        // Pooled streams must be exactly what this config trains, epochs included: an
        // ensemble of streams trained for 1 and for 50 epochs is no run of this config.
        if !finishedOnly { a?.training.epochs = 0; b.training.epochs = 0 }
        guard a == b else {
            throw ConfigError("\(folder): holds a run with another config (see \(folder)/config.yaml); "
                              + "add --restart to train it anew, or choose another --output")
        }
        return checkpoint
    }

    /// Epoch after epoch until the trainer is finished: each one's model kept when it is the
    /// best so far, the checkpoint and the history written.
    private func trainToTheEnd(_ trainer: Trainer, epochs: Int, events: (Event) -> Void) throws {
        while !trainer.finished {
            let epoch = trainer.epochsDone + 1
            let record = withoutActuallyEscaping(events) { events in
                trainer.runEpoch { done, total, loss in events(.batch(epoch: epoch, done: done, total: total, loss: loss)) }
            }
            guard record.trainLoss.isFinite else {
                let kept = record.epoch > 1 ? "the checkpoint of epoch \(record.epoch - 1) is kept" : "nothing was saved"
                throw ConfigError("epoch \(record.epoch): the training loss is not a finite number (the weights would turn to NaN): "
                    + "stopped, \(kept). Look for absurd values in the data (poseact dataset inspect), or lower optimizer.learning_rate")
            }
            let best = trainer.keptEpoch == record.epoch
            if best { try trainer.saveModel(to: model) }
            try trainer.saveCheckpoint(to: checkpoint)
            try writeHistory(trainer)
            events(.epoch(record, best: best, of: epochs))
            if trainer.stoppedEarly { events(.stoppedEarly(epoch: record.epoch, bestEpoch: trainer.bestEpoch)) }
        }
    }

    /// The kept model's labels as prototypes of its training windows (for `enroll`), and the
    /// test split evaluated with it, both recorded in the model file itself.
    private func finish(_ trainer: Trainer, data: TrainingData, dataPath: String, split: String?, events: (Event) -> Void) throws {
        let best = try ActionClassifier.load(path: model)
        let (embeddings, labels) = best.embeddings(data.train + data.validation)
        best.prototypes = LabelPrototypes(embeddings: embeddings, labels: labels)
        best.training = trainer.record()
        var report: EvaluationReport?
        if !data.test.isEmpty {
            let r = best.evaluate(data.test, modelPath: model, dataPath: dataPath, split: split)
            try r.write(to: folder, title: "\(URL(fileURLWithPath: folder).lastPathComponent): \(split ?? "test")")
            best.training.test = r
            report = r
        }
        try best.save(to: model)
        if let report { events(.tested(report)) }
    }

    func writeHistory(_ trainer: Trainer) throws {
        try AtomicFile.write(LearningCurves.csv(trainer.history), to: folder + "/metrics.csv")
        try AtomicFile.write(JSONLines.encode(trainer.history) + "\n", to: folder + "/metrics.json")
        let name = URL(fileURLWithPath: folder).lastPathComponent
        try AtomicFile.write(LearningCurves.svg(trainer.history, title: name, bestEpoch: trainer.keptEpoch),
                             to: folder + "/learning-curves.svg")
    }
}
