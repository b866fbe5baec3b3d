import Basics
import Foundation

/// Keypoint formats other tools write, read into clips with joints mapped by name onto
/// poseact's vocabulary (`Skeleton.allNames`; a joint without a counterpart keeps its own
/// name). One clip per input: a folder of OpenPose's per-frame JSON, a COCO keypoint JSON,
/// a MediaPipe pose-landmark JSON, an NTU RGB+D `.skeleton` file. Where a frame holds
/// several people, the largest (by the box round its joints) is kept, as extraction keeps
/// the prominent one.
public enum KeypointFormat: String, CaseIterable, Sendable, CustomStringConvertible {
    case csv, openpose, coco, mediapipe, ntu

    /// What a file of the format is, for messages ("a keypoint CSV").
    public var description: String {
        switch self {
        case .csv: return "a keypoint CSV"
        case .openpose: return "a folder of OpenPose JSON"
        case .coco: return "a COCO keypoint JSON"
        case .mediapipe: return "a MediaPipe pose-landmark JSON"
        case .ntu: return "an NTU RGB+D .skeleton file"
        }
    }

    /// The format of `path` by what it is: a folder of `*_keypoints.json` is OpenPose; a
    /// `.skeleton` file NTU; a `.csv` the keypoint CSV; a JSON with `images` and
    /// `annotations` COCO, with `frames` (or a list of frames) of `landmarks` MediaPipe.
    public static func detect(_ path: String) throws -> KeypointFormat {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw DatasetError("\(path): no such file or folder")
        }
        if isFolder.boolValue {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            if files.contains(where: { $0.hasSuffix("_keypoints.json") }) { return .openpose }
            throw DatasetError("\(path): a folder, but without OpenPose's *_keypoints.json files (give a folder per clip, or a file)")
        }
        let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
        if ext == "skeleton" { return .ntu }
        if ext == "csv" { return .csv }
        if ext == "json" || ext == "jsonl" {
            let json = try ForeignJSON.load(path)
            if json["images"] != nil, json["annotations"] != nil { return .coco }
            if json["frames"] != nil { return .mediapipe }
            // A list is MediaPipe's only when it is a list of frames: objects, or lists of
            // landmark objects (`[1, 2]` is no clip of any format, and no --size makes it one).
            if let items = json.array, items.allSatisfy({ $0.isObject || ($0.array?.allSatisfy { $0.isObject || $0.isArray } ?? false) }) {
                return .mediapipe
            }
            throw DatasetError("\(path): a JSON file, but neither COCO keypoints (images, annotations) nor MediaPipe pose landmarks (frames of landmarks)")
        }
        throw DatasetError("\(path): not a keypoint format poseact reads (a .csv, a folder of OpenPose JSON, COCO or MediaPipe .json, NTU .skeleton)")
    }

    /// OpenPose's BODY_25 and COCO-18 joints, in their order, in poseact's names.
    public static let openPoseBody25 = ["nose", "neck", "right_shoulder", "right_elbow", "right_wrist", "left_shoulder",
                                        "left_elbow", "left_wrist", "root", "right_hip", "right_knee", "right_ankle", "left_hip",
                                        "left_knee", "left_ankle", "right_eye", "left_eye", "right_ear", "left_ear",
                                        "left_foot_index", "left_small_toe", "left_heel", "right_foot_index", "right_small_toe",
                                        "right_heel"]
    public static let openPoseCOCO18 = ["nose", "neck", "right_shoulder", "right_elbow", "right_wrist", "left_shoulder",
                                        "left_elbow", "left_wrist", "right_hip", "right_knee", "right_ankle", "left_hip",
                                        "left_knee", "left_ankle", "right_eye", "left_eye", "right_ear", "left_ear"]
    /// Kinect v2's 25 joints as NTU RGB+D lists them, in poseact's names.
    public static let ntuJoints = ["root", "spine_mid", "neck", "head", "left_shoulder", "left_elbow", "left_wrist", "left_hand",
                                   "right_shoulder", "right_elbow", "right_wrist", "right_hand", "left_hip", "left_knee",
                                   "left_ankle", "left_foot_index", "right_hip", "right_knee", "right_ankle", "right_foot_index",
                                   "spine_shoulder", "left_index", "left_thumb", "right_index", "right_thumb"]
}

