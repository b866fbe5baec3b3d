import Foundation

// Dataset sources: the ways Create ML's action classifier accepts labeled videos, and an
// honest account of what in the folder or the annotation file could not be used.

/// The clips found by `DatasetSources.scan` and what was wrong with the rest.
public struct SourceListing: Sendable {
    /// Sorted by id.
    public var clips: [ClipSource]
    /// Everything not used, and why; never fatal. In file order within a file.
    public var problems: [DataProblem]
    public init(clips: [ClipSource], problems: [DataProblem]) { self.clips = clips; self.problems = problems }
}


public enum DatasetSources {
    /// Extensions (lower-cased, no dot) taken for videos.
    public static let videoExtensions: Set<String> = [
        "mp4", "mov", "m4v", "avi", "mkv", "webm", "mpg", "mpeg", "wmv", "flv", "3gp", "ts", "mts",
    ]

    /// Files skipped without a word where videos are expected: notes and metadata that
    /// commonly sit beside videos (`README.md`, `annotations.csv`, `labels.json`, …).
    static let quietExtensions: Set<String> = ["md", "txt", "csv", "json", "yaml", "yml", "rtf", "pdf", "html"]

    /// Finds the labeled clips under `root`, in one of the layouts Create ML accepts (the
    /// layouts `ForeignDataset.scan` reads keypoint files in too, by the same `FolderScanner`):
    ///
    /// - **Labeled directories**: `root/<label>/*.<video>`; or, with split folders,
    ///   `root/<split>/<label>/*.<video>` where `<split>` is `train`, `validation` (also
    ///   `val`, `valid`) or `test`, any case (`SplitFolder`). When `root` has a split folder, other
    ///   folders beside it are not label folders: each is reported and not used.
    /// - **Labeled files**: `root/<label>.<n>.<ext>` (also inside a split folder), e.g.
    ///   `squat.12.mp4`. A video named otherwise is reported: its label cannot be told.
    /// - **Annotation file** (`annotations`, CSV or JSON, a path as given or relative to
    ///   `root`): the videos it names, each with a label and optionally a time range; the
    ///   folder layout is then not used. See `scanAnnotations` for the format.
    ///
    /// Folders nested deeper than a label folder, label folders with no video, files
    /// that are not videos (by extension; dotfiles and notes such as `.md`, `.txt`,
    /// `.csv`, `.json` are skipped quietly), `__MACOSX` and hidden folders are reported
    /// or skipped, never fatal. Finding no video at all throws a `DatasetError` naming the
    /// layouts accepted.
    ///
    /// Ids: the video's path relative to `root` (`train/correct/correct12.mp4`), plus
    /// `@<start>-<end>` in seconds with 2 decimals for a range
    /// (`montage/montage_01.mp4@3.60-7.20`). `video` is `root` joined with that path.
    public static func scan(_ root: String, annotations: String? = nil) throws -> SourceListing {
        let fm = FileManager.default
        var isDir: ObjCBool = false
        guard fm.fileExists(atPath: root, isDirectory: &isDir) else {
            throw DatasetError("dataset folder \(root) does not exist")
        }
        if let annotations {
            return try scanAnnotations(root: root, annotations: annotations)
        }
        guard isDir.boolValue else { throw DatasetError("\(root) is a file, not a dataset folder (give the folder holding the videos)") }
        var scanner = FolderScanner(root: trimSlash(root), kind: .video)
        scanner.scanRoot()
        // Every loose video found has its label: a video's name carries it, or it is reported.
        let clips = scanner.clips.compactMap { c in
            c.label.map { ClipSource(id: c.rel, video: scanner.path(c.rel), label: $0, split: c.split) }
        }
        guard !clips.isEmpty else {
            throw DatasetError("no videos found in \(root): expected <label>/<video>, <split>/<label>/<video> "
                + "(split: train, validation, test), <label>.<n>.<ext> files, or an annotation file "
                + "(video extensions: \(videoExtensions.sorted().joined(separator: " ")))")
        }
        return SourceListing(clips: clips.sorted { $0.id < $1.id }, problems: scanner.problems)
    }

    /// The id of a range of a video: `"<relative path>@<start>-<end>"`, seconds with 2 decimals.
    public static func rangeID(_ relativePath: String, start: Double, end: Double) -> String {
        "\(relativePath)@\(String(format: "%.2f", start))-\(String(format: "%.2f", end))"
    }

    static func isVideo(_ name: String) -> Bool {
        videoExtensions.contains((name as NSString).pathExtension.lowercased())
    }

    static func trimSlash(_ p: String) -> String {
        var p = p
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        return p
    }
}
