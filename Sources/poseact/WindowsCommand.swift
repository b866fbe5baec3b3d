import ArgumentParser
import Basics
import Classifier
import Foundation
import Keypoints
import KeypointWindows

/// `poseact windows`: the training windows of a keypoint store, through the one
/// preprocessing module `live` uses, into a windows file for `train`.
struct WindowsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "windows",
        abstract: "Cut a keypoint store into normalised training windows (HDF5).",
        discussion: """
            Steps, in order: \(Preprocessing.steps.joined(separator: " → ")). Joints are mapped \
            by name to the layout (vision: Apple's 18; blazepose: BlazePose's 33; all: those plus \
            head, neck, root), clips resampled to --fps, centred on the root and scaled by the \
            torso; a window with fewer than --min-pose-share real poses is not used. The \
            parameters are stored in the output file and later in the weights file. \
            --config takes them from a training config's preprocessing section (every key, \
            features and normalisation included); the flags override it.
            """)

    @Argument(help: "A keypoint store (.h5).") var store: String
    @Option(help: "Take the preprocessing of this training config (YAML).") var config: String?
    @Option(help: "Take the preprocessing of this weights file or run folder: the windows exactly as the model sees them.") var model: String?
    @Option(parsing: .unconditional, help: "Frames per window (default 32).") var window: Int?
    @Option(parsing: .unconditional, help: "Frames between window starts (default 8).") var stride: Int?
    @Option(parsing: .unconditional, help: "The model frame rate (default 30).") var fps: Double?
    @Option(help: "Joint layout (default vision).") var joints: JointLayout?
    @Option(help: "Smallest share of real poses in a used window (default 0.6).") var minPoseShare: Double?
    @Option(name: .shortAndLong, help: "The windows file to write (.h5).") var output: String
    @Flag(help: "Print one JSON object instead of a table.") var json = false

    func validate() throws {
        guard (1...PreprocessingSpec.maxWindow).contains(window ?? 1), (1...PreprocessingSpec.maxWindow).contains(stride ?? 1) else {
            throw ValidationError("--window and --stride must be in 1…\(PreprocessingSpec.maxWindow) frames")
        }
        if let fps { try validateFPS(fps) }
        guard (0...1).contains(minPoseShare ?? 0) else { throw ValidationError("--min-pose-share must be in 0…1") }
        try OutputPaths.check(output, flag: "--output", inputs: [("the store", store)] + (config.map { [("--config", $0)] } ?? [])
                              + (model.map { [("--model", modelPath($0))] } ?? []))
    }

    /// `windows --json`.
    struct Summary: Encodable {
        var output: String
        var windows: Int, channels: Int
        var spec: PreprocessingSpec
        /// Label → split → windows.
        var perLabel: [String: [String: Int]]
        var perSplit: [String: Int]

        enum CodingKeys: String, CodingKey { case output, windows, channels, spec, perLabel, perSplit = "per_split"}
    }

    func run() throws {
        // A second run writing the same file is refused, not left to replace this one's.
        let lock = try OutputPaths.lock(output)
        defer { withExtendedLifetime(lock) {} }
        // Without a config, the training defaults (configs/penn-action.yaml), as `train` uses.
        var spec = try model.map { try ActionClassifier.load(path: modelPath($0)).spec }
            ?? (config.map { try TrainingConfig.load(path: $0) } ?? TrainingConfig()).preprocessing
        if let joints { spec.joints = joints.names }
        if let fps { spec.fps = fps }
        if let window { spec.window = window }
        if let stride { spec.stride = stride }
        if let minPoseShare { spec.minPoseShare = minPoseShare }
        let window = spec.window
        if let problem = spec.problems.first { throw DatasetError("preprocessing: \(problem)") }
        let (set, report) = try WindowsFile.build(store: KeypointStore(path: store), spec: spec)
        guard !set.windows.isEmpty else {
            throw DatasetError("\(store): no clip gives a window of \(window) frames with \(Int(spec.minPoseShare * 100)) % real poses; "
                               + "lower --window or --min-pose-share (nothing written)")
        }
        try set.write(to: output)
        let splits = Array(Set(report.values.flatMap(\.keys))).sorted()
        if json {
            print(JSONLines.encode(Summary(
                output: output, windows: set.windows.count, channels: spec.channels, spec: spec, perLabel: report,
                perSplit: Dictionary(uniqueKeysWithValues: splits.map { s in (s, report.values.reduce(0) { $0 + ($1[s] ?? 0) }) }))))
            return
        }
        let width = max(5, (report.keys.map(\.count).max() ?? 0))
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
        func num(_ v: Int) -> String { let s = String(v); return String(repeating: " ", count: max(0, 8 - s.count)) + s }
        print(pad("label", width) + splits.map { String(repeating: " ", count: max(1, 8 - $0.count)) + $0 }.joined())
        for label in report.keys.sorted() {
            print(pad(label, width) + splits.map { num(report[label]?[$0] ?? 0) }.joined())
        }
        print(pad("total", width) + splits.map { s in num(report.values.reduce(0) { $0 + ($1[s] ?? 0) }) }.joined())
        FileHandle.standardError.write(Data("\(output): \(set.windows.count) windows of \(window) frames × \(spec.channels) channels\n".utf8))
    }
}
