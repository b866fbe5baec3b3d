import Foundation
import TestData
import TrainingFixtures
import XCTest

/// Every `--json` (and every benchmark, which always prints JSON): each line of stdout is one
/// JSON object, so that `| tail -1 | jq` works everywhere.
final class JSONOutputTests: PennSliceTestCase {
    var models: [String] { ["--models", PoseactCLITestCase.modelsDir.path] }

    /// Runs the command and checks its stdout: at least one line, each one JSON object.
    func assertJSONLines(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try poseact(arguments)
        XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)", file: file, line: line)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        XCTAssertFalse(lines.isEmpty, "\(arguments): nothing on stdout", file: file, line: line)
        XCTAssertTrue(result.stdout.hasSuffix("\n"), "\(arguments)", file: file, line: line)
        for text in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8))
            XCTAssertTrue(object is [String: Any], "\(arguments): not one JSON object: \(text)", file: file, line: line)
        }
    }

    func testEveryJSONOutputIsOneObjectPerLine() throws {
        let store = try store(), run = try trainedRun()
        let csv = Self.dir.appendingPathComponent("slice.csv").path
        try assertJSONLines(["import", csv, "--output", Self.dir.appendingPathComponent("json-import.h5").path, "--json"])
        try assertJSONLines(["dataset", "inspect", store, "--json"])
        try assertJSONLines(["dataset", "quality", store, "--json"])
        try assertJSONLines(["windows", store, "--output", Self.dir.appendingPathComponent("json-windows.h5").path, "--json"])
        try assertJSONLines(["evaluate", run, "--data", store, "--json"])
        try assertJSONLines(["model", "inspect", run, "--json"])
        try assertJSONLines(["bench", "train", "--config", try config(Self.small), "--data", store, "--epochs", "1"])
        try assertJSONLines(["crossval", "--config", try config(Self.small), "--data", store, "--epochs", "1", "--folds", "2",
                             "--seeds", "1", "--output", Self.dir.appendingPathComponent("json-crossval").path, "--json"])

        _ = try model("pose_landmark_full.tflite")
        try assertJSONLines(["model", "inspect", try model("pose_detection.tflite").path, "--json"])
        // bench pose: PoseactCLITests.testBenchPrintsOneJSONLinePerModel.
        let video = try TestData.shared("data/pushups/test/correct/correct39.mp4").path
        try assertJSONLines(["bench", "pose-video", video, "--frames", "5"] + models)
        // annotate, live and bench live: LiveCommandTests reads their lines with json().
    }

    /// `dataset quality`: the raw keypoints and each filter as one JSON object; the Penn
    /// Action slice is hand-annotated, so its "jitter" is the annotators' and the filter
    /// still lowers it; a mirror store that cannot be read is one line.
    func testDatasetQualityMeasuresEachFilter() throws {
        let store = try store()
        let result = try poseact(["dataset", "quality", store, "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let figures = try XCTUnwrap(object["figures"] as? [[String: Any]])
        XCTAssertEqual(figures.compactMap { $0["filter"] as? String }, ["none", "one_euro"])
        let jitter = figures.compactMap { $0["jitter"] as? Double }
        XCTAssertEqual(jitter.count, 2)
        XCTAssertGreaterThan(jitter[0], 0)
        XCTAssertLessThan(jitter[1], jitter[0])
        try assertOneLineError(["dataset", "quality", store, "--mirror", "/nonexistent.h5"], mentions: ["/nonexistent.h5"])
    }

    /// Flags that cannot go together, or values out of range, are refused before any work.
    func testBadCombinationsAreRefusedFirst() throws {
        let refusals: [([String], String)] = [
            (["live", "--model", "m.h5", "--camera", "/dev/video0", "--input", "clip.mp4"], "--camera and --input"),
            (["live", "--model", "m.h5", "--threads", "0"], "--threads must be at least 1"),
            (["annotate", "--model", "m.h5", "clip.mp4", "--max-people", "0"], "--max-people must be at least 1"),
            (["live", "--model", "m.h5", "--angles", "left_elbo"], "--angles: angle left_elbo: not a known angle (left_elbow"),
            (["live", "--model", "m.h5", "--angles", "left_wrist-left_knuckle-left_hip"], "the skeleton has no joint \"left_knuckle\""),
            (["annotate", "--model", "m.h5", "clip.mp4", "--enter", "0.5", "--exit", "0.7"], "--exit (0.7) must not be above --enter (0.5)"),
            (["live", "--model", "m.h5", "--people", "everyone"], "--people"),
            (["import", "x.json", "--output", "o.h5", "--size", "640by360"], "--size 640by360: WIDTHxHEIGHT"),
            (["import", "x.json", "--output", "o.h5", "--format", "bvh"], "--format bvh: one of auto, csv, openpose"),
            (["train", "--data", "s.h5", "--threads", "-1"], "--threads must be 0 (all cores) or more"),
            (["train", "--data", "s.h5", "--seed", "-3"], "--seed must not be negative"),
            (["train", "--data", "s.h5", "--fold", "3/2"], "'3/2' is invalid for '--fold"),
            (["crossval", "--data", "s.h5", "--output", "cv", "--seeds", "1,x"], "'1,x' is invalid for '--seeds"),
            (["extract", "clips", "--output", "s.h5", "--shard", "4/4"], "'4/4' is invalid for '--shard"),
            (["windows", "s.h5", "--output", "w.h5", "--joints", "hands"], "'hands' is invalid for '--joints"),
            (["bench", "pose", "--conv", "fft"], "'fft' is invalid for '--conv"),
            (["bench", "live", "--model", "m.h5", "--input", "clip.mp4", "--copies", "9"], "--copies must be 1 to 8"),
            (["dataset", "inspect", "s.h5", "--window", "0"], "--window must be at least 1"),
            (["demo", "--runs", "0"], "--runs must be at least 1"),
        ]
        for (arguments, words) in refusals {
            let result = try poseact(arguments)
            XCTAssertNotEqual(result.status, 0, "\(arguments)")
            let first = String(result.stderr.split(separator: "\n").first ?? "")
            XCTAssertTrue(first.contains(words), "'\(words)' not in: \(result.stderr)")
        }
    }
}