/// A frame of one person: (x, y, confidence) per joint as the file gives them, x and y in
/// pixels, NaN x/y where the format marks the joint missing.
private typealias Pose2D = [(x: Double, y: Double, c: Double)]

/// Reads the foreign formats into `ClipKeypoints`. A file that cannot be read as its format
/// is an error, one line naming the file (and the frame or line) and what is wrong; values
/// go through `KeypointChecks`, as the keypoint CSV's do, and what they refuse is a data
/// problem naming the frame.
public enum ForeignKeypoints {
    /// The clips of `sources`, each read and checked; a clip without a person in any frame
    /// is a problem and left out, as the keypoint CSV's clips without a usable row are.
    public static func read(_ sources: [ForeignClipSource], fps: Double, size: (width: Int, height: Int)?) throws -> ImportResult {
        var clips: [ClipKeypoints] = [], problems: [DataProblem] = []
        for source in sources {
            var log = ProblemLog(file: source.path)
            let clip = try read(source.path, format: source.format, id: source.id, label: source.label, split: source.split,
                                fps: fps, size: size, log: &log)
            if let problem = KeypointChecks.personProblem(clip) {
                log.add("nobody", nil, problem, summary: "clips without a person")
            } else {
                clips.append(clip)
            }
            problems += log.finish()
        }
        return ImportResult(clips: clips, problems: problems)
    }

    /// One clip from `path` in `format`. `size` (width, height) is needed where the format
    /// does not say the picture's size (OpenPose; MediaPipe without width and height).
    /// The data problems are dropped: `read(_:fps:size:)` reports them.
    public static func read(_ path: String, format: KeypointFormat, id: String, label: String, split: String?,
                            fps: Double, size: (width: Int, height: Int)?) throws -> ClipKeypoints {
        var log = ProblemLog(file: path)
        return try read(path, format: format, id: id, label: label, split: split, fps: fps, size: size, log: &log)
    }

    static func read(_ path: String, format: KeypointFormat, id: String, label: String, split: String?,
                     fps: Double, size: (width: Int, height: Int)?, log: inout ProblemLog) throws -> ClipKeypoints {
        guard fps.isFinite && fps > 0 else { throw DatasetError("frame rate must be a positive number, not \(fps)") }
        if let problem = KeypointChecks.labelProblem(label) {
            throw DatasetError("\(path): \(problem): give the clip's label (--label NAME, or a <label>/ folder)")
        }
        let raw: RawClip
        switch format {
        case .openpose: raw = try openPose(path, size: size)
        case .coco: raw = try coco(path)
        case .mediapipe: raw = try mediaPipe(path, fps: fps, size: size)
        case .ntu: raw = try ntu(path)
        case .csv: throw DatasetError("\(path): a keypoint CSV holds many clips: read it with KeypointCSV.read")
        }
        return try clip(raw, id: id, label: label, split: split, source: path, fps: fps, log: &log)
    }

    /// A clip as a format gives it, before the checks.
    private struct RawClip {
        var size: (width: Int, height: Int)
        var names: [String]
        var frames: [Pose2D?]
        var times: [Double]?
        var estimator: String
        /// The clip's own frame rate, where the format fixes it (NTU's 30).
        var fps: Double?
    }

    // MARK: OpenPose

