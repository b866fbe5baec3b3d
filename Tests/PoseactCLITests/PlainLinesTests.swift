import Foundation
import TrainingFixtures
import XCTest

/// A mistake is named as what it is: a CSV given as another format, a list that is no clip,
/// a model of another kind, an ONNX under a weights file's name, a run's own checkpoint as
/// an export's output. (Each line here used to say something else: a missing label, a
/// missing --size, "not a TFLite model", or nothing at all.)
final class PlainLinesTests: PennSliceTestCase {
    func file(_ name: String, _ text: String) throws -> String {
        try FileManager.default.createDirectory(at: Self.dir, withIntermediateDirectories: true)
        let path = Self.dir.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testImportNamesWhatTheFileIs() throws {
        let csv = try file("plain.csv", "clip,label,frame,width,height,nose_x,nose_y\na,l,0,10,10,1,1\n")
        for format in ["ntu", "coco"] {
            try assertOneLineError(["import", csv, "--format", format, "--output", Self.dir.appendingPathComponent("x.h5").path],
                                   mentions: ["plain.csv: a keypoint CSV, not --format \(format)", "--format csv"])
        }
        for (name, text) in [("numbers.json", "[1, 2, 3]"), ("lines.jsonl", "{\"a\": 1}\n{\"b\": 2}\n")] {
            let path = try file(name, text)
            let result = try poseact(["import", path, "--label", "l", "--output", Self.dir.appendingPathComponent("y.h5").path])
            XCTAssertNotEqual(result.status, 0)
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
            XCTAssertFalse(result.stderr.contains("--size"), "a file that is no clip is not told to give --size: \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(name), result.stderr)
        }
    }

    /// A folder whose only clip cannot be read says why, not "no stores to merge".
    func testExtractWithNoReadableClipSaysWhy() throws {
        _ = try model("pose_detection.tflite")
        let folder = Self.dir.appendingPathComponent("fifo-only/train/a")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let fifo = folder.appendingPathComponent("clip.mp4").path
        unlink(fifo)
        XCTAssertEqual(mkfifo(fifo, 0o644), 0)
        let result = try poseact(["extract", Self.dir.appendingPathComponent("fifo-only").path, "--output",
                                  Self.dir.appendingPathComponent("fifo-only.h5").path, "--models", PoseactCLITestCase.modelsDir.path])
        XCTAssertNotEqual(result.status, 0)
        let last = String(result.stderr.split(separator: "\n").last ?? "")
        for words in ["no clip gave keypoints, so nothing was written; 1 of 1 skipped", "a FIFO (named pipe)"] {
            XCTAssertTrue(last.contains(words), result.stderr)
        }
    }

    /// Values that make nonsense: a crowd of 100,000, a store as its own mirror image.
    func testNonsenseSettingsAreRefused() throws {
        let store = try store()
        let mirror = try poseact(["dataset", "quality", store, "--mirror", store])
        XCTAssertNotEqual(mirror.status, 0)
        XCTAssertTrue(mirror.stderr.contains("--mirror \(store) is the store itself"), mirror.stderr)
        let crowd = try poseact(["pose", "x.png", "--max-people", "100000"])
        XCTAssertNotEqual(crowd.status, 0)
        XCTAssertTrue(crowd.stderr.contains("--max-people 100000: at most 64"), crowd.stderr)
    }

    func testModelInspectNamesWhatTheFileIs() throws {
        let text = try file("notes.h5", "hello")
        try assertOneLineError(["model", "inspect", text], mentions: ["not an HDF5 file, so not a poseact weights file"])
        let onnx = try file("model.onnx", "not really")
        try assertOneLineError(["model", "inspect", onnx], mentions: ["an ONNX file", "the weights file the ONNX was exported from"])
        let csv = try file("table.csv", "a,b\n1,2\n")
        try assertOneLineError(["model", "inspect", csv], mentions: ["neither a TFLite model (.tflite) nor a poseact weights file"])
    }

    func testExportRefusesMisnamedAndTrainsOwnFiles() throws {
        let run = try trainedRun()
        let misnamed = try poseact(["export", run, "--format", "onnx", "--output", Self.dir.appendingPathComponent("m.poseact.h5").path])
        XCTAssertNotEqual(misnamed.status, 0)
        XCTAssertTrue(misnamed.stderr.contains("ONNX goes in a .onnx file"), misnamed.stderr)
        let checkpoint = run + "/checkpoint.h5"
        let before = try Data(contentsOf: URL(fileURLWithPath: checkpoint))
        let onto = try poseact(["export", run, "--output", checkpoint])
        XCTAssertNotEqual(onto.status, 0)
        XCTAssertTrue(onto.stderr.contains("is a file of the run folder"), onto.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: checkpoint)), before, "the checkpoint is untouched")
    }
}
