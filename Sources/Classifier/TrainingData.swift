import Basics
import Foundation
import Keypoints
import KeypointWindows
import Tensor

/// The windows a run trains, validates and tests on, split by clip (or by source video),
/// never by window: no clip has windows on two sides.
public struct TrainingData: Sendable {
    public var spec: PreprocessingSpec
    /// Class names, sorted; a window's class is its label's index here.
    public var labels: [String]
    public var train: [Window]
    public var validation: [Window]
    public var test: [Window]
    /// What the data was, for the run's record: path, clips and windows per side and label.
    public var summary: DataSummary

    public func classIndex(_ windows: [Window]) -> [Int] {
        let index = Dictionary(uniqueKeysWithValues: labels.enumerated().map { ($1, $0) })
        return windows.map { index[$0.label]! }
    }

    /// Reads a keypoint store or a windows file and splits it as the config says. Every
    /// problem that would make training pointless is an error here, before any training.
    public static func load(path: String, config: TrainingConfig) throws -> TrainingData {
        try checkInput(path)
        let source = WindowsFile.isWindowsFile(path) ? try Source(windowsFile: path, config: config)
                                                      : try Source(store: path, config: config)
        var (train, test, hasSplits) = try source.trainAndTest(path: path, config: config)
        let labels = Array(Set(train.map(\.label))).sorted()
        guard labels.count >= 2 else {
            throw ConfigError("\(path): the training windows have one label only ('\(labels[0])'); a classifier needs at least two")
        }
        if config.data.folds >= 2 {
            // Every clip of the train split, windows or not, so that the folds do not move with the window.
            let clips = source.labelOf.filter { !hasSplits || source.splitOfClip[$0.key] == config.data.trainSplit }
            let held = foldGroups(labelOf: clips, groupOf: source.groupOf, folds: config.data.folds)[config.data.fold - 1]
            test = train.filter { held.contains(source.group(of: $0)) }
            train.removeAll { held.contains(source.group(of: $0)) }
        }
        if config.data.clipsPerLabel > 0 { train = source.drawn(train, config: config) }
        // Test windows of labels the model never saw cannot be scored: say so, drop them.
        let unseen = Set(test.map(\.label)).subtracting(labels)
        test.removeAll { unseen.contains($0.label) }
        let validationGroups = source.validationGroups(of: train, config: config)
        let validation = train.filter { validationGroups.contains(source.group(of: $0)) }
        train.removeAll { validationGroups.contains(source.group(of: $0)) }
        let spec = source.spec
        func side(_ ws: [Window]) -> DataSummary.Side {
            DataSummary.Side(clips: Set(ws.map(\.clipID)).count, windows: ws.count,
                             windowsPerLabel: Dictionary(grouping: ws, by: \.label).mapValues(\.count),
                             windowsWithDepth: config.augmentation.turnDegrees > 0 ? ws.filter { $0.depth != nil }.count : nil)
        }
        let summary = DataSummary(path: path, train: side(train), validation: side(validation), test: side(test),
                                  unseenTestLabels: unseen.sorted(), estimator: source.estimators.count == 1 ? source.estimators.first : nil,
                                  pose: source.estimators.count == 1 ? source.estimators.first.map(PoseSettings.init(estimator:)) : nil)
        return TrainingData(spec: spec, labels: labels, train: train, validation: validation, test: test, summary: summary)
    }

    /// The windows `enroll` learns labels from, cut with `config.preprocessing` (a windows
    /// file must have been cut so): the train split's (everything when the data has no
    /// splits), only the learning curve's draw when `data.clips_per_label` is set (the very
    /// clips `train` would draw), no validation share. One label is enough.
    public static func trainingWindows(path: String, config: TrainingConfig) throws -> [Window] {
        try checkInput(path)
        let source = WindowsFile.isWindowsFile(path) ? try Source(windowsFile: path, config: config)
                                                      : try Source(store: path, config: config)
        guard source.spec == config.preprocessing else {
            throw ConfigError("\(path): these windows were cut with other preprocessing than the model's; give the keypoint store instead")
        }
        var train = try source.trainAndTest(path: path, config: config).train
        if config.data.clipsPerLabel > 0 { train = source.drawn(train, config: config) }
        return train
    }

