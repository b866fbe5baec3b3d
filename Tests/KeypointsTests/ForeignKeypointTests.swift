import Foundation
import Keypoints
import TestData
import XCTest

/// The imports of other tools' keypoints, on the samples in `Samples/` (made by
/// `Samples/make_samples.py` from one real BlazePose pose of a push-up frame, 640×360, laid
/// out as each tool documents its files): joints mapped by name, the largest person kept,
/// labels from the folders, and broken files refused with one line.
final class ForeignKeypointTests: XCTestCase {
    var samples: URL { TestData.packageRoot.appendingPathComponent("Tests/KeypointsTests/Samples") }
    /// The pose the samples were made from: left shoulder (439.7, 221.67), right ankle x 115.07.
    let shoulder: (Float, Float) = (439.7, 221.67)

    func value(_ clip: ClipKeypoints, _ joint: String, frame: Int) -> (x: Float, y: Float, c: Float)? {
        guard let j = clip.jointNames.firstIndex(of: joint) else { return nil }
        let i = (frame * clip.jointNames.count + j) * 3
        return (clip.keypoints[i] * Float(clip.width), clip.keypoints[i + 1] * Float(clip.height), clip.keypoints[i + 2])
    }

    func testEachFormatFromItsFolders() throws {
        for (format, dir, frames) in [(KeypointFormat.openpose, "openpose", 3), (.coco, "coco", 3), (.mediapipe, "mediapipe", 3)] {
            let sources = try ForeignDataset.scan(samples.appendingPathComponent(dir).path, label: nil)
            XCTAssertEqual(sources.count, 1, dir)
            let s = try XCTUnwrap(sources.first)
            XCTAssertEqual(s.format, format); XCTAssertEqual(s.label, "pushup")
            let clip = try ForeignKeypoints.read(s.path, format: s.format, id: s.id, label: s.label, split: s.split, fps: 25,
                                                 size: format == .openpose ? (640, 360) : nil)
            XCTAssertEqual(clip.frameCount, frames, dir)
            XCTAssertEqual(clip.width, 640, dir); XCTAssertEqual(clip.height, 360, dir)
            // The same joint, by name, in every format; frame 0 is the pose as it was (to the
            // samples' 2 decimals, and MediaPipe's 5 of a normalised value: 0.01 px).
            let p = try XCTUnwrap(value(clip, "left_shoulder", frame: 0), dir)
            XCTAssertEqual(p.x, shoulder.0, accuracy: 0.01, dir); XCTAssertEqual(p.y, shoulder.1, accuracy: 0.01, dir)
            XCTAssertEqual(value(clip, "right_ankle", frame: 0)?.x ?? 0, 115.07, accuracy: 0.01, dir)
        }
    }

    func testOpenPoseKeepsTheLargerPersonAndMapsBody25() throws {
        let folder = samples.appendingPathComponent("openpose/pushup/clip1").path
        let clip = try ForeignKeypoints.read(folder, format: .openpose, id: "c", label: "l", split: nil, fps: 25, size: (640, 360))
        XCTAssertEqual(clip.jointNames.count, 25)
        XCTAssertTrue(clip.jointNames.contains("root") && clip.jointNames.contains("neck") && clip.jointNames.contains("left_heel"))
        XCTAssertEqual(value(clip, "left_shoulder", frame: 2)?.x ?? 0, shoulder.0 + 4, accuracy: 0.01, "frames in number order, 2 px a frame")
        XCTAssertEqual(value(clip, "left_shoulder", frame: 0)?.c ?? 0, 0.8, accuracy: 1e-6)
        XCTAssertTrue(value(clip, "left_small_toe", frame: 0)?.x.isNaN ?? false, "0, 0, 0 is a missing joint")
        XCTAssertEqual(clip.times, [0, 0.04, 0.08], accuracy: 1e-12)
        XCTAssertThrowsError(try ForeignKeypoints.read(folder, format: .openpose, id: "c", label: "l", split: nil, fps: 25, size: nil)) {
            XCTAssertTrue("\($0)".contains("--size"), "\($0)")
        }
    }

