import Foundation
import Images
import Keypoints
import MatrixProduct
import OutputLines
import Media
import TestData
import TFLite
import XCTest

/// Runs the `poseact` binary built beside the tests; the test classes below share it.
class PoseactCLITestCase: XCTestCase {
    static let root = TestData.packageRoot
    static var modelsDir: URL { TestData.modelsFolder }
    var shared: URL { TestData.sharedFolder }

    /// The binary built beside this test bundle.
    var binary: URL {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        return exe.appendingPathComponent("poseact")
    }

    /// Runs a program that is not poseact; its exit status and stdout (stderr dropped).
    func external(_ executable: String, _ arguments: [String]) throws -> (status: Int32, stdout: String) {
        try TestData.run(executable, arguments)
    }

    /// Headless chromium on `url` with `flags` (a fresh profile in `profile`); its stdout
    /// (the DOM with --dump-dom).
    func headless(_ chromium: String, _ url: String, profile: String, flags: [String]) throws -> String {
        try external(chromium, ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=\(profile)"]
                     + flags + [url]).stdout
    }

    /// A tool the test needs that is not part of poseact (see `TestData.tool`).
    func tool(_ names: [String], install: String) throws -> String { try TestData.tool(names, install: install) }

    struct Result {
        let status: Int32; let stdout: String; let stderr: String
        /// Ended by a signal (a crash), `status` being its number.
        var crashed = false
    }

    /// `launcher`: a program that runs the binary (qemu-user with a CPU model), with its
    /// arguments; the binary's path and `arguments` follow them.
    func poseact(_ arguments: [String], environment: [String: String] = [:], launcher: [String] = [], directory: URL? = nil,
                 binary: URL? = nil) throws -> Result {
        let binary = binary ?? self.binary
        let process = Process()
        if let directory { process.currentDirectoryURL = directory }
        process.executableURL = launcher.first.map { URL(fileURLWithPath: $0) } ?? binary
        process.arguments = launcher.isEmpty ? arguments : Array(launcher.dropFirst()) + [binary.path] + arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Both pipes are drained at once: a child that fills one while the other is read would
        // otherwise block forever.
        let stderr = Drained(err.fileHandleForReading)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr.data(), as: UTF8.self), crashed: process.terminationReason == .uncaughtSignal)
    }

    func model(_ name: String) throws -> URL { try TestData.model(name) }

    /// A pipe read to its end on a thread of its own.
    final class Drained: @unchecked Sendable {
        private var bytes = Data()
        private let done = DispatchSemaphore(value: 0)
        init(_ handle: FileHandle) {
            DispatchQueue.global().async { [self] in bytes = handle.readDataToEndOfFile(); done.signal() }
        }
        /// Everything the pipe gave, once its writer closed it.
        func data() -> Data { done.wait(); return bytes }
    }

    func temporary(_ name: String, _ bytes: [UInt8]) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-cli-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let url = dir.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    /// A bad file gives exit status 1 and exactly one line on stderr that says what is wrong.
    func assertOneLineError(_ arguments: [String], mentions words: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try poseact(arguments)
        XCTAssertNotEqual(result.status, 0, "\(arguments)", file: file, line: line)
        let lines = result.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "stderr: \(result.stderr)", file: file, line: line)
        for word in words { XCTAssertTrue(result.stderr.contains(word), "'\(word)' not in: \(result.stderr)", file: file, line: line) }
        XCTAssertFalse(result.stderr.contains("Fatal error"), file: file, line: line)
    }

    /// Every line of `text` that has a "type", read with the shared line types (OutputLines):
    /// each must be a kind they know, and written back it must be the same object, so a
    /// field a command prints that the type lacks (or misspells) fails here. Lines without
    /// a "type" (train's closing report) are left out.
    func eventLines(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> [EventLine] {
        // (annotate's timeline file begins with an array of them.)
        let objects = try text.split(separator: "\n").flatMap { printed -> [NSDictionary] in
            let value = try JSONSerialization.jsonObject(with: Data(printed.utf8))
            return try XCTUnwrap(value as? [NSDictionary] ?? (value as? NSDictionary).map { [$0] }, String(printed), file: file, line: line)
        }
        return try objects.filter { $0["type"] != nil }.map { object in
            let printed = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
            let event = try EventLine(line: printed)
            let again = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(event.line.utf8)) as? NSDictionary)
            XCTAssertEqual(again, object, "read and written back:\n\(printed)\n\(event.line)", file: file, line: line)
            return event
        }
    }
}

/// The `poseact` binary as a user runs it: exit codes, one-line errors, JSON output.
final class PoseactCLITests: PoseactCLITestCase {
    func testMissingFile() throws {
        try assertOneLineError(["model", "inspect", "/nonexistent/model.tflite"], mentions: ["/nonexistent/model.tflite", "no such file"])
    }

    func testNotATFLiteFile() throws {
        let path = try temporary("notes.tflite", Array("these are my notes, not a model\n".utf8))
        try assertOneLineError(["model", "inspect", path], mentions: [path, "not a TFLite model"])
    }

    func testTruncatedModel() throws {
        let bytes = [UInt8](try Data(contentsOf: try model("pose_landmark_full.tflite")))
        let path = try temporary("truncated.tflite", Array(bytes.prefix(bytes.count / 2)))
        try assertOneLineError(["model", "inspect", path], mentions: [path, "truncated or corrupt"])
    }

