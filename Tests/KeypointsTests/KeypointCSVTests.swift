import Foundation
import TestData
import XCTest
@testable import Keypoints

/// Keypoint CSV import: the Penn Action file (2,326 clips, 163,841 rows) and a small
/// hand-made file with every kind of bad data.
final class KeypointCSVTests: XCTestCase {
    func pennFile(_ name: String) throws -> String {
        try TestData.shared("data/penn-action/" + name).path
    }

    var tempFiles: [URL] = []
    override func tearDown() {
        for f in tempFiles { try? FileManager.default.removeItem(at: f) }
        tempFiles = []
    }

    func write(_ text: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-keypoints-\(UUID().uuidString).csv")
        try text.write(to: url, atomically: true, encoding: .utf8)
        tempFiles.append(url)
        return url.path
    }

    // MARK: Penn Action

    /// The README's table: class → (train, test).
    static let pennSplits: [String: (train: Int, test: Int)] = [
        "baseball_pitch": (104, 63), "baseball_swing": (115, 58), "bench_press": (69, 71), "bowl": (135, 85),
        "clean_and_jerk": (43, 45), "golf_swing": (89, 77), "jump_rope": (40, 42), "jumping_jacks": (56, 56),
        "pullup": (98, 101), "pushup": (104, 107), "situp": (50, 50), "squat": (114, 117),
        "strum_guitar": (46, 48), "tennis_forehand": (80, 77), "tennis_serve": (115, 71),
    ]

    func testPennActionImport() throws {
        let path = try pennFile("keypoints.csv")
        let clipsCSV = try pennFile("clips.csv")
        let t0 = Date()
        let result = try KeypointCSV.read(path)
        let seconds = Date().timeIntervalSince(t0)
        print("Penn Action import: \(result.clips.count) clips, \(result.clips.reduce(0) { $0 + $1.frameCount }) frames in \(String(format: "%.2f", seconds)) s")

        XCTAssertEqual(result.problems, [], result.problems.prefix(5).map(\.description).joined(separator: "\n"))
        XCTAssertEqual(result.clips.count, 2326)
        XCTAssertEqual(result.clips.reduce(0) { $0 + $1.frameCount }, 163_841)
        XCTAssertEqual(Set(result.clips.map(\.label)).count, 15)
        var splits: [String: (train: Int, test: Int)] = [:]
        for c in result.clips {
            var s = splits[c.label] ?? (0, 0)
            if c.split == "train" { s.train += 1 } else if c.split == "test" { s.test += 1 } else { XCTFail("\(c.id): split \(c.split ?? "nil")") }
            splits[c.label] = s
        }
        for (label, want) in Self.pennSplits {
            XCTAssertEqual(splits[label]?.train, want.train, label)
            XCTAssertEqual(splits[label]?.test, want.test, label)
        }

        // Ids as text, in file order; joint names as in the header (Penn's head is poseact's head).
        XCTAssertEqual(result.clips.first?.id, "0001")
        XCTAssertEqual(result.clips.last?.id, "2326")
        let first = result.clips[0]
        XCTAssertEqual(first.jointNames, ["head", "left_shoulder", "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist",
                                          "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle"])
        XCTAssertTrue(first.jointNames.allSatisfy(Skeleton.allNames.contains))
        XCTAssertEqual(first.label, "baseball_pitch")
        XCTAssertEqual(first.split, "test")
        XCTAssertEqual(first.width, 480)
        XCTAssertEqual(first.height, 360)
        XCTAssertEqual(first.fps, 30)
        XCTAssertEqual(first.estimator, "import:keypoints.csv")
        XCTAssertEqual(first.source, path)
        XCTAssertNil(first.start)
        XCTAssertEqual(first.times[1], 1.0 / 30, accuracy: 1e-12)
        XCTAssertEqual(first.keypoints.count, first.frameCount * 13 * 3)
        // Row 2: 0001,baseball_pitch,test,0,480,360,136.50,71.25,1.0,,,0.0,135.00,…
        XCTAssertEqual(first.keypoints[0], Float(136.50 / 480))
        XCTAssertEqual(first.keypoints[1], Float(71.25 / 360))
        XCTAssertEqual(first.keypoints[2], 1)
        XCTAssertTrue(first.keypoints[3].isNaN && first.keypoints[4].isNaN)    // left_shoulder hidden
        XCTAssertEqual(first.keypoints[5], 0)
        XCTAssertEqual(first.keypoints[6], Float(135.00 / 480))

        // Frames per clip and frame size as clips.csv says, for every clip.
        let byID = Dictionary(uniqueKeysWithValues: result.clips.map { ($0.id, $0) })
        let lines = try String(contentsOfFile: clipsCSV, encoding: .utf8).split(separator: "\n").dropFirst()
        XCTAssertEqual(lines.count, 2326)
        for line in lines {
            let f = line.split(separator: ",").map(String.init)   // clip,label,split,frames,width,height,view
            let c = try XCTUnwrap(byID[f[0]], f[0])
            XCTAssertEqual(c.frameCount, Int(f[3]), f[0])
            XCTAssertEqual(c.label, f[1], f[0])
            XCTAssertEqual(c.split, f[2], f[0])
            XCTAssertEqual(c.width, Int(f[4]), f[0])
            XCTAssertEqual(c.height, Int(f[5]), f[0])
        }
        // Hidden joints as the README counts them: visible 1,660,432, not visible 469,501.
        var visible = 0, hidden = 0
        for c in result.clips {
            for k in Swift.stride(from: 2, to: c.keypoints.count, by: 3) {
                if c.keypoints[k] > 0 { visible += 1 } else { hidden += 1; XCTAssertTrue(c.keypoints[k - 2].isNaN) }
            }
        }
        XCTAssertEqual(visible, 1_660_432)
        XCTAssertEqual(hidden, 469_501)
    }

