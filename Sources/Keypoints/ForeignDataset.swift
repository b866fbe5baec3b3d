import Foundation

/// Where the clips of a foreign keypoint dataset are: one input (a file, or a folder of
/// OpenPose frames) with its label given, or a folder laid out as extraction takes videos:
/// `[train|validation|test/]<label>/<clip>`, a clip being a file of a known format or a
/// folder of OpenPose frames. NTU `.skeleton` files anywhere take their action class
/// (`A013`) as the label when no label folder holds them.
public struct ForeignClipSource: Sendable, Equatable {
    public var path: String
    public var format: KeypointFormat
    public var id: String
    public var label: String
    public var split: String?
}

public enum ForeignDataset {
    static let splitNames: Set<String> = ["train", "validation", "test"]

    /// The clips under `path`. `label` names the label of a single input (it overrides the folders').
    public static func scan(_ path: String, label: String?) throws -> [ForeignClipSource] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { throw DatasetError("\(path): no such file or folder") }
        if let label, let problem = KeypointChecks.labelProblem(label) {
            throw DatasetError("--label '\(KeypointChecks.excerpt(label))': \(problem); give the clips' label, e.g. --label pushup")
        }
        if !isFolder.boolValue || isOpenPoseClip(path) {
            let format = try KeypointFormat.detect(path)
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            guard let l = label ?? (format == .ntu ? ForeignKeypoints.ntuAction(path) : nil) else {
                throw DatasetError("\(path): one clip without a label: give --label, or a folder of <label>/<clip>")
            }
            return [ForeignClipSource(path: path, format: format, id: name, label: l, split: nil)]
        }
        var out: [ForeignClipSource] = []
        func walk(_ folder: String, split: String?, label folderLabel: String?, depth: Int) throws {
            for name in try FileManager.default.contentsOfDirectory(atPath: folder).sorted() where !name.hasPrefix(".") {
                let child = (folder as NSString).appendingPathComponent(name)
                var dir: ObjCBool = false
                FileManager.default.fileExists(atPath: child, isDirectory: &dir)
                if dir.boolValue && !isOpenPoseClip(child) {
                    guard depth < 2 else { continue }
                    if split == nil && folderLabel == nil && splitNames.contains(name.lowercased()) {
                        try walk(child, split: name.lowercased(), label: nil, depth: depth + 1)
                    } else if folderLabel == nil {
                        try walk(child, split: split, label: name, depth: depth + 1)
                    }
                    continue
                }
                let ext = URL(fileURLWithPath: name).pathExtension.lowercased()
                guard dir.boolValue || ["json", "jsonl", "skeleton"].contains(ext) else { continue }
                let format = try KeypointFormat.detect(child)
                guard let l = label ?? folderLabel ?? (format == .ntu ? ForeignKeypoints.ntuAction(child) : nil) else {
                    throw DatasetError("\(child): a clip outside a label folder: put it in <label>/, or give --label")
                }
                let stem = URL(fileURLWithPath: name).deletingPathExtension().lastPathComponent
                out.append(ForeignClipSource(path: child, format: format, id: [split, folderLabel, stem].compactMap { $0 }.joined(separator: "/"),
                                             label: l, split: split))
            }
        }
        try walk(path, split: nil, label: nil, depth: 0)
        guard !out.isEmpty else {
            throw DatasetError("\(path): no clips found (OpenPose frame folders, COCO or MediaPipe .json, NTU .skeleton files, in <label>/ folders)")
        }
        return out
    }

    static func isOpenPoseClip(_ path: String) -> Bool {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).contains { $0.hasSuffix("_keypoints.json") }
    }
}
