import Foundation
import Keypoints
import KeypointWindows
import TrainingFixtures
import XCTest

/// Careless and hostile input, as issue 16 found it: outputs that are inputs, sizes without
/// bounds, absurd values, two runs on one output, damaged files. Each gets one line naming
/// the value and what to do, a non-zero exit, and leaves every input as it was.
final class ReliabilityTests: PennSliceTestCase {
    /// Refused: exit status not 0, the first line names the problem, no crash. (A mistake in
    /// a flag also gets the usage lines after it, as swift-argument-parser prints them.)
    func assertRefused(_ arguments: [String], mentions words: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try poseact(arguments)
        XCTAssertNotEqual(result.status, 0, "\(arguments)", file: file, line: line)
        let first = String(result.stderr.split(separator: "\n").first ?? "")
        for word in words { XCTAssertTrue(first.contains(word), "'\(word)' not in: \(result.stderr)", file: file, line: line) }
        XCTAssertFalse(result.stderr.contains("Fatal error"), file: file, line: line)
    }

    func bytes(_ path: String) -> Data { FileManager.default.contents(atPath: path) ?? Data() }

    func assertOneLineError(_ arguments: [String], mentions words: [String], prepare: () throws -> Void,
                            file: StaticString = #filePath, line: UInt = #line) throws {
        try prepare()
        try assertOneLineError(arguments, mentions: words, file: file, line: line)
    }

    /// An output that is an input, by its name, a hard link or a symlink, is refused before
    /// any work and the input keeps every byte.
    func testAnOutputThatIsAnInputIsRefused() throws {
        let store = try store()
        let video = Self.dir.appendingPathComponent("in.mp4").path   // never decoded: refused first
        try Data("not really a video".utf8).write(to: URL(fileURLWithPath: video))
        let hard = Self.dir.appendingPathComponent("hard-\(UUID().uuidString.prefix(6)).h5").path
        let soft = Self.dir.appendingPathComponent("soft-\(UUID().uuidString.prefix(6)).h5").path
        try FileManager.default.linkItem(atPath: store, toPath: hard)
        try FileManager.default.createSymbolicLink(atPath: soft, withDestinationPath: store)
        let before = bytes(store), videoBefore = bytes(video)
        for output in [store, hard, soft] {
            try assertOneLineError(["windows", store, "--output", output], mentions: ["is also the store", "would destroy the input"])
        }
        try assertOneLineError(["import", store, "--output", hard], mentions: ["is also the input"])
        try assertOneLineError(["merge", store, store, "--output", store], mentions: ["is also a store to merge"])
        try assertOneLineError(["annotate", "--model", "m.poseact.h5", video, "--output", video], mentions: ["--output", "is also the video"])
        try assertOneLineError(["annotate", "--model", "m.poseact.h5", video, "--timeline", video], mentions: ["--timeline", "is also the video"])
        try assertOneLineError(["live", "--model", "m.poseact.h5", "--input", video, "--record", video], mentions: ["--record", "is also --input"])
        let run = try trainedRun()
        try assertOneLineError(["export", run, "--output", run + "/model.poseact.h5"], mentions: ["is also a model to export"])
        XCTAssertEqual(bytes(store), before, "the store is untouched")
        XCTAssertEqual(bytes(video), videoBefore, "the video is untouched")
    }

    /// Output paths are checked before any work: a folder where a file goes, a file where a
    /// folder goes, a folder that does not exist, a path that does not exist as input.
    func testOutputPathsAreCheckedFirst() throws {
        let store = try store()
        let folder = Self.dir.path
        try assertOneLineError(["windows", store, "--output", folder], mentions: ["is a folder; give a file path"])
        try assertOneLineError(["extract", folder, "--output", folder + "/x.h5"], mentions: ["is a folder; give a file path"], prepare: {
            try FileManager.default.createDirectory(atPath: folder + "/x.h5", withIntermediateDirectories: true)
        })
        try assertOneLineError(["windows", store, "--output", "/nonexistent-\(getpid())/w.h5"], mentions: ["does not exist"])
        try assertOneLineError(["evaluate", try trainedRun(), "--data", store, "--report", store], mentions: ["--report", "is a file; give a folder path"])
        try assertOneLineError(["train", "--data", store, "--output", store], mentions: ["is a file; give a folder path"])
        try assertOneLineError(["export", "nope-\(getpid()).h5", "--output", folder + "/x.poseact.h5"], mentions: ["does not exist"])
    }

