import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TrainingFixtures
import XCTest

/// Signals reach every process poseact starts: crossval's `train` runs stop with it, and a
/// second crossval on the same folder is not refused by their locks.
final class SignalTests: PennSliceTestCase {
    /// The pids whose parent is `parent` (from /proc), zombies left out.
    func children(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(pid_t.init).filter { pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 2 && fields[0] != "Z" && pid_t(fields[1]) == parent
        }
    }

    /// Alive: exists and is not a zombie (a dead child of a container's init may stay one).
    func alive(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(after: close)...].hasPrefix(" Z")
    }

    /// Waits up to `seconds` for `condition` (polled every 0.1 s).
    func wait(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            usleep(100_000)
        }
        return condition()
    }

    /// A crossval of two folds whose runs train long enough to be interrupted, started in the
    /// background once both runs hold their run folder's lock: the process and its children.
    func startCrossval(_ output: String) throws -> (Process, [pid_t]) {
        let store = try store(), config = try config(Self.small, name: "signals")
        let p = Process()
        p.executableURL = binary
        p.arguments = ["crossval", "--config", config, "--data", store, "--epochs", "100000", "--folds", "2", "--seeds", "1",
                       "--jobs", "2", "--output", output]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        // (Generous: the runs load the store first, on a machine shared with other builds.)
        let started = wait(120) {
            children(of: p.processIdentifier).count == 2
                && (1...2).allSatisfy { FileManager.default.fileExists(atPath: "\(output)/seed-1/fold-\($0)/.lock") }
        }
        let pids = children(of: p.processIdentifier)
        if !started { p.terminate(); for pid in pids { kill(pid, SIGKILL) } }
        XCTAssertTrue(started, "the two train runs did not start")
        return (p, pids)
    }

    func testCtrlCStopsCrossvalsRunsAndASecondCrossvalRuns() throws {
        let output = Self.dir.appendingPathComponent("signals-int").path
        let (p, pids) = try startCrossval(output)
        guard pids.count == 2 else { return }
        kill(p.processIdentifier, SIGINT)
        // Within 10 s (they die at once; the margin is for a loaded machine).
        let stopped = wait(10) { pids.allSatisfy { !alive($0) } && !p.isRunning }
        for pid in pids where alive(pid) { kill(pid, SIGKILL) }
        XCTAssertTrue(stopped, "train runs still alive after SIGINT to crossval: \(pids.filter(alive))")
        if !p.isRunning { XCTAssertNotEqual(p.terminationStatus, 0) } else { p.terminate() }

        // The same folder again (one epoch: the runs resume the interrupted ones' config).
        let again = try poseact(["crossval", "--config", try config(Self.small, name: "signals"), "--data", try store(),
                                 "--epochs", "1", "--folds", "2", "--seeds", "1", "--jobs", "2", "--output", output])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertFalse(again.stderr.contains("in use by another poseact"), again.stderr)
    }

    func testKilledCrossvalTakesItsRunsWithIt() throws {
        let output = Self.dir.appendingPathComponent("signals-kill").path
        let (p, pids) = try startCrossval(output)
        guard pids.count == 2 else { return }
        kill(p.processIdentifier, SIGKILL)
        let stopped = wait(10) { pids.allSatisfy { !alive($0) } }
        for pid in pids where alive(pid) { kill(pid, SIGKILL) }
        XCTAssertTrue(stopped, "train runs outlived crossval's kill -9")
    }

    /// `poseact studio` with a training run under way: SIGTERM stops the run with the studio
    /// (the studio waits for it and ends), and kill -9 of the studio takes the run with it.
    func testTheStudiosCommandsStopWithIt() throws {
        for signal in [SIGTERM, SIGKILL] {
            let project = Self.dir.appendingPathComponent("studio-signal-\(signal)").path, recipes = project + "-recipes"
            try? FileManager.default.removeItem(atPath: project)
            try FileManager.default.createDirectory(atPath: project, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: recipes, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: try store(), toPath: project + "/keypoints.h5")
            try FileManager.default.copyItem(atPath: try config(Self.small, name: "signals"), toPath: recipes + "/long.yaml")
            let p = Process()
            p.executableURL = binary
            p.arguments = ["studio", project, "--serve", "0", "--recipes", recipes]
            let err = Pipe()
            p.standardError = err
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            // "studio: http://127.0.0.1:PORT/ …", its first line.
            var line = Data(), byte = Data()
            repeat { byte = err.fileHandleForReading.readData(ofLength: 1); line += byte } while !byte.isEmpty && byte != Data([10])
            let text = String(decoding: line, as: UTF8.self)
            let port = try XCTUnwrap(text.components(separatedBy: "127.0.0.1:").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) }, text)
            let token = try XCTUnwrap(text.components(separatedBy: "token=").dropFirst().first.map { String($0.prefix { $0.isHexDigit }) }, text)
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/api/train?token=\(token)")!)
            request.httpMethod = "POST"
            request.httpBody = Data(#"{"recipe": "long", "name": "r", "epochs": 100000}"#.utf8)
            let answered = DispatchSemaphore(value: 0)
            URLSession.shared.dataTask(with: request) { _, _, _ in answered.signal() }.resume()
            answered.wait()
            let started = wait(60) { FileManager.default.fileExists(atPath: project + "/runs/r/checkpoint.h5") }
            let runs = children(of: p.processIdentifier)
            XCTAssertTrue(started && runs.count == 1, "the studio's train run did not start (\(runs))")
            kill(p.processIdentifier, signal)
            let stopped = wait(15) { runs.allSatisfy { !alive($0) } }
            for pid in runs where alive(pid) { kill(pid, SIGKILL) }
            XCTAssertTrue(stopped, "the train run outlived the studio's \(signal == SIGTERM ? "SIGTERM" : "kill -9")")
            XCTAssertTrue(wait(15) { !p.isRunning }, "the studio ended")
            if signal == SIGTERM { XCTAssertEqual(p.terminationStatus, 0) }
        }
    }
}
