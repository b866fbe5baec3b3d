// What `poseact dataset inspect` prints: how many clips and frames each label has, per
// split, how many frames have a person, and what will hurt training (too few labels,
// imbalance, clips shorter than a window, clips with nobody in them, duplicates).
import Foundation

public struct DatasetReport: Encodable, Sendable {
    /// Clips and frames of one label in one split.
    public struct SplitCount: Sendable, Equatable {
        public var clips: Int
        public var frames: Int
        public init(clips: Int = 0, frames: Int = 0) { self.clips = clips; self.frames = frames }
    }

    public struct LabelStats: Sendable, Equatable {
        public var clips: Int
        public var frames: Int
        public var framesWithPerson: Int
        /// Split name ("none" when a clip has no split) → counts.
        public var bySplit: [String: SplitCount]
        public init(clips: Int = 0, frames: Int = 0, framesWithPerson: Int = 0, bySplit: [String: SplitCount] = [:]) {
            self.clips = clips; self.frames = frames; self.framesWithPerson = framesWithPerson; self.bySplit = bySplit
        }
    }

    public struct ShortClip: Sendable, Equatable {
        public var id: String
        public var frames: Int
        public init(id: String, frames: Int) { self.id = id; self.frames = frames }
    }

    /// The store's path, as given.
    public var store: String
    /// The window length (frames) clips are compared against.
    public var window: Int
    public var clips: Int, frames: Int, framesWithPerson: Int
    public var labels: [String: LabelStats]
    /// Clips per split ("none" when absent).
    public var splits: [String: Int]
    /// Clips with fewer frames than `window`, by id.
    public var shortClips: [ShortClip]
    /// Clips with no frame with a person, by id.
    public var emptyClips: [String]
    /// Largest label's clips / smallest label's (1 with one label, 0 with none).
    public var imbalance: Double
    /// Groups of ids (each sorted, ≥ 2) with bit-identical keypoints, or with the same source
    /// and time range (imported clips, whose source is the import file, are not compared
    /// by source). Clips without a person are not compared by keypoints (they are all NaN).
    public var duplicates: [[String]]
    /// Human sentences about what will hurt training.
    public var warnings: [String]
    /// Training clips (split train, or every clip when the store has no splits) of the
    /// label with the fewest, and where that stands on the measured learning curves.
    public var fewestTrainingClips: Int
    public var learningCurve: String
    /// Where `train` would start (`model.pretrained: auto`), and why: the command fills it
    /// (it knows the config and the shipped backbones).
    public var pretrained: String?

    /// A label with fewer clips than the largest by this factor gets a warning.
    public static let imbalanceWarning = 1.5
    /// At most this many per-clip warnings of one kind; the rest are counted.
    public static let listedPerKind = 5

    public init(store: KeypointStore, window: Int = 32) throws {
        self.store = store.path
        self.window = window
        let entries = store.entries
        clips = entries.count
        frames = entries.reduce(0) { $0 + $1.frames }
        framesWithPerson = entries.reduce(0) { $0 + $1.framesWithPerson }

        var labels: [String: LabelStats] = [:]
        var splits: [String: Int] = [:]
        for e in entries {
            let split = e.split ?? "none"
            splits[split, default: 0] += 1
            var stats = labels[e.label, default: LabelStats()]
            stats.clips += 1
            stats.frames += e.frames
            stats.framesWithPerson += e.framesWithPerson
            stats.bySplit[split, default: SplitCount()].clips += 1
            stats.bySplit[split, default: SplitCount()].frames += e.frames
            labels[e.label] = stats
        }
        self.labels = labels
        self.splits = splits
        shortClips = entries.filter { $0.frames < window }.map { ShortClip(id: $0.id, frames: $0.frames) }
        emptyClips = entries.filter { $0.framesWithPerson == 0 }.map(\.id)
        let counts = labels.values.map(\.clips)
        if let most = counts.max(), let least = counts.min(), least > 0 {
            imbalance = Double(most) / Double(least)
        } else {
            imbalance = 0
        }

        // Duplicates: union of "same keypoint bytes" and "same source and range".
        var parent = Array(0..<entries.count)
        func find(_ i: Int) -> Int { var i = i; while parent[i] != i { parent[i] = parent[parent[i]]; i = parent[i] }; return i }
        func union(_ a: Int, _ b: Int) { let ra = find(a), rb = find(b); if ra != rb { parent[max(ra, rb)] = min(ra, rb) } }
        var byHash: [UInt64: [(index: Int, keypoints: [Float])]] = [:]
        var byRange: [String: Int] = [:]
        var layouts = Set<[String]>()
        for (i, e) in entries.enumerated() {
            let clip = try store.read(e.id)
            layouts.insert(clip.jointNames)
            if e.framesWithPerson > 0 {
                let h = DatasetReport.hash(clip.keypoints, joints: clip.jointNames.count)
                var bucket = byHash[h, default: []]
                if let same = bucket.first(where: { $0.keypoints.withUnsafeBytes { a in clip.keypoints.withUnsafeBytes { b in a.elementsEqual(b) } } }) {
                    union(same.index, i)
                } else {
                    bucket.append((i, clip.keypoints))
                }
                byHash[h] = bucket
            }
            if !clip.estimator.hasPrefix("import") && !clip.source.isEmpty {
                let key = "\(clip.source)\u{0}\(clip.start?.bitPattern ?? 0)\u{0}\(clip.end?.bitPattern ?? 0)\u{0}\(clip.start == nil)\(clip.end == nil)"
                if let other = byRange[key] { union(other, i) } else { byRange[key] = i }
            }
        }
        var groups: [Int: [String]] = [:]
        for i in entries.indices { groups[find(i), default: []].append(entries[i].id) }
        duplicates = groups.values.filter { $0.count > 1 }.map { $0.sorted() }.sorted { $0[0] < $1[0] }

        let hasTrain = labels.values.contains { $0.bySplit["train"] != nil }
        fewestTrainingClips = labels.values.map { hasTrain ? ($0.bySplit["train"]?.clips ?? 0) : $0.clips }.min() ?? 0
        learningCurve = LearningCurve.note(clipsPerLabel: fewestTrainingClips)
        warnings = DatasetReport.warnings(clips: clips, labels: labels, splits: splits, window: window,
                                          shortClips: shortClips, emptyClips: emptyClips,
                                          duplicates: duplicates, layouts: layouts.count)
    }

