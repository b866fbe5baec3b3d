import Foundation
import Pose

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

/// A frame of one person: (x, y, confidence) per joint in pixels, NaN x/y where missing.
private typealias Pose2D = [(x: Float, y: Float, c: Float)]

/// Reads the foreign formats into `ClipKeypoints`. Every error is one line naming the file
/// (and the frame or line) and what is wrong.
public enum ForeignKeypoints {
    /// One clip from `path` in `format`. `size` (width, height) is needed where the format
    /// does not say the picture's size (OpenPose; MediaPipe without width and height).
    public static func read(_ path: String, format: KeypointFormat, id: String, label: String, split: String?,
                            fps: Double, size: (width: Int, height: Int)?) throws -> ClipKeypoints {
        switch format {
        case .openpose: return try openPose(path, id: id, label: label, split: split, fps: fps, size: size)
        case .coco: return try coco(path, id: id, label: label, split: split, fps: fps)
        case .mediapipe: return try mediaPipe(path, id: id, label: label, split: split, fps: fps, size: size)
        case .ntu: return try ntu(path, id: id, label: label, split: split)
        case .csv: throw DatasetError("\(path): a keypoint CSV holds many clips: read it with KeypointCSV.read")
        }
    }

    // MARK: OpenPose

    /// A folder of `<name>_<frame number>_keypoints.json`, one per frame, sorted by the
    /// number: `people[].pose_keypoints_2d` (x, y, c per joint in pixels; 0, 0, 0 missing),
    /// 25 joints (BODY_25) or 18 (COCO-18).
    static func openPose(_ folder: String, id: String, label: String, split: String?, fps: Double,
                         size: (width: Int, height: Int)?) throws -> ClipKeypoints {
        guard let size else {
            throw DatasetError("\(folder): OpenPose's JSON does not say the picture's size: give --size WIDTHxHEIGHT")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix("_keypoints.json") }
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
                    pose.append(flat[i + 2] > 0 ? (x: flat[i], y: flat[i + 1], c: flat[i + 2]) : (x: Float.nan, y: Float.nan, c: 0))
                }
                poses.append(pose)
            }
            frames.append(largest(poses))
        }
        guard !sorted.isEmpty else { throw DatasetError("\(folder): no *_keypoints.json files") }
        return clip(id: id, label: label, split: split, source: folder, fps: fps, size: size,
                    names: names ?? KeypointFormat.openPoseBody25, frames: frames, times: nil, estimator: "openpose")
    }

    // MARK: COCO

    /// COCO's keypoint JSON (as MMPose and YOLO-pose write it): `images` (id, file_name,
    /// width, height) are the frames, in file-name order; `annotations` (image_id, keypoints:
    /// x, y, v per joint) the people; the joint names from `categories[].keypoints` (COCO's
    /// 17 when absent). v = 0 is a missing joint; COCO's 1 (hidden) and 2 (visible) become
    /// 0.5 and 1, a score (0–1) is kept as it is.
    static func coco(_ path: String, id: String, label: String, split: String?, fps: Double) throws -> ClipKeypoints {
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
        var sizes: Set<String> = []
        var frameOf: [String: Int] = [:]
        let ordered = images.enumerated().sorted { a, b in
            let fa = a.element["file_name"] as? String ?? "", fb = b.element["file_name"] as? String ?? ""
            return (fa, a.offset) < (fb, b.offset)
        }
        var width = 0, height = 0
        for (i, (n, image)) in ordered.enumerated() {
            guard let key = ForeignJSON.key(image["id"]), let w = ForeignJSON.number(image["width"]), let h = ForeignJSON.number(image["height"]),
                  w > 0, h > 0 else {
                throw DatasetError("\(path): image \(n + 1) lacks a numeric id, width or height")
            }
            frameOf[key] = i
            width = Int(w); height = Int(h)
            sizes.insert("\(width)x\(height)")
        }
        guard sizes.count == 1 else { throw DatasetError("\(path): the images are of \(sizes.count) sizes (\(sizes.sorted().joined(separator: ", "))); a clip has one") }
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
                pose.append(v <= 0 ? (x: Float.nan, y: Float.nan, c: 0) : (x: flat[i], y: flat[i + 1], c: visibilityFlags ? v / 2 : min(v, 1)))
            }
            poses[frame].append(pose)
        }
        return clip(id: id, label: label, split: split, source: path, fps: fps, size: (width, height), names: names,
                    frames: poses.map(largest), times: nil, estimator: "coco")
    }

    // MARK: MediaPipe

    /// MediaPipe's pose landmarks, one entry per frame: `{"width", "height", "frames": [{"time":
    /// seconds, "landmarks": [{"x", "y", "z", "visibility"}, … 33]}]}` (x, y normalised to the
    /// picture, as MediaPipe gives them; or a list of such frames, a frame's landmarks also
    /// as a list of people, the first kept). `time` is optional (frames `1/fps` apart).
    static func mediaPipe(_ path: String, id: String, label: String, split: String?, fps: Double,
                          size: (width: Int, height: Int)?) throws -> ClipKeypoints {
        let json = try ForeignJSON.load(path)
        let top = json as? [String: Any]
        guard let frames = (top?["frames"] as? [Any]) ?? (json as? [Any]) else {
            throw DatasetError("\(path): not MediaPipe pose landmarks (a \"frames\" list)")
        }
        var width = size?.width, height = size?.height
        if let w = ForeignJSON.number(top?["width"]), let h = ForeignJSON.number(top?["height"]) { width = Int(w); height = Int(h) }
        guard let width, let height, width > 0, height > 0 else {
            throw DatasetError("\(path): MediaPipe's landmarks are normalised and the file does not say the picture's size: give --size WIDTHxHEIGHT")
        }
        var poses: [Pose2D?] = [], times: [Double] = []
        for (n, entry) in frames.enumerated() {
            let frame = entry as? [String: Any]
            var list = frame?["landmarks"] ?? frame?["pose_landmarks"] ?? entry
            if let people = list as? [Any], let first = people.first, first is [Any] { list = first }
            if let people = list as? [Any], people.isEmpty { poses.append(nil); times.append(ForeignJSON.double(frame?["time"]) ?? Double(n) / fps); continue }
            guard let landmarks = list as? [[String: Any]], landmarks.count == 33 else {
                throw DatasetError("\(path): frame \(n + 1) needs 33 landmarks (or none), each with x and y")
            }
            var pose: Pose2D = []
            for (j, l) in landmarks.enumerated() {
                guard let x = ForeignJSON.number(l["x"]), let y = ForeignJSON.number(l["y"]) else {
                    throw DatasetError("\(path): frame \(n + 1), landmark \(j + 1) lacks a numeric x or y")
                }
                pose.append((x * Float(width), y * Float(height), ForeignJSON.number(l["visibility"]) ?? 1))
            }
            poses.append(pose)
            times.append(ForeignJSON.double(frame?["time"]) ?? Double(n) / fps)
        }
        guard !poses.isEmpty else { throw DatasetError("\(path): no frames") }
        return clip(id: id, label: label, split: split, source: path, fps: fps, size: (width, height),
                    names: Skeleton.blazePoseNames, frames: poses, times: times, estimator: "mediapipe")
    }

    // MARK: NTU RGB+D

    /// NTU RGB+D's `.skeleton` text: the frame count; per frame the body count; per body a
    /// line of 10 values, the joint count (25), then per joint 12 values (x y z depthX depthY
    /// colorX colorY orientation×4 trackingState). The colour camera's pixels (1920×1080)
    /// are kept; tracking state 2 (tracked) is confidence 1, 1 (inferred) 0.5, 0 missing.
    /// 30 fps.
    static func ntu(_ path: String, id: String, label: String, split: String?) throws -> ClipKeypoints {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw DatasetError("cannot read \(path)") }
        let lines = text.split(whereSeparator: \.isNewline).map { $0.split(separator: " ") }
        var i = 0
        func line(_ what: String) throws -> [Substring] {
            guard i < lines.count else { throw DatasetError("\(path): ends at line \(i + 1), where \(what) was due") }
            i += 1
            return lines[i - 1]
        }
        func int(_ what: String) throws -> Int {
            let l = try line(what)
            guard l.count == 1, let n = Int(l[0]), n >= 0 else { throw DatasetError("\(path):\(i): expected \(what), a count, not \"\(l.joined(separator: " "))\"") }
            return n
        }
        let frameCount = try int("the frame count")
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
                    guard v.count >= 12, let x = Float(v[5]), let y = Float(v[6]), let state = Int(v[11]) else {
                        throw DatasetError("\(path):\(i): a joint needs 12 numbers (x y z depthX depthY colorX colorY orientation×4 trackingState)")
                    }
                    pose.append(state > 0 ? (x, y, state >= 2 ? 1 : 0.5) : (.nan, .nan, 0))
                }
                candidates.append(pose)
            }
            poses.append(largest(candidates))
        }
        guard frameCount > 0 else { throw DatasetError("\(path): 0 frames") }
        return clip(id: id, label: label, split: split, source: path, fps: 30, size: (1920, 1080),
                    names: KeypointFormat.ntuJoints, frames: poses, times: nil, estimator: "ntu-kinect")
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

    private static func area(_ pose: Pose2D) -> Float {
        let present = pose.filter { $0.x.isFinite && $0.y.isFinite }
        guard let f = present.first else { return -1 }
        var x0 = f.x, x1 = f.x, y0 = f.y, y1 = f.y
        for p in present { x0 = min(x0, p.x); x1 = max(x1, p.x); y0 = min(y0, p.y); y1 = max(y1, p.y) }
        return (x1 - x0) * (y1 - y0)
    }

    private static func clip(id: String, label: String, split: String?, source: String, fps: Double, size: (width: Int, height: Int),
                             names: [String], frames: [Pose2D?], times: [Double]?, estimator: String) -> ClipKeypoints {
        let w = Float(size.width), h = Float(size.height)
        var keypoints: [Float] = []
        keypoints.reserveCapacity(frames.count * names.count * 3)
        for frame in frames {
            for j in 0..<names.count {
                if let p = frame?[j], p.x.isFinite, p.y.isFinite { keypoints += [p.x / w, p.y / h, p.c] } else { keypoints += [.nan, .nan, 0] }
            }
        }
        let t = times.map { ts in ts.map { $0 - (ts.first ?? 0) } } ?? (0..<frames.count).map { Double($0) / fps }
        let rate = t.count > 1 && t.last! > 0 ? Double(t.count - 1) / t.last! : fps
        return ClipKeypoints(id: id, label: label, split: split, source: source, start: nil, end: nil, fps: rate,
                             width: size.width, height: size.height, jointNames: names, keypoints: keypoints, times: t,
                             estimator: estimator)
    }
}