    /// A folder of `<name>_<frame number>_keypoints.json`, one per frame, sorted by the
    /// number: `people[].pose_keypoints_2d` (x, y, c per joint in pixels; 0, 0, 0 missing),
    /// 25 joints (BODY_25) or 18 (COCO-18).
    private static func openPose(_ folder: String, size: (width: Int, height: Int)?) throws -> RawClip {
        guard let size else {
            throw DatasetError("\(folder): OpenPose's JSON does not say the picture's size: give --size WIDTHxHEIGHT")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix("_keypoints.json") }
        guard files.count <= KeypointChecks.maxFrame else {
            throw DatasetError("\(folder): \(files.count) frames, over the \(KeypointChecks.maxFrame) of a clip: split it into clips")
        }
        func number(_ name: String) -> Int {
            let stem = name.dropLast("_keypoints.json".count)
            return Int(stem.split(separator: "_").last ?? "") ?? -1
        }
        let sorted = files.sorted { (number($0), $0) < (number($1), $1) }
        var names: [String]?
        var frames: [Pose2D?] = []
        for file in sorted {
            let path = (folder as NSString).appendingPathComponent(file)
            let people: [OpenPoseFrame.Person]
            do { people = try ForeignJSON.load(path, as: OpenPoseFrame.self).people } catch is DecodingError {
                throw DatasetError("\(path): not an OpenPose frame (no \"people\" list)")
            }
            var poses: [Pose2D] = []
            for (k, person) in people.enumerated() {
                guard let flat = person.poseKeypoints2d?.numbers else {
                    throw DatasetError("\(path): person \(k + 1) has no numeric pose_keypoints_2d")
                }
                let layout: [String]
                switch flat.count {
                case 75: layout = KeypointFormat.openPoseBody25
                case 54: layout = KeypointFormat.openPoseCOCO18
                default: throw DatasetError("\(path): person \(k + 1) has \(flat.count) values in pose_keypoints_2d; BODY_25 has 75, COCO-18 54")
                }
                if let names, names != layout { throw DatasetError("\(path): \(layout.count) joints, where the frames before had \(names.count)") }
                names = layout
                var pose: Pose2D = []
                for i in stride(from: 0, to: flat.count, by: 3) {
                    pose.append(flat[i + 2] != 0 ? (x: flat[i], y: flat[i + 1], c: flat[i + 2]) : (x: .nan, y: .nan, c: 0))
                }
                poses.append(pose)
            }
            frames.append(largest(poses))
        }
        guard !sorted.isEmpty else { throw DatasetError("\(folder): no *_keypoints.json files") }
        return RawClip(size: size, names: names ?? KeypointFormat.openPoseBody25, frames: frames, times: nil, estimator: "openpose")
    }

    // MARK: COCO

    /// COCO's keypoint JSON (as MMPose and YOLO-pose write it): `images` (id, file_name,
    /// width, height) are the frames, in file-name order; `annotations` (image_id, keypoints:
    /// x, y, v per joint) the people; the joint names from `categories[].keypoints` (COCO's
    /// 17 when absent). v = 0 is a missing joint; COCO's 1 (hidden) and 2 (visible) become
    /// 0.5 and 1, a score (0–1) is kept as it is.
    private static func coco(_ path: String) throws -> RawClip {
        let o: COCOKeypointsFile
        do { o = try ForeignJSON.load(path, as: COCOKeypointsFile.self) } catch is DecodingError {
            throw DatasetError("\(path): not COCO keypoints (needs \"images\" and \"annotations\" lists)")
        }
        let images = o.images, annotations = o.annotations
        let cocoNames = ["nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder",
                         "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee",
                         "right_knee", "left_ankle", "right_ankle"]
        let declaredNames = o.categories?.first?.keypoints?.array
        let declared = declaredNames.flatMap { names in names.allSatisfy { $0.string != nil } ? names.compactMap(\.string) : nil }?
            .map(Skeleton.canonicalName)
        let names = declared ?? cocoNames
        guard !images.isEmpty else { throw DatasetError("\(path): no images, so no frames") }
        guard images.count <= KeypointChecks.maxFrame else {
            throw DatasetError("\(path): \(images.count) images, over the \(KeypointChecks.maxFrame) frames of a clip: split it into clips")
        }
        var sizes: Set<String> = []
        var frameOf: [String: Int] = [:]
        let ordered = images.enumerated().sorted { a, b in
            let fa = a.element.fileName?.string ?? "", fb = b.element.fileName?.string ?? ""
            return (fa, a.offset) < (fb, b.offset)
        }
        var width = 0, height = 0
        for (i, (n, image)) in ordered.enumerated() {
            guard let key = image.id?.key else { throw DatasetError("\(path): image \(n + 1) lacks a numeric id") }
            for (name, value) in [("width", image.width), ("height", image.height)]
                where value?.number.flatMap(KeypointChecks.pixels) == nil {
                throw DatasetError("\(path): image \(n + 1): " + KeypointChecks.sizeProblem(name, ForeignJSON.shown(value))
                    + " (a COCO image gives its width and height in pixels)")
            }
            guard frameOf[key] == nil else {
                throw DatasetError("\(path): image \(n + 1) has the id \(OneLine.excerpt(key)) of an image before (ids must be unique)")
            }
            frameOf[key] = i
            width = KeypointChecks.pixels(image.width!.number!)!
            height = KeypointChecks.pixels(image.height!.number!)!
            sizes.insert("\(width)x\(height)")
        }
        guard sizes.count == 1 else {
            throw DatasetError("\(path): the images are of \(sizes.count) sizes (\(sizes.sorted().prefix(5).joined(separator: ", "))\(sizes.count > 5 ? ", …" : "")); a clip has one")
        }
        var poses = [[Pose2D]](repeating: [], count: ordered.count)
        for (k, a) in annotations.enumerated() {
            guard let key = a.imageID?.key, let frame = frameOf[key] else {
                throw DatasetError("\(path): annotation \(k + 1) names an image_id that is not among the images")
            }
            guard let flat = a.keypoints?.numbers, flat.count == 3 * names.count else {
                throw DatasetError("\(path): annotation \(k + 1) needs \(3 * names.count) numbers in keypoints (x, y, v for \(names.count) joints)")
            }
            let visibilityFlags = stride(from: 2, to: flat.count, by: 3).allSatisfy { [0, 1, 2].contains(flat[$0]) }
            var pose: Pose2D = []
            for i in stride(from: 0, to: flat.count, by: 3) {
                let v = flat[i + 2]
                pose.append(v == 0 ? (x: .nan, y: .nan, c: 0) : (x: flat[i], y: flat[i + 1], c: visibilityFlags ? v / 2 : v))
            }
            poses[frame].append(pose)
        }
        return RawClip(size: (width, height), names: names, frames: poses.map(largest), times: nil, estimator: "coco")
    }