    /// FNV-1a over the float bytes and the joint count.
    static func hash(_ keypoints: [Float], joints: Int) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(joints)
        keypoints.withUnsafeBytes { bytes in
            for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        }
        return h
    }

    private static func warnings(clips: Int, labels: [String: LabelStats], splits: [String: Int], window: Int,
                                 shortClips: [ShortClip], emptyClips: [String], duplicates: [[String]],
                                 layouts: Int) -> [String] {
        var w: [String] = []
        if clips == 0 { return ["the store has no clips"] }
        if labels.count == 1, let only = labels.keys.first {
            w.append("only one label ('\(only)'): a classifier needs at least two")
        }
        if let largest = labels.max(by: { ($0.value.clips, $1.key) < ($1.value.clips, $0.key) }) {
            for (label, stats) in labels.sorted(by: { ($0.value.clips, $0.key) < ($1.value.clips, $1.key) }) where label != largest.key {
                let ratio = Double(largest.value.clips) / Double(stats.clips)
                if ratio >= imbalanceWarning {
                    w.append("label '\(label)' has \(String(format: "%.1f", ratio))× fewer clips than '\(largest.key)' (\(stats.clips) vs \(largest.value.clips))")
                }
            }
        }
        for (label, stats) in labels.sorted(by: { $0.key < $1.key }) where stats.frames > 0 {
            let share = Double(stats.framesWithPerson) / Double(stats.frames)
            if share < 0.5 {
                w.append("label '\(label)': only \(Int((share * 100).rounded()))% of frames have a person")
            }
        }
        let named = splits.keys.filter { $0 != "none" }.sorted()
        if !named.isEmpty {
            if let none = splits["none"] {
                w.append("\(none) \(none == 1 ? "clip has" : "clips have") no split while the others do")
            }
            for split in named {
                for label in labels.keys.sorted() where (labels[label]?.bySplit[split]?.clips ?? 0) == 0 {
                    w.append("split '\(split)' has no clips of label '\(label)'")
                }
            }
        }
        if !shortClips.isEmpty {
            let n = shortClips.count
            w.append("\(n) \(n == 1 ? "clip is" : "clips are") shorter than the \(window)-frame window")
        }
        for id in emptyClips.prefix(listedPerKind) { w.append("clip \(id) has no person in any frame") }
        if emptyClips.count > listedPerKind {
            w.append("\(emptyClips.count - listedPerKind) more clips have no person in any frame")
        }
        for group in duplicates.prefix(listedPerKind) {
            w.append("clips \(group.joined(separator: ", ")) are duplicates (identical keypoints or the same video and time range)")
        }
        if duplicates.count > listedPerKind { w.append("\(duplicates.count - listedPerKind) more groups of duplicate clips") }
        if layouts > 1 { w.append("clips use \(layouts) different joint layouts; a model needs one") }
        return w
    }

    // MARK: output

    /// A readable table (label × split, clips/frames, % of frames with a person), then the warnings.
    public func text() -> String {
        var lines: [String] = []
        let percent = { (part: Int, whole: Int) -> String in whole == 0 ? "–" : String(format: "%.1f%%", 100 * Double(part) / Double(whole)) }
        lines.append("Keypoint store \(store)")
        lines.append("\(group(clips)) clips, \(group(frames)) frames, \(percent(framesWithPerson, frames)) of frames with a person, "
                     + "\(labels.count) \(labels.count == 1 ? "label" : "labels"); window \(window) frames")
        if clips > 0 {
            lines.append("")
            // No split columns when no clip has a split.
            let splitNames = Array(splits.keys) == ["none"] ? [] : splits.keys.sorted { a, b in
                let order = ["train": 0, "training": 0, "validation": 1, "val": 1, "test": 2, "testing": 2, "none": 4]
                return (order[a] ?? 3, a) < (order[b] ?? 3, b)
            }
            var rows: [[String]] = [["label", "clips", "frames", "person"] + splitNames.map { "\($0) clips/frames" }]
            for label in labels.keys.sorted() {
                let s = labels[label]!
                rows.append([label, group(s.clips), group(s.frames), percent(s.framesWithPerson, s.frames)]
                            + splitNames.map { name in s.bySplit[name].map { "\(group($0.clips)) / \(group($0.frames))" } ?? "–" })
            }
            var totals: [String] = ["total", group(clips), group(frames), percent(framesWithPerson, frames)]
            for name in splitNames {
                let c = labels.values.reduce(0) { $0 + ($1.bySplit[name]?.clips ?? 0) }
                let f = labels.values.reduce(0) { $0 + ($1.bySplit[name]?.frames ?? 0) }
                totals.append("\(group(c)) / \(group(f))")
            }
            rows.append(totals)
            let widths = rows[0].indices.map { col in rows.map { $0[col].count }.max()! }
            for (r, row) in rows.enumerated() {
                let cells = row.enumerated().map { col, cell -> String in
                    let pad = String(repeating: " ", count: widths[col] - cell.count)
                    return col == 0 ? cell + pad : pad + cell
                }
                lines.append(cells.joined(separator: "  "))
                if r == 0 || r == rows.count - 2 {
                    lines.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
                }
            }
            if labels.count > 1 { lines.append(String(format: "imbalance (largest / smallest label): %.2f", imbalance)) }
            lines.append(learningCurve)
            if let pretrained { lines.append(pretrained) }
        }
        lines.append("")
        if warnings.isEmpty {
            lines.append("No warnings.")
        } else {
            lines.append("Warnings:")
            lines += warnings.map { "  - " + $0 }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private struct JSONSplit: Encodable { var clips: Int; var frames: Int }
    private struct JSONLabel: Encodable {
        var clips: Int, frames: Int, frames_with_person: Int
        var splits: [String: JSONSplit]
    }
    private struct JSONShort: Encodable { var id: String; var frames: Int }
    private struct JSONReport: Encodable {
        var store: String, window: Int, clips: Int, frames: Int, frames_with_person: Int
        var labels: [String: JSONLabel]
        var splits: [String: Int]
        var short_clips: [JSONShort]
        var empty_clips: [String]
        var imbalance: Double
        var duplicates: [[String]]
        var warnings: [String]
        var fewest_training_clips: Int
        var learning_curve: String
        var pretrained: String?
    }

    /// Its JSON: clips, frames, frames_with_person, labels {label: {clips, frames,
    /// frames_with_person, splits}}, splits, short_clips, empty_clips, imbalance, duplicates,
    /// warnings, fewest_training_clips, learning_curve, pretrained (when the command knows),
    /// store, window.
    public func encode(to encoder: Encoder) throws {
        try JSONReport(
            store: store, window: window, clips: clips, frames: frames, frames_with_person: framesWithPerson,
            labels: labels.mapValues { s in
                JSONLabel(clips: s.clips, frames: s.frames, frames_with_person: s.framesWithPerson,
                          splits: s.bySplit.mapValues { JSONSplit(clips: $0.clips, frames: $0.frames) })
            },
            splits: splits, short_clips: shortClips.map { JSONShort(id: $0.id, frames: $0.frames) },
            empty_clips: emptyClips, imbalance: imbalance.isFinite ? (imbalance * 1000).rounded() / 1000 : 0,
            duplicates: duplicates, warnings: warnings, fewest_training_clips: fewestTrainingClips,
            learning_curve: learningCurve, pretrained: pretrained).encode(to: encoder)
    }

    /// 12345 → "12,345".
    private func group(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }
}