    func testCOCOVisibilityFlags() throws {
        let path = samples.appendingPathComponent("coco/pushup/clip2.json").path
        let clip = try ForeignKeypoints.read(path, format: .coco, id: "c", label: "l", split: nil, fps: 30, size: nil)
        XCTAssertEqual(clip.jointNames.count, 17)
        XCTAssertEqual(value(clip, "left_hip", frame: 0)?.c, 1, "v = 2: visible")
        XCTAssertEqual(value(clip, "left_hip", frame: 1)?.c, 0.5, "v = 1: labelled, hidden")
        XCTAssertTrue(value(clip, "left_ankle", frame: 0)?.x.isNaN ?? false, "v = 0: missing")
    }

    func testMediaPipeTimesAndAFrameWithoutAPerson() throws {
        let path = samples.appendingPathComponent("mediapipe/pushup/clip3.json").path
        let clip = try ForeignKeypoints.read(path, format: .mediapipe, id: "c", label: "l", split: nil, fps: 30, size: nil)
        XCTAssertEqual(clip.jointNames.count, 33)
        XCTAssertEqual(clip.times, [0, 0.04, 0.08], accuracy: 1e-9, "the file's times")
        XCTAssertTrue(value(clip, "nose", frame: 1)?.x.isNaN ?? false)
        XCTAssertEqual(clip.framesWithPerson, 2)
    }

