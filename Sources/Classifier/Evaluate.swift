import Dataset
import Evaluation
import Foundation
import Media

extension ActionClassifier {
    /// Window- and clip-level metrics of the model on `windows` (a clip's label is the
    /// argmax of the mean of its windows' probabilities). Windows of labels the model
    /// does not know must be left out by the caller.
    public func evaluate(_ windows: [Window], modelPath: String, dataPath: String, split: String?) -> EvaluationReport {
        let index = Dictionary(uniqueKeysWithValues: labels.enumerated().map { ($1, $0) })
        let truth = windows.map { index[$0.label]! }
        let probs = probabilities(windows)
        let predicted = probs.map { Evaluation.argmax($0) }
        let clips = ClipVote.aggregate(clipIDs: windows.map(\.clipID), truth: truth, probabilities: probs)
        let wrong = clips.clipIDs.indices.filter { clips.truth[$0] != clips.predicted[$0] }
            .map { MisclassifiedClip(clip: clips.clipIDs[$0], label: labels[clips.truth[$0]], predicted: labels[clips.predicted[$0]],
                                     confidence: clips.confidence[$0], windows: clips.windows[$0]) }
            .sorted { ($0.confidence, $1.clip) > ($1.confidence, $0.clip) }
        return EvaluationReport(model: modelPath, data: dataPath, split: split,
                                windows: ClassificationMetrics(labels: labels, truth: truth, predicted: predicted),
                                clips: ClassificationMetrics(labels: labels, truth: clips.truth, predicted: clips.predicted),
                                misclassified: wrong)
    }

    /// The windows of a keypoint store (or windows file) under this model's preprocessing,
    /// of one split (nil: all clips), the labels found that the model does not know (their
    /// windows are left out), and the clips of known labels that gave no window (too short
    /// or too few poses), which cannot be scored.
    public func windows(fromData path: String, split: String?) throws -> (windows: [Window], unknownLabels: [String], unscoredClips: [String]) {
        guard FileManager.default.fileExists(atPath: path) else { throw ConfigError("\(path): no such file") }
        guard HDF5.isHDF5(path) else { throw ConfigError("\(path): not an HDF5 keypoint store or windows file") }
        var all: [Window] = []
        var unscored: [String] = []
        if WindowsFile.isWindowsFile(path) {
            let set = try WindowsFile.read(path: path)
            guard set.spec == spec else {
                throw ConfigError("\(path): these windows were cut with other preprocessing than the model's; give the keypoint store instead")
            }
            all = set.windows.filter { split == nil || $0.split == split }
        } else {
            let store = try KeypointStore(path: path)
            let entries = store.entries.filter { split == nil || $0.split == split }
            guard !entries.isEmpty else {
                let splits = Set(store.entries.map { $0.split ?? "none" }).sorted().joined(separator: ", ")
                throw ConfigError("\(path): no clips of split '\(split ?? "")' (splits: \(splits)); use --split")
            }
            for e in entries {
                let clip = try store.read(e.id)
                if let p = Preprocessing.problem(with: clip, spec: spec) { throw ConfigError("\(path): \(p)") }
                let ws = Preprocessing.windows(of: clip, spec: spec)
                if ws.isEmpty && labels.contains(e.label) { unscored.append(e.id) }
                all += ws
            }
        }
        let known = Set(labels)
        let unknown = Set(all.map(\.label)).subtracting(known).sorted()
        return (all.filter { known.contains($0.label) }, unknown, unscored)
    }
}

extension EvaluationReport {
    /// Labels up to which the confusion matrix is drawn: a picture of more would be too
    /// large to read (and, past ~370, for the PNG encoder); the JSON and Markdown keep it all.
    public static let maxPictureLabels = 150

    /// Writes `NAME.json`, `NAME.md` and `NAME-confusion.png` (up to `maxPictureLabels`
    /// labels) into `folder`; returns their paths.
    @discardableResult
    public func write(to folder: String, name: String = "evaluation", title: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let png = "\(name)-confusion.png"
        let paths = ["\(folder)/\(name).json", "\(folder)/\(name).md", "\(folder)/\(png)"]
        let drawn = clips.labels.count <= Self.maxPictureLabels
        try AtomicFile.write(json() + "\n", to: paths[0])
        try AtomicFile.write(markdown(confusionPicture: drawn ? png : nil), to: paths[1])
        guard drawn else { unlink(paths[2]); return Array(paths.prefix(2)) }
        try writePNG(ConfusionPicture.render(clips, title: title), to: paths[2])
        return paths
    }
}
