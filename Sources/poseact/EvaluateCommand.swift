import ArgumentParser
import Basics
import Classifier
import Foundation
import Tensor

struct Evaluate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure a trained model on held-out clips.",
        discussion: """
            Cuts the clips of --split with the model's own preprocessing (from its file), and \
            reports window-level and clip-level accuracy (a clip's label is the argmax of the \
            mean of its windows' probabilities), per-class precision, recall and F1, and the \
            confusion matrix, then the misclassified clips, the surest mistakes first (worth a \
            look for a wrong label or a bad pose track). --report FOLDER writes index.html (one \
            self-contained page: the per-class table, the confusion matrix with each cell's \
            clips, the learning curves, each misclassified clip as an animated skeleton with \
            the prediction over time), evaluation.json, evaluation.md and \
            evaluation-confusion.png there. Clips of labels the model does not \
            know are left out, with a warning.
            """)

    @Argument(help: "A weights file (.poseact.h5) or a run folder.") var model: String
    @Option(help: "Keypoint store (or windows file) to evaluate on.") var data: String
    @Option(help: "Split to evaluate ('all' for every clip).") var split = "test"
    @Option(help: "Folder for the Markdown report and the confusion-matrix picture.") var report: String?
    @Option(help: "Write each window's probabilities here (CSV: clip, start, label, then one column per label), in the windows' order.")
    var probabilities: String?
    @Option(parsing: .unconditional, help: "BLAS threads (0 = all cores).") var threads = 0
    @Flag(help: "Print one JSON object instead of text.") var json = false

    func validate() throws {
        guard threads >= 0 else { throw ValidationError("--threads must be 0 (all cores) or more (got \(threads))") }
        let inputs: [(flag: String, path: String)] = [("the model", modelPath(model)), ("--data", data)]
        let reportFiles = ["index.html", "evaluation.json", "evaluation.md", "evaluation-confusion.png"]
        if let report { try OutputPaths.check(report, flag: "--report", kind: .folder, writes: reportFiles, inputs: inputs) }
        if let probabilities {
            try OutputPaths.check(probabilities, flag: "--probabilities",
                                  inputs: inputs + (report.map { r in reportFiles.map { ("--report", r + "/" + $0) } } ?? []))
        }
    }

    func run() throws {
        // A second evaluation writing the same report or probabilities is refused.
        let locks = try [report, probabilities].compactMap { $0 }.map(OutputPaths.lock)
        defer { withExtendedLifetime(locks) {} }
        LayerThreads.set(threads > 0 ? threads : ProcessInfo.processInfo.activeProcessorCount)
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
        var result = classifier.evaluate(windows, modelPath: path, dataPath: data, split: split == "all" ? nil : split)
        result.unscoredClips = unscored.count
        if let probabilities {
            let probs = classifier.probabilities(windows)
            let text = CSV.text(header: ["clip", "start", "label"] + classifier.labels.map { "p_\($0)" }, rows: zip(windows, probs).map { w, p in
                [w.clipID, String(w.start), w.label] + p.map { String(format: "%.9g", $0) }
            })
            try AtomicFile.write(text, to: probabilities)
        }
        if let report {
            let title = "\(URL(fileURLWithPath: path).lastPathComponent): \(split)"
            let staged = try StagedFiles(folder: report)
            let names = try result.write(to: staged.staging, title: title).map { URL(fileURLWithPath: $0).lastPathComponent }
            try AtomicFile.write(try classifier.htmlReport(result, windows: windows, dataPath: data, title: title).html(), to: staged.path("index.html"))
            // A report of more labels than a picture shows has none: an old one would not be its.
            if !names.contains("evaluation-confusion.png") { unlink(report + "/evaluation-confusion.png") }
            try staged.commit(names + ["index.html"])
            note("report: \(([report + "/index.html"] + names.map { report + "/" + $0 }).joined(separator: ", "))")
        }
        if json {
            print(JSONLines.encode(result))
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
        let wrong = result.misclassified
        if !wrong.isEmpty {
            let shown = wrong.prefix(10)
            print("misclassified clips (\(wrong.count); the surest first\(wrong.count > shown.count ? ", all of them in --report or --json" : "")):")
            for m in shown {
                print(String(format: "  %@  %@ taken for %@ (%.0f%%, %d windows)", m.clip, m.label, m.predicted, m.confidence * 100, m.windows))
            }
        }
    }
}
