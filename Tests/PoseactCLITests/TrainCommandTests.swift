import Foundation
import Media
import OutputLines
import TestData
import TrainingFixtures
import XCTest

/// Tests on a slice of Penn Action (real keypoints): 3 labels, 12 training and 6 test clips
/// each, imported from the shared CSV into a store once per test process.
class PennSliceTestCase: PoseactCLITestCase {
    static let labels = ["jumping_jacks", "pullup", "squat"]
    static let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-train-cli-\(getpid())")

    /// The slice as a CSV in Penn's form, imported once into a store; its path. With
    /// `everyClip`, every clip of the three labels (545, about 2,400 windows) in a store of
    /// its own.
    func store(everyClip: Bool = false) throws -> String {
        let name = everyClip ? "labels" : "slice"
        let path = Self.dir.appendingPathComponent("\(name).h5").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let csv = try TestData.shared("data/penn-action/keypoints.csv")
        try FileManager.default.createDirectory(at: Self.dir, withIntermediateDirectories: true)
        let lines = try String(contentsOf: csv, encoding: .utf8).split(separator: "\n")
        var kept = [String(lines[0])], clips: [String: Set<String>] = [:]
        for line in lines.dropFirst() {
            let f = line.split(separator: ",", maxSplits: 3, omittingEmptySubsequences: false)
            let clip = String(f[0]), label = String(f[1]), split = String(f[2])
            guard Self.labels.contains(label) else { continue }
            let key = "\(label)/\(split)"
            if !clips[key, default: []].contains(clip) {
                guard everyClip || clips[key, default: []].count < (split == "train" ? 12 : 6) else { continue }
                clips[key, default: []].insert(clip)
            }
            kept.append(String(line))
        }
        let slice = Self.dir.appendingPathComponent("\(name).csv")
        try Data((kept.joined(separator: "\n") + "\n").utf8).write(to: slice)
        let r = try poseact(["import", slice.path, "--output", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        return path
    }

    /// A store of the first `train` training and `test` test clips of one of Penn Action's
    /// labels (one the slice has not), made once; its path.
    func oneLabelStore(_ label: String, train: Int, test: Int) throws -> String {
        let store = Self.dir.appendingPathComponent("\(label).h5").path
        if FileManager.default.fileExists(atPath: store) { return store }
        let lines = try String(contentsOf: try TestData.shared("data/penn-action/keypoints.csv"), encoding: .utf8).split(separator: "\n")
        var kept = [String(lines[0])], clips: [String: Set<String>] = [:]
        for line in lines.dropFirst() {
            let f = line.split(separator: ",", maxSplits: 3, omittingEmptySubsequences: false)
            guard f[1] == label else { continue }
            let split = String(f[2]), clip = String(f[0])
            if !clips[split, default: []].contains(clip) {
                guard clips[split, default: []].count < (split == "train" ? train : test) else { continue }
                clips[split, default: []].insert(clip)
            }
            kept.append(String(line))
        }
        let csv = Self.dir.appendingPathComponent("\(label).csv").path
        try FileManager.default.createDirectory(at: Self.dir, withIntermediateDirectories: true)
        try Data((kept.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: csv))
        let r = try poseact(["import", csv, "--output", store])
        XCTAssertEqual(r.status, 0, r.stderr)
        return store
    }

    /// A python with onnxruntime, h5py and numpy: the venv `.ci/run` makes
    /// (`POSEACT_ONNX_PYTHON`), for the ONNX export's parity and the preprocessing reference.
    func python() throws -> String {
        let env = ProcessInfo.processInfo.environment
        for path in [env["POSEACT_ONNX_PYTHON"], "/tmp/poseact-onnx-venv/bin/python"].compactMap({ $0 })
        where FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        throw TestData.missing("no python with onnxruntime: python3 -m venv /tmp/poseact-onnx-venv && /tmp/poseact-onnx-venv/bin/pip install onnxruntime h5py numpy")
    }

    func config(_ text: String, name: String = UUID().uuidString) throws -> String {
        try FileManager.default.createDirectory(at: Self.dir, withIntermediateDirectories: true)
        let path = Self.dir.appendingPathComponent("\(name).yaml").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static let small = """
        model:
          channels: 16
          dilations: [1, 2]
        optimizer:
          batch_size: 16
        training:
          epochs: 4
          threads: 1
        data:
          validation_share: 0.2

        """

    /// The last line of a command's stdout as a JSON object, after checking that every line
    /// is one (what `--json` promises, so that `| tail -1 | jq` works).
    func json(_ text: String) throws -> [String: Any] {
        let lines = text.split(separator: "\n")
        for line in lines { XCTAssertTrue((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "not one JSON object: \(line)") }
        let line = try XCTUnwrap(lines.last, "no output")
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], String(line))
    }

    /// A small model trained on the slice (once per test process): its run folder.
    func trainedRun() throws -> String {
        let run = Self.dir.appendingPathComponent("run-shared").path
        if FileManager.default.fileExists(atPath: run + "/model.poseact.h5") { return run }
        let trained = try poseact(["train", "--config", try config(Self.small, name: "small"), "--data", try store(), "--output", run])
        XCTAssertEqual(trained.status, 0, trained.stderr)
        return run
    }
}

/// `poseact train`, `export`, `evaluate`, `model inspect` and `bench train` as a user runs them.
final class TrainCommandTests: PennSliceTestCase {
    /// Train → export → evaluate: the exported file gives the run's own numbers, and
    /// `model inspect` shows its metadata.
    func testTrainExportEvaluate() throws {
        let data = try store()
        let run = Self.dir.appendingPathComponent("run-\(UUID().uuidString.prefix(6))").path
        let trained = try poseact(["train", "--config", try config(Self.small), "--data", data, "--output", run, "--json"])
        XCTAssertEqual(trained.status, 0, trained.stderr)
        let own = try json(trained.stdout)   // every line one object: the epochs, then the test evaluation
        let epochLines = try eventLines(trained.stdout).compactMap { line -> EpochLine? in
            if case .epoch(let e) = line { return e } else { return nil }
        }
        XCTAssertEqual(epochLines.map(\.record.epoch), [1, 2, 3, 4], trained.stdout)
        XCTAssertNotNil(epochLines.first?.record.validationAccuracy, trained.stdout)
        for f in ["config.yaml", "checkpoint.h5", "model.poseact.h5", "metrics.csv", "metrics.json", "learning-curves.svg",
                  "evaluation.json", "evaluation.md", "evaluation-confusion.png"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: "\(run)/\(f)"), f)
        }
        XCTAssertEqual(try String(contentsOfFile: "\(run)/metrics.csv", encoding: .utf8).split(separator: "\n").count, 5)

        let exported = Self.dir.appendingPathComponent("slice.poseact.h5").path
        let export = try poseact(["export", run, "--output", exported])
        XCTAssertEqual(export.status, 0, export.stderr)
        let evaluated = try poseact(["evaluate", exported, "--data", data, "--split", "test", "--json"])
        XCTAssertEqual(evaluated.status, 0, evaluated.stderr)
        let theirs = try json(evaluated.stdout)
        for key in ["clip_accuracy", "window_accuracy", "clips", "windows"] {
            XCTAssertEqual(theirs[key] as? NSNumber, own[key] as? NSNumber, key)
        }
        XCTAssertEqual(theirs["confusion"] as? [[Int]], own["confusion"] as? [[Int]])
        XCTAssertEqual((theirs["per_class"] as? [[String: Any]])?.count, 3)
        XCTAssertTrue((15...18).contains(theirs["clips"] as? Int ?? 0), "18 test clips, a short one may give no window")

        let inspect = try poseact(["model", "inspect", exported, "--json"])
        XCTAssertEqual(inspect.status, 0, inspect.stderr)
        let meta = try json(inspect.stdout)
        XCTAssertEqual(meta["labels"] as? [String], Self.labels)
        let pre = try XCTUnwrap(meta["preprocessing"] as? [String: Any])
        XCTAssertEqual(pre["window"] as? Int, 32)
        XCTAssertEqual(pre["stride"] as? Int, 8)
        XCTAssertEqual(pre["fps"] as? Double, 30)
        XCTAssertEqual((meta["test"] as? [String: Any])?["clip_accuracy"] as? NSNumber, own["clip_accuracy"] as? NSNumber)

        // Two runs (here the same one twice) export as an ensemble of two nets.
        let pair = Self.dir.appendingPathComponent("pair.poseact.h5").path
        let ensemble = try poseact(["export", run, exported, "--output", pair])
        XCTAssertEqual(ensemble.status, 0, ensemble.stderr)
        XCTAssertTrue(ensemble.stderr.contains("an ensemble of 2 nets"), ensemble.stderr)
        let pairMeta = try json(try poseact(["model", "inspect", pair, "--json"]).stdout)
        XCTAssertEqual(pairMeta["members"] as? Int, 2)
        XCTAssertEqual(pairMeta["parameters"] as? Int, 2 * (meta["parameters"] as? Int ?? -1))
        let pairScore = try json(try poseact(["evaluate", pair, "--data", data, "--split", "test", "--json"]).stdout)
        XCTAssertEqual(pairScore["clip_accuracy"] as? NSNumber, own["clip_accuracy"] as? NSNumber, "two copies of one net: the same predictions")

        let text = try poseact(["evaluate", run, "--data", data, "--report", run + "/again"])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("clip accuracy"), text.stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: run + "/again/evaluation-confusion.png"))
    }

    /// `train --streams` with a graph net: one run per stream in RUN/streams/NAME, and
    /// RUN/model.poseact.h5 their weighted ensemble, whose test evaluation is the run's and
    /// which `evaluate` scores the same; `model inspect` names the streams.
    func testStreamsOfGraphNetsTrainAsOneModel() throws {
        let data = try store()
        let run = Self.dir.appendingPathComponent("streams-\(UUID().uuidString.prefix(6))").path
        func streamsConfig(_ streams: String) throws -> String {
            try config("""
                model:
                  type: stgcn
                  blocks: [8, 16]
                  streams: [\(streams)]
                  stream_weights: [2, 1]
                optimizer:
                  batch_size: 16
                training:
                  epochs: 2
                  threads: 1

                """)
        }
        let refused = try poseact(["train", "--config", try streamsConfig("bone"), "--data", data, "--output", run])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("model.stream_weights must give one weight per stream (1) or none"), refused.stderr)
        let trained = try poseact(["train", "--config", try streamsConfig("bone, joint_motion"), "--data", data, "--output", run,
                                   "--streams", "bone,joint_motion", "--json"])
        XCTAssertEqual(trained.status, 0, trained.stderr)
        for stream in ["bone", "joint_motion"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: "\(run)/streams/\(stream)/model.poseact.h5"), stream)
        }
        let own = try json(trained.stdout)
        let scored = try json(try poseact(["evaluate", run, "--data", data, "--split", "test", "--json"]).stdout)
        XCTAssertEqual(scored["clip_accuracy"] as? NSNumber, own["clip_accuracy"] as? NSNumber)
        XCTAssertEqual(scored["confusion"] as? [[Int]], own["confusion"] as? [[Int]])
        let meta = try json(try poseact(["model", "inspect", run + "/model.poseact.h5", "--json"]).stdout)
        let streams = try XCTUnwrap(meta["streams"] as? [[String: Any]])
        XCTAssertEqual(streams.map { $0["stream"] as? String }, ["bone", "joint_motion"])
        XCTAssertEqual(streams.map { ($0["architecture"] as? [String: Any])?["type"] as? String }, ["stgcn", "stgcn"])
        XCTAssertEqual(streams.map { $0["weight"] as? Double }, [2, 1])

        // The same streams as two array tasks (GNU parallel's PARALLEL_SEQ 1 and 2) into one
        // run folder, then --pool: the same ensemble, scored the same.
        let split = run + "-tasks"
        let flags = ["train", "--config", try streamsConfig("bone, joint_motion"), "--data", data, "--output", split]
        let first = try poseact(flags + ["--task", "auto/2"], environment: ["PARALLEL_SEQ": "1"])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: "\(split)/streams/bone/model.poseact.h5"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(split)/streams/joint_motion"), "the other task's stream")
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(split)/model.poseact.h5"), "no ensemble before --pool")
        let early = try poseact(flags + ["--pool"])
        XCTAssertNotEqual(early.status, 0)
        XCTAssertTrue(early.stderr.contains("joint_motion: not trained to the end"), early.stderr)
        // A stream trained with other flags (here fewer epochs) is not pooled.
        XCTAssertEqual(try poseact(flags + ["--task", "auto/2", "--epochs", "1"], environment: ["PARALLEL_SEQ": "2"]).status, 0)
        let mixed = try poseact(flags + ["--pool"])
        XCTAssertNotEqual(mixed.status, 0)
        XCTAssertTrue(mixed.stderr.contains("joint_motion: holds a run with another config"), mixed.stderr)
        XCTAssertEqual(try poseact(flags + ["--task", "auto/2", "--restart"], environment: ["PARALLEL_SEQ": "2"]).status, 0)
        let pooled = try poseact(flags + ["--pool", "--json"])
        XCTAssertEqual(pooled.status, 0, pooled.stderr)
        let lines = try pooled.stdout.split(separator: "\n").map { try json(String($0)) }
        XCTAssertFalse(lines.isEmpty)
        XCTAssertFalse(lines.contains { $0["type"] as? String == "epoch" }, "pooling trains nothing: \(pooled.stdout)")
        let trainedLines = try trained.stdout.split(separator: "\n").map { try json(String($0)) }
        XCTAssertTrue(trainedLines.contains { $0["type"] as? String == "epoch" }, "(training prints its epochs: the check above can fail)")
        let pooledScore = try json(try poseact(["evaluate", split, "--data", data, "--split", "test", "--json"]).stdout)
        XCTAssertEqual(pooledScore["clip_accuracy"] as? NSNumber, scored["clip_accuracy"] as? NSNumber)
        XCTAssertEqual(pooledScore["confusion"] as? [[Int]], scored["confusion"] as? [[Int]])
        XCTAssertEqual(pooledScore["window_accuracy"] as? NSNumber, scored["window_accuracy"] as? NSNumber)
    }

    /// crossval as array tasks (`--task i/n`) into one folder, then `--pool`: refused while a
    /// run is missing (naming it) or with other flags, then the same summary as crossval's own.
    func testCrossvalTasksPoolToCrossvalsOwnSummary() throws {
        let data = try store()
        let cfg = try config(Self.small)
        func flags(_ out: String) -> [String] {
            ["crossval", "--config", cfg, "--data", data, "--epochs", "1", "--folds", "2", "--seeds", "1,2",
             "--output", Self.dir.appendingPathComponent(out).path]
        }
        let own = try poseact(flags("cv-one"))
        XCTAssertEqual(own.status, 0, own.stderr)
        let empty = try poseact(flags("cv-tasks") + ["--pool"])
        XCTAssertNotEqual(empty.status, 0)
        XCTAssertTrue(empty.stderr.contains("no task has run here"), empty.stderr)
        for i in 0..<3 { XCTAssertEqual(try poseact(flags("cv-tasks") + ["--task", "\(i)/4"]).status, 0) }
        let early = try poseact(flags("cv-tasks") + ["--pool"])
        XCTAssertNotEqual(early.status, 0)
        XCTAssertEqual(early.stderr.split(separator: "\n").count, 1, early.stderr)
        XCTAssertTrue(early.stderr.contains("1 of 4 runs are not finished (seed 2 fold 2)"), early.stderr)
        let other = try poseact(flags("cv-tasks") + ["--pool", "--batch-size", "7"])
        XCTAssertTrue(other.stderr.contains("another config or flags"), other.stderr)
        XCTAssertEqual(try poseact(flags("cv-tasks") + ["--task", "3/4"]).status, 0)
        let pooled = try poseact(flags("cv-tasks") + ["--pool"])
        XCTAssertEqual(pooled.status, 0, pooled.stderr)
        let summary = { (out: String) in try String(contentsOf: Self.dir.appendingPathComponent(out + "/crossval.json"), encoding: .utf8) }
        XCTAssertEqual(try summary("cv-tasks"), try summary("cv-one"))
        XCTAssertEqual(pooled.stdout, own.stdout)

        // A run someone changed (a label the data has not, a million clips) is not pooled.
        let report = Self.dir.appendingPathComponent("cv-tasks/seed-2/fold-1/evaluation.json")
        let honest = try String(contentsOf: report, encoding: .utf8)
        var tampered = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(honest.utf8)) as? [String: Any])
        tampered["clips"] = 1_000_000
        try JSONSerialization.data(withJSONObject: tampered).write(to: report)
        let million = try poseact(flags("cv-tasks") + ["--pool"])
        XCTAssertNotEqual(million.status, 0)
        XCTAssertTrue(million.stderr.contains("seed 2 fold 1:") && million.stderr.contains("1000000 clips scored, but the fold holds"), million.stderr)
        try honest.write(to: report, atomically: true, encoding: .utf8)
        XCTAssertEqual(try poseact(flags("cv-tasks") + ["--pool"]).status, 0)

        // Checked before any training: more folds than the clips make, a seed given twice.
        let tooMany = try poseact(["crossval", "--config", cfg, "--data", data, "--epochs", "1", "--folds", "100", "--seeds", "1",
                                   "--output", Self.dir.appendingPathComponent("cv-100").path])
        XCTAssertNotEqual(tooMany.status, 0)
        XCTAssertTrue(tooMany.stderr.contains("would hold no clip") && tooMany.stderr.contains("give fewer --folds"), tooMany.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: Self.dir.appendingPathComponent("cv-100/seed-1").path), "nothing trained")
        let twice = try poseact(["crossval", "--config", cfg, "--data", data, "--seeds", "1,1", "--output", Self.dir.appendingPathComponent("cv-11").path])
        XCTAssertTrue(twice.stderr.contains("seed 1 is given twice"), twice.stderr)
        // A typo's billion folds, or a plan of more runs than anyone trains, is refused before
        // the plan (a list of every run) is made.
        let billion = try poseact(["crossval", "--config", cfg, "--data", data, "--folds", "1000000000",
                                   "--output", Self.dir.appendingPathComponent("cv-billion").path])
        XCTAssertTrue(billion.stderr.contains("--folds must be in 2…1000"), billion.stderr)
        let runs = try poseact(["crossval", "--config", cfg, "--data", data, "--folds", "1000", "--seeds", (1...11).map(String.init).joined(separator: ","),
                                "--output", Self.dir.appendingPathComponent("cv-runs").path])
        XCTAssertTrue(runs.stderr.contains("11 seeds × 1000 folds is 11000 runs; at most 10000"), runs.stderr)
    }

    /// kill -9 during training, then the same command: it resumes after the last finished
    /// epoch and ends with every epoch recorded once.
    func testKilledTrainingResumes() throws {
        let data = try store()
        let run = Self.dir.appendingPathComponent("run-kill-\(UUID().uuidString.prefix(6))").path
        let cfg = try config(Self.small.replacingOccurrences(of: "epochs: 4", with: "epochs: 30"))
        let arguments = ["train", "--config", cfg, "--data", data, "--output", run]
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out; process.standardError = FileHandle.nullDevice
        try process.run()
        // Killed as soon as it says epoch 1 is done (its checkpoint is written before the line).
        var printed = ""
        while !printed.contains("epoch 1/30") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            printed += String(decoding: chunk, as: UTF8.self)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertTrue(printed.contains("epoch 1/30"), printed)
        let again = try poseact(arguments + ["--epochs", "30"])
        XCTAssertEqual(again.status, 0, again.stderr)
        let resumed = again.stderr.components(separatedBy: "resuming after epoch ").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) }
        XCTAssertNotNil(resumed, again.stderr)
        XCTAssertTrue((1..<30).contains(resumed ?? 0), "killed after epoch 1, before the end: \(again.stderr)")
        let rows = try String(contentsOfFile: run + "/metrics.csv", encoding: .utf8).split(separator: "\n").dropFirst()
        let epochs = rows.map { Int($0.split(separator: ",")[0])! }
        XCTAssertEqual(epochs, Array(1...epochs.count), "each epoch once, in order")
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: run).allSatisfy { !$0.contains(".tmp") }, "no temp file left")
    }

    /// Bad configs and data: one clear line, exit 1, and no run folder.
    /// A run from a backbone says so, trains with the backbone held (`freeze_epochs`), and
    /// its config names the backbone.
    func testARunStartsFromABackbone() throws {
        let backbone = try trainedRun() + "/model.poseact.h5"
        let run = Self.dir.appendingPathComponent("run-backbone").path
        let yaml = Self.small.replacingOccurrences(of: "epochs: 4", with: "epochs: 1\n  freeze_epochs: 1")
            .replacingOccurrences(of: "channels: 16", with: "channels: 16\n  pretrained: \(backbone)")
        let tuned = try poseact(["train", "--config", try config(yaml, name: "tuned"), "--data", try store(), "--output", run, "--restart"])
        XCTAssertEqual(tuned.status, 0, tuned.stderr)
        XCTAssertTrue(tuned.stderr.contains("from \(backbone) (its net less the head)"), tuned.stderr)
        let record = try String(contentsOfFile: run + "/config.yaml", encoding: .utf8)
        XCTAssertTrue(record.contains("pretrained: \(backbone)"), record)
    }

    /// A label the model never saw, from five clips: the result knows it beside its own, runs
    /// in `evaluate` and exports to ONNX; what cannot be done is said in one line.
    func testEnrollAddsALabel() throws {
        let run = try trainedRun()
        let store = try oneLabelStore("bench_press", train: 5, test: 4)
        let enrolled = Self.dir.appendingPathComponent("enrolled.poseact.h5").path
        let r = try poseact(["enroll", run, "--data", store, "--output", enrolled, "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let summary = try json(r.stdout)
        XCTAssertEqual(summary["labels"] as? [String], Self.labels + ["bench_press"])
        XCTAssertEqual((summary["clips"] as? [String: Int])?["bench_press"], 5)
        let evaluated = try poseact(["evaluate", enrolled, "--data", store, "--json"])
        XCTAssertEqual(evaluated.status, 0, evaluated.stderr)
        XCTAssertEqual((try json(evaluated.stdout)["labels"] as? [String])?.count, 4)
        let onnx = Self.dir.appendingPathComponent("enrolled.onnx").path
        XCTAssertEqual(try poseact(["export", enrolled, "--output", onnx]).status, 0)
        // Enrolled again, the label gains windows; the record keeps both calls.
        let again = Self.dir.appendingPathComponent("again.poseact.h5").path
        XCTAssertEqual(try poseact(["enroll", enrolled, "--data", store, "--output", again]).status, 0)
        let inspected = try poseact(["model", "inspect", again, "--json"])
        XCTAssertEqual(inspected.status, 0, inspected.stderr)
        XCTAssertEqual(inspected.stdout.components(separatedBy: "bench_press.h5").count - 1, 2, "two enrolments in the record")

        let out = Self.dir.appendingPathComponent("refused.poseact.h5").path
        try assertOneLineError(["enroll", run, "--data", store, "--output", out, "--only"], mentions: ["one label ('bench_press')", "needs two"])
        try assertOneLineError(["enroll", run, "--data", store, "--output", out, "--labels", "curl"], mentions: ["no windows of the label 'curl'"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    /// `dataset inspect` says where train would start: the slice's 12 clips a label are
    /// enough for random weights; 5 a label (a store of its first 5) are few, and the
    /// built-in config has a shipped backbone; a config of another net has none.
    func testInspectSaysWhereTrainWouldStart() throws {
        let enough = try poseact(["dataset", "inspect", try store(), "--json"])
        XCTAssertEqual(enough.status, 0, enough.stderr)
        let line = try XCTUnwrap(try json(enough.stdout)["pretrained"] as? String)
        XCTAssertTrue(line.hasPrefix("train (the built-in config): from random weights") && line.contains("12 training clips, 10 or more"), line)
        let few = try oneLabelStore("pullup", train: 5, test: 0), five = Self.dir.appendingPathComponent("five.h5").path
        XCTAssertEqual(try poseact(["merge", few, try oneLabelStore("squat", train: 5, test: 0), "--output", five]).status, 0)
        let builtIn = try poseact(["dataset", "inspect", five])
        XCTAssertTrue(builtIn.stdout.contains("train (the built-in config): from the shipped backbone ")
                      && builtIn.stdout.contains("penn-action.poseact.h5") && builtIn.stdout.contains("has 5 training clips, fewer than 10"), builtIn.stdout)
        let small = try poseact(["dataset", "inspect", five, "--config", try config(Self.small)])
        XCTAssertEqual(small.status, 0, small.stderr)
        XCTAssertTrue(small.stdout.contains("from random weights") && small.stdout.contains("no shipped backbone has this net and input"), small.stdout)
    }

    func testBadConfigsFailBeforeAnyWork() throws {
        let data = try store()
        let run = Self.dir.appendingPathComponent("bad-run").path
        func check(_ yaml: String, _ words: [String], data d: String? = nil) throws {
            try assertOneLineError(["train", "--config", try config(yaml), "--data", d ?? data, "--output", run], mentions: words)
            XCTAssertFalse(FileManager.default.fileExists(atPath: run), "no run folder for \(yaml)")
        }
        try check("model:\n  chanels: 16\n", ["unknown key 'model.chanels'", "did you mean 'channels'", ":2:"])
        try check("preprocessing:\n  window: long\n", ["preprocessing.window must be a whole number, not 'long'"])
        try check("preprocessing:\n  window: 5000\n", ["preprocessing.window: 5000 frames", "lower the window"])
        try check("training:\n  epochs: 0\n", ["training.epochs must be in 1…100000 (got 0)"])
        // A backbone of another net, or a file that is none: refused before the run folder.
        let backbone = try trainedRun() + "/model.poseact.h5"
        try check(Self.small.replacingOccurrences(of: "channels: 16", with: "channels: 32\n  pretrained: \(backbone)"),
                  ["model.pretrained \(backbone)", "is not this run's"])
        try check("model:\n  pretrained: \(data)\n", ["not a poseact weights file"])
        // One label only: a store of squats alone.
        let one = Self.dir.appendingPathComponent("one.h5").path
        let csv = Self.dir.appendingPathComponent("slice.csv").path
        let lines = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n")
        let squats = [String(lines[0])] + lines.filter { $0.contains(",squat,") }.map(String.init)
        let oneCSV = Self.dir.appendingPathComponent("one.csv").path
        try Data((squats.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: oneCSV))
        XCTAssertEqual(try poseact(["import", oneCSV, "--output", one]).status, 0)
        try check("", ["one label only ('squat')", "at least two"], data: one)
        try assertOneLineError(["train", "--output", run], mentions: ["no data", "--data"])
        try assertOneLineError(["evaluate", Self.dir.appendingPathComponent("none.poseact.h5").path, "--data", data], mentions: ["no such file"])
        try assertOneLineError(["evaluate", data, "--data", data], mentions: ["not a poseact weights file"])
    }

    func testBenchTrainPrintsJSON() throws {
        let data = try store()
        let r = try poseact(["bench", "train", "--config", try config(Self.small), "--data", data, "--epochs", "2"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let j = try json(r.stdout)
        XCTAssertGreaterThan(j["seconds_per_epoch"] as? Double ?? 0, 0)
        XCTAssertGreaterThan(j["windows_per_second"] as? Double ?? 0, 0)
        XCTAssertEqual(j["epochs"] as? Int, 2)
    }
}
