import Basics
import Evaluation
import Foundation
import Images
import Keypoints
import KeypointWindows

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
        var report = EvaluationReport(model: modelPath, data: dataPath, split: split,
                                      windows: ClassificationMetrics(labels: labels, truth: truth, predicted: predicted),
                                      clips: ClassificationMetrics(labels: labels, truth: clips.truth, predicted: clips.predicted),
                                      misclassified: wrong)
        report.smoothedWindowAccuracy = WindowSmoothing.accuracies(clipIDs: windows.map(\.clipID), starts: windows.map(\.start),
                                                                   truth: truth, probabilities: probs)
        return report
    }

    /// The windows of a keypoint store (or windows file) under this model's preprocessing,
    /// of one split (nil: all clips), the labels found that the model does not know (their
    /// windows are left out), and the clips of known labels that gave no window (too short
    /// or too few poses), which cannot be scored.
    public func windows(fromData path: String, split: String?) throws -> (windows: [Window], unknownLabels: [String], unscoredClips: [String]) {
        guard FileManager.default.fileExists(atPath: path) else { throw ConfigError("\(path): no such file") }
        do { try InputFile.check(path) } catch let error as InputFileError { throw ConfigError(error.message) }
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

extension ActionClassifier {
    /// The page of `evaluate --report` (`HTMLReport`): the report's tables, every clip's
    /// true and predicted label for the confusion cells, the learning curves of the run that
    /// made the model, and the misclassified clips' poses (from the keypoint store at
    /// `dataPath`; a windows file has none to animate) at the model's frame rate with each
    /// window's prediction.
    public func htmlReport(_ report: EvaluationReport, windows: [Window], dataPath: String, title: String) throws -> HTMLReport {
        let probs = probabilities(windows)
        let index = Dictionary(uniqueKeysWithValues: labels.enumerated().map { ($1, $0) })
        let votes = ClipVote.aggregate(clipIDs: windows.map(\.clipID), truth: windows.map { index[$0.label]! }, probabilities: probs)
        let clipLabels = votes.clipIDs.indices.map { (votes.clipIDs[$0], labels[votes.truth[$0]], labels[votes.predicted[$0]]) }
        var byClip: [String: [(Window, [Float])]] = [:]
        for (w, p) in zip(windows, probs) { byClip[w.clipID, default: []].append((w, p)) }

        var joints: [String] = [], edges: [(Int, Int)] = [], clips: [HTMLReport.Clip] = []
        if !WindowsFile.isWindowsFile(dataPath) {
            let store = try KeypointStore(path: dataPath)
            // The surest mistakes, up to `HTMLReport.maxAnimated`: each adds its poses to the page.
            for m in report.misclassified.prefix(HTMLReport.maxAnimated) {
                let clip = try store.read(m.clip)
                if joints.isEmpty {
                    joints = clip.jointNames
                    edges = Self.drawnEdges(joints)
                }
                guard clip.jointNames == joints, clip.frameCount > 0 else { continue }
                // The clip at the model's rate, nearest frame by time: the windows' frame numbers.
                let n = max(1, Int((clip.times.last! * spec.fps).rounded()) + 1)
                var frames: [[Float?]] = []
                var k = 0
                for f in 0..<n {
                    let t = Double(f) / spec.fps
                    while k + 1 < clip.times.count && abs(clip.times[k + 1] - t) <= abs(clip.times[k] - t) { k += 1 }
                    var row: [Float?] = []
                    for j in joints.indices {
                        let x = clip.keypoints[(k * joints.count + j) * 3], y = clip.keypoints[(k * joints.count + j) * 3 + 1]
                        if x.isFinite && y.isFinite { row += [(x * 1000).rounded() / 1000, (y * 1000).rounded() / 1000] } else { row += [nil, nil] }
                    }
                    frames.append(row)
                }
                let predictions = (byClip[m.clip] ?? []).map { w, p -> HTMLReport.WindowPrediction in
                    let best = Evaluation.argmax(p)
                    return HTMLReport.WindowPrediction(start: w.start, length: spec.window, label: labels[best], confidence: Double(p[best]))
                }
                clips.append(HTMLReport.Clip(id: m.clip, label: m.label, predicted: m.predicted, confidence: m.confidence, fps: spec.fps,
                                             aspect: Double(clip.width) / Double(max(clip.height, 1)), frames: frames, windows: predictions))
            }
        }
        let curves = training.history.flatMap { h in
            h.isEmpty ? nil : LearningCurves.svg(h, title: "training", bestEpoch: LearningCurves.bestEpoch(h))
        }
        return HTMLReport(title: title, report: report, clipLabels: clipLabels, joints: joints, edges: edges,
                          misclassified: clips, learningCurves: curves)
    }

    /// The lines drawn between joints: BlazePose's skeleton for its names, else each joint to
    /// its parent (`Skeleton.parentPositions`) and the shoulders and hips joined across and
    /// down the sides.
    static func drawnEdges(_ joints: [String]) -> [(Int, Int)] {
        if joints == Skeleton.blazePoseNames { return Skeleton.edges }
        var out = Skeleton.parentPositions(of: joints).enumerated().compactMap { i, p in p.map { (i, $0) } }
        for (a, b) in [("left_shoulder", "right_shoulder"), ("left_hip", "right_hip"), ("left_shoulder", "left_hip"), ("right_shoulder", "right_hip")] {
            if let i = joints.firstIndex(of: a), let j = joints.firstIndex(of: b), !out.contains(where: { $0 == (i, j) || $0 == (j, i) }) {
                out.append((i, j))
            }
        }
        return out
    }
}
