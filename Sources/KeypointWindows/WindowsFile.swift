import Basics
import Foundation
import Keypoints

/// A windows file: the windows of a whole keypoint store, cut by one preprocessing and
/// ready for training (`poseact windows` writes it; `train` and `evaluate` read it).
///
/// Format (HDF5, root attributes `format` = "poseact-windows", `format_version` = 1):
/// - `values` float32 [N, window, channels]; `mask` float32 [N, window]
/// - `labels` float64 [N]: index into the `label_names` attribute (sorted label names)
/// - `clips` float64 [N]: index into the `clip_ids` attribute; `splits` float64 [N]:
///   index into `split_names` (""  = no split); `starts` float64 [N]: first frame
/// - attribute `spec`: the PreprocessingSpec as JSON.
/// Written as an `AtomicFile`, so a file is never half-written.
public struct WindowsFile: Sendable {
    public static let format = "poseact-windows"
    public static let version = 1

    public var spec: PreprocessingSpec
    /// Label names, sorted; a window's class is its label's index here.
    public var labels: [String]
    public var windows: [Window]

    public init(spec: PreprocessingSpec, labels: [String], windows: [Window]) {
        self.spec = spec; self.labels = labels; self.windows = windows
    }

    /// Index of each window's label in `labels`.
    public var classIndices: [Int] {
        // `read` refuses labels given twice; one made in memory keeps its first index.
        let index = Dictionary(labels.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        return windows.map { index[$0.label] ?? -1 }
    }

    /// The windows of every clip of `store`, and label → split ("none" when the clip has
    /// none) → windows. Labels of clips that give no window are kept (count 0).
    public static func build(store: KeypointStore, spec: PreprocessingSpec) throws -> (WindowsFile, report: [String: [String: Int]]) {
        if let p = spec.problems.first { throw DatasetError("preprocessing: \(p)") }
        var windows: [Window] = []
        var report: [String: [String: Int]] = [:]
        for entry in store.entries {
            let clip = try store.read(entry.id)
            if let p = Preprocessing.problem(with: clip, spec: spec) { throw DatasetError("\(store.path): \(p)") }
            let ws = Preprocessing.windows(of: clip, spec: spec)
            report[clip.label, default: [:]][clip.split ?? "none", default: 0] += ws.count
            windows += ws
        }
        return (WindowsFile(spec: spec, labels: report.keys.sorted(), windows: windows), report)
    }

    public func write(to path: String) throws {
        let n = windows.count, w = spec.window, c = spec.channels
        for win in windows where win.values.count != w * c || win.mask.count != w {
            throw DatasetError("\(path): window of clip \(win.clipID) has \(win.values.count) values, not \(w * c)")
        }
        let clipIDs = Array(Set(windows.map(\.clipID))).sorted()
        let splitNames = Array(Set(windows.map { $0.split ?? "" })).sorted()
        let clipIndex = Dictionary(uniqueKeysWithValues: clipIDs.enumerated().map { ($1, $0) })
        let splitIndex = Dictionary(uniqueKeysWithValues: splitNames.enumerated().map { ($1, $0) })
        try HDF5File.writeAtomically(path) { root in
            try root.setAttribute("format", Self.format)
            try root.setAttribute("format_version", Self.version)
            try root.setAttribute("spec", spec.json())
            try root.setAttribute("label_names", labels)
            try root.setAttribute("clip_ids", clipIDs)
            try root.setAttribute("split_names", splitNames)
            var values: [Float] = []; values.reserveCapacity(n * w * c)
            var mask: [Float] = []; mask.reserveCapacity(n * w)
            for win in windows { values += win.values; mask += win.mask }
            try root.write("values", values, shape: [n, w, c]).close()
            try root.write("mask", mask, shape: [n, w]).close()
            try root.write("labels", classIndices.map(Double.init), shape: [n]).close()
            try root.write("clips", windows.map { Double(clipIndex[$0.clipID]!) }, shape: [n]).close()
            try root.write("splits", windows.map { Double(splitIndex[$0.split ?? ""]!) }, shape: [n]).close()
            try root.write("starts", windows.map { Double($0.start) }, shape: [n]).close()
        }
    }

    /// Whether `path` is a windows file (else, for poseact, a keypoint store).
    public static func isWindowsFile(_ path: String) -> Bool {
        guard HDF5.isHDF5(path), let file = try? HDF5File.open(path) else { return false }
        defer { try? file.close() }
        return (try? file.root().stringAttribute("format")) == format
    }

    public static func read(path: String) throws -> WindowsFile {
        let file = try HDF5File.open(path)
        defer { try? file.close() }
        let root = try file.root()
        defer { root.close() }
        guard (try? root.stringAttribute("format")) == format else { throw DatasetError("\(path): not a poseact windows file") }
        let v = try root.intAttribute("format_version")
        guard v <= version else { throw DatasetError("\(path): windows format version \(v) is newer than this poseact (\(version))") }
        let spec = try PreprocessingSpec.fromJSON(try root.stringAttribute("spec"))
        let labels = try root.stringArrayAttribute("label_names")
        // A window's class is its label's index: a name given twice would be two classes of one label.
        if let twice = labels.firstRepeated {
            throw DatasetError("\(path): a damaged windows file: the label '\(OneLine.excerpt(twice))' is given twice in label_names; make it again with poseact windows")
        }
        let clipIDs = try root.stringArrayAttribute("clip_ids")
        let splitNames = try root.stringArrayAttribute("split_names")
        let (values, vShape) = try root.read("values", as: Float.self)
        let (mask, _) = try root.read("mask", as: Float.self)
        let (lab, _) = try root.read("labels", as: Double.self)
        let (clips, _) = try root.read("clips", as: Double.self)
        let (splits, _) = try root.read("splits", as: Double.self)
        let (starts, _) = try root.read("starts", as: Double.self)
        let n = lab.count, w = spec.window, c = spec.channels
        guard vShape == [n, w, c], mask.count == n * w, clips.count == n, splits.count == n, starts.count == n else {
            throw DatasetError("\(path): datasets disagree with the spec (values \(vShape), \(n) labels, window \(w), \(c) channels)")
        }
        func at<T>(_ a: [T], _ d: Double) throws -> T {
            let i = Int(d)
            guard i >= 0, i < a.count else { throw DatasetError("\(path): index \(i) out of range") }
            return a[i]
        }
        var windows: [Window] = []
        windows.reserveCapacity(n)
        for i in 0..<n {
            let split = try at(splitNames, splits[i])
            windows.append(Window(clipID: try at(clipIDs, clips[i]), label: try at(labels, lab[i]),
                                  split: split.isEmpty ? nil : split, start: Int(starts[i]),
                                  values: Array(values[(i * w * c)..<((i + 1) * w * c)]), mask: Array(mask[(i * w)..<((i + 1) * w)])))
        }
        return WindowsFile(spec: spec, labels: labels, windows: windows)
    }
}