    /// Every layout of MediaPipe landmarks poseact reads, and what each wrong shape is told:
    /// the frames under "frames" or as the list itself, or one JSON value a line; a frame's
    /// landmarks under "landmarks" or "pose_landmarks", or the frame itself, or a list of
    /// people (the first kept).
    func testMediaPipeLayouts() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-mediapipe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // Landmark j of person p at x = (j + 100 p) / 1000.
        func landmarks(_ p: Int = 0, y: String = "0.5") -> String {
            "[" + (0..<33).map { #"{"x":\#(Double($0 + 100 * p) / 1000),"y":\#(y),"z":0,"visibility":0.75}"# }.joined(separator: ",") + "]"
        }
        func read(_ text: String, size: (width: Int, height: Int)? = (1000, 500)) throws -> ClipKeypoints {
            let p = dir.appendingPathComponent("m\(text.hashValue).json").path
            try text.write(toFile: p, atomically: true, encoding: .utf8)
            return try ForeignKeypoints.read(p, format: .mediapipe, id: "c", label: "l", split: nil, fps: 25, size: size)
        }
        let good: [(String, String, [Double], [Float?])] = [
            ("frames, times", #"{"width":1000,"height":500,"frames":[{"time":0,"landmarks":\#(landmarks())},{"time":0.1,"pose_landmarks":\#(landmarks(1))}]}"#,
             [0, 0.1], [0, 100]),
            ("a list of frames, people", #"[{"landmarks":[\#(landmarks(2)),\#(landmarks(1))]},{"landmarks":[]},{"landmarks":[[]]}]"#,
             [0, 0.04, 0.08], [200, nil, nil]),
            ("a list of landmark lists", "[\(landmarks(3)),\(landmarks())]", [0, 0.04], [300, 0]),
            ("JSON Lines", #"{"time":1,"landmarks":\#(landmarks())}"# + "\n" + #"{"time":1.5,"landmarks":\#(landmarks(1))}"# + "\n",
             [0, 0.5], [0, 100]),
            ("a time missing: frame/fps", #"[{"time":null,"landmarks":\#(landmarks())},{"time":0.3,"landmarks":\#(landmarks())}]"#,
             [0, 0.04], [0, 0]),
        ]
        for (what, text, times, noseX) in good {
            let clip = try read(text)
            XCTAssertEqual(clip.times, times, accuracy: 1e-9, what)
            for (f, x) in noseX.enumerated() {
                if let x { XCTAssertEqual(value(clip, "nose", frame: f)?.x ?? -1, x, accuracy: 1e-3, "\(what), frame \(f + 1)") }
                else { XCTAssertTrue(value(clip, "nose", frame: f)?.x.isNaN ?? false, "\(what), frame \(f + 1): no person") }
            }
            XCTAssertEqual(value(clip, "nose", frame: 0)?.c ?? 0, 0.75, accuracy: 1e-6, what)
        }
        let bad: [(String, String, String)] = [
            ("frames not a list", #"{"width":1000,"height":500,"frames":3}"#, #"not MediaPipe pose landmarks (a "frames" list)"#),
            ("an object of no frames", #"{"landmarks":\#(landmarks())}"#, #"not MediaPipe pose landmarks (a "frames" list)"#),
            ("numbers for landmarks", #"{"frames":[{"landmarks":\#(landmarks())},{"landmarks":[1,2]}]}"#, "frame 2 needs 33 landmarks (or none), each with x and y"),
            ("null landmarks", #"{"frames":[{"landmarks":null}]}"#, "frame 1 needs 33 landmarks"),
            ("a frame of no landmarks", #"{"frames":[{"time":0}]}"#, "frame 1 needs 33 landmarks"),
            ("32 landmarks", #"[[\#((0..<32).map { _ in #"{"x":0,"y":0}"# }.joined(separator: ","))]]"#, "frame 1 needs 33 landmarks"),
            ("a y that is text", #"[{"landmarks":\#(landmarks(y: #""a""#))}]"#, "frame 1, landmark 1 lacks a numeric x or y"),
            ("a width that is text", #"{"width":"wide","height":500,"frames":[]}"#, "width"),
            ("a time that is text", #"[{"time":0,"landmarks":[]},{"time":"soon","landmarks":[]}]"#, "frame 2: time 'soon' is not a number of seconds"),
            ("no frames", "[]", "no frames"),
        ]
        for (what, text, words) in bad {
            XCTAssertThrowsError(try read(text), what) { error in
                XCTAssertTrue("\(error)".contains(words), "\(what): \(error)")
                XCTAssertFalse("\(error)".contains("\n"), what)
            }
        }
    }

    func testNTUSkeletonTakesItsActionAsLabel() throws {
        let sources = try ForeignDataset.scan(samples.appendingPathComponent("ntu").path, label: nil)
        XCTAssertEqual(sources.map(\.label), ["A010"])
        let clip = try ForeignKeypoints.read(sources[0].path, format: .ntu, id: "c", label: "A010", split: nil, fps: 30, size: nil)
        XCTAssertEqual(clip.frameCount, 2); XCTAssertEqual(clip.width, 1920); XCTAssertEqual(clip.height, 1080)
        // The pose at 3× in the colour camera's pixels; frame 1's second body is smaller and not kept.
        XCTAssertEqual(value(clip, "left_shoulder", frame: 1)?.x ?? 0, shoulder.0 * 3, accuracy: 0.05)
        XCTAssertEqual(value(clip, "left_thumb", frame: 0)?.c, 0.5, "tracking state 1: inferred")
        XCTAssertTrue(value(clip, "spine_mid", frame: 0)?.x.isNaN ?? false, "tracking state 0: missing")
    }

    /// A broken or unknown file: one line that names it and says what is wrong.
    func testBrokenFilesAreOneLine() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-foreign-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        func file(_ name: String, _ text: String) throws -> String {
            let p = dir.appendingPathComponent(name).path
            try text.write(toFile: p, atomically: true, encoding: .utf8)
            return p
        }
        let cases: [(String, () throws -> Void, String)] = [
            ("truncated", { _ = try KeypointFormat.detect(try file("t.json", "{\"images\": [")) }, "not valid JSON"),
            ("unknown JSON", { _ = try KeypointFormat.detect(try file("u.json", "{\"a\": 1}")) }, "neither COCO"),
            ("unknown file", { _ = try KeypointFormat.detect(try file("v.txt", "hello")) }, "not a keypoint format"),
            ("COCO keypoints short", {
                let p = try file("c.json", #"{"images":[{"id":1,"width":10,"height":10,"file_name":"a"}],"annotations":[{"image_id":1,"keypoints":[1,2,2]}]}"#)
                _ = try ForeignKeypoints.read(p, format: .coco, id: "c", label: "l", split: nil, fps: 30, size: nil)
            }, "annotation 1 needs 51 numbers"),
            ("COCO unknown image", {
                let p = try file("d.json", #"{"images":[{"id":1,"width":10,"height":10}],"annotations":[{"image_id":7,"keypoints":[]}]}"#)
                _ = try ForeignKeypoints.read(p, format: .coco, id: "c", label: "l", split: nil, fps: 30, size: nil)
            }, "image_id that is not among the images"),
            ("NTU cut short", {
                let p = try file("S001C001P001R001A001.skeleton", "3\n1\n72057594037931101 0 1 1 1 1 0 0.02 0.1 2\n25\n0 0 0 0 0 1 1 0 0 0 0 2\n")
                _ = try ForeignKeypoints.read(p, format: .ntu, id: "c", label: "l", split: nil, fps: 30, size: nil)
            }, "ends at line"),
            ("MediaPipe without size", {
                let p = try file("m.json", #"{"frames":[{"landmarks":[]}]}"#)
                _ = try ForeignKeypoints.read(p, format: .mediapipe, id: "c", label: "l", split: nil, fps: 30, size: nil)
            }, "--size"),
            ("a clip without a label", { _ = try ForeignDataset.scan(try file("alone.json", "[]"), label: nil) }, "--label"),
        ]
        for (what, body, words) in cases {
            XCTAssertThrowsError(try body(), what) { error in
                let text = "\(error)"
                XCTAssertTrue(text.contains(words), "\(what): \(text)")
                XCTAssertFalse(text.contains("\n"), "\(what): one line: \(text)")
                XCTAssertTrue(text.contains(dir.path) || text.contains("/"), "\(what): names the file: \(text)")
            }
        }
    }

    /// Videos and keypoint files are found by one scan: the same folders are splits for both
    /// (`val/` is the validation split, not a label), and a folder beside split folders is
    /// reported, not taken as a label, for both.
    func testValFolderIsASplitForVideosAndKeypointFiles() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-splits-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let clip = try Data(contentsOf: samples.appendingPathComponent("coco/pushup/clip2.json"))
        for rel in ["Train/squat/1", "val/squat/2", "test/pushup/3", "extra/pushup/4"] {
            let dir = root.appendingPathComponent((rel as NSString).deletingLastPathComponent)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try Data().write(to: root.appendingPathComponent(rel + ".mp4"))
            try clip.write(to: root.appendingPathComponent(rel + ".json"))
        }
        let videos = try DatasetSources.scan(root.path)
        let keypoints = try ForeignDataset.listing(root.path, label: nil)
        // In name order ("Train" < "test" < "val").
        XCTAssertEqual(videos.clips.map { "\($0.split ?? "-") \($0.label)" }, ["train squat", "test pushup", "validation squat"])
        XCTAssertEqual(keypoints.sources.map { "\($0.split ?? "-") \($0.label)" }, ["train squat", "test pushup", "validation squat"])
        XCTAssertEqual(keypoints.sources.map(\.id), ["train/squat/1", "test/pushup/3", "validation/squat/2"])
        for problems in [videos.problems, keypoints.problems] {
            XCTAssertEqual(problems.filter { $0.message.contains("folder 'extra' is not a split folder") }.count, 1, "\(problems)")
        }
    }
}

private func XCTAssertEqual(_ a: [Double], _ b: [Double], accuracy: Double, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(a.count, b.count, message, file: file, line: line)
    for (x, y) in zip(a, b) { XCTAssertEqual(x, y, accuracy: accuracy, message, file: file, line: line) }
}