    /// Sizes from flags and configs are bounded, with the bound in the line; negative counts
    /// and times are refused, not read as flags.
    func testSizesAndValuesAreBounded() throws {
        let store = try store()
        let out = Self.dir.appendingPathComponent("w.h5").path
        try assertRefused(["windows", store, "--window", "9223372036854775807", "--output", out], mentions: ["1…10000"])
        try assertRefused(["windows", store, "--fps", "1e9", "--output", out], mentions: ["--fps must be in (0, 1000]"])
        try assertRefused(["extract", Self.dir.path, "--fps", "100000", "--output", out], mentions: ["--fps must be in (0, 1000]"])
        try assertRefused(["crossval", "--jobs", "-1", "--data", store, "--output", out + ".cv"], mentions: ["--jobs must be at least 1"])
        try assertRefused(["evaluate", "m.h5", "--data", store, "--threads", "-1"], mentions: ["--threads must be 0"])
        try assertRefused(["live", "--model", "m.h5", "--timeout", "-1"], mentions: ["--timeout must be a positive"])
        try assertRefused(["live", "--model", "m.h5", "--min-confidence", "-1"], mentions: ["--min-confidence must be in 0…1"])
        let run = Self.dir.appendingPathComponent("bounded-run").path
        for (yaml, words) in [("model:\n  channels: 100000000\n", ["model.channels must be in 1…4096"]),
                              ("model:\n  kernel: 1000001\n", ["model.kernel must be in 1…255"]),
                              ("preprocessing:\n  fps: 1.0e+9\n", ["fps must be in (0, 1000]"])] {
            try assertOneLineError(["train", "--config", try config(yaml), "--data", store, "--output", run], mentions: words)
        }
        try assertOneLineError(["train", "--data", store, "--batch-size", "100000", "--output", run], mentions: ["optimizer.batch_size must be in 2…8192"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: run))
        // A window no clip can fill: an error, not a file of 0 windows.
        try assertOneLineError(["windows", store, "--window", "9000", "--output", out], mentions: ["no clip gives a window of 9000 frames"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        // A CSV with a header only: an error, not an empty store.
        let csv = Self.dir.appendingPathComponent("header-only.csv").path
        try Data("clip,label,split,frame,width,height,nose_x,nose_y,nose_c\n".utf8).write(to: URL(fileURLWithPath: csv))
        let empty = try poseact(["import", csv, "--output", out])
        XCTAssertEqual(empty.status, 1, empty.stderr)
        XCTAssertTrue(empty.stderr.contains("no usable row, so no clip to import (nothing written)"), empty.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    /// A loss that is not finite stops training at once with one line; the run keeps what it
    /// had (here nothing: it diverges in the first epoch), and no NaN weights are written.
    func testTrainingStopsAtANonFiniteLoss() throws {
        let yaml = Self.small.replacingOccurrences(
            of: "optimizer:\n", with: "optimizer:\n  learning_rate: 1.0e+30\n  min_learning_rate: 0\n  gradient_clip: 0\n  warmup_epochs: 0\n")
        let run = Self.dir.appendingPathComponent("nan-run").path
        let result = try poseact(["train", "--config", try config(yaml), "--data", try store(), "--output", run])
        XCTAssertEqual(result.status, 1, result.stderr)
        let last = String(result.stderr.split(separator: "\n").last ?? "")
        for words in ["Error: epoch 1: the training loss is not a finite number", "nothing was saved", "optimizer.learning_rate"] {
            XCTAssertTrue(last.contains(words), result.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: run + "/model.poseact.h5"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: run + "/checkpoint.h5"))
    }

    /// Two trainings in one run folder: the second is refused with the first one's pid, and
    /// the first goes on to the end.
    func testTwoRunsInOneFolderAreRefused() throws {
        let store = try store()
        let run = Self.dir.appendingPathComponent("locked-run").path
        let slow = try config(Self.small.replacingOccurrences(of: "epochs: 4", with: "epochs: 200"))
        let first = Process()
        first.executableURL = binary
        first.arguments = ["train", "--config", slow, "--data", store, "--output", run]
        first.standardOutput = FileHandle.nullDevice; first.standardError = FileHandle.nullDevice
        try first.run()
        defer { if first.isRunning { first.terminate() }; first.waitUntilExit() }
        // The lock file holds the pid once the lock is taken (after the data is loaded).
        let deadline = Date().addingTimeInterval(60)
        while (try? String(contentsOfFile: run + "/.lock", encoding: .utf8))?.contains("\(first.processIdentifier)") != true {
            guard Date() < deadline, first.isRunning else { return XCTFail("the first run never took its lock") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let second = try poseact(["train", "--config", slow, "--data", store, "--output", run])
        XCTAssertEqual(second.status, 1, second.stderr)
        XCTAssertTrue(second.stderr.contains("the run folder \(run) is in use by another poseact (pid \(first.processIdentifier))"), second.stderr)
        XCTAssertTrue(first.isRunning, "the first run goes on")
    }

    /// A weights file whose preprocessing or architecture is damaged names the field.
    func testDamagedWeightsNameTheField() throws {
        let model = Self.dir.appendingPathComponent("damaged.poseact.h5").path
        try? FileManager.default.removeItem(atPath: model)
        try FileManager.default.copyItem(atPath: try trainedRun() + "/model.poseact.h5", toPath: model)
        let file = try HDF5File.open(model, writable: true)
        let root = try file.root()
        let spec = try root.stringAttribute("preprocessing")
        try root.setAttribute("preprocessing", spec.replacingOccurrences(of: "\"window\":32", with: "\"window\":0"))
        root.close(); try file.close()
        try assertOneLineError(["model", "inspect", model], mentions: ["a damaged weights file", "window must be in 1…10000 frames (got 0)"])
    }

    /// A weights file records the preprocessing steps its input went through: one whose
    /// steps this poseact does not run is refused in one line; one from before the steps were
    /// stored (none recorded) went through today's and loads.
    func testWeightsFileStepsMustBeThisPoseact() throws {
        let model = Self.dir.appendingPathComponent("steps.poseact.h5").path
        try? FileManager.default.removeItem(atPath: model)
        try FileManager.default.copyItem(atPath: try trainedRun() + "/model.poseact.h5", toPath: model)
        func edit(_ change: (HDF5Group) throws -> Void) throws {
            let file = try HDF5File.open(model, writable: true)
            let root = try file.root()
            try change(root)
            root.close(); try file.close()
        }
        try edit { XCTAssertEqual(try $0.stringArrayAttribute("preprocessing_steps"), Preprocessing.steps) }
        try edit { try $0.setAttribute("preprocessing_steps", ["mapJoints", "rotate", "format"]) }
        try assertOneLineError(["model", "inspect", model],
                               mentions: ["preprocessing steps mapJoints → rotate → format", "this poseact runs filter → mapJoints", "train it again"])
        try edit { try $0.removeAttribute("preprocessing_steps") }
        let old = try poseact(["model", "inspect", model])
        XCTAssertEqual(old.status, 0, old.stderr)
    }

    /// Bytes of a weights file and of a store changed at random (seeded), or the file cut
    /// short: every read works or ends in one line, never a crash. (Before the checksum in
    /// the user block, libhdf5 itself crashed on 1 to 3 % of such files.)
    func testDamagedFilesGetOneLine() throws {
        let model = try trainedRun() + "/model.poseact.h5", store = try store()
        var state: UInt64 = 0x5EED
        func next() -> UInt64 { state = state &* 6364136223846793005 &+ 1442695040888963407; return state >> 33 }
        for (original, command) in [(model, ["model", "inspect"]), (store, ["dataset", "inspect"])] {
            let good = bytes(original)
            for i in 0..<30 {
                var damaged = good
                for _ in 0..<(1 + Int(next() % 8)) {
                    let at = Int(next() % UInt64(damaged.count))
                    damaged[at] ^= UInt8(1 << (next() % 8))
                }
                if i % 5 == 4 { damaged = damaged.prefix(Int(next() % UInt64(damaged.count))) }   // truncated
                let path = Self.dir.appendingPathComponent("damaged-\(i).h5").path
                try damaged.write(to: URL(fileURLWithPath: path))
                let result = try poseact(command + [path])
                XCTAssertTrue(result.status == 0 || result.status == 1, "\(command) case \(i): status \(result.status)\n\(result.stderr)")
                if result.status != 0 {
                    XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "\(command) case \(i): \(result.stderr)")
                }
            }
        }
    }
}
