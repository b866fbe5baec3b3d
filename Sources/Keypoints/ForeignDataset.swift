import Basics
import Foundation

/// Where the clips of a foreign keypoint dataset are: one input (a file, or a folder of
/// OpenPose frames) with its label given, or a folder laid out as extraction takes videos
/// (the same scan, `FolderScanner`): `[<split>/]<label>/<clip>`, a clip being a file of a
/// known format or a folder of OpenPose frames, `<split>` a split folder (`SplitFolder`:
/// `train`, `validation`, `val`, `valid`, `test`). NTU `.skeleton` files outside label
/// folders take their action class (`A013`) as the label.
public struct ForeignClipSource: Sendable, Equatable {
    public var path: String
    public var format: KeypointFormat
    public var id: String
    public var label: String
    public var split: String?
}

public enum ForeignDataset {
    static let clipKind = ClipKind(noun: "keypoint clip", extensions: ["json", "jsonl", "skeleton"], isClipFolder: isOpenPoseClip,
                                   namesCarryLabels: false, suggestsAnnotations: false)

    /// The clips under `path`. `label` names the label of a single input (it overrides the folders').
    public static func scan(_ path: String, label: String?) throws -> [ForeignClipSource] {
        try listing(path, label: label).sources
    }

    /// The clips under `path` and what in the folder was not used, and why (never fatal).
    public static func listing(_ path: String, label: String?) throws -> (sources: [ForeignClipSource], problems: [DataProblem]) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { throw DatasetError("\(path): no such file or folder") }
        if let label, let problem = KeypointChecks.labelProblem(label) {
            throw DatasetError("--label '\(OneLine.excerpt(label))': \(problem); give the clips' label, e.g. --label pushup")
        }
        if !isFolder.boolValue || isOpenPoseClip(path) {
            let format = try KeypointFormat.detect(path)
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            guard let l = label ?? (format == .ntu ? ForeignKeypoints.ntuAction(path) : nil) else {
                throw DatasetError("\(path): one clip without a label: give --label, or a folder of <label>/<clip>")
            }
            return ([ForeignClipSource(path: path, format: format, id: name, label: l, split: nil)], [])
        }
        var scanner = FolderScanner(root: DatasetSources.trimSlash(path), kind: clipKind)
        scanner.scanRoot()
        var out: [ForeignClipSource] = []
        // In the order of a depth-first walk by name, as the clips were always imported.
        let ordered = scanner.clips.sorted { $0.rel.split(separator: "/").lexicographicallyPrecedes($1.rel.split(separator: "/")) }
        for found in ordered {
            let child = scanner.path(found.rel)
            let format = try KeypointFormat.detect(child)
            guard let l = label ?? found.label ?? (format == .ntu ? ForeignKeypoints.ntuAction(child) : nil) else {
                throw DatasetError("\(child): a clip outside a label folder: put it in <label>/, or give --label")
            }
            let stem = URL(fileURLWithPath: found.rel).deletingPathExtension().lastPathComponent
            out.append(ForeignClipSource(path: child, format: format, id: [found.split, found.label, stem].compactMap { $0 }.joined(separator: "/"),
                                         label: l, split: found.split))
        }
        guard !out.isEmpty else {
            throw DatasetError("\(path): no clips found (OpenPose frame folders, COCO or MediaPipe .json, NTU .skeleton files, in <label>/ folders)")
        }
        return (out, scanner.problems)
    }

    static func isOpenPoseClip(_ path: String) -> Bool {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).contains { $0.hasSuffix("_keypoints.json") }
    }
}