    // MARK: MediaPipe

    /// MediaPipe's pose landmarks, one entry per frame: `{"width", "height", "frames": [{"time":
    /// seconds, "landmarks": [{"x", "y", "z", "visibility"}, … 33]}]}` (x, y normalised to the
    /// picture, as MediaPipe gives them; or a list of such frames, a frame's landmarks also
    /// as a list of people, the first kept). `time` is optional (frames `1/fps` apart).
    private static func mediaPipe(_ path: String, fps: Double, size: (width: Int, height: Int)?) throws -> RawClip {
        let file = try ForeignJSON.load(path, as: MediaPipeLandmarksFile.self, lines: MediaPipeFrame.self) {
            MediaPipeLandmarksFile(frames: $0)
        }
        guard let frames = file.frames else {
            throw DatasetError("\(path): not MediaPipe pose landmarks (a \"frames\" list)")
        }
        // The frames' shape first: a file that is no clip at all is said to be one, not told
        // to give --size.
        if let n = frames.firstIndex(where: { $0.landmarks == nil }) {
            throw DatasetError("\(path): frame \(n + 1) needs 33 landmarks (or none), each with x and y")
        }
        var width = size?.width, height = size?.height
        if file.width != nil || file.height != nil {
            for (name, value) in [("width", file.width), ("height", file.height)]
                where value?.number.flatMap(KeypointChecks.pixels) == nil {
                throw DatasetError("\(path): " + KeypointChecks.sizeProblem(name, ForeignJSON.shown(value))
                    + " (give both in pixels, or neither and --size WIDTHxHEIGHT)")
            }
            width = KeypointChecks.pixels(file.width!.number!); height = KeypointChecks.pixels(file.height!.number!)
        }
        guard let width, let height else {
            throw DatasetError("\(path): MediaPipe's landmarks are normalised and the file does not say the picture's size: give --size WIDTHxHEIGHT")
        }
        guard frames.count <= KeypointChecks.maxFrame else {
            throw DatasetError("\(path): \(frames.count) frames, over the \(KeypointChecks.maxFrame) of a clip: split it into clips")
        }
        var poses: [Pose2D?] = [], times: [Double]? = []
        for (n, frame) in frames.enumerated() {
            // Times are the file's only where every frame gives one; a time that is not a
            // number is the file's mistake, not a frame without a time.
            if let time = frame.time, !time.isNull {
                guard let t = time.number else {
                    throw DatasetError("\(path): frame \(n + 1): time '\(ForeignJSON.shown(time))' is not a number of seconds")
                }
                times?.append(t)
            } else {
                times = nil
            }
            let landmarks = frame.landmarks ?? []
            if landmarks.isEmpty { poses.append(nil); continue }
            var pose: Pose2D = []
            pose.reserveCapacity(33)
            for (j, l) in landmarks.enumerated() {
                guard let x = l.x?.number, let y = l.y?.number else {
                    throw DatasetError("\(path): frame \(n + 1), landmark \(j + 1) lacks a numeric x or y")
                }
                pose.append((x * Double(width), y * Double(height), l.visibility?.number ?? 1))
            }
            poses.append(pose)
        }
        guard !poses.isEmpty else { throw DatasetError("\(path): no frames") }
        return RawClip(size: (width, height), names: Skeleton.blazePoseNames, frames: poses, times: times, estimator: "mediapipe")
    }

