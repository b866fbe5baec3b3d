// The keypoint store: every clip's keypoints and metadata in one HDF5 file, written by
// `extract` / `import`, joined by `merge`, read by `windows`, `train` and `dataset inspect`.
//
// Layout (format_version 1), readable with h5py or h5dump without poseact:
//
//   /                       attributes:
//                             format          string  "poseact-keypoints"
//                             format_version  int64   1
//                             …               string  whatever the writer was given
//                                                     (created_by, poseact version, …)
//   /clips                  group, one subgroup per clip, named by a zero-padded sequence
//                           number in id order: "000000", "000001", … (6 digits, more
//                           when there are a million clips or more)
//   /clips/000000/keypoints float32 [frames, joints, 3]: x, y normalised to the frame
//                           (0–1, origin top-left) and confidence 0–1; a missing joint is
//                           NaN, NaN, 0. Chunked, shuffled and gzip (level 4) compressed
//                           when bigger than 4 KiB; frames may be 0.
//   /clips/000000/times     float64 [frames]: seconds from the start of the clip
//   /clips/000000/world     float32 [frames, joints, 3], optional (extracted clips, not
//                           imported ones): the pose model's 3-D world landmarks, metres,
//                           origin between the hips, x right, y down, z away from the
//                           camera; NaN × 3 where the frame has no person. Compressed as
//                           keypoints. A store from before it has none.
//                 attributes (strings are variable-length UTF-8, h5py reads them as str):
//                   id                  string   unique within the store, any characters
//                   label               string
//                   split               string   "" = none
//                   source              string   video path, or the imported file
//                   start, end          float64  seconds within the source; NaN = none
//                   fps                 float64
//                   width, height       int64    frame size in pixels
//                   joint_names         string[joints]
//                   estimator           string   "blazepose-full mediapipe-0.10.14", "import"
//                   model_hash          string   sha256 of the pose models; "" = none
//                   frames_with_person  int64    frames with at least one joint present
//
// A store is written as an `AtomicFile` (a temporary file beside it, renamed to <path> once complete), so a
// store is never half-written. The same content gives the same bytes (no modification times kept).
import Basics
import Foundation

/// A problem with a keypoint store, as one line naming the file (and clip).
public enum StoreFailure {}
public typealias StoreError = OneLineError<StoreFailure>

/// Runs HDF5 code, turning its errors into StoreErrors (same message).
@inline(__always)
private func storeCall<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch let e as HDF5Error { throw StoreError(e.message) }
}

enum KeypointStoreFormat {
    static let format = "poseact-keypoints"
    static let version = 1
    static let reserved: Set<String> = ["format", "format_version"]

