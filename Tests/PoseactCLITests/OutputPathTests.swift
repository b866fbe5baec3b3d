import Foundation
import Keypoints
import TrainingFixtures
import XCTest

/// No output of a command is one of its inputs, by any name (a hard link included), and two
/// runs writing one file do not both go on.
final class OutputPathTests: PennSliceTestCase {
    func size(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? -1 }

    func testAnOutputThatIsAnInputIsRefusedByAnyName() throws {
        let store = try store(), run = try trainedRun()
        let model = run + "/model.poseact.h5"
        let link = Self.dir.appendingPathComponent("model-hardlink.poseact.h5").path
        unlink(link)
        XCTAssertEqual(Foundation.link(model, link), 0)
        defer { unlink(link) }
        let before = size(model)
        // The model as --probabilities: by its name, through a hard link, and the run folder's model.
        try assertOneLineError(["evaluate", run, "--data", store, "--probabilities", model], mentions: ["--probabilities", "the model"])
        try assertOneLineError(["evaluate", link, "--data", store, "--probabilities", model], mentions: ["--probabilities", "the model"])
        try assertOneLineError(["evaluate", model, "--data", store, "--probabilities", link], mentions: ["--probabilities", "the model"])
        XCTAssertEqual(size(model), before, "the model is untouched")
        XCTAssertNoThrow(try KeypointStore(path: store))
        // The store through a hard link inside a --report folder.
        let report = Self.dir.appendingPathComponent("report-links").path
        try FileManager.default.createDirectory(atPath: report, withIntermediateDirectories: true)
        unlink(report + "/evaluation.json")
        XCTAssertEqual(Foundation.link(store, report + "/evaluation.json"), 0)
        try assertOneLineError(["evaluate", run, "--data", store, "--report", report], mentions: ["evaluation.json", "--data"])
        // The windows file over the model it takes its preprocessing from.
        try assertOneLineError(["windows", store, "--model", run, "--output", link], mentions: ["--output", "--model"])
        XCTAssertEqual(size(model), before)
    }

    /// A second `import` or `dataset export` to a file another one is writing is refused in
    /// one line (here the other one is this test, holding the same lock), and the lock goes
    /// with the run that held it.
    func testImportAndExportLockTheirOutput() throws {
        let store = try store()
        let csv = Self.dir.appendingPathComponent("slice.csv").path
        let imported = Self.dir.appendingPathComponent("locked-import.h5").path
        let exported = Self.dir.appendingPathComponent("locked-export.csv").path
        do {
            let held = try FileLock(imported + ".lock", what: imported)
            try assertOneLineError(["import", csv, "--output", imported], mentions: ["in use by another poseact"])
            withExtendedLifetime(held) {}
        }
        do {
            let held = try FileLock(exported + ".lock", what: exported)
            try assertOneLineError(["dataset", "export", store, "--csv", exported], mentions: ["in use by another poseact"])
            withExtendedLifetime(held) {}
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: imported), "nothing written by the refused import")
        let ran = try poseact(["import", csv, "--output", imported])
        XCTAssertEqual(ran.status, 0, ran.stderr)
        let again = try poseact(["dataset", "export", store, "--csv", exported])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: imported + ".lock"), "no lock file left behind")
        XCTAssertFalse(FileManager.default.fileExists(atPath: exported + ".lock"), "no lock file left behind")
    }

    /// `windows`, `merge`, `export` and `evaluate --report` lock what they write as import
    /// does: two runs on one output no longer both report success with one output gone.
    func testWindowsMergeExportAndReportsLockTheirOutput() throws {
        let store = try store(), run = try trainedRun()
        let out = { (name: String) in Self.dir.appendingPathComponent(name).path }
        let cases: [(output: String, arguments: [String])] = [
            (out("locked-windows.h5"), ["windows", store, "--output", out("locked-windows.h5")]),
            (out("locked-merge.h5"), ["merge", store, "--output", out("locked-merge.h5")]),
            (out("locked-export.onnx"), ["export", run, "--output", out("locked-export.onnx")]),
            (out("locked-report"), ["evaluate", run, "--data", store, "--report", out("locked-report")]),
        ]
        for (output, arguments) in cases {
            do {
                let held = try FileLock(output + ".lock", what: output)
                try assertOneLineError(arguments, mentions: ["\(output) is in use by another poseact"])
                withExtendedLifetime(held) {}
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: output), "nothing written by the refused run: \(output)")
            let ran = try poseact(arguments)
            XCTAssertEqual(ran.status, 0, ran.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: output + ".lock"), "no lock file left behind")
        }
        let report = try FileManager.default.contentsOfDirectory(atPath: out("locked-report")).sorted()
        XCTAssertEqual(report, ["evaluation-confusion.png", "evaluation.json", "evaluation.md", "index.html"], "no staging folder left")
        // A report folder whose parents do not exist yet is made with them, lock and all.
        let nested = out("new-\(UUID().uuidString.prefix(6))/sub/report")
        let made = try poseact(["evaluate", run, "--data", store, "--report", nested + "/"])
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: nested + "/index.html"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: nested + ".lock"), "no lock file left behind")
    }

    /// Outputs that cannot take a video, a timeline or a CSV are said before any work: a
    /// `.txt` recording, a device, a FIFO, an empty path.
    func testOutputsThatCannotBeWrittenAreRefusedFirst() throws {
        try FileManager.default.createDirectory(at: Self.dir, withIntermediateDirectories: true)
        let fifo = Self.dir.appendingPathComponent("out-fifo.json").path
        unlink(fifo)
        XCTAssertEqual(mkfifo(fifo, 0o644), 0)
        defer { unlink(fifo) }
        let video = Self.dir.appendingPathComponent("x.mp4").path
        FileManager.default.createFile(atPath: video, contents: Data())
        for (arguments, words) in [(["live", "--model", "m.h5", "--input", "x.mp4", "--record", "rec.txt"], ["--record", "no video file type '.txt'"]),
                                   (["live", "--model", "m.h5", "--input", "x.mp4", "--record", "/dev/null"], ["--record", "is a device"]),
                                   (["annotate", "--model", "m.h5", video, "--timeline", "/dev/null"], ["--timeline", "is a device"]),
                                   (["annotate", "--model", "m.h5", video, "--timeline", fifo], ["--timeline", "is a FIFO"]),
                                   (["dataset", "export", "s.h5", "--csv", ""], ["--csv is an empty path"])] {
            let result = try poseact(arguments)
            XCTAssertNotEqual(result.status, 0)
            let first = String(result.stderr.split(separator: "\n").first ?? "")
            for word in words { XCTAssertTrue(first.contains(word), "'\(word)' not in: \(result.stderr)") }
        }
    }

    /// `--serve-name` is checked before any work (a usage mistake: its line comes first).
    func testServeNameIsValidated() throws {
        for (arguments, words) in [(["--serve", "0", "--serve-name", "pose.lan:80"], ["--serve-name pose.lan:80: not a host name"]),
                                   (["--serve-name", "pose.lan"], ["--serve-name is for the page"])] {
            let result = try poseact(["live", "--model", "m.h5"] + arguments)
            XCTAssertNotEqual(result.status, 0)
            let first = String(result.stderr.split(separator: "\n").first ?? "")
            for word in words { XCTAssertTrue(first.contains(word), "'\(word)' not in: \(result.stderr)") }
        }
    }
}