    // MARK: NTU RGB+D

    /// NTU RGB+D's `.skeleton` text: the frame count; per frame the body count; per body a
    /// line of 10 values, the joint count (25), then per joint 12 values (x y z depthX depthY
    /// colorX colorY orientation×4 trackingState). The colour camera's pixels (1920×1080)
    /// are kept; tracking state 2 (tracked) is confidence 1, 1 (inferred) 0.5, 0 missing.
    /// 30 fps.
    private static func ntu(_ path: String) throws -> RawClip {
        try KeypointChecks.checkFileSize(path, what: "an NTU .skeleton file")
        let data: Data
        do { data = try InputFile.read(path, limit: KeypointChecks.maxFileBytes, what: "NTU .skeleton file") } catch let error as InputFileError {
            throw DatasetError(error.message)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw DatasetError("cannot read \(path) as text (an NTU .skeleton file is UTF-8 text)")
        }
        // Lines split into fields one at a time: all at once took 11 times the file.
        let lines = text.split(whereSeparator: \.isNewline)
        var i = 0
        func line(_ what: String) throws -> [Substring] {
            guard i < lines.count else { throw DatasetError("\(path): ends at line \(i + 1), where \(what) was due") }
            i += 1
            return lines[i - 1].split(separator: " ")
        }
        func int(_ what: String) throws -> Int {
            let l = try line(what)
            guard l.count == 1, let n = Int(l[0]), n >= 0 else {
                throw DatasetError("\(path):\(i): expected \(what), a count, not \"\(OneLine.excerpt(l.joined(separator: " ")))\"")
            }
            return n
        }
        let frameCount = try int("the frame count")
        guard frameCount <= KeypointChecks.maxFrame else {
            throw DatasetError("\(path):1: \(frameCount) frames, over the \(KeypointChecks.maxFrame) of a clip")
        }
        var poses: [Pose2D?] = []
        for _ in 0..<frameCount {
            let bodies = try int("a body count")
            var candidates: [Pose2D] = []
            for _ in 0..<bodies {
                _ = try line("a body's line")
                let joints = try int("a joint count")
                guard joints == 25 else { throw DatasetError("\(path):\(i): \(joints) joints; NTU RGB+D's Kinect gives 25") }
                var pose: Pose2D = []
                for _ in 0..<joints {
                    let v = try line("a joint's line")
                    guard v.count >= 12, let x = Double(v[5]), let y = Double(v[6]), let state = Int(v[11]), (0...2).contains(state) else {
                        if v.count >= 12, let state = Int(v[11]) {
                            throw DatasetError("\(path):\(i): tracking state \(state); Kinect's are 0 (not tracked), 1 (inferred) and 2 (tracked)")
                        }
                        throw DatasetError("\(path):\(i): a joint needs 12 numbers (x y z depthX depthY colorX colorY orientation×4 trackingState), "
                            + "not \"\(OneLine.excerpt(v.joined(separator: " ")))\"")
                    }
                    pose.append(state > 0 ? (x, y, state >= 2 ? 1 : 0.5) : (.nan, .nan, 0))
                }
                candidates.append(pose)
            }
            poses.append(largest(candidates))
        }
        guard frameCount > 0 else { throw DatasetError("\(path): 0 frames") }
        return RawClip(size: (1920, 1080), names: KeypointFormat.ntuJoints, frames: poses, times: nil, estimator: "ntu-kinect", fps: 30)
    }