    /// A path that is no readable HDF5 file is said as what it is.
    static func checkInput(_ path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ConfigError("\(path): no such file (give a keypoint store from poseact extract/import, or a windows file)")
        }
        // A FIFO or an unreadable file is said as what it is, not as "not HDF5".
        do { try InputFile.check(path) } catch let error as InputFileError { throw ConfigError(error.message) }
        guard HDF5.isHDF5(path) else { throw ConfigError("\(path): not an HDF5 keypoint store or windows file") }
    }

    /// Every window of a store or a windows file, and what the splits need to know of its clips.
    struct Source {
        /// The preprocessing that cut the windows (a windows file's own, or the config's).
        var spec: PreprocessingSpec
        var all: [Window] = []
        /// Clip id → validation and fold group (the ranges of one video stay together).
        var groupOf: [String: String] = [:]
        var clipsOfSplit: [String: Int] = [:]
        var labelOf: [String: String] = [:], splitOfClip: [String: String] = [:]
        var estimators = Set<String>()

        func group(of w: Window) -> String { groupOf[w.clipID] ?? w.clipID }

        init(windowsFile path: String, config: TrainingConfig) throws {
            if config.augmentation.turnDegrees > 0 {
                throw ConfigError("\(path): a windows file has no depth, which augmentation.turn_degrees needs: train on the "
                    + "keypoint store instead, or set turn_degrees to 0")
            }
            let set = try WindowsFile.read(path: path)
            spec = set.spec   // the windows were cut already: their preprocessing is the one that counts
            all = set.windows
            for w in all { groupOf[w.clipID] = w.clipID; labelOf[w.clipID] = w.label; splitOfClip[w.clipID] = w.split ?? "" }
            for (split, ids) in Dictionary(grouping: all, by: { $0.split ?? "" }).mapValues({ Set($0.map(\.clipID)) }) {
                clipsOfSplit[split] = ids.count
            }
        }

        init(store path: String, config: TrainingConfig) throws {
            spec = config.preprocessing
            let store = try KeypointStore(path: path)
            guard !store.entries.isEmpty else { throw ConfigError("\(path): the store holds no clips") }
            // A window longer than every clip gives no window at all: say so now.
            let longest = store.entries.map { Double($0.frames) / max($0.fps, 1e-9) }.max() ?? 0
            let needed = Double(spec.window) * spec.minPoseShare / spec.fps
            if longest < needed {
                throw ConfigError(String(format: "preprocessing.window: %d frames at %g fps need clips of at least %.1f s "
                    + "(%.0f %% real poses), but the longest clip in %@ is %.1f s; lower the window", spec.window, spec.fps,
                    needed, spec.minPoseShare * 100, path, longest))
            }
            let turn = config.augmentation.turnDegrees > 0
            for entry in store.entries {
                // Ranges of one video (an annotation file's rows) stay together; imported clips
                // are each their own group (`TrainingData.group`).
                groupOf[entry.id] = TrainingData.group(of: entry, config: config)
                clipsOfSplit[entry.split ?? "", default: 0] += 1
                labelOf[entry.id] = entry.label; splitOfClip[entry.id] = entry.split ?? ""
                let clip = try store.read(entry.id)
                estimators.insert(clip.estimator)
                if let p = Preprocessing.problem(with: clip, spec: spec) { throw ConfigError("\(path): \(p)") }
                if turn && clip.world == nil {
                    throw ConfigError("\(path): clip '\(clip.id)' has no world landmarks, which augmentation.turn_degrees needs "
                        + "(imported keypoints, or a store extracted before poseact kept them): extract it again with poseact "
                        + "extract, or set turn_degrees to 0")
                }
                all += Preprocessing.windows(of: clip, spec: spec, depth: turn && clip.split == config.data.trainSplit)
            }
        }

        /// The train split's windows and the test split's (none when the data has no splits:
        /// then everything trains); whether the data has splits.
        func trainAndTest(path: String, config: TrainingConfig) throws -> (train: [Window], test: [Window], hasSplits: Bool) {
            let splits = Set(all.map { $0.split ?? "" })
            let trainSplit = config.data.trainSplit
            let hasSplits = !(splits.count == 1 && splits.first == "")
            var train = all, test: [Window] = []
            if hasSplits {
                guard clipsOfSplit[trainSplit] != nil || splits.contains(trainSplit) else {
                    throw ConfigError("\(path): no clips of split '\(trainSplit)' (splits: \(clipsOfSplit.keys.sorted().map { $0.isEmpty ? "none" : $0 }.joined(separator: ", "))); set data.train_split")
                }
                train = all.filter { $0.split == trainSplit }
                if let t = config.data.testSplit { test = all.filter { $0.split == t } }
            }
            guard !train.isEmpty else {
                throw ConfigError("\(path): no training windows: no clip of split '\(trainSplit)' has \(Int(spec.minPoseShare * 100)) % real poses in a window of \(spec.window) frames; check the data (poseact dataset inspect) or lower preprocessing.window")
            }
            return (train, test, hasSplits)
        }

        /// The windows of the learning curve's draw (`drawGroups`) of `data.clips_per_label`.
        func drawn(_ train: [Window], config: TrainingConfig) -> [Window] {
            let kept = drawGroups(labelOf: Dictionary(train.map { ($0.clipID, $0.label) }, uniquingKeysWith: { a, _ in a }),
                                  groupOf: groupOf, perLabel: config.data.clipsPerLabel, draw: config.data.draw)
            return train.filter { kept.contains(group(of: $0)) }
        }

        /// Validation: whole groups, chosen per label (in a seeded order) until each label has
        /// its share of clips, never a label's last clip.
        func validationGroups(of train: [Window], config: TrainingConfig) -> Set<String> {
            guard config.data.validationShare > 0 else { return [] }
            var rng = SplitMix64(seed: config.training.seed &+ 0x5EED)
            struct LabelledClip: Hashable { let label: String, clip: String }
            let clipsOf = Dictionary(grouping: Set(train.map { LabelledClip(label: $0.label, clip: $0.clipID) }), by: \.label)
                .mapValues { $0.map(\.clip) }
            let groups = Array(Set(train.map(group(of:)))).sorted().shuffledDeterministically(&rng)
            var clipsInGroup: [String: [String: Int]] = [:]
            for (label, clips) in clipsOf {
                for c in clips { clipsInGroup[groupOf[c] ?? c, default: [:]][label, default: 0] += 1 }
            }
            var target: [String: Int] = [:], taken: [String: Int] = [:]
            for (label, clips) in clipsOf where clips.count >= 2 {
                target[label] = max(1, Int((config.data.validationShare * Double(clips.count)).rounded()))
            }
            var chosen = Set<String>()
            for g in groups {
                let counts = clipsInGroup[g] ?? [:]
                let wanted = counts.keys.contains { (taken[$0] ?? 0) < (target[$0] ?? 0) }
                let fits = counts.allSatisfy { (taken[$0.key] ?? 0) + $0.value < (clipsOf[$0.key]?.count ?? 0) }
                if wanted && fits {
                    chosen.insert(g)
                    for (l, n) in counts { taken[l, default: 0] += n }
                }
            }
            return chosen
        }
    }
}