    /// Group name of the `index`-th clip (in id order) of a store of `count` clips.
    static func groupName(_ index: Int, count: Int) -> String {
        let width = max(6, String(max(count - 1, 0)).count)
        let digits = String(index)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

/// Writes a keypoint store: to a temporary file, renamed to <path> by finish(), so a store is never half-written.
/// Use from one thread at a time. A writer dropped without `finish()` deletes its temporary file.
public final class KeypointStoreWriter {
    public let path: String
    public var temporaryPath: String { output.temporaryPath }
    private let output: AtomicFile
    private var file: HDF5File?
    private var clips: HDF5Group?
    /// id → index of its pending group, in append order.
    private var ids: [String: Int] = [:]
    private var finished = false

    /// `attributes` become root attributes (e.g. created_by, poseact version).
    public init(path: String, attributes: [String: String] = [:]) throws {
        self.path = path
        output = try AtomicFile(path)
        for key in attributes.keys where KeypointStoreFormat.reserved.contains(key) {
            throw StoreError("\(path): attribute '\(key)' is reserved for the store format")
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw StoreError("\(path): is a folder")
        }
        let file = try storeCall { try HDF5File.create(output.temporaryPath, shownAs: path) }
        do {
            clips = try storeCall {
                let root = try file.root()
                try root.setAttribute("format", KeypointStoreFormat.format)
                try root.setAttribute("format_version", KeypointStoreFormat.version)
                for (key, value) in attributes.sorted(by: { $0.key < $1.key }) { try root.setAttribute(key, value) }
                return try root.createGroup("clips")
            }
        } catch {
            try? file.close()
            output.discard()
            throw error
        }
        self.file = file
    }

    /// Clips appended so far.
    public var count: Int { ids.count }

    /// Adds a clip; a clip whose id is already in the store is refused.
    public func append(_ clip: ClipKeypoints) throws {
        guard let clips, !finished else { throw StoreError("\(path): the store is already finished or abandoned") }
        let where_ = "\(path): clip '\(clip.id)'"
        guard !clip.id.isEmpty else { throw StoreError("\(path): a clip has an empty id") }
        // Every way into a store passes here (extract, import, merge): a label from a folder
        // name or an annotation file is checked as an importer's is.
        if let problem = KeypointChecks.labelProblem(clip.label) { throw StoreError("\(where_) has \(problem)") }
        if ids[clip.id] != nil { throw StoreError("\(where_) is already in the store (ids must be unique)") }
        let frames = clip.times.count, joints = clip.jointNames.count
        guard clip.keypoints.count == frames * joints * 3 else {
            throw StoreError("\(where_): \(clip.keypoints.count) keypoint values; \(frames) frames × \(joints) joints × 3 need \(frames * joints * 3)")
        }
        if let world = clip.world, world.count != frames * joints * 3 {
            throw StoreError("\(where_): \(world.count) world landmark values; \(frames) frames × \(joints) joints × 3 need \(frames * joints * 3)")
        }
        let index = ids.count
        try storeCall {
            let g = try clips.createGroup("pending-\(index)")
            defer { g.close() }
            try g.write("keypoints", clip.keypoints, shape: [frames, joints, 3]).close()
            try g.write("times", clip.times, shape: [frames]).close()
            if let world = clip.world { try g.write("world", world, shape: [frames, joints, 3]).close() }
            try g.setAttribute("id", clip.id)
            try g.setAttribute("label", clip.label)
            try g.setAttribute("split", clip.split ?? "")
            try g.setAttribute("source", clip.source)
            try g.setAttribute("start", clip.start ?? .nan)
            try g.setAttribute("end", clip.end ?? .nan)
            try g.setAttribute("fps", clip.fps)
            try g.setAttribute("width", clip.width)
            try g.setAttribute("height", clip.height)
            try g.setAttribute("joint_names", clip.jointNames)
            try g.setAttribute("estimator", clip.estimator)
            try g.setAttribute("model_hash", clip.modelHash ?? "")
            try g.setAttribute("frames_with_person", clip.framesWithPerson)
        }
        ids[clip.id] = index
    }

    /// Names the clips in id order, closes the file and renames it to `path`.
    public func finish() throws {
        guard let clips, let file, !finished else { throw StoreError("\(path): the store is already finished or abandoned") }
        try storeCall {
            let order = ids.sorted { $0.key < $1.key }
            for (seq, item) in order.enumerated() {
                try clips.move("pending-\(item.value)", to: KeypointStoreFormat.groupName(seq, count: order.count))
            }
        }
        clips.close()
        self.clips = nil
        try storeCall { try file.close() }
        self.file = nil
        try output.commit()
        finished = true
    }

    /// Stops writing and deletes the temporary file.
    public func abandon() {
        guard !finished else { return }
        finished = true
        clips?.close(); clips = nil
        try? file?.close(); file = nil
        output.discard()
    }

    deinit { if !finished { abandon() } }
}

/// A keypoint store opened for reading. The file stays open while the store lives.
/// Safe to read from several threads (libhdf5 is built thread-safe and serialises calls).
public final class KeypointStore: @unchecked Sendable {
    public let path: String
    /// Root attributes other than format and format_version, as text.
    public let attributes: [String: String]

    /// A clip's metadata, read without its keypoints.
    public struct Entry: Sendable, Equatable {
        public let id: String, label: String, split: String?, frames: Int, source: String, start: Double?, end: Double?,
                   fps: Double, width: Int, height: Int, framesWithPerson: Int
        /// What made its keypoints: a pose model, or `import:FILE` for keypoints imported.
        public let estimator: String
        public init(id: String, label: String, split: String?, frames: Int, source: String, start: Double?, end: Double?,
                    fps: Double, width: Int, height: Int, framesWithPerson: Int, estimator: String = "") {
            self.id = id; self.label = label; self.split = split; self.frames = frames; self.source = source
            self.start = start; self.end = end; self.fps = fps; self.width = width; self.height = height
            self.framesWithPerson = framesWithPerson; self.estimator = estimator
        }

        /// Imported keypoints: their `source` is the keypoint file, not a video they were cut from.
        public var isImported: Bool { estimator.hasPrefix("import:") }
    }

    /// Metadata of every clip, sorted by id.
    public let entries: [Entry]
    private let groupNames: [String: String]   // id → group name under /clips
    private let file: HDF5File
    private let clips: HDF5Group

    public init(path: String) throws {
        self.path = path
        let file = try storeCall { try HDF5File.open(path) }
        let root = try storeCall { try file.root() }
        func notAStore(_ why: String) -> StoreError { StoreError("\(path): not a poseact keypoint store (\(why))") }
        guard try storeCall({ try root.hasAttribute("format") }) else { throw notAStore("no 'format' attribute") }
        guard case .string(let format) = try storeCall({ try root.attribute("format") }), format == KeypointStoreFormat.format else {
            let value = (try? root.attribute("format").text) ?? "?"
            throw notAStore("its format is '\(value)', not '\(KeypointStoreFormat.format)'")
        }
        let version = try storeCall { try root.intAttribute("format_version") }
        guard version <= KeypointStoreFormat.version else {
            throw StoreError("\(path): keypoint store format_version \(version) is newer than this poseact reads (\(KeypointStoreFormat.version)); update poseact")
        }
        guard try storeCall({ try root.has("clips") }) else { throw notAStore("no /clips group") }
        var attributes: [String: String] = [:]
        try storeCall {
            for name in try root.attributeNames() where !KeypointStoreFormat.reserved.contains(name) {
                attributes[name] = try root.attribute(name).text
            }
        }
        self.attributes = attributes
        let clips = try storeCall { try root.group("clips") }
        var entries: [Entry] = []
        var groupNames: [String: String] = [:]
        try storeCall {
            for name in try clips.children() {
                let g = try clips.group(name)
                defer { g.close() }
                let id = try g.stringAttribute("id")
                if let other = groupNames[id] {
                    throw StoreError("\(path): clip id '\(id)' is in both /clips/\(other) and /clips/\(name) (damaged store)")
                }
                let times = try g.dataset("times")
                let shape = try times.shape()
                times.close()
                guard shape.count == 1 else { throw StoreError("\(path): /clips/\(name)/times has shape \(shape); expected [frames]") }
                let split = try g.stringAttribute("split")
                let start = try g.doubleAttribute("start"), end = try g.doubleAttribute("end")
                let label = try g.stringAttribute("label")
                guard !id.isEmpty, !label.isEmpty else {
                    throw StoreError("\(path): /clips/\(name) has an empty \(id.isEmpty ? "id" : "label") (damaged store)")
                }
                entries.append(Entry(
                    id: id, label: label, split: split.isEmpty ? nil : split, frames: shape[0],
                    source: try g.stringAttribute("source"), start: start.isNaN ? nil : start, end: end.isNaN ? nil : end,
                    fps: try g.doubleAttribute("fps"), width: try g.intAttribute("width"), height: try g.intAttribute("height"),
                    framesWithPerson: try g.intAttribute("frames_with_person"), estimator: try g.stringAttribute("estimator")))
                groupNames[id] = name
            }
        }
        entries.sort { $0.id < $1.id }
        self.entries = entries
        self.groupNames = groupNames
        self.file = file
        self.clips = clips
    }

    /// Whether the store holds a clip `id`.
    public func contains(_ id: String) -> Bool { groupNames[id] != nil }

    /// One clip with its keypoints.
    public func read(_ id: String) throws -> ClipKeypoints {
        guard let name = groupNames[id] else { throw StoreError("\(path): no clip '\(id)'") }
        return try storeCall {
            let g = try clips.group(name)
            defer { g.close() }
            let keypoints = try g.read("keypoints", as: Float.self)
            let times = try g.read("times", as: Double.self)
            let jointNames = try g.stringArrayAttribute("joint_names")
            let frames = times.values.count
            guard keypoints.shape == [frames, jointNames.count, 3] else {
                throw StoreError("\(path): /clips/\(name): keypoints have shape \(keypoints.shape); \(frames) times and \(jointNames.count) joint names need [\(frames), \(jointNames.count), 3]")
            }
            var world: [Float]?
            if try g.has("world") {
                let w = try g.read("world", as: Float.self)
                guard w.shape == keypoints.shape else {
                    throw StoreError("\(path): /clips/\(name): world landmarks have shape \(w.shape); the keypoints have \(keypoints.shape)")
                }
                world = w.values
            }
            let split = try g.stringAttribute("split"), hash = try g.stringAttribute("model_hash")
            let start = try g.doubleAttribute("start"), end = try g.doubleAttribute("end")
            return ClipKeypoints(
                id: try g.stringAttribute("id"), label: try g.stringAttribute("label"), split: split.isEmpty ? nil : split,
                source: try g.stringAttribute("source"), start: start.isNaN ? nil : start, end: end.isNaN ? nil : end,
                fps: try g.doubleAttribute("fps"), width: try g.intAttribute("width"), height: try g.intAttribute("height"),
                jointNames: jointNames, keypoints: keypoints.values, times: times.values,
                estimator: try g.stringAttribute("estimator"), modelHash: hash.isEmpty ? nil : hash, world: world)
        }
    }

    /// Every clip, in id order.
    public func readAll() throws -> [ClipKeypoints] { try entries.map { try read($0.id) } }

    /// Joins stores (e.g. shards) into one; the same id twice → StoreError naming both files, unless the clips are identical (then kept once).
    /// Root attributes that all inputs agree on are kept. `output` may be one of the inputs.
    /// Returns the number of clips written.
    @discardableResult
    public static func merge(_ inputs: [String], into output: String) throws -> Int {
        guard !inputs.isEmpty else { throw StoreError("\(output): no stores to merge") }
        let stores = try inputs.map { try KeypointStore(path: $0) }
        // Which store each id comes from; identical copies in later stores are skipped.
        var owner: [String: Int] = [:]
        var take: [[String]] = Array(repeating: [], count: stores.count)
        for (s, store) in stores.enumerated() {
            for entry in store.entries {
                if let first = owner[entry.id] {
                    let a = try stores[first].read(entry.id), b = try store.read(entry.id)
                    guard a.isIdentical(to: b) else {
                        throw StoreError("clip '\(entry.id)' is in both \(stores[first].path) and \(store.path), with different contents")
                    }
                    continue
                }
                owner[entry.id] = s
                take[s].append(entry.id)
            }
        }
        var attributes = stores[0].attributes
        for store in stores.dropFirst() { attributes = attributes.filter { store.attributes[$0.key] == $0.value } }
        let writer = try KeypointStoreWriter(path: output, attributes: attributes)
        do {
            for (s, ids) in take.enumerated() { for id in ids { try writer.append(try stores[s].read(id)) } }
            try writer.finish()
        } catch {
            writer.abandon()
            throw error
        }
        return writer.count
    }
}

extension ClipKeypoints {
    /// Equal field by field, floats compared by their bits (so NaN equals NaN).
    func isIdentical(to other: ClipKeypoints) -> Bool {
        func same(_ a: Double?, _ b: Double?) -> Bool { a?.bitPattern == b?.bitPattern }
        return id == other.id && label == other.label && split == other.split && source == other.source
            && same(start, other.start) && same(end, other.end) && fps.bitPattern == other.fps.bitPattern
            && width == other.width && height == other.height && jointNames == other.jointNames
            && estimator == other.estimator && modelHash == other.modelHash
            && keypoints.count == other.keypoints.count && times.count == other.times.count
            && keypoints.withUnsafeBytes { a in other.keypoints.withUnsafeBytes { b in a.elementsEqual(b) } }
            && times.withUnsafeBytes { a in other.times.withUnsafeBytes { b in a.elementsEqual(b) } }
            && (world == nil) == (other.world == nil)
            && (world ?? []).withUnsafeBytes { a in (other.world ?? []).withUnsafeBytes { b in a.elementsEqual(b) } }
    }
}