    /// NTU's action class from a file name (`S001C002P003R002A013.skeleton` → `A013`).
    public static func ntuAction(_ path: String) -> String? {
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        guard let r = name.range(of: #"A\d{3}$"#, options: .regularExpression) else { return nil }
        return String(name[r])
    }

    // MARK: shared

    /// The person with the largest box round their present joints.
    private static func largest(_ poses: [Pose2D]) -> Pose2D? {
        poses.max { area($0) < area($1) }
    }

    private static func area(_ pose: Pose2D) -> Double {
        let present = pose.filter { $0.x.isFinite && $0.y.isFinite }
        guard let f = present.first else { return -1 }
        var x0 = f.x, x1 = f.x, y0 = f.y, y1 = f.y
        for p in present { x0 = min(x0, p.x); x1 = max(x1, p.x); y0 = min(y0, p.y); y1 = max(y1, p.y) }
        return (x1 - x0) * (y1 - y0)
    }

    /// The clip, every value through `KeypointChecks` (as the keypoint CSV's rows): joints
    /// refused are missing in their frame, times refused are frame/fps, each reported.
    private static func clip(_ raw: RawClip, id: String, label: String, split: String?, source: String, fps: Double,
                             log: inout ProblemLog) throws -> ClipKeypoints {
        // A model maps joints by name: two of one name make one of them meaningless.
        if let name = raw.names.firstRepeated {
            throw DatasetError("\(source): the joint '\(OneLine.excerpt(name))' is named twice; give each joint once")
        }
        let (width, height) = raw.size
        var keypoints: [Float] = []
        keypoints.reserveCapacity(raw.frames.count * raw.names.count * 3)
        for (f, frame) in raw.frames.enumerated() {
            for (j, name) in raw.names.enumerated() {
                var value: [Float] = [.nan, .nan, 0]
                if let p = frame?[j] {
                    switch KeypointChecks.joint(name, x: p.x, y: p.y, c: p.c, width: width, height: height) {
                    case .present(let x, let y, let c): value = [x, y, c]
                    case .missing: break
                    case .bad(let kind, let summary, let message): log.add(kind, nil, "frame \(f + 1): \(message)", summary: summary)
                    }
                }
                keypoints += value
            }
        }
        let rate = raw.fps ?? fps
        var t = (0..<raw.frames.count).map { Double($0) / rate }
        if let given = raw.times {
            if let (i, reason) = KeypointChecks.timesProblem(given) {
                log.add("time", nil, "frame \(i + 1): \(reason); the clip's times are frame/\(rate) instead (give times in seconds that increase with frame)",
                        summary: "clips with bad times")
            } else {
                t = given.map { $0 - given[0] }
            }
        }
        let clipFPS = t.count > 1 ? Double(t.count - 1) / t.last! : rate
        return ClipKeypoints(id: id, label: label, split: split, source: source, start: nil, end: nil, fps: clipFPS,
                             width: width, height: height, jointNames: raw.names, keypoints: keypoints, times: t,
                             estimator: raw.estimator)
    }
}

/// COCO's keypoint file as an import reads it (MMPose's and YOLO-pose's too): its images,
/// annotations and categories; every other key (segmentation polygons, boxes, licences) is
/// passed over (the parser still reads it: the peak memory is the tree's, `reader-memory.sh`).
/// The values a message quotes stay as the file has them (`ForeignJSON`).
struct COCOKeypointsFile: Decodable {
    struct Image: Decodable {
        var id: ForeignJSON?, width: ForeignJSON?, height: ForeignJSON?, fileName: ForeignJSON?
        enum CodingKeys: String, CodingKey { case id, width, height, fileName = "file_name" }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try c.raw(.id); width = try c.raw(.width); height = try c.raw(.height); fileName = try c.raw(.fileName)
        }
    }
    struct Annotation: Decodable {
        var imageID: ForeignJSON?, keypoints: ForeignJSON?
        enum CodingKeys: String, CodingKey { case imageID = "image_id", keypoints }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            imageID = try c.raw(.imageID); keypoints = try c.raw(.keypoints)
        }
    }
    struct Category: Decodable {
        var keypoints: ForeignJSON?
        enum CodingKeys: String, CodingKey { case keypoints }
        init(from decoder: Decoder) throws { keypoints = try (try? decoder.container(keyedBy: CodingKeys.self))?.raw(.keypoints) }
    }
    var images: [Image]
    var annotations: [Annotation]
    /// Anything but a list of objects here is taken as no names (COCO's 17 then).
    var categories: [Category]?

    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        images = try c.decode([Image].self, forKey: .images)
        annotations = try c.decode([Annotation].self, forKey: .annotations)
        categories = try? c.decodeIfPresent([Category].self, forKey: .categories)
    }
    enum CodingKeys: String, CodingKey { case images, annotations, categories }
}

