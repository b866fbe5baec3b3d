import Basics
import Foundation

/// Keypoint formats other tools write, read into clips with joints mapped by name onto
/// poseact's vocabulary (`Skeleton.allNames`; a joint without a counterpart keeps its own
/// name). One clip per input: a folder of OpenPose's per-frame JSON, a COCO keypoint JSON,
/// a MediaPipe pose-landmark JSON, an NTU RGB+D `.skeleton` file. Where a frame holds
/// several people, the largest (by the box round its joints) is kept, as extraction keeps
/// the prominent one.
public enum KeypointFormat: String, CaseIterable, Sendable {
    case csv, openpose, coco, mediapipe, ntu

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
            if let o = json as? [String: Any], o["images"] != nil, o["annotations"] != nil { return .coco }
            if let o = json as? [String: Any], o["frames"] != nil { return .mediapipe }
            if json is [Any] { return .mediapipe }
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
            guard let o = try ForeignJSON.load(path) as? [String: Any], let people = o["people"] as? [Any] else {
                throw DatasetError("\(path): not an OpenPose frame (no \"people\" list)")
            }
            var poses: [Pose2D] = []
            for (k, person) in people.enumerated() {
                guard let p = person as? [String: Any], let flat = ForeignJSON.numbers(p["pose_keypoints_2d"]) else {
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
        guard let o = try ForeignJSON.load(path) as? [String: Any], let images = o["images"] as? [[String: Any]],
              let annotations = o["annotations"] as? [[String: Any]] else {
            throw DatasetError("\(path): not COCO keypoints (needs \"images\" and \"annotations\" lists)")
        }
        let cocoNames = ["nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder",
                         "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee",
                         "right_knee", "left_ankle", "right_ankle"]
        let declared = ((o["categories"] as? [[String: Any]])?.first?["keypoints"] as? [String])?.map(Skeleton.canonicalName)
        let names = declared ?? cocoNames
        guard !images.isEmpty else { throw DatasetError("\(path): no images, so no frames") }
        guard images.count <= KeypointChecks.maxFrame else {
            throw DatasetError("\(path): \(images.count) images, over the \(KeypointChecks.maxFrame) frames of a clip: split it into clips")
        }
        var sizes: Set<String> = []
        var frameOf: [String: Int] = [:]
        let ordered = images.enumerated().sorted { a, b in
            let fa = a.element["file_name"] as? String ?? "", fb = b.element["file_name"] as? String ?? ""
            return (fa, a.offset) < (fb, b.offset)
        }
        var width = 0, height = 0
        for (i, (n, image)) in ordered.enumerated() {
            guard let key = ForeignJSON.key(image["id"]) else { throw DatasetError("\(path): image \(n + 1) lacks a numeric id") }
            for (name, value) in [("width", image["width"]), ("height", image["height"])]
                where ForeignJSON.number(value).flatMap(KeypointChecks.pixels) == nil {
                throw DatasetError("\(path): image \(n + 1): " + KeypointChecks.sizeProblem(name, ForeignJSON.shown(value))
                    + " (a COCO image gives its width and height in pixels)")
            }
            guard frameOf[key] == nil else {
                throw DatasetError("\(path): image \(n + 1) has the id \(OneLine.excerpt(key)) of an image before (ids must be unique)")
            }
            frameOf[key] = i
            width = KeypointChecks.pixels(ForeignJSON.number(image["width"])!)!
            height = KeypointChecks.pixels(ForeignJSON.number(image["height"])!)!
            sizes.insert("\(width)x\(height)")
        }
        guard sizes.count == 1 else {
            throw DatasetError("\(path): the images are of \(sizes.count) sizes (\(sizes.sorted().prefix(5).joined(separator: ", "))\(sizes.count > 5 ? ", …" : "")); a clip has one")
        }
        var poses = [[Pose2D]](repeating: [], count: ordered.count)
        for (k, a) in annotations.enumerated() {
            guard let key = ForeignJSON.key(a["image_id"]), let frame = frameOf[key] else {
                throw DatasetError("\(path): annotation \(k + 1) names an image_id that is not among the images")
            }
            guard let flat = ForeignJSON.numbers(a["keypoints"]), flat.count == 3 * names.count else {
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
        let json = try ForeignJSON.load(path)
        let top = json as? [String: Any]
        guard let frames = (top?["frames"] as? [Any]) ?? (json as? [Any]) else {
            throw DatasetError("\(path): not MediaPipe pose landmarks (a \"frames\" list)")
        }
        var width = size?.width, height = size?.height
        if top?["width"] != nil || top?["height"] != nil {
            for (name, value) in [("width", top?["width"]), ("height", top?["height"])]
                where ForeignJSON.number(value).flatMap(KeypointChecks.pixels) == nil {
                throw DatasetError("\(path): " + KeypointChecks.sizeProblem(name, ForeignJSON.shown(value))
                    + " (give both in pixels, or neither and --size WIDTHxHEIGHT)")
            }
            width = KeypointChecks.pixels(ForeignJSON.number(top?["width"])!); height = KeypointChecks.pixels(ForeignJSON.number(top?["height"])!)
        }
        guard let width, let height else {
            throw DatasetError("\(path): MediaPipe's landmarks are normalised and the file does not say the picture's size: give --size WIDTHxHEIGHT")
        }
        guard frames.count <= KeypointChecks.maxFrame else {
            throw DatasetError("\(path): \(frames.count) frames, over the \(KeypointChecks.maxFrame) of a clip: split it into clips")
        }
        var poses: [Pose2D?] = [], times: [Double]? = []
        for (n, entry) in frames.enumerated() {
            let frame = entry as? [String: Any]
            // Times are the file's only where every frame gives one.
            if let t = ForeignJSON.number(frame?["time"]) { times?.append(t) } else { times = nil }
            var list = frame?["landmarks"] ?? frame?["pose_landmarks"] ?? entry
            if let people = list as? [Any], let first = people.first, first is [Any] { list = first }
            if let people = list as? [Any], people.isEmpty { poses.append(nil); continue }
            guard let landmarks = list as? [[String: Any]], landmarks.count == 33 else {
                throw DatasetError("\(path): frame \(n + 1) needs 33 landmarks (or none), each with x and y")
            }
            var pose: Pose2D = []
            for (j, l) in landmarks.enumerated() {
                guard let x = ForeignJSON.number(l["x"]), let y = ForeignJSON.number(l["y"]) else {
                    throw DatasetError("\(path): frame \(n + 1), landmark \(j + 1) lacks a numeric x or y")
                }
                pose.append((x * Double(width), y * Double(height), ForeignJSON.number(l["visibility"]) ?? 1))
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
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw DatasetError("cannot read \(path) as text (an NTU .skeleton file is UTF-8 text)")
        }
        let lines = text.split(whereSeparator: \.isNewline).map { $0.split(separator: " ") }
        var i = 0
        func line(_ what: String) throws -> [Substring] {
            guard i < lines.count else { throw DatasetError("\(path): ends at line \(i + 1), where \(what) was due") }
            i += 1
            return lines[i - 1]
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
                    guard v.count >= 12, let x = Double(v[5]), let y = Double(v[6]), let state = Int(v[11]) else {
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

/// JSON as Foundation parses it, with one-line errors.
enum ForeignJSON {
    static func load(_ path: String) throws -> Any {
        // Refused before reading: Foundation's objects take about 50 times the file.
        try KeypointChecks.checkFileSize(path, what: "a JSON keypoint file")
        guard let data = FileManager.default.contents(atPath: path) else { throw DatasetError("cannot read \(path)") }
        do {
            return try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            // JSON Lines: one value a line.
            let lines = data.split(separator: UInt8(ascii: "\n")).filter { !$0.allSatisfy { $0 == 32 || $0 == 13 } }
            if lines.count > 1, let values = try? lines.map({ try JSONSerialization.jsonObject(with: Data($0)) }) { return values }
            let why = (error as NSError).userInfo["NSDebugDescription"] as? String ?? "unreadable"
            throw DatasetError("\(path): not valid JSON (\(OneLine.excerpt(why)))")
        }
    }

    static func number(_ v: Any?) -> Double? {
        // JSONSerialization gives booleans as NSNumber too: a number is what is not "true"/"false".
        guard let n = v as? NSNumber, !(v is Bool) || String(describing: n) != "true" && String(describing: n) != "false" else { return nil }
        return n.doubleValue
    }

    static func numbers(_ v: Any?) -> [Double]? {
        guard let list = v as? [Any] else { return nil }
        var out: [Double] = []
        out.reserveCapacity(list.count)
        for x in list { guard let f = number(x) else { return nil }; out.append(f) }
        return out
    }

    /// An id as a key (numbers and strings alike).
    static func key(_ v: Any?) -> String? {
        if let s = v as? String { return s }
        if let n = number(v) { return String(n) }
        return nil
    }

    /// A value as a message quotes it.
    static func shown(_ v: Any?) -> String {
        guard let v else { return "(none)" }
        if let n = number(v) { return "\(n)" }
        return OneLine.excerpt(String(describing: v))
    }
}
