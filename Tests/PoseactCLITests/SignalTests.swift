import Foundation
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
}