/// One OpenPose frame file, `<name>_<frame>_keypoints.json`: its people's body keypoints
/// (faces and hands passed over).
struct OpenPoseFrame: Decodable {
    struct Person: Decodable {
        var poseKeypoints2d: ForeignJSON?
        enum CodingKeys: String, CodingKey { case poseKeypoints2d = "pose_keypoints_2d" }
        /// A person that is not an object has no keypoints (the reader says so, with its number).
        init(from decoder: Decoder) throws { poseKeypoints2d = try (try? decoder.container(keyedBy: CodingKeys.self))?.raw(.poseKeypoints2d) }
    }
    var people: [Person]
}

/// MediaPipe's pose landmarks as an import reads them, in the layouts tools write: an object
/// with `width`, `height` and `frames`, or the list of frames itself, or one frame a line
/// (JSON Lines). What a message quotes stays as the file has it (`ForeignJSON`).
struct MediaPipeLandmarksFile: Decodable {
    var width: ForeignJSON?, height: ForeignJSON?
    /// nil: neither a "frames" list nor a list of frames.
    var frames: [MediaPipeFrame]?
    enum CodingKeys: String, CodingKey { case width, height, frames }

    init(frames: [MediaPipeFrame]) { self.frames = frames }

    init(from decoder: Decoder) throws {
        guard let c = try? decoder.container(keyedBy: CodingKeys.self) else {
            frames = try? [MediaPipeFrame](from: decoder)
            return
        }
        width = try c.raw(.width); height = try c.raw(.height)
        frames = try? c.decode([MediaPipeFrame].self, forKey: .frames)
    }
}

/// One MediaPipe frame: an object with its `time` and its `landmarks` (or `pose_landmarks`),
/// or the landmark list itself; a list of people's lists is the first person's.
struct MediaPipeFrame: Decodable {
    struct Landmark {
        var x: ForeignJSON?, y: ForeignJSON?, visibility: ForeignJSON?
    }
    var time: ForeignJSON?
    /// 33 landmarks, or none (no person); nil when the frame holds anything else.
    var landmarks: [Landmark]?
    enum CodingKeys: String, CodingKey { case time, landmarks, poseLandmarks = "pose_landmarks" }

    init(from decoder: Decoder) throws {
        guard let c = try? decoder.container(keyedBy: CodingKeys.self) else {
            landmarks = Self.landmarks(try? [ForeignJSON](from: decoder))
            return
        }
        time = try c.raw(.time)
        let key: CodingKeys? = c.contains(.landmarks) ? .landmarks : c.contains(.poseLandmarks) ? .poseLandmarks : nil
        landmarks = key.flatMap { Self.landmarks(try? c.decode([ForeignJSON].self, forKey: $0)) }
    }

    private static func landmarks(_ list: [ForeignJSON]?) -> [Landmark]? {
        guard var items = list else { return nil }
        if let people = items.first?.array { items = people }
        guard items.isEmpty || (items.count == 33 && items.allSatisfy(\.isObject)) else { return nil }
        return items.map { Landmark(x: $0["x"], y: $0["y"], visibility: $0["visibility"]) }
    }
}

extension KeyedDecodingContainer {
    /// The value under `key` as the file has it (a null is `.null`, so a message can quote
    /// it); nil when the key is absent.
    func raw(_ key: Key) throws -> ForeignJSON? { contains(key) ? try decode(ForeignJSON.self, forKey: key) : nil }
}