extension TrainingData {
    /// The group a store's clip is kept with, in validation and in the folds: its own id, or
    /// its source video for a range of one (`data.validation_group: source`). Imported clips
    /// are their own group: their span is in a keypoint file's times, and the file is no
    /// video they were cut from (one CSV with a time column would be one group).
    static func group(of entry: KeypointStore.Entry, config: TrainingConfig) -> String {
        let ranged = (entry.start != nil || entry.end != nil) && !entry.isImported
        return config.data.validationGroup == .source && ranged && !entry.source.isEmpty ? entry.source : entry.id
    }

    /// The cross-validation folds of `path`'s train split, as `load` deals them (groups per
    /// fold) with each group's clips, from the clips' metadata alone: for `crossval` to
    /// check before it trains anything, and to check what its runs report.
    public static func folds(of path: String, config: TrainingConfig, folds: Int) throws -> (groups: [Set<String>], clips: [Int], labels: Set<String>) {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ConfigError("\(path): no such file (give a keypoint store from poseact extract/import, or a windows file)")
        }
        // A FIFO or an unreadable file is said as what it is, not as "not HDF5".
        do { try InputFile.check(path) } catch let error as InputFileError { throw ConfigError(error.message) }
        guard HDF5.isHDF5(path) else { throw ConfigError("\(path): not an HDF5 keypoint store or windows file") }
        var labelOf: [String: String] = [:], groupOf: [String: String] = [:], splitOf: [String: String] = [:]
        if WindowsFile.isWindowsFile(path) {
            for w in try WindowsFile.read(path: path).windows { labelOf[w.clipID] = w.label; groupOf[w.clipID] = w.clipID; splitOf[w.clipID] = w.split ?? "" }
        } else {
            for entry in try KeypointStore(path: path).entries {
                labelOf[entry.id] = entry.label; groupOf[entry.id] = group(of: entry, config: config); splitOf[entry.id] = entry.split ?? ""
            }
        }
        guard !labelOf.isEmpty else { throw ConfigError("\(path): the store holds no clips") }
        let hasSplits = Set(splitOf.values) != [""]
        let train = labelOf.filter { !hasSplits || splitOf[$0.key] == config.data.trainSplit }
        let groups = foldGroups(labelOf: train, groupOf: groupOf, folds: folds)
        let clips = groups.map { held in train.keys.filter { held.contains(groupOf[$0] ?? $0) }.count }
        return (groups, clips, Set(train.values))
    }
}

