import ArgumentParser
import Basics
import Classifier
import Foundation
import KeypointWindows
import OutputLines

struct Train: ParsableCommand {
    /// "tcn, 128 channels, dilations [1, 2, 4, 8], kernel 5" or "stgcn, blocks [64, 64, 128, 128]", with the streams.
    static func describe(_ m: ModelSpec) -> String {
        let net = m.netSummary
        let start = m.pretrained == "none" || m.pretrained == "auto" ? "" : "; from \(m.pretrained) (its net less the head)"
        guard !m.streams.isEmpty else { return net + start }
        let weights = m.streamWeights.isEmpty ? "" : " weighted \(m.streamWeights.map { String(format: "%g", $0) }.joined(separator: ":"))"
        return net + "; streams \(m.streams.map(\.rawValue).joined(separator: ", "))" + weights + start
    }

    static let configuration = CommandConfiguration(
        abstract: "Train an action classifier on a keypoint store.",
        discussion: """
            Cuts the store's clips into windows (the preprocessing the model file will carry), \
            holds out data.validation_share of the training clips for validation (whole clips, \
            or whole source videos, never single windows), and trains the net (model.type: \
            tcn, the temporal conv net; stgcn or stgcn++, the graph nets), printing one line per epoch (a * marks the epoch that is the model so far: the \
            last, or with training.keep: best, the one with the highest validation accuracy). \
            training.patience > 0 stops a run after that many epochs without a better \
            validation accuracy. At the end the test split is evaluated with the model.

            The run folder (--output) holds config.yaml (what was really used), checkpoint.h5 \
            (the last epoch), model.poseact.h5 (the model), metrics.csv/.json, \
            learning-curves.svg, and evaluation.json/.md with evaluation-confusion.png. \
            Interrupted (Ctrl-C, kill), the same command goes on from the last finished epoch; \
            --restart starts anew. Same seed and threads give the same model, bit for bit.

            With streams (model.streams or --streams joint,bone,joint_motion,bone_motion), one \
            net is trained per stream on its own features, each a run of its own in \
            RUN/streams/NAME, and RUN/model.poseact.h5 is their ensemble: a window's \
            probabilities are the streams' averaged with model.stream_weights. On a cluster, \
            --task i/n (or auto, from an array job's variables; docs/cluster.md) trains only \
            every n-th stream from the i-th, all tasks into the same RUN; then the same command \
            with --pool instead trains nothing and makes the ensemble.

            Every key of the YAML config is documented in configs/penn-action.yaml; flags \
            override the file. Then: poseact export RUN --output NAME.poseact.h5.
            """)

    @OptionGroup var options: ConfigOverrides
    @Option(name: .shortAndLong, help: "Run folder (default: runs/<config name>).") var output: String?
    @Flag(help: "Ignore a checkpoint in the run folder and train from scratch.") var restart = false
    @Option(help: ArgumentHelp("Train only this task's share of the streams: i/n, or auto (auto/n) from an array job's variables; then --pool.",
                               valueName: "i/n|auto")) var task: TaskArgument?
    @Flag(help: "Train nothing: make the ensemble of the streams that the tasks trained in the run folder.") var pool = false
    @Flag(help: "Print each epoch, then the test evaluation, as one JSON object per line on stdout.") var json = false

    /// What a run folder holds (TrainingRun).
    static let runFiles = ["config.yaml", "checkpoint.h5", "model.poseact.h5", "metrics.csv", "metrics.json", "learning-curves.svg",
                           "evaluation.json", "evaluation.md", "evaluation-confusion.png"]

    /// The backbones poseact ships (backbones/*.poseact.h5 where it finds its shipped folders).
    static var shippedBackbones: [String] { Backbone.shipped(in: ShippedFolders.candidates("backbones").map(\.path)) }

    func validate() throws {
        guard !(pool && task != nil) else { throw ValidationError("--pool gathers what the tasks trained: give it without --task") }
        guard !(pool && restart) else { throw ValidationError("--pool trains nothing: give it without --restart") }
        _ = try task?.resolved(flag: "--task")
        // (Not --config: a run's own config.yaml given again is read before it is rewritten, with the flags applied.)
        if let output {
            try OutputPaths.check(output, flag: "--output", kind: .folder, writes: Self.runFiles, inputs: options.data.map { [("--data", $0)] } ?? [])
        }
    }

    func run() throws {
        let config = try options.resolved()
        let name = options.config.map { URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent } ?? "default"
        let folder = output ?? "runs/\(name)"
        var bar: ProgressDisplay?
        let started = Date()
        let share = try task?.resolved(flag: "--task") ?? .whole
        if share.count > 1 { note("train: task \(share)") }
        let trainers = try TrainingRun(folder: folder, shippedBackbones: Self.shippedBackbones).train(config: config, dataPath: config.data.store!, restart: restart,
                                                             share: share, poolOnly: pool) { event in
            switch event {
            case .pretrained(let path, let reason):
                note("model.pretrained auto: " + (path.map { "from \($0)" } ?? "random weights") + " (\(reason))")
            case .stream(let stream, let number, let of):
                note("stream \(number)/\(of): \(stream.rawValue) (features \(stream.features.map(\.rawValue).joined(separator: ", "))) → \(TrainingRun.streamFolder(folder, stream))")
            case .data(let d):
                func side(_ w: [Window]) -> String { "\(Set(w.map(\.clipID)).count) clips, \(w.count) windows" }
                note("\(d.labels.count) labels; train \(side(d.train)); validation \(side(d.validation)); test \(side(d.test))")
                note("model: \(Self.describe(config.model)); "
                     + "windows of \(d.spec.window) frames × \(d.spec.channels) channels at \(d.spec.fps) fps; \(config.threads) threads")
            case .resumed(let e): note("\(folder): resuming after epoch \(e)")
            case .alreadyFinished(let e): note("\(folder): already trained (\(e) epochs); --restart trains it anew")
            case .batch(let epoch, let done, let total, let loss):
                if done == 1 { bar = ProgressDisplay(title: "epoch \(epoch)", total: total, unit: "batches") }
                bar?.update(done: done, detail: String(format: "loss %.3f", loss))
            case .epoch(let r, let best, let of) where json:
                print(JSONLines.encode(EpochLine(r, epochs: of, best: best)))
                fflush(stdout)
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
                if json { print(JSONLines.encode(report)) }
            }
        }
        let kept = trainers.map { t -> String in
            let best = t.history.first { $0.epoch == t.keptEpoch }
            return "\(t.epochsDone) epochs, model from epoch \(t.keptEpoch)"
                + (best?.validationAccuracy.map { String(format: " (val acc %.1f%%)", $0 * 100) } ?? "")
        }
        if share.count > 1 {
            let mine = share.share(config.model.streams)
            note("task \(share.index)/\(share.count) done in \(ProgressDisplay.duration(Date().timeIntervalSince(started))): "
                 + (mine.isEmpty ? "no stream is this task's" : zip(mine, kept).map { "\($0.rawValue): \($1)" }.joined(separator: "; "))
                 + "; when every task is done, the same command with --pool instead of --task makes the ensemble")
            return
        }
        let streams = config.model.streams.isEmpty ? "" : "\(trainers.count) streams (" + zip(config.model.streams, kept).map { "\($0.rawValue): \($1)" }.joined(separator: "; ") + ")"
        note(String(format: "done in %@: %@ → %@/model.poseact.h5", ProgressDisplay.duration(Date().timeIntervalSince(started)),
                    streams.isEmpty ? kept[0] : streams, folder))
    }
}