/// Another tool's JSON, parsed by Foundation's `JSONDecoder` into a compact tree (numbers
/// as Double, a list of numbers as one [Double], objects as lists of pairs): about 8 times
/// the file's size at the peak, where `JSONSerialization`'s objects took 50 and more.
/// JSON Lines (one value a line) are read a line at a time.
indirect enum ForeignJSON: Decodable {
    case number(Double), string(String), bool(Bool), null
    /// A list whose elements are all numbers: COCO's and OpenPose's flat keypoints.
    case numbers([Double])
    case array([ForeignJSON])
    /// Keys and values in the file's order (a few keys an object: a list is smaller than a
    /// dictionary and as quick to search).
    case object([(key: String, value: ForeignJSON)])

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null; return }
        // The common cases first: a failed attempt costs an error value.
        if let number = try? single.decode(Double.self) { self = .number(number); return }
        if let keyed = try? decoder.container(keyedBy: Key.self) {
            var pairs: [(key: String, value: ForeignJSON)] = []
            pairs.reserveCapacity(keyed.allKeys.count)
            for key in keyed.allKeys { pairs.append((key.stringValue, try keyed.decode(ForeignJSON.self, forKey: key))) }
            self = .object(pairs)
            return
        }
        if var list = try? decoder.unkeyedContainer() {
            var items: [ForeignJSON] = []
            if let count = list.count { items.reserveCapacity(count) }
            while !list.isAtEnd { items.append(try list.decode(ForeignJSON.self)) }
            var numbers: [Double] = []
            numbers.reserveCapacity(items.count)
            for item in items {
                guard case .number(let n) = item else { self = .array(items); return }
                numbers.append(n)
            }
            self = items.isEmpty ? .array([]) : .numbers(numbers)
            return
        }
        if let flag = try? single.decode(Bool.self) { self = .bool(flag); return }
        self = .string(try single.decode(String.self))
    }

    static func load(_ path: String) throws -> ForeignJSON {
        try load(path, as: ForeignJSON.self, lines: ForeignJSON.self) { .array($0) }
    }

    /// The file at `path` as `T`, a format's schema: its size checked first, bytes that are
    /// not JSON refused in one line; JSON of another shape is the `DecodingError` the caller
    /// words for its format.
    static func load<T: Decodable>(_ path: String, as type: T.Type) throws -> T {
        try load(path, as: type) { _ in nil }
    }

    /// The same, or a file of one `Line` a line (JSON Lines, more than one line) `joined`.
    static func load<T: Decodable, Line: Decodable>(_ path: String, as type: T.Type, lines: Line.Type,
                                                    joined: ([Line]) -> T) throws -> T {
        try load(path, as: type) { text in (try? text.map { try JSONDecoder().decode(lines, from: Data($0)) }).map(joined) }
    }

    private static func load<T: Decodable>(_ path: String, as type: T.Type, orLines: ([Data.SubSequence]) -> T?) throws -> T {
        // Refused before reading: a tree takes about 8 times the file.
        try KeypointChecks.checkFileSize(path, what: "a JSON keypoint file")
        let data: Data
        do { data = try InputFile.read(path, limit: KeypointChecks.maxFileBytes, what: "JSON keypoint file") } catch let error as InputFileError {
            throw DatasetError(error.message)
        }
        do { return try JSONDecoder().decode(type, from: data) } catch let error as DecodingError where error.isSyntaxError {
            let lines = data.split(separator: UInt8(ascii: "\n")).filter { !$0.allSatisfy { $0 == 32 || $0 == 13 } }
            if lines.count > 1, let value = orLines(lines) { return value }
            throw DatasetError("\(path): not valid JSON (\(OneLine.excerpt(Self.reason(error))))")
        }
    }

    /// What the parser said, without Foundation's framing.
    private static func reason(_ error: Error) -> String {
        guard case DecodingError.dataCorrupted(let context) = error else { return "unreadable" }
        if let underlying = context.underlyingError as NSError?, let text = underlying.userInfo["NSDebugDescription"] as? String { return text }
        return context.debugDescription
    }

    subscript(key: String) -> ForeignJSON? {
        guard case .object(let pairs) = self else { return nil }
        return pairs.first { $0.key == key }?.value
    }

    var isObject: Bool { if case .object = self { return true } else { return false } }

    var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The elements of a list (a list of numbers too).
    var array: [ForeignJSON]? {
        switch self {
        case .array(let items): return items
        case .numbers(let numbers): return numbers.map { .number($0) }
        default: return nil
        }
    }

    var isArray: Bool { array != nil }

    var number: Double? { if case .number(let n) = self { return n } else { return nil } }

    var string: String? { if case .string(let s) = self { return s } else { return nil } }

    /// A list of numbers, or nil when it is not one.
    var numbers: [Double]? {
        switch self {
        case .numbers(let numbers): return numbers
        case .array(let items): return items.isEmpty ? [] : nil
        default: return nil
        }
    }

    /// An id as a key (numbers and strings alike).
    var key: String? {
        switch self {
        case .string(let s): return s
        case .number(let n): return String(n)
        default: return nil
        }
    }

    /// A value as a message quotes it.
    static func shown(_ v: ForeignJSON?) -> String {
        switch v {
        case nil: return "(none)"
        case .number(let n)?: return "\(n)"
        case .string(let s)?: return OneLine.excerpt(s)
        case .bool(let b)?: return "\(b)"
        case .null?: return "null"
        case .numbers?, .array?: return "a list"
        case .object?: return "an object"
        }
    }
}
