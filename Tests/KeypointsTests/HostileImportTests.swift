import Foundation
import Keypoints
import KeypointWindows
import XCTest

/// Hostile input to the keypoint importers (issue 34): absurd times, absurd values in every
/// format, names given twice, empty labels, binary files, files too big to parse. Each is a
/// data problem naming the row or frame, or one line naming the file; never an allocation of
/// the clip's span, a NaN model or a crash further down. Files are made on the fly.
final class HostileImportTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: dir) }

    func file(_ name: String, _ text: String) throws -> String {
        let url = dir.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    /// A 40-frame clip at 30 fps whose last time is `last`.
    func timedCSV(last: String) -> String {
        var csv = "clip,label,frame,time,width,height,nose_x,nose_y,nose_c\n"
        for f in 0..<40 { csv += "a,l,\(f),\(f == 39 ? last : String(Double(f) / 30)),100,100,50,50,1\n" }
        return csv
    }

    func oneLine(_ body: () throws -> Void, _ words: [String], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), what, file: file, line: line) { error in
            let text = "\(error)"
            XCTAssertTrue(error is DatasetError, "\(what): \(type(of: error))", file: file, line: line)
            for w in words { XCTAssertTrue(text.contains(w), "\(what): '\(w)' not in: \(text)", file: file, line: line) }
            XCTAssertFalse(text.contains("\n"), "\(what): one line: \(text)", file: file, line: line)
            XCTAssertLessThan(text.count, 400, "\(what): short: \(text)", file: file, line: line)
        }
    }

    // MARK: 4. times

    /// A time of 1e12 or 100000 in a 40-frame clip (on main: imported with 0 problems, then
    /// 1.9 PB asked for, or 115,422 windows) is a problem naming its row; the clip keeps
    /// frame/fps times.
    func testAbsurdTimesAreProblemsAtImport() throws {
        for last in ["1e12", "100000", "0.5"] {   // 0.5 s: before the frame before's 1.27 s
            let result = try KeypointCSV.read(try file("t\(last).csv", timedCSV(last: last)), fps: 30)
            let clip = try XCTUnwrap(result.clips.first, last)
            XCTAssertEqual(clip.times.last ?? 0, 39.0 / 30, accuracy: 1e-9, "\(last): frame/fps instead")
            XCTAssertTrue(result.problems.contains { $0.row == 41 && $0.message.contains("time") && $0.message.contains("frame/30") },
                          "\(last): \(result.problems)")
        }
        // Times that increase by at most 10 s a frame are kept (a time-lapse).
        let lapse = try KeypointCSV.read(try file("lapse.csv", timedCSV(last: "11")), fps: 30)
        XCTAssertEqual(lapse.clips.first?.times.last ?? 0, 11, accuracy: 1e-9)
        XCTAssertEqual(lapse.problems, [])
    }

    /// MediaPipe's times going backwards: a problem naming the frame, frame/fps times.
    func testMediaPipeTimesGoingBackwards() throws {
        let landmarks = "[" + (0..<33).map { _ in #"{"x":0.5,"y":0.5,"visibility":0.9}"# }.joined(separator: ",") + "]"
        let frames = [0.0, 0.04, -5e11].map { #"{"time":\#($0),"landmarks":\#(landmarks)}"# }.joined(separator: ",")
        let path = try file("mp/l/back.json", #"{"width":640,"height":360,"frames":[\#(frames)]}"#)
        let result = try ForeignKeypoints.read(try ForeignDataset.scan(path, label: "l"), fps: 25, size: nil)
        XCTAssertEqual(result.clips.first?.times ?? [], [0, 0.04, 0.08], "frame/25 instead")
        XCTAssertTrue(result.problems.contains { $0.message.contains("frame 3") && $0.message.contains("not after") }, "\(result.problems)")
    }

    /// A store's clip with an absurd time (imported before import checked them) is refused
    /// by `Preprocessing.problem(with:)` in one line naming the clip, and the resampler makes
    /// no frame of it (on main: a 30-trillion-frame allocation).
    func testTheResamplerRefusesAnAbsurdSpan() throws {
        let names = ["nose", "left_shoulder", "right_shoulder", "left_hip", "right_hip"]
        let steady: [Double] = (0..<39).map { Double($0) / 30 }
        for last: Double in [1e12, 100_000] {
            let times = steady + [last]
            let clip = ClipKeypoints(id: "far", label: "l", split: nil, source: "s", start: nil, end: nil, fps: 30, width: 100, height: 100,
                                     jointNames: names, keypoints: [Float](repeating: 0.5, count: 40 * names.count * 3), times: times,
                                     estimator: "test")
            let spec = PreprocessingSpec(joints: names)
            let problem = try XCTUnwrap(Preprocessing.problem(with: clip, spec: spec), "\(times.last!)")
            XCTAssertTrue(problem.contains("clip 'far'") && problem.contains("frame 40") && !problem.contains("\n"), problem)
            XCTAssertEqual(Preprocessing.windows(of: clip, spec: spec).count, 0)
        }
    }

    // MARK: 5. one set of row checks

    /// Every format's values go through the same checks as the CSV's: a coordinate of 3e38,
    /// a confidence of 1e30 (on main stored, and trained into a NaN model) are missing joints,
    /// reported with their frame.
    func testAbsurdValuesInEveryFormatAreProblems() throws {
        // COCO: a 3e38 coordinate and a 1e30 score.
        var kps = [Double](repeating: 0, count: 51)
        for j in 0..<17 { kps[j * 3] = 100; kps[j * 3 + 1] = 100; kps[j * 3 + 2] = 0.9 }
        kps[0] = 3e38; kps[5] = 1e30
        let coco = try file("coco/l/c.json", #"{"images":[{"id":1,"width":640,"height":360,"file_name":"a"}],"#
            + #""annotations":[{"image_id":1,"keypoints":[\#(kps.map { "\($0)" }.joined(separator: ","))]}]}"#)
        // OpenPose: a confidence of 1e30.
        var flat = [Double](repeating: 0, count: 75)
        for j in 0..<25 { flat[j * 3] = 100; flat[j * 3 + 1] = 100; flat[j * 3 + 2] = 0.8 }
        flat[2] = 1e30
        _ = try file("op/l/clip/clip_000000000000_keypoints.json", #"{"people":[{"pose_keypoints_2d":[\#(flat.map { "\($0)" }.joined(separator: ","))]}]}"#)
        // MediaPipe: a visibility of 1e30, an x of 1e30.
        let landmarks = "[" + (0..<33).map { $0 == 0 ? #"{"x":1e30,"y":0.5}"# : $0 == 1 ? #"{"x":0.5,"y":0.5,"visibility":1e30}"# : #"{"x":0.5,"y":0.5}"# }
            .joined(separator: ",") + "]"
        let mp = try file("mp/l/m.json", #"{"width":640,"height":360,"frames":[{"landmarks":\#(landmarks)}]}"#)
        let cases: [(String, String?, [String])] = [
            (coco, nil, ["frame 1: nose at (3e+38", "frame 1: left_eye_c 1e+30 is not a confidence in 0…1"]),
            (dir.appendingPathComponent("op/l/clip").path, "640x360", ["frame 1: nose_c 1e+30 is not a confidence in 0…1"]),
            (mp, nil, ["frame 1: nose at (6.4e+32", "frame 1: left_eye_inner_c 1e+30 is not a confidence"]),
        ]
        for (path, size, messages) in cases {
            let sources = try ForeignDataset.scan(path, label: "l")
            let result = try ForeignKeypoints.read(sources, fps: 30, size: size == nil ? nil : (640, 360))
            let clip = try XCTUnwrap(result.clips.first, path)
            XCTAssertTrue(clip.keypoints.allSatisfy { $0.isNaN || (0...1).contains($0) }, "\(path): no absurd value stored")
            XCTAssertTrue(clip.keypoints[0].isNaN && clip.keypoints[2] == 0, "\(path): the joint is missing")
            for m in messages {
                XCTAssertTrue(result.problems.contains { $0.message.contains(m) && $0.file == path }, "\(path): \(m) in \(result.problems)")
            }
        }
        // The CSV: a confidence of 1e30 is the same problem.
        let csv = try KeypointCSV.read(try file("c.csv", "clip,label,frame,width,height,nose_x,nose_y,nose_c\na,l,0,10,10,1,1,1e30\na,l,1,10,10,1,1,1\n"))
        XCTAssertTrue(csv.problems.contains { $0.row == 2 && $0.message.contains("nose_c 1e+30 is not a confidence in 0…1") }, "\(csv.problems)")
        XCTAssertTrue(csv.clips[0].keypoints[0].isNaN)
    }

    /// Files that cannot be a clip: one line naming the file, what is wrong, what to do, and
    /// never more than a short excerpt of the file's own bytes.
    func testBadFilesAreOneLine() throws {
        let image = #"{"id":1,"width":1e30,"height":360,"file_name":"a"}"#
        oneLine({ _ = try ForeignKeypoints.read(try self.file("w.json", #"{"images":[\#(image)],"annotations":[]}"#), format: .coco,
                                                id: "c", label: "l", split: nil, fps: 30, size: nil) },
                ["w.json", "image 1", "width", "not a whole number of pixels in 1…100000"], "COCO width 1e30")
        oneLine({ _ = try ForeignKeypoints.read(try self.file("d.json", #"{"images":[{"id":1,"width":10,"height":10}],"annotations":[],"#
                                                                + #""categories":[{"keypoints":["nose","leftKnee","left_knee"]}]}"#),
                                                format: .coco, id: "c", label: "l", split: nil, fps: 30, size: nil) },
                ["d.json", "'left_knee' is named twice"], "COCO joint names twice")
        oneLine({ _ = try ForeignDataset.scan(try self.file("e.json", "[]"), label: "") }, ["--label", "empty"], "--label \"\"")
        oneLine({ _ = try ForeignDataset.scan(try self.file("e2.json", "[]"), label: "  ") }, ["--label", "empty"], "--label \"  \"")
        // A MediaPipe time that is not a number, an NTU tracking state Kinect has not: said,
        // not stored as frame/fps times or as tracked joints.
        let landmarks = "[" + (0..<33).map { _ in #"{"x":0.5,"y":0.5}"# }.joined(separator: ",") + "]"
        oneLine({ _ = try ForeignKeypoints.read(try self.file("t.json", #"{"width":64,"height":48,"frames":[{"time":0,"landmarks":\#(landmarks)},{"time":"x","landmarks":\#(landmarks)}]}"#),
                                                format: .mediapipe, id: "c", label: "l", split: nil, fps: 30, size: nil) },
                ["t.json", "frame 2: time 'x' is not a number of seconds"], "MediaPipe time \"x\"")
        let joint99 = (0..<25).map { $0 == 3 ? "0 0 0 0 0 1 1 0 0 0 0 99" : "0 0 0 0 0 1 1 0 0 0 0 2" }.joined(separator: "\n")
        oneLine({ _ = try ForeignKeypoints.read(try self.file("S003.skeleton", "1\n1\n72057594037931101 0 1 1 1 1 0 0.02 0.1 2\n25\n" + joint99 + "\n"),
                                                format: .ntu, id: "c", label: "l", split: nil, fps: 30, size: nil) },
                ["S003.skeleton:8", "tracking state 99"], "NTU state 99")
        // NTU: 3 kB of binary-looking text where a count is due.
        let control = Array(UInt8(1)...8) + Array(UInt8(14)...31)   // no line breaks: one 3,000-byte line
        let garbage = String((0..<3000).map { Character(UnicodeScalar(control[$0 % control.count])) })
        oneLine({ _ = try ForeignKeypoints.read(try self.file("S001C001P001R001A001.skeleton", garbage + "\n"), format: .ntu,
                                                id: "c", label: "l", split: nil, fps: 30, size: nil) },
                ["S001C001P001R001A001.skeleton:1", "expected the frame count"], "NTU binary")
        XCTAssertThrowsError(try ForeignKeypoints.read(try file("S002.skeleton", garbage + "\n"), format: .ntu, id: "c", label: "l",
                                                       split: nil, fps: 30, size: nil)) { error in
            XCTAssertFalse("\(error)".unicodeScalars.contains { $0.value < 32 }, "no control character echoed: \(error)")
        }
    }

    /// A clip in which no frame has a person is left out, reported: it would give no window.
    func testAClipWithoutAPersonIsLeftOut() throws {
        let path = try file("nobody/l/n.json", #"{"width":640,"height":360,"frames":[{"landmarks":[]},{"landmarks":[]}]}"#)
        let result = try ForeignKeypoints.read(try ForeignDataset.scan(dir.appendingPathComponent("nobody").path, label: nil), fps: 30, size: nil)
        XCTAssertEqual(result.clips.count, 0)
        XCTAssertTrue(result.problems.allSatisfy { $0.file == path }, "\(result.problems)")
        XCTAssertTrue(result.problems.contains { $0.message.contains("no frame has a person") }, "\(result.problems)")
    }

    // MARK: 6. memory

    /// A JSON file over the bound is refused before it is read (on main: parsed, at about 50
    /// times its size). The file is sparse: no disk is used.
    func testJSONOverTheSizeBoundIsRefusedBeforeParsing() throws {
        let path = dir.appendingPathComponent("big.json").path
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("[".utf8)))
        XCTAssertEqual(truncate(path, off_t(KeypointChecks.maxFileBytes + 1)), 0)
        oneLine({ _ = try KeypointFormat.detect(path) }, ["big.json", "MiB", "split it into clips"], "a 64 MiB JSON")
    }
}