    /// The byte-level number parser gives exactly `Double(String)` on every field of the Penn file.
    func testNumberParserAgreesWithDoubleOnPennValues() throws {
        let path = try pennFile("keypoints.csv")
        let data = try XCTUnwrap(FileManager.default.contents(atPath: path))
        var checked = 0, distinct = Set<String>()
        data.withUnsafeBytes { raw in
            let b = raw.bindMemory(to: UInt8.self)
            var cursor = CSVCursor(b)
            var fields: [CSVField] = []
            _ = cursor.next(&fields)
            while cursor.next(&fields) != nil {
                for f in fields.dropFirst(3) where f.end > f.start {
                    let text = cursor.string(f)
                    if distinct.insert(text).inserted {
                        let fast = parseNumber(b, f.start, f.end)
                        XCTAssertEqual(fast?.bitPattern, Double(text)?.bitPattern, text)
                    }
                    checked += 1
                }
            }
        }
        print("number parser: \(checked) values, \(distinct.count) distinct, all equal to Double(String)")
        XCTAssertGreaterThan(distinct.count, 10_000)
        // Beyond Penn: long mantissas, exponents and words take the slow path and still agree.
        for text in ["0.1", "-0", "1e3", "12345678901234567890.5", "0.30000000000000004", "1.", ".5", "nan", "inf", "-2.5E-3", "9007199254740993", "abc", "1.2.3", "--1", ""] {
            let bytes = Array(text.utf8)
            let fast = bytes.withUnsafeBufferPointer { parseNumber($0, 0, $0.count) }
            if let d = Double(text), d.isNaN { XCTAssertTrue(fast?.isNaN ?? false, text) }
            else { XCTAssertEqual(fast?.bitPattern, Double(text)?.bitPattern, text) }
        }
    }

    // MARK: Bad data

