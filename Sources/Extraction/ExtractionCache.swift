import Basics
import Foundation
import Keypoints

/// Clips already extracted, kept by what made them: the video's bytes, the pose models and
/// the settings that change keypoints (`extract --cache DIR`). A clip met again, under any
/// name, in any folder, by any run or array task sharing the folder, is read back instead
/// of posed again.
///
///     DIR/ab/abcdef….h5     one clip's keypoints (a one-clip store; its warnings as an attribute)
///     DIR/ab/abcdef….skip   why the clip gave no keypoints (no person, no frames)
///
/// Entries are written whole (temp file + rename), so tasks writing the same entry at once
/// leave one whole file, and a reader never sees half of one. An entry that does not read
/// back (a truncated copy, a stranger's file) is extracted again and replaced.
public struct ExtractionCache: Sendable {
    public let folder: String
    /// The root attribute holding the clip's warnings, one per line.
    static let warningsAttribute = "extraction_warnings"
    /// The root attribute holding the entry's own key, which its name must repeat.
    static let keyAttribute = "cache_key"

    public init(folder: String) throws {
        self.folder = folder
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), !isFolder.boolValue {
            throw ExtractError("--cache \(folder): is a file; give a folder (it is created if missing)")
        }
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        catch { throw ExtractError("--cache \(folder): cannot create the folder (\(error.localizedDescription))") }
    }

    /// A clip's key: the video's content, the models, the keypoint-changing options and the range.
    public static func key(video: String, start: Double?, end: Double?, modelHash: String, options: ExtractOptions) throws -> String {
        var what = options
        what.jobs = 0; what.threads = 0; what.shardIndex = 0; what.shardCount = 1   // how and where, not what
        let encoder = JSONEncoder(); encoder.outputFormatting = [.sortedKeys]
        let range = [start, end].map { $0.map { String(format: "%.6f", $0) } ?? "-" }.joined(separator: " ")
        let text = ["poseact extraction cache 2", try SHA256.hex(file: video), modelHash,
                    String(decoding: try encoder.encode(what), as: UTF8.self), range].joined(separator: "\n")
        return SHA256.hex(Array(text.utf8))
    }

    /// What the cache knows of a clip.
    public enum Entry {
        case keypoints(ClipKeypoints, warnings: [String])
        case skipped(reason: String)
    }

    private func base(_ key: String) -> String { "\(folder)/\(key.prefix(2))/\(key)" }

    /// The entry for `key`, renamed to `clip`; nil when there is none. An entry that does not
    /// read back as this clip's keypoints throws, saying why (it is then extracted again).
    public func lookup(_ key: String, as clip: ClipSource, estimator: String, modelHash: String) throws -> Entry? {
        let base = base(key)
        if let reason = Self.note(base + ".skip") { return .skipped(reason: reason) }
        var status = stat()
        guard lstat(base + ".h5", &status) == 0 else { return nil }
        return try Self.entry(at: base + ".h5", key: key, as: clip, estimator: estimator, modelHash: modelHash)
    }

    /// The entry file at `path`, which must be `key`'s, read as `clip`'s keypoints.
    public static func entry(at path: String, key: String, as clip: ClipSource, estimator: String, modelHash: String) throws -> Entry {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw ExtractError("\(path): no such cache entry") }
        // Only a regular file this cache wrote under this name: a symbolic link, a FIFO or
        // another entry's file copied or linked here is no entry (it is extracted again).
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw ExtractError("\(path): \(InputFile.kind(status.st_mode)), not a cache entry (only a regular file the cache wrote is one; a link is never followed)")
        }
        let store = try KeypointStore(path: path)
        guard store.entries.count == 1 else { throw ExtractError("\(path): holds \(store.entries.count) clips, not one") }
        guard store.attributes[keyAttribute] == key else {
            throw ExtractError("\(path): another entry's file under this entry's name (its key is not its name)")
        }
        var keypoints = try store.read(store.entries[0].id)
        guard keypoints.estimator == estimator, keypoints.modelHash == modelHash else {
            throw ExtractError("\(path): made by other models or settings than its name says")
        }
        keypoints.id = clip.id; keypoints.label = clip.label; keypoints.split = clip.split; keypoints.source = clip.video
        let warnings = store.attributes[warningsAttribute].map { $0.split(separator: "\n").map(String.init) } ?? []
        return .keypoints(keypoints, warnings: warnings)
    }

    /// A short note someone else may have written (a skipped clip's reason): only a regular
    /// file of at most 4 KiB is read (a FIFO there would block, a huge file fill memory), as
    /// one line.
    static func note(_ path: String) -> String? {
        guard let data = try? InputFile.read(path, limit: 4096, what: "note", followLinks: false) else { return nil }
        return OneLine.clean(String(decoding: data, as: UTF8.self))
    }

    /// Keeps a clip's keypoints and warnings under `key`.
    public func save(_ key: String, _ keypoints: ClipKeypoints, warnings: [String]) throws {
        try makeFolder(for: key)
        var attributes = [Self.keyAttribute: key]
        if !warnings.isEmpty { attributes[Self.warningsAttribute] = warnings.joined(separator: "\n") }
        let writer = try KeypointStoreWriter(path: base(key) + ".h5", attributes: attributes)
        try writer.append(keypoints)
        try writer.finish()
    }

    /// Keeps why a clip gave no keypoints.
    public func save(_ key: String, skipped reason: String) throws {
        try makeFolder(for: key)
        try AtomicFile.write(reason, to: base(key) + ".skip")
    }

    private func makeFolder(for key: String) throws {
        try FileManager.default.createDirectory(atPath: "\(folder)/\(key.prefix(2))", withIntermediateDirectories: true)
    }
}
