import ArgumentParser
import Basics
import Classifier
import Foundation

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
            than any one of them; it costs one forward pass per net. The runs must share labels \
            and preprocessing but for the features: runs on other features or of other nets \
            (model.type) make a multi-stream ensemble, each net reading its own features \
            from one window (poseact train --streams does this itself, with weights).

            --output NAME.onnx (or --format onnx) writes the model as ONNX (opset 17) for other \
            runtimes: inputs windows (batch, frames, features) and mask (batch, frames), output \
            probabilities (batch, labels), the mirror-image average and the ensemble's weighted \
            mean inside; the labels and the preprocessing spec (JSON) in its metadata. Every net \
            type (tcn, stgcn, stgcn++) and every ensemble of them, streams included. \
            notebooks-free-scripts/preprocess_reference.py makes the windows from a keypoint \
            CSV with numpy alone.
            """)

    @Argument(help: "Run folders (poseact train --output) or weights files; two or more make an ensemble.") var sources: [String]
    @Option(name: .shortAndLong, help: "The file to write (NAME.poseact.h5, or NAME.onnx).") var output: String
    @Option(help: "poseact (the weights file) or onnx (default: from --output's extension).") var format: String?

    var writesONNX: Bool { format == "onnx" || (format == nil && output.lowercased().hasSuffix(".onnx")) }

    func validate() throws {
        if let format, format != "poseact" && format != "onnx" { throw ValidationError("--format \(format): poseact or onnx") }
        guard !sources.isEmpty else { throw ValidationError("give a run folder or a weights file to export") }
        for source in sources where !FileManager.default.fileExists(atPath: source) {
            throw PathError("\(source) does not exist: give a run folder (poseact train --output) or a weights file")
        }
        for source in sources where !FileManager.default.fileExists(atPath: modelPath(source)) {
            throw PathError("\(source): no model.poseact.h5 in it yet (train until one epoch has finished)")
        }
        try OutputPaths.check(output, flag: "--output", inputs: sources.map { ("a model to export", modelPath($0)) })
        // The name says what the file is: an ONNX under a weights file's name (or the other
        // way round) would be read as what it is not.
        let lower = output.lowercased()
        if writesONNX && lower.hasSuffix(".h5") {
            throw ValidationError("--output \(output): ONNX goes in a .onnx file; .h5 names poseact's weights files")
        }
        if !writesONNX && lower.hasSuffix(".onnx") {
            throw ValidationError("--output \(output): --format poseact writes a weights file; name it .poseact.h5")
        }
        // A run folder's own files are train's: its checkpoint is what a run resumes from.
        let folder = URL(fileURLWithPath: output).deletingLastPathComponent().path
        let name = URL(fileURLWithPath: output).lastPathComponent
        if ["checkpoint.h5", "model.poseact.h5"].contains(name) && FileManager.default.fileExists(atPath: folder + "/config.yaml")
            && FileManager.default.fileExists(atPath: folder + "/checkpoint.h5") {
            throw ValidationError("--output \(output) is a file of the run folder \(folder) (train writes and resumes from it); give another path")
        }
    }

    func run() throws {
        // A second run writing the same file is refused, not left to replace this one's.
        let lock = try OutputPaths.lock(output)
        defer { withExtendedLifetime(lock) {} }
        let classifiers = try sources.map { try ActionClassifier.load(path: modelPath($0)) }
        let classifier: ActionClassifier
        do {
            classifier = classifiers.count == 1 ? classifiers[0] : try ActionClassifier(ensemble: classifiers)
        } catch let e as ModelFileError {
            throw ConfigError("\(sources.joined(separator: ", ")): not one ensemble: \(e.message)")
        }
        if writesONNX {
            let bytes: [UInt8]
            do { bytes = try classifier.onnx() } catch let e as ONNXExportError { throw ConfigError("\(sources.joined(separator: ", ")): \(e.description)") }
            try AtomicFile.write(Data(bytes), to: output)
            note("\(output): ONNX opset 17, \(classifier.labels.count) labels, inputs windows (batch, \(classifier.spec.window), \(classifier.spec.channels)) and mask (batch, \(classifier.spec.window)), output probabilities; \(bytes.count / 1024) kB")
            return
        }
        try classifier.saveCheckingReadBack(to: output)
        let nets = classifier.members.count > 1 ? "an ensemble of \(classifier.members.count) nets, " : ""
        note("\(output): \(classifier.labels.count) labels (\(classifier.labels.joined(separator: ", "))), \(nets)"
             + "\(classifier.parameterCount) parameters, window \(classifier.spec.window) frames at \(classifier.spec.fps) fps")
    }
}