    func testEveryKindOfBadRow() throws {
        // Joints: nose (poseact), foo (not), left_knee; a `view` column nobody knows.
        let csv = """
        clip,label,split,frame,width,height,view,nose_x,nose_y,nose_c,foo_x,foo_y,foo_c,leftKnee_x,leftKnee_y,leftKnee_c
        0007,squat,train,0,100,200,front,10,20,1.0,1,2,1,50,100,0.5
        0007,squat,train,1,100,200,front,abc,20,1.0,1,2,1,50,100,0.5
        0007,squat,train,2,100,200,front,10,20
        0007,squat,train,4,100,200,front,,,0.0,1,2,1,50,,1
        0007,squat,train,4,100,200,front,11,21,1.0,1,2,1,50,100,0.5
        0008,situp,test,x,100,200,front,10,20,1,1,2,1,50,100,1
        0007,jump,test,5,100,200,front,"12",22,1.0,1,2,1,50,100,0.5
        0008,situp,test,0,100,0,front,10,20,1,1,2,1,50,100,1
        0008,situp,test,1,100,200,front,10,20,1,1,2,nan,nan,nan,0
        0009, ,test,0,100,200,front,10,20,1,1,2,1,50,100,1

        """
        let path = try write(csv)
        let result = try KeypointCSV.read(path, fps: 10)
        let text = result.problems.map(\.description).joined(separator: "\n")
        print(text)
        func has(_ row: Int?, _ fragment: String, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertTrue(result.problems.contains { $0.row == row && $0.message.contains(fragment) && $0.file == path },
                          "row \(row.map(String.init) ?? "nil"): \(fragment)\n\(text)", file: file, line: line)
        }
        has(1, "unknown column 'view' ignored")
        has(1, "joint 'foo' is not a poseact joint name; kept, but models map joints by name")
        has(3, "nose_x 'abc' is not a number")
        has(4, "has 9 fields, the header has 16: row skipped")
        has(5, "left_knee_x is given but left_knee_y is empty")
        has(6, "frame 4 of clip 0007 again (first on row 5)")
        has(7, "frame 'x' is not a whole number in 0…1000000: row skipped")
        has(8, "clip 0007 has label 'jump' here but 'squat' before; the first is kept")
        has(8, "clip 0007 has split 'test' here but 'train' before")
        has(9, "height '0' is not a whole number of pixels in 1…100000: row skipped")
        has(2, "clip 0007 has no row for frames 2–3 (2 in all): filled as frames with no pose")
        has(11, "clip 0009 has an empty label: row skipped")   // a store cannot hold it
        has(10, "foo is (1.0, 2.0) with confidence nan: NaN beside a number is no position")   // nan, nan for left_knee: missing, silently
        XCTAssertEqual(result.problems.count, 13, text)

        XCTAssertEqual(result.clips.map(\.id), ["0007", "0008"])   // file order; 0008's first rows were bad
        let c = result.clips[0]
        XCTAssertEqual(c.jointNames, ["nose", "foo", "left_knee"])
        XCTAssertEqual(c.label, "squat")
        XCTAssertEqual(c.split, "train")
        XCTAssertEqual(c.frameCount, 6)        // frames 0…5, 2 and 3 filled
        XCTAssertEqual(c.times, [0, 0.1, 0.2, 0.3, 0.4, 0.5].map { $0 }, accuracy: 1e-12)
        XCTAssertEqual(c.fps, 10)
        func joint(_ f: Int, _ j: Int) -> [Float] { Array(c.keypoints[(f * 3 + j) * 3 ..< (f * 3 + j) * 3 + 3]) }
        XCTAssertEqual(joint(0, 0), [0.1, 0.1, 1])
        XCTAssertEqual(joint(0, 2), [0.5, 0.5, 0.5])
        XCTAssertTrue(joint(1, 0)[0].isNaN && joint(1, 0)[2] == 0)     // "abc": missing
        XCTAssertEqual(joint(1, 1), [0.01, 0.01, 1])                   // the rest of the row is kept
        for f in [2, 3] { for j in 0..<3 { XCTAssertTrue(joint(f, j)[0].isNaN && joint(f, j)[1].isNaN && joint(f, j)[2] == 0) } }
        XCTAssertTrue(joint(4, 0)[0].isNaN && joint(4, 0)[2] == 0)     // empty x/y: missing (the first frame 4 is kept)
        XCTAssertTrue(joint(4, 2)[0].isNaN)                            // x without y: missing
        XCTAssertEqual(joint(5, 0), [0.12, 0.11, 1])                   // quoted number

        let d = result.clips[1]
        XCTAssertEqual(d.frameCount, 1)
        XCTAssertEqual(d.times, [0])
        XCTAssertEqual(Array(d.keypoints[0..<3]), [0.1, 0.1, 1])
        XCTAssertTrue(d.keypoints[3].isNaN && d.keypoints[4].isNaN && d.keypoints[5] == 0)   // c nan: missing
        XCTAssertTrue(d.keypoints[6].isNaN && d.keypoints[7].isNaN && d.keypoints[8] == 0)   // x, y nan: missing
    }

    func testMissingRequiredColumnThrows() throws {
        for missing in KeypointCSV.requiredColumns {
            let columns = ["clip", "label", "split", "frame", "width", "height", "nose_x", "nose_y", "nose_c"].filter { $0 != missing }
            let path = try write(columns.joined(separator: ",") + "\n")
            XCTAssertThrowsError(try KeypointCSV.read(path), missing) { error in
                XCTAssertTrue(((error as? DatasetError)?.message ?? "").contains("has no '\(missing)' column"), "\(error)")
            }
        }
        let noJoints = try write("clip,label,frame,width,height\n1,a,0,10,10\n")
        XCTAssertThrowsError(try KeypointCSV.read(noJoints)) { error in
            XCTAssertTrue(((error as? DatasetError)?.message ?? "").contains("has no joint columns"), "\(error)")
        }
        XCTAssertThrowsError(try KeypointCSV.read("/nonexistent/keypoints.csv")) { error in
            XCTAssertEqual(error as? DatasetError, DatasetError("/nonexistent/keypoints.csv: no such file"))
        }
    }