extension TrainingData {
    /// Clips per cross-validation fold, as sets of groups (`data.validation_group`: clips, or
    /// source videos). Within each label the groups are taken in natural order of their names
    /// (clip7 before clip12) and dealt out in runs of `chunk`: run r goes to fold r mod k.
    /// Runs of neighbours, not single clips, because clips numbered together are often cut
    /// from one recording (near-duplicates must not sit on both sides); every fold gets every
    /// label in about its share.
    public static func foldGroups(labelOf: [String: String], groupOf: [String: String], folds: Int,
                                  chunk: Int = 5) -> [Set<String>] {
        var out = [Set<String>](repeating: [], count: folds)
        let byLabel = Dictionary(grouping: labelOf.keys, by: { labelOf[$0]! })
        for label in byLabel.keys.sorted() {
            let groups = Set(byLabel[label]!.map { groupOf[$0] ?? $0 })
                .sorted { $0.compare($1, options: .numeric) == .orderedAscending }
            for (i, g) in groups.enumerated() { out[(i / chunk) % folds].insert(g) }
        }
        return out
    }
}

extension TrainingData {
    /// A learning curve's draw: per label (labels in order), its groups sorted by name and
    /// shuffled with one SplitMix64 stream seeded `draw + 0xD4A3`, the first `perLabel` kept
    /// (all when it has fewer). The same draw gives the same clips for every config and
    /// seed, and to the PyTorch mirror (pytorch_tcn.py).
    public static func drawGroups(labelOf: [String: String], groupOf: [String: String], perLabel: Int, draw: Int) -> Set<String> {
        var rng = SplitMix64(seed: UInt64(max(draw, 0)) &+ 0xD4A3)
        var kept = Set<String>()
        let byLabel = Dictionary(grouping: labelOf.keys, by: { labelOf[$0]! })
        for label in byLabel.keys.sorted() {
            let groups = Array(Set(byLabel[label]!.map { groupOf[$0] ?? $0 })).sorted().shuffledDeterministically(&rng)
            kept.formUnion(groups.prefix(perLabel))
        }
        return kept
    }
}

extension Array {
    /// Fisher–Yates with the given generator (the standard library's shuffle may change
    /// between Swift versions; this one gives the same order for a seed forever).
    func shuffledDeterministically(_ rng: inout SplitMix64) -> [Element] {
        var a = self
        if a.count > 1 {
            for i in stride(from: a.count - 1, to: 0, by: -1) { a.swapAt(i, rng.below(i + 1)) }
        }
        return a
    }
}

/// What a run's data was (its record's "data"): the path, and per side the clips, windows
/// and windows per label, and the test labels the training split does not have.
public struct DataSummary: Codable, Equatable, Sendable {
    public struct Side: Codable, Equatable, Sendable {
        public var clips: Int
        public var windows: Int
        public var windowsPerLabel: [String: Int]
        /// The windows the turn augmentation can turn (a frame whose world landmarks gave no
        /// depth makes a window it skips); only with augmentation.turn_degrees.
        public var windowsWithDepth: Int?
    }

    public var path: String
    public var train: Side
    public var validation: Side
    public var test: Side
    public var unseenTestLabels: [String]
    /// What made the keypoints (`ClipKeypoints.estimator`: the pose models and the settings
    /// that change them, such as "mirror-average"), when every clip of a store says the same;
    /// nil for a windows file or a mix.
    public var estimator: String?
    /// The pose settings of those keypoints (`estimator`'s words as a record), which `live`
    /// poses with; nil where `estimator` is, and in weights files written before the record.
    public var pose: PoseSettings?

    /// The settings `live` poses with: the record, or an older file's estimator words.
    public var poseSettings: PoseSettings? { pose ?? estimator.map(PoseSettings.init(estimator:)) }
}