    /// The detector with its CONV_2D operator code changed to SOFTMAX, which the engine does
    /// not implement: refused at load, naming the operator.
    func testUnsupportedOperator() throws {
        var bytes = [UInt8](try Data(contentsOf: try model("pose_detection.tflite")))
        let codes = try XCTUnwrap(try FlatBuffer(bytes: bytes).rootTable(path: "model").vector(1, "operator_codes", elementSize: 4))
        var patched = false
        for i in 0..<codes.count {
            let code = try codes.table(i, path: "operator code")
            for (slot, size) in [(0, 1), (3, 4)] {
                guard let p = try code.fieldPosition(slot, size: size, "builtin code"), bytes[p] == 3 else { continue }
                bytes[p] = 25   // CONV_2D → SOFTMAX
                patched = true
            }
        }
        XCTAssertTrue(patched)
        let path = try temporary("softmax.tflite", bytes)
        try assertOneLineError(["model", "inspect", path], mentions: ["unsupported operator SOFTMAX"])
    }

    func testModelsNotFound() throws {
        try assertOneLineError(["bench", "pose", "--models", "/nonexistent-models"], mentions: ["models not found", "setup.sh"])
    }

    func testInspectJSON() throws {
        let result = try poseact(["model", "inspect", try model("pose_detection.tflite").path, "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        // BLAZEPOSE.md: 2.97 M parameters, 0.86 GFLOP (2 × MAC), 45 CONV_2D.
        XCTAssertEqual(Double(object["parameters"] as? Int ?? 0) / 1e6, 2.97, accuracy: 0.01)
        XCTAssertEqual(Double(object["flops"] as? Int ?? 0) / 1e9, 0.86, accuracy: 0.01)
        XCTAssertEqual((object["operators"] as? [String: Int])?["CONV_2D"], 45)
    }

    func testBenchPrintsOneJSONLinePerModel() throws {
        let result = try poseact(["bench", "pose", "--runs", "3", "--warmup", "1", "--models", Self.modelsDir.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        for (line, name) in zip(lines, ["pose_detection", "pose_landmark_full"]) {
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            XCTAssertEqual(object["model"] as? String, name)
            XCTAssertEqual(object["runs"] as? Int, 3)
            XCTAssertEqual(object["threads"] as? Int, 2)
            let median = try XCTUnwrap(object["median_ms"] as? Double), p90 = try XCTUnwrap(object["p90_ms"] as? Double)
            XCTAssertGreaterThan(median, 0)
            XCTAssertLessThanOrEqual(median, p90)
            XCTAssertEqual(object["kernels"] as? String, KernelPath.best.rawValue)
            // The model's work over its time, and that as a share of the FP32 peak measured in
            // the same run: positive, and a whole model cannot beat its arithmetic's limit by 2×.
            XCTAssertGreaterThan(try XCTUnwrap(object["gflops"] as? Double), 0)
            let share = try XCTUnwrap(object["peak_share"] as? Double)
            XCTAssertGreaterThan(share, 0)
            XCTAssertLessThan(share, 2)
            XCTAssertFalse((object["cpu"] as? String ?? "").isEmpty)
        }
    }

    /// bench peak: a line for each kernel path's FP32 on one core and on every core, and one
    /// for bfloat16 where the CPU has it, each naming the CPU.
    func testBenchPeakMeasuresEveryPath() throws {
        let result = try poseact(["bench", "peak", "--seconds", "0.02", "--rounds", "1"])
        XCTAssertEqual(result.status, 0, result.stderr)
        var seen: Set<String> = []
        for line in result.stdout.split(separator: "\n") {
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let arithmetic = try XCTUnwrap(object["arithmetic"] as? String), kernels = try XCTUnwrap(object["kernels"] as? String)
            XCTAssertGreaterThan(try XCTUnwrap(object["gflops"] as? Double), 0, String(line))
            let cpu = try XCTUnwrap(object["cpu"] as? [String: Any])
            XCTAssertEqual(cpu["cores"] as? Int, ProcessInfo.processInfo.activeProcessorCount)
            seen.insert("\(arithmetic) \(kernels) \(try XCTUnwrap(object["threads"] as? Int))")
        }
        var expected: Set<String> = []
        let cores = Set([1, ProcessInfo.processInfo.activeProcessorCount])
        for path in KernelPath.supported {
            for threads in cores { expected.insert(path.roundsToBFloat16 ? "bf16 \(path) \(threads)" : "fp32 \(path) \(threads)") }
        }
        XCTAssertEqual(seen, expected)
        let bad = try poseact(["bench", "peak", "--seconds", "0"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("--seconds must be above 0"), bad.stderr)
    }

    /// --bfloat16 runs the models on the architecture's bfloat16 path (avx512bf16, neonbf16)
    /// where the CPU has it; elsewhere, or against a POSEACT_KERNELS that names another path,
    /// it is one line before any work.
    func testBFloat16Flag() throws {
        let run = try poseact(["bench", "pose", "--bfloat16", "--runs", "1", "--warmup", "0", "--models", Self.modelsDir.path])
        let path = KernelPath.bfloat16
        if path.isSupported {
            XCTAssertEqual(run.status, 0, run.stderr)
            for line in run.stdout.split(separator: "\n") {
                let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                XCTAssertEqual(object["kernels"] as? String, path.rawValue)
            }
            let clash = try poseact(["bench", "pose", "--bfloat16", "--runs", "1", "--models", Self.modelsDir.path],
                                    environment: ["POSEACT_KERNELS": "portable"])
            XCTAssertNotEqual(clash.status, 0)
            XCTAssertTrue(clash.stderr.contains("--bfloat16 and POSEACT_KERNELS=portable disagree"), clash.stderr)
            XCTAssertTrue(clash.stdout.isEmpty, clash.stdout)
        } else {
            XCTAssertNotEqual(run.status, 0)
            XCTAssertTrue(run.stderr.contains("cannot run the \(path) kernels"), run.stderr)
        }
    }

    /// POSEACT_KERNELS forces the kernel path, which bench pose and model inspect name; a
    /// path that is not one is a one-line error before any work.
    func testForcedKernelPath() throws {
        let forced = try poseact(["bench", "pose", "--runs", "1", "--warmup", "0", "--models", Self.modelsDir.path],
                                 environment: ["POSEACT_KERNELS": "portable"])
        XCTAssertEqual(forced.status, 0, forced.stderr)
        for line in forced.stdout.split(separator: "\n") {
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            XCTAssertEqual(object["kernels"] as? String, "portable")
        }
        let inspect = try poseact(["model", "inspect", try model("pose_detection.tflite").path])
        XCTAssertTrue(inspect.stdout.contains("kernels: \(KernelPath.best.rawValue)"), inspect.stdout)
        let bad = try poseact(["bench", "pose", "--runs", "1", "--models", Self.modelsDir.path], environment: ["POSEACT_KERNELS": "neon9"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertEqual(bad.stderr.split(separator: "\n").count, 1, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("POSEACT_KERNELS=neon9 is not a kernel path"), bad.stderr)
    }

    /// One binary for every x86-64 CPU: under qemu-user emulating a CPU without AVX2
    /// (Nehalem, 2008), poseact runs the pose models on the portable kernels instead of
    /// stopping; emulating Haswell, it picks AVX2. CI installs qemu-user; elsewhere the
    /// test is skipped with what to install.
    func testRunsOnCPUsWithoutAVX2() throws {
        #if arch(x86_64)
        let qemu = try tool(["qemu-x86_64"], install: "qemu-user")
        for (cpu, kernels) in [("Nehalem", "portable"), ("Haswell", "avx2")] {
            let run = try poseact(["bench", "pose", "--runs", "1", "--warmup", "0", "--threads", "1", "--models", Self.modelsDir.path],
                                  launcher: [qemu, "-cpu", cpu])
            XCTAssertEqual(run.status, 0, "\(cpu): \(run.stderr)")
            let lines = run.stdout.split(separator: "\n")
            XCTAssertEqual(lines.count, 2, run.stdout)
            for line in lines {
                let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                XCTAssertEqual(object["kernels"] as? String, kernels, "\(cpu): \(line)")
            }
        }
        #else
        throw XCTSkip("emulates older x86-64 CPUs")
        #endif
    }

    /// The main job of the README: the pipeline finds the generated figure in the still
    /// image and tracks it through the generated video; the generated dataset is extracted,
    /// trained on and evaluated.
    func testDemoFindsAndTracksTheGeneratedFigure() throws {
        let result = try poseact(["demo", "--runs", "2", "--models", Self.modelsDir.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        func number(after phrase: String) -> Double? {
            guard let range = result.stdout.range(of: phrase) else { return nil }
            return Double(result.stdout[range.upperBound...].prefix { $0.isNumber || $0 == "." })
        }
        // Measured: presence 1.000 and a person in 90 of 90 frames with one id; 0.5 is the
        // pipeline's own presence threshold, and a few lost frames would still be a working demo.
        XCTAssertGreaterThan(try XCTUnwrap(number(after: "presence "), result.stdout), 0.5)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(number(after: "a person in "), result.stdout), 85)
        XCTAssertTrue(result.stdout.contains("id 1\n"), result.stdout)
        // The generated dataset: 2 labels × 6 clips of 60 frames, all extracted; trained on
        // 4 per label, evaluated on 2: waving and walking are told apart (measured 100 %; the
        // exported file must give the run's own figures).
        XCTAssertTrue(result.stdout.contains("dataset: 12 generated clips"), result.stdout)
        XCTAssertTrue(result.stdout.contains("wave: 6 clips, 360 frames"), result.stdout)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(number(after: "test clips: clip accuracy "), result.stdout), 75)
        XCTAssertTrue(result.stdout.contains("(= the run's own test figures)"), result.stdout)
        // A waving test clip through the live pipeline ends in "wave".
        XCTAssertTrue(result.stdout.contains("live: test clip wave5.mp4"), result.stdout)
        XCTAssertTrue(result.stdout.range(of: "→ wave;") != nil || result.stdout.contains("states wave;"), result.stdout)
        // The coach: 8 generated jumping jacks at three tempos, counted exactly from the poses;
        // the arms rendered from 15° to 165° from the body (BlazePose's shoulder and hip
        // joints are not the drawn ones: measured 23° and 168°; ±15° leaves room for that).
        XCTAssertTrue(result.stdout.contains("doing 8 jumping jacks (slow, 3× faster, slow) in 360 frames: 8 repetitions counted"),
                      result.stdout)
        XCTAssertEqual(try XCTUnwrap(number(after: "left_shoulder angle per repetition: from "), result.stdout), 15, accuracy: 15)
        XCTAssertEqual(try XCTUnwrap(number(after: "° to "), result.stdout), 165, accuracy: 15)
    }
}

/// `poseact pose` as a user runs it on good and bad inputs.
final class PoseCommandTests: PoseactCLITestCase {
    var cli: PoseactCLITestCase { self }
    func sharedFile(_ path: String) throws -> String { try TestData.shared(path).path }
    var models: [String] { ["--models", PoseactCLITestCase.modelsDir.path] }

    func testImageGivesOnePersonWith33NamedLandmarks() throws {
        _ = try cli.model("pose_detection.tflite")
        let image = try sharedFile("fixtures/blazepose/images/pose.decoded.png")
        let overlay = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-overlay-\(getpid()).png").path
        let result = try cli.poseact(["pose", image, "--overlay", overlay] + models)
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 1)
        let frame = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        XCTAssertEqual(frame["width"] as? Int, 1000)
        let persons = try XCTUnwrap(frame["persons"] as? [[String: Any]])
        XCTAssertEqual(persons.count, 1)
        XCTAssertEqual(persons[0]["prominent"] as? Bool, true)
        let landmarks = try XCTUnwrap(persons[0]["landmarks"] as? [[String: Any]])
        XCTAssertEqual(landmarks.count, 33)
        XCTAssertEqual(landmarks.first?["name"] as? String, "nose")
        XCTAssertEqual(landmarks.last?["name"] as? String, "right_foot_index")
        // MediaPipe's nose for this image: (463.277, 286.578) px (fixtures' expected/pose.json).
        XCTAssertEqual(landmarks[0]["x"] as? Double ?? 0, 463.277, accuracy: 0.5)
        XCTAssertEqual(landmarks[0]["y"] as? Double ?? 0, 286.578, accuracy: 0.5)
        XCTAssertTrue(FileManager.default.fileExists(atPath: overlay), "overlay PNG written")
    }

    func testVideoTracksAndWritesOverlay() throws {
        _ = try cli.model("pose_detection.tflite")
        let video = try sharedFile("data/pushups/test/correct/correct39.mp4")
        let overlay = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-overlay-\(getpid()).mp4").path
        let result = try cli.poseact(["pose", video, "--overlay", overlay, "--max-people", "1"] + models)
        XCTAssertEqual(result.status, 0, result.stderr)
        let frames = result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        XCTAssertEqual(frames.count, 98)   // correct39.mp4: 98 frames at 25 fps
        let withPerson = frames.filter { ($0["persons"] as? [Any])?.isEmpty == false }.count
        XCTAssertGreaterThanOrEqual(Double(withPerson) / Double(frames.count), 0.95)
        let ids = Set(frames.flatMap { ($0["persons"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int } })
        XCTAssertEqual(ids.count, 1, "one person, one id throughout: \(ids)")
        XCTAssertEqual(frames[25]["time"] as? Double ?? 0, 1.0, accuracy: 1e-6)
        let attributes = try FileManager.default.attributesOfItem(atPath: overlay)
        XCTAssertGreaterThan(attributes[.size] as? Int ?? 0, 10_000, "overlay video written")
        XCTAssertFalse(TestData.hasTemporaryFile(overlay))
    }

    func testMissingVideo() throws {
        try cli.assertOneLineError(["pose", "/nonexistent/clip.mp4"] + models, mentions: ["no such file", "/nonexistent/clip.mp4"])
    }

    func testTextFileNamedMP4() throws {
        _ = try cli.model("pose_detection.tflite")
        let path = try cli.temporary("notes.mp4", Array("not a video at all\n".utf8))
        try cli.assertOneLineError(["pose", path] + models, mentions: [path, "not a video or image"])
    }

    /// A download cut short: the montage keeps its index at the front, so the frames before
    /// the cut decode. (An MP4 whose index is at the end is unreadable once cut: that is the
    /// one-line "not a video" error above.)
    func testTruncatedVideoGivesTheFramesBeforeTheCut() throws {
        _ = try cli.model("pose_detection.tflite")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try sharedFile("data/pushups/montage/montage_02.mp4"))))
        let path = try cli.temporary("cut.mp4", Array(bytes.prefix(bytes.count / 4)))
        let result = try cli.poseact(["pose", path, "--max-people", "1"] + models)
        XCTAssertEqual(result.status, 0, result.stderr)
        let frames = result.stdout.split(separator: "\n").count
        XCTAssertGreaterThan(frames, 60); XCTAssertLessThan(frames, 645)
        XCTAssertTrue(result.stderr.contains("warning:"), result.stderr)
        XCTAssertFalse(result.stderr.contains("Fatal error"))
    }

    /// Models found by poseact itself (here through $POSEACT_MODELS_DIR) must be the files it
    /// was tested with: a damaged copy is one line naming the file and what to do; the same
    /// files given with --models are the user's choice and are not checked.
    func testDamagedModelsAreRefusedByTheirHash() throws {
        let source = try model("pose_detection.tflite")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-damaged-models-\(getpid())")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in ["pose_detection.tflite", "pose_landmark_full.tflite"] {
            try FileManager.default.copyItem(at: source.deletingLastPathComponent().appendingPathComponent(name), to: folder.appendingPathComponent(name))
        }
        let landmark = folder.appendingPathComponent("pose_landmark_full.tflite")
        var bytes = [UInt8](try Data(contentsOf: landmark))
        bytes[bytes.count / 2] ^= 0x01
        try Data(bytes).write(to: landmark)
        let image = try temporary("still.ppm", Array("P6\n8 8\n255\n".utf8) + [UInt8](repeating: 90, count: 8 * 8 * 3))
        let refused = try poseact(["pose", image], environment: ["POSEACT_MODELS_DIR": folder.path])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertEqual(refused.stderr.split(separator: "\n").count, 1, refused.stderr)
        for word in ["pose_landmark_full.tflite", "sha256", "reinstall poseact"] { XCTAssertTrue(refused.stderr.contains(word), refused.stderr) }
        let intact = try poseact(["pose", image], environment: ["POSEACT_MODELS_DIR": source.deletingLastPathComponent().path])
        XCTAssertFalse(intact.stderr.contains("sha256"), intact.stderr)
    }

    /// A binary copied out of its checkout, run from a folder of its own, finds the models
    /// of the checkout it was built in; a FIFO in ./models is one line, not a hang.
    func testACopiedBinaryFindsItsCheckoutsModels() throws {
        _ = try model("pose_detection.tflite")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-copied-\(getpid())")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("bin"), withIntermediateDirectories: true)
        let copy = folder.appendingPathComponent("bin/poseact")
        try FileManager.default.copyItem(at: binary, to: copy)
        defer { try? FileManager.default.removeItem(at: folder) }
        let image = try temporary("still-copied.ppm", Array("P6\n8 8\n255\n".utf8) + [UInt8](repeating: 90, count: 8 * 8 * 3))
        let found = try poseact(["pose", image], environment: ["POSEACT_MODELS_DIR": ""], directory: folder, binary: copy)
        XCTAssertEqual(found.status, 0, found.stderr)
        XCTAssertFalse(found.stderr.contains("not found"), found.stderr)

        try FileManager.default.createDirectory(at: folder.appendingPathComponent("models"), withIntermediateDirectories: true)
        XCTAssertEqual(mkfifo(folder.appendingPathComponent("models/pose_detection.tflite").path, 0o644), 0)
        try FileManager.default.copyItem(at: try model("pose_landmark_full.tflite"), to: folder.appendingPathComponent("models/pose_landmark_full.tflite"))
        let fifo = try poseact(["pose", image], environment: ["POSEACT_MODELS_DIR": ""], directory: folder, binary: copy)
        XCTAssertNotEqual(fifo.status, 0)
        XCTAssertEqual(fifo.stderr.split(separator: "\n").count, 1, fifo.stderr)
        XCTAssertTrue(fifo.stderr.contains("pose_detection.tflite: a FIFO (named pipe)"), fifo.stderr)
    }

    func testAbsentCamera() throws {
        _ = try cli.model("pose_detection.tflite")
        try cli.assertOneLineError(["pose", "/dev/video99"] + models, mentions: ["/dev/video99", "camera"])
    }

    /// A closed port on loopback: a clear message within the timeout, not a hang.
    func testStreamThatDoesNotAnswer() throws {
        _ = try cli.model("pose_detection.tflite")
        let start = Date()
        try cli.assertOneLineError(["pose", "udp://127.0.0.1:9", "--timeout", "1.5"] + models, mentions: ["udp://127.0.0.1:9"])
        XCTAssertLessThan(Date().timeIntervalSince(start), 10)
    }
}

/// `poseact extract`, `import`, `merge` and `dataset inspect` as a user runs them.
final class ExtractCommandTests: PoseactCLITestCase {
    var models: [String] { ["--models", PoseactCLITestCase.modelsDir.path] }

    /// A small labeled-folder dataset: short push-up clips linked from the shared data, one
    /// file that is not a video, and a label folder with no videos.
    func makeDataset(clips: [(label: String, path: String)]) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-ds-\(getpid())-\(UUID().uuidString.prefix(6))")
        for clip in clips {
            let source = try TestData.shared("data/pushups/test/\(clip.path)")
            let dir = root.appendingPathComponent("train/\(clip.label)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(at: dir.appendingPathComponent(source.lastPathComponent), withDestinationURL: source)
        }
        return root
    }

    func testExtractReportsBadDataAndKeepsTheGoodClips() throws {
        _ = try model("pose_detection.tflite")
        let root = try makeDataset(clips: [("correct", "correct/correct39.mp4"), ("wrong", "wrong/wrong64.mp4")])
        try Data("not a video".utf8).write(to: root.appendingPathComponent("train/wrong/broken.mp4"))
        try FileManager.default.createDirectory(at: root.appendingPathComponent("train/empty_label"), withIntermediateDirectories: true)
        let store = root.appendingPathComponent("out.h5").path
        let result = try poseact(["extract", root.path, "--output", store, "--json", "--fps", "15"] + models)
        XCTAssertEqual(result.status, 0, result.stderr)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(summary["stored"] as? Int, 2)
        let skipped = try XCTUnwrap(summary["skipped"] as? [[String: Any]])
        XCTAssertEqual(skipped.count, 1)
        XCTAssertTrue((skipped.first?["reason"] as? String ?? "").contains("not a video"), "\(skipped)")
        XCTAssertTrue(result.stderr.contains("empty_label"), "the empty label folder is reported: \(result.stderr)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: store + ".partial"), "the journal is removed when done")
        let inspect = try poseact(["dataset", "inspect", store, "--json"])
        XCTAssertEqual(inspect.status, 0, inspect.stderr)
        XCTAssertEqual(inspect.stdout.split(separator: "\n").count, 1, "--json: one object, one line")
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(inspect.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(report["clips"] as? Int, 2)
        // correct39: 98 frames at 25 fps = 3.92 s → 59 frames resampled to 15 fps.
        let labels = try XCTUnwrap(report["labels"] as? [String: [String: Any]])
        XCTAssertEqual(labels["correct"]?["clips"] as? Int, 1)
        XCTAssertEqual(Double(labels["correct"]?["frames"] as? Int ?? 0), 3.92 * 15, accuracy: 1)
        // The world landmarks are stored beside the keypoints: finite wherever there is a
        // person, in metres (hips to shoulders 0.3–0.8 m: an adult's torso, with the pose
        // model's error; BlazePose's world landmarks are scaled to a standard body).
        let keypoints = try KeypointStore(path: store)
        for entry in keypoints.entries {
            let clip = try keypoints.read(entry.id)
            let world = try XCTUnwrap(clip.world, entry.id)
            XCTAssertEqual(world.count, clip.keypoints.count)
            let j = clip.jointNames.count
            var torsos: [Float] = []
            for f in 0..<clip.frameCount where clip.keypoints[f * j * 3 + 2] > 0 {
                func p(_ i: Int) -> SIMD3<Float> { SIMD3(world[(f * j + i) * 3], world[(f * j + i) * 3 + 1], world[(f * j + i) * 3 + 2]) }
                let d = (p(11) + p(12)) / 2 - (p(23) + p(24)) / 2
                torsos.append((d * d).sum().squareRoot())
            }
            XCTAssertGreaterThan(torsos.count, clip.frameCount / 2, entry.id)
            let median = torsos.sorted()[torsos.count / 2]
            XCTAssertTrue((0.3...0.8).contains(median), "\(entry.id): torso \(median) m")
        }
    }

    /// kill -9 in the middle, then the same command again: it continues, and every clip is
    /// in the store exactly once.
    func testKilledExtractionResumes() throws {
        _ = try model("pose_detection.tflite")
        let clips = [("correct", "correct/correct39.mp4"), ("correct", "correct/correct12.mp4"), ("wrong", "wrong/wrong64.mp4"),
                     ("wrong", "wrong/wrong30.mp4")]
        let root = try makeDataset(clips: clips)
        let store = root.appendingPathComponent("out.h5").path
        let arguments = ["extract", root.path, "--output", store, "--jobs", "1", "--threads", "2", "--fps", "15"] + models
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice; process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait until at least one clip is journaled, then kill without warning.
        let journal = store + ".partial"
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let done = (try? FileManager.default.contentsOfDirectory(atPath: journal))?.filter { $0.hasSuffix(".h5") }.count ?? 0
            if done >= 1 { break }
            usleep(20_000)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertFalse(FileManager.default.fileExists(atPath: store), "no store until every clip is done")
        let finished = (try FileManager.default.contentsOfDirectory(atPath: journal)).filter { $0.hasSuffix(".h5") }.count
        XCTAssertGreaterThanOrEqual(finished, 1)
        XCTAssertLessThan(finished, clips.count, "killed before the end")

        let result = try poseact(arguments + ["--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        XCTAssertGreaterThanOrEqual(summary["resumed"] as? Int ?? 0, finished)
        XCTAssertEqual(summary["stored"] as? Int, clips.count)
        let inspect = try poseact(["dataset", "inspect", store, "--json"])
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(inspect.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(report["clips"] as? Int, clips.count)
    }

    func testImportPennActionSliceAndMerge() throws {
        let csv = try TestData.shared("data/penn-action/keypoints.csv")
        // The first 2,000 rows: a slice, so the test stays quick (the full import is measured by hand).
        let text = try String(contentsOf: csv, encoding: .utf8)
        let slice = text.split(separator: "\n", omittingEmptySubsequences: false).prefix(2001).joined(separator: "\n") + "\n"
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-import-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let small = dir.appendingPathComponent("penn-slice.csv")
        try Data(slice.utf8).write(to: small)
        let a = dir.appendingPathComponent("a.h5").path, merged = dir.appendingPathComponent("merged.h5").path
        let imported = try poseact(["import", small.path, "--output", a, "--json"])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(imported.stdout.utf8)) as? [String: Any])
        XCTAssertGreaterThan(summary["clips"] as? Int ?? 0, 5)
        XCTAssertEqual(summary["frames"] as? Int, 2000)
        let merge = try poseact(["merge", a, a, "--output", merged])
        XCTAssertEqual(merge.status, 0, merge.stderr)   // identical duplicates are kept once
        let inspect = try poseact(["dataset", "inspect", merged, "--json"])
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(inspect.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(report["clips"] as? Int, summary["clips"] as? Int)
        // Windows of the imported clips: per label and split, written as a windows file.
        let windowsFile = dir.appendingPathComponent("w.h5").path
        let windows = try poseact(["windows", merged, "--window", "16", "--stride", "8", "--output", windowsFile, "--json"])
        XCTAssertEqual(windows.status, 0, windows.stderr)
        let counts = try XCTUnwrap((JSONSerialization.jsonObject(with: Data(windows.stdout.utf8)) as? [String: Any])?["per_label"] as? [String: [String: Int]])
        XCTAssertFalse(counts.isEmpty)
        XCTAssertGreaterThan(counts.values.flatMap(\.values).reduce(0, +), 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: windowsFile))
    }

    /// Two Slurm array tasks (`--shard auto`, ids 1 and 2 of --array=1-2) sharing a cache,
    /// merged; then the folder extracted again from the cache: every clip taken from it, the
    /// same store bit for bit as the merged tasks' and as an extraction without the cache; a
    /// damaged entry is said in one line and extracted again.
    func testShardAutoAndTheCacheGiveTheSameStore() throws {
        _ = try model("pose_detection.tflite")
        let root = try makeDataset(clips: [("correct", "correct/correct39.mp4"), ("wrong", "wrong/wrong64.mp4"), ("wrong", "wrong/wrong30.mp4")])
        let cache = root.appendingPathComponent("cache").path
        var parts: [String] = []
        for id in [1, 2] {
            let part = root.appendingPathComponent("part-\(id).h5").path
            let result = try poseact(["extract", root.appendingPathComponent("train").path, "--output", part, "--fps", "15", "--shard", "auto",
                                      "--cache", cache, "--json"] + models,
                                     environment: ["SLURM_ARRAY_TASK_ID": "\(id)", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "2",
                                                   "SLURM_ARRAY_TASK_COUNT": "2"])
            XCTAssertEqual(result.status, 0, result.stderr)
            let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            XCTAssertEqual(summary["shard"] as? String, "\(id - 1)/2")
            XCTAssertEqual(summary["stored"] as? Int, id == 1 ? 2 : 1, "every 2nd clip from the task's index")
            XCTAssertEqual(summary["cached"] as? Int, 0)
            parts.append(part)
        }
        let merged = root.appendingPathComponent("merged.h5").path
        XCTAssertEqual(try poseact(["merge"] + parts + ["--output", merged]).status, 0)

        func extract(_ name: String, _ extra: [String]) throws -> (store: String, summary: [String: Any], stderr: String) {
            let store = root.appendingPathComponent(name).path
            let result = try poseact(["extract", root.appendingPathComponent("train").path, "--output", store, "--fps", "15", "--json"] + extra + models)
            XCTAssertEqual(result.status, 0, result.stderr)
            return (store, try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]), result.stderr)
        }
        let again = try extract("again.h5", ["--cache", cache])
        // (The cache's entries at 15 fps, before another rate adds its own.)
        let entries = try FileManager.default.subpathsOfDirectory(atPath: cache).filter { $0.hasSuffix(".h5") }.sorted()
        XCTAssertEqual(entries.count, 3)
        XCTAssertEqual(again.summary["cached"] as? Int, 3)
        let plain = try extract("plain.h5", [])
        XCTAssertEqual(plain.summary["cached"] as? Int, 0)
        for other in [again.store, plain.store] {
            let compare = try poseact(["dataset", "compare", merged, other])
            XCTAssertEqual(compare.status, 0, compare.stderr)
            XCTAssertTrue(compare.stdout.contains("the same 3 clips, bit for bit"), compare.stdout)
        }
        // The comparison can fail: a store of other settings differs.
        let other = try extract("other.h5", ["--fps", "10", "--cache", cache])
        XCTAssertEqual(other.summary["cached"] as? Int, 0, "another frame rate is another key")
        let differs = try poseact(["dataset", "compare", merged, other.store])
        XCTAssertEqual(differs.status, 1)
        XCTAssertTrue(differs.stderr.contains("times"), differs.stderr)

        // A damaged entry: one line, and the clip extracted again.
        try Data("not a store".utf8).write(to: URL(fileURLWithPath: cache + "/" + entries[0]))
        let repaired = try extract("repaired.h5", ["--cache", cache])
        XCTAssertEqual(repaired.summary["cached"] as? Int, 2)
        XCTAssertTrue(repaired.stderr.contains("the cache's copy does not read back"), repaired.stderr)
        XCTAssertEqual(try poseact(["dataset", "compare", merged, repaired.store]).status, 0)
        XCTAssertEqual(try extract("healed.h5", ["--cache", cache]).summary["cached"] as? Int, 3, "the damaged entry was replaced")

        // A shared folder is anyone's: a link planted under an entry's name is neither read
        // nor written through, and a FIFO under a note's name does not block the run.
        let linked = cache + "/" + entries[1]
        try FileManager.default.removeItem(atPath: linked)
        let target = root.appendingPathComponent("not-yours.h5").path
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: target)
        let fifo = cache + "/" + entries[2].replacingOccurrences(of: ".h5", with: ".skip")
        XCTAssertEqual(mkfifo(fifo, 0o644), 0)
        let planted = try extract("planted.h5", ["--cache", cache])
        XCTAssertEqual(planted.summary["stored"] as? Int, 3)
        XCTAssertTrue(planted.stderr.contains("not kept in the cache"), planted.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target), "nothing written through the link")
        XCTAssertEqual(try poseact(["dataset", "compare", merged, planted.store]).status, 0)

        // Another clip's entry under an entry's name, as a link or as a copy, is never taken
        // (without the checks, the run would store clip 0's keypoints under clips 1 and 2).
        try FileManager.default.removeItem(atPath: linked)
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: cache + "/" + entries[0])
        let copied = cache + "/" + entries[2]
        try FileManager.default.removeItem(atPath: copied)
        try FileManager.default.copyItem(atPath: cache + "/" + entries[0], toPath: copied)
        let stolen = try extract("stolen.h5", ["--cache", cache])
        XCTAssertTrue(stolen.stderr.contains("a symbolic link, not a cache entry"), stolen.stderr)
        XCTAssertTrue(stolen.stderr.contains("another entry's file under this entry's name"), stolen.stderr)
        XCTAssertEqual(stolen.summary["cached"] as? Int, 1)
        XCTAssertEqual(try poseact(["dataset", "compare", merged, stolen.store]).status, 0)

        // A FIFO under an entry's name, and one named like a video in the dataset: neither
        // is opened for reading (which would wait for a writer for ever).
        try FileManager.default.removeItem(atPath: copied)
        XCTAssertEqual(mkfifo(copied, 0o644), 0)
        let fifoVideo = root.appendingPathComponent("train/wrong/stuck.mp4").path
        XCTAssertEqual(mkfifo(fifoVideo, 0o644), 0)
        let result = try poseact(["extract", root.appendingPathComponent("train").path, "--output", root.appendingPathComponent("fifos.h5").path,
                                  "--fps", "15", "--cache", cache] + models)
        XCTAssertTrue(result.stderr.contains("\(copied): a FIFO (named pipe), not a cache entry"), result.stderr)
        XCTAssertTrue(result.stderr.contains("stuck.mp4: a FIFO (named pipe), not a video or picture poseact can read"), result.stderr)
    }

    /// Two labeled ranges of one montage, extracted on "two machines" (--shard 0/2, 1/2)
    /// and merged: each range under its own label, with the frames of its time range.
    func testAnnotatedRangesInShardsThenMerged() throws {
        _ = try model("pose_detection.tflite")
        let montage = try TestData.shared("data/pushups/montage/montage_01.mp4")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-ranges-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let annotations = dir.appendingPathComponent("ranges.csv")
        // The first two segments of annotations.csv: correct 0.00–3.90 s, wrong 3.90–7.10 s.
        try Data("video,label,start,end\n\(montage.path),correct,0,3.9\n\(montage.path),wrong,00:03.90,00:07.10\n".utf8).write(to: annotations)
        var stores: [String] = []
        for i in 0..<2 {
            let store = dir.appendingPathComponent("shard\(i).h5").path
            let result = try poseact(["extract", dir.path, "--annotations", annotations.path, "--output", store, "--fps", "15", "--shard", "\(i)/2", "--json"] + models)
            XCTAssertEqual(result.status, 0, result.stderr)
            stores.append(store)
        }
        let merged = dir.appendingPathComponent("all.h5").path
        XCTAssertEqual(try poseact(["merge"] + stores + ["--output", merged]).status, 0)
        let inspect = try poseact(["dataset", "inspect", merged, "--json"])
        let labels = try XCTUnwrap((JSONSerialization.jsonObject(with: Data(inspect.stdout.utf8)) as? [String: Any])?["labels"] as? [String: [String: Any]])
        // At 15 fps: 3.9 s → 59 frames (0, 1/15, …, 3.8667), 3.2 s → 48 frames.
        XCTAssertEqual(labels["correct"]?["clips"] as? Int, 1)
        XCTAssertEqual(labels["wrong"]?["clips"] as? Int, 1)
        XCTAssertEqual(Double(labels["correct"]?["frames"] as? Int ?? 0), 58.5, accuracy: 1)
        XCTAssertEqual(Double(labels["wrong"]?["frames"] as? Int ?? 0), 48, accuracy: 1)
    }

    /// A clip with nobody in it is reported and left out; a range starting after its video
    /// ends is reported and left out; a range running past the end is cut there, with a warning.
    func testNoPersonAndRangesPastTheEnd() throws {
        _ = try model("pose_detection.tflite")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-nobody-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        // 1 s of plain grey: nobody to find.
        let empty = dir.appendingPathComponent("empty.mp4").path
        let writer = try VideoWriter(path: empty, width: 320, height: 240, fps: 30)
        for _ in 0..<30 { try writer.write(RGBImage(width: 320, height: 240, pixels: [UInt8](repeating: 128, count: 320 * 240 * 3))) }
        try writer.finish()
        let montage = try TestData.shared("data/pushups/montage/montage_01.mp4")
        let annotations = dir.appendingPathComponent("a.csv")
        try Data("""
            video,label,start,end
            \(empty),idle,0,1
            \(montage.path),late,30,31
            \(montage.path),tail,21.5,23

            """.utf8).write(to: annotations)
        let store = dir.appendingPathComponent("s.h5").path
        let result = try poseact(["extract", dir.path, "--annotations", annotations.path, "--output", store, "--fps", "10", "--json"] + models)
        XCTAssertEqual(result.status, 0, result.stderr)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let skipped = (summary["skipped"] as? [[String: Any]] ?? []).map { "\($0["id"] ?? ""): \($0["reason"] ?? "")" }.joined(separator: "\n")
        XCTAssertTrue(skipped.contains("no person found"), skipped)
        XCTAssertTrue(skipped.contains("after the video ends"), skipped)
        XCTAssertEqual(summary["stored"] as? Int, 1, "only the tail range goes in")
        XCTAssertTrue(result.stderr.contains("past the video's end"), result.stderr)
    }
}