    /// `dataset export --csv`: 200 Penn Action clips (the first of each label and split, then
    /// in file order) into a store, out as CSV, back in: the same clips, labels, splits,
    /// times and keypoints, within the 4 decimals written (1e-4 px, 1e-4 s; normalised by the
    /// frame's size here) and the NaN of every missing joint.
    func testExportedStoreImportsAsItWas() throws {
        let original = try KeypointCSV.read(try pennFile("keypoints.csv")).clips
        var chosen = Array(original.prefix(200))
        chosen[1].split = nil                     // a clip without a split
        chosen[2].label = "with, comma"           // a label CSV must quote
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let storePath = dir.appendingPathComponent("s.h5").path, csv = dir.appendingPathComponent("s.csv").path
        let writer = try KeypointStoreWriter(path: storePath)
        for clip in chosen { try writer.append(clip) }
        try writer.finish()
        let written = try KeypointCSV.export(try KeypointStore(path: storePath), to: csv)
        XCTAssertEqual(written.clips, 200)
        XCTAssertEqual(written.rows, chosen.reduce(0) { $0 + $1.frameCount })
        let back = try KeypointCSV.read(csv)
        XCTAssertEqual(back.problems.map(\.description), [])
        let byID = Dictionary(uniqueKeysWithValues: back.clips.map { ($0.id, $0) })
        var missing = 0
        for a in chosen {
            let b = try XCTUnwrap(byID[a.id], a.id)
            XCTAssertEqual(b.label, a.label); XCTAssertEqual(b.split, a.split); XCTAssertEqual(b.jointNames, a.jointNames)
            XCTAssertEqual(b.width, a.width); XCTAssertEqual(b.height, a.height)
            XCTAssertEqual(b.times, a.times, accuracy: 1e-4)
            XCTAssertEqual(b.keypoints.count, a.keypoints.count)
            for i in a.keypoints.indices {
                let scale: Float = i % 3 == 0 ? Float(a.width) : i % 3 == 1 ? Float(a.height) : 1
                if a.keypoints[i].isNaN { XCTAssertTrue(b.keypoints[i].isNaN, "\(a.id) \(i)"); missing += 1; continue }
                XCTAssertEqual(b.keypoints[i], a.keypoints[i], accuracy: 1e-4 / scale + 1e-6, "\(a.id) \(i)")
            }
        }
        XCTAssertGreaterThan(missing, 0, "Penn Action marks joints outside the picture missing: some of them are in these clips")
    }

    func testInterleavedClipsUnsortedFramesAndTimeColumn() throws {
        let csv = """
        Clip,Label,Frame,Time,Width,Height,Left Wrist_x,Left Wrist_y,Left Wrist_c
        b,run,1,10.5,10,10,1,1,1
        a,walk,1,2.25,10,10,2,2,1
        b,run,0,10.0,10,10,3,3,1
        a,walk,0,2.0,10,10,4,4,1
        a,walk,3,2.75,10,10,5,5,1
        """
        let result = try KeypointCSV.read(try write(csv))
        XCTAssertEqual(result.clips.map(\.id), ["b", "a"])
        XCTAssertEqual(result.clips[0].jointNames, ["left_wrist"])
        let a = result.clips[1]
        XCTAssertEqual(a.frameCount, 4)
        XCTAssertEqual(a.times, [0, 0.25, 0.5, 0.75], accuracy: 1e-12)   // frame 2 interpolated
        XCTAssertEqual(a.fps, 4, accuracy: 1e-12)
        XCTAssertEqual(a.start, 2.0)
        XCTAssertEqual(a.end!, 3.0, accuracy: 1e-12)
        XCTAssertEqual(a.keypoints.enumerated().filter { $0.offset % 3 == 0 }.map(\.element).map { $0.isNaN ? -1 : $0 }, [0.4, 0.2, -1, 0.5])
        XCTAssertEqual(result.clips[0].keypoints, [0.3, 0.3, 1, 0.1, 0.1, 1])
        XCTAssertEqual(result.problems.map(\.row), [3], result.problems.map(\.description).joined(separator: "\n"))   // the gap in a
    }

    func testManyBadValuesAreCountedNotListed() throws {
        var csv = "clip,label,frame,width,height,nose_x,nose_y,nose_c\n"
        for f in 0..<50 { csv += "1,a,\(f),10,10,bad,1,1\n" }
        let result = try KeypointCSV.read(try write(csv))
        XCTAssertEqual(result.problems.count, KeypointCSV.problemsListedPerKind + 1)
        XCTAssertEqual(result.problems.last?.message, "30 more values that are not numbers not listed (50 in all)")
        XCTAssertEqual(result.clips.first?.frameCount, 50)
    }
}

private func XCTAssertEqual(_ a: [Double], _ b: [Double], accuracy: Double, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(a.count, b.count, file: file, line: line)
    for (x, y) in zip(a, b) { XCTAssertEqual(x, y, accuracy: accuracy, file: file, line: line) }
}