/// JSON as Foundation parses it, with one-line errors.
enum ForeignJSON {
    static func load(_ path: String) throws -> Any {
        guard let data = FileManager.default.contents(atPath: path) else { throw DatasetError("cannot read \(path)") }
        do {
            return try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            // JSON Lines: one value a line.
            let lines = data.split(separator: UInt8(ascii: "\n")).filter { !$0.allSatisfy { $0 == 32 || $0 == 13 } }
            if lines.count > 1, let values = try? lines.map({ try JSONSerialization.jsonObject(with: Data($0)) }) { return values }
            throw DatasetError("\(path): not valid JSON (\((error as NSError).userInfo["NSDebugDescription"] as? String ?? "unreadable"))")
        }
    }

    static func number(_ v: Any?) -> Float? {
        // JSONSerialization gives booleans as NSNumber too: a number is what is not "true"/"false".
        guard let n = v as? NSNumber, !(v is Bool) || String(describing: n) != "true" && String(describing: n) != "false" else { return nil }
        return n.floatValue
    }

    static func double(_ v: Any?) -> Double? { number(v) == nil ? nil : (v as? NSNumber)?.doubleValue }

    static func numbers(_ v: Any?) -> [Float]? {
        guard let list = v as? [Any] else { return nil }
        var out: [Float] = []
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
}
