import ArgumentParser
import Basics
import Classifier
import Foundation

struct Enroll: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add labels to a trained model from a few clips each, in seconds, without training.",
        discussion: """
            Each label of --data becomes a prototype: the mean direction of its windows in the \
            net's embedding (what the model's last layer reads), seen from the centre of the \
            model's own training windows. A window is then the label whose prototype is nearest \
            in angle. The new model's last layer does exactly that, so `evaluate`, `live`, \
            `annotate` and ONNX export run it as any model, and a label enrolled is recognised \
            at once. The net itself is not changed.

            Every label of the result is a prototype, the model's own too: `train` records \
            them in the weights file (models from before poseact 0.44 have none: give their \
            labels' clips in --data too, or --only). A label the model already has gains the \
            new windows. --only keeps just the labels of --data.

            The clips are the train split of --data (--split; every clip when it has no splits); \
            --clips-per-label N --draw D takes the very clips `train` draws with \
            data.clips_per_label N and data.draw D, for learning curves. One clip a label \
            works; five do better (docs/train.md has the measurements).
            """)

    @Argument(help: "A weights file (.poseact.h5) or a run folder: one net, not an ensemble.") var model: String
    @Option(help: "Keypoint store (or windows file) with the clips of the labels to add.") var data: String
    @Option(name: .shortAndLong, help: "The weights file to write (NAME.poseact.h5).") var output: String
    @Option(help: "Only these labels of --data (comma-separated; default: all of them).") var labels: String?
    @Option(help: "The split of --data whose clips are learnt from.") var split = "train"
    @Option(help: "Per label, only this many clips, drawn as train's data.clips_per_label draws them (0: all).")
    var clipsPerLabel = 0
    @Option(help: "The draw of --clips-per-label (train's data.draw).") var draw = 1
    @Flag(help: "The result knows only the labels of --data, not the model's own.") var only = false
    @Flag(help: "Print one JSON object instead of text.") var json = false

    var chosenLabels: [String]? {
        labels.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
    }

    func validate() throws {
        guard clipsPerLabel >= 0 else { throw ValidationError("--clips-per-label must be 0 (all) or more (got \(clipsPerLabel))") }
        guard draw >= 1 else { throw ValidationError("--draw must be 1 or more (got \(draw))") }
        if let chosen = chosenLabels, chosen.isEmpty { throw ValidationError("--labels \(labels ?? ""): no label in it") }
        guard FileManager.default.fileExists(atPath: modelPath(model)) else {
            throw PathError("\(model): no such weights file or run folder (poseact train --output)")
        }
        try OutputPaths.check(output, flag: "--output", inputs: [("the model", modelPath(model)), ("--data", data)])
        if output.lowercased().hasSuffix(".onnx") {
            throw ValidationError("--output \(output): enroll writes a weights file (NAME.poseact.h5); poseact export makes the ONNX")
        }
    }

    func run() throws {
        let lock = try OutputPaths.lock(output)
        defer { withExtendedLifetime(lock) {} }
        let started = Date()
        let path = modelPath(model)
        let classifier = try ActionClassifier.load(path: path)
        guard classifier.members.count == 1, classifier.members[0].features == classifier.spec.features else {
            throw ConfigError("\(path): an ensemble of \(classifier.members.count) nets; enroll adds labels to one net (export one run)")
        }
        var config = classifier.training.config ?? TrainingConfig()
        config.preprocessing = classifier.spec
        config.augmentation.turnDegrees = 0
        config.data.trainSplit = split
        config.data.clipsPerLabel = clipsPerLabel
        config.data.draw = draw
        var windows = try TrainingData.trainingWindows(path: data, config: config)
        let found = Array(Set(windows.map(\.label))).sorted()
        if let chosen = chosenLabels {
            if let missing = chosen.first(where: { !found.contains($0) }) {
                throw ConfigError("\(data): no windows of the label '\(missing)' in split '\(split)' (labels: \(found.joined(separator: ", ")))")
            }
            windows.removeAll { !chosen.contains($0.label) }
        }
        let enrolled = chosenLabels ?? found
        let prototypes = try classifier.prototypes(enrolling: windows, labels: enrolled, only: only, path: path)
        guard prototypes.labels.count >= 2 else {
            throw ConfigError("\(data): the result would know one label ('\(prototypes.labels[0])'); a classifier needs two: enroll another, or drop --only")
        }
        let clips = Dictionary(grouping: windows, by: \.label).mapValues { Set($0.map(\.clipID)).count }
        let record = EnrolmentRecord(data: data, clips: clips, windows: Dictionary(grouping: windows, by: \.label).mapValues(\.count))
        try classifier.enrolled(prototypes, record: record).saveCheckingReadBack(to: output)
        let seconds = Date().timeIntervalSince(started)
        if json {
            print(JSONLines.encode(EnrolSummary(model: path, output: output, labels: prototypes.labels, enrolled: enrolled,
                                                clips: clips, windows: record.windows, seconds: seconds)))
            return
        }
        for label in enrolled {
            print("enrolled \(label): \(clips[label] ?? 0) clips, \(record.windows[label] ?? 0) windows")
        }
        let kept = prototypes.labels.filter { !enrolled.contains($0) }
        print(String(format: "%@: %d labels (%@%@), written in %.1f s", output, prototypes.labels.count,
                     kept.isEmpty ? "" : "\(kept.count) of the model's and ", "\(enrolled.count) enrolled", seconds))
    }
}

/// `enroll --json`'s one object.
struct EnrolSummary: Encodable {
    let model: String, output: String
    let labels: [String], enrolled: [String]
    let clips: [String: Int], windows: [String: Int]
    let seconds: Double
}
