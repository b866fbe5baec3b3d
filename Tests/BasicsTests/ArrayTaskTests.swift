import Basics
import XCTest

/// `--shard auto` / `--task auto`: the index and count each scheduler's array tasks see.
final class ArrayTaskTests: XCTestCase {
    func resolve(_ text: String, _ env: [String: String]) throws -> ArrayTask {
        try ArrayTask.resolve(text, flag: "--shard", environment: env)
    }

    func testExplicitShareIsTakenAsGiven() throws {
        XCTAssertEqual(try resolve("3/8", ["SLURM_ARRAY_TASK_ID": "5"]), ArrayTask(index: 3, count: 8))
        for bad in ["8/8", "-1/4", "1/0", "auto/0", "auto/x", "2", "a/b", "1/2/3", ""] {
            XCTAssertFalse(ArrayTask.isWellFormed(bad), bad)
        }
    }

    /// `sbatch --array=0-7`, `--array=1-8` and `--array=0-14:2` are all eight tasks, 0…7.
    func testSlurmArraysOfAnyStartAndStep() throws {
        XCTAssertEqual(try resolve("auto", ["SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "7",
                                            "SLURM_ARRAY_TASK_COUNT": "8"]).index, 0)
        let fromOne = try resolve("auto", ["SLURM_ARRAY_TASK_ID": "8", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "8",
                                           "SLURM_ARRAY_TASK_COUNT": "8"])
        XCTAssertEqual([fromOne.index, fromOne.count], [7, 8])
        let stepped = try resolve("auto", ["SLURM_ARRAY_TASK_ID": "6", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "14",
                                           "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "8"])
        XCTAssertEqual([stepped.index, stepped.count], [3, 8])
        // Without COUNT (older Slurm), MAX gives it.
        let noCount = try resolve("auto", ["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "4"])
        XCTAssertEqual([noCount.index, noCount.count], [2, 5])
        XCTAssertEqual(noCount.origin, "SLURM_ARRAY_TASK_ID=2")
    }

    func testSlurmListsAndDisagreementsAreRefusedWithWhatToDo() {
        // --array=1,3,7: three tasks, not evenly spaced.
        XCTAssertThrowsError(try resolve("auto", ["SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "7",
                                                  "SLURM_ARRAY_TASK_COUNT": "3"])) {
            XCTAssertTrue("\($0)".contains("not evenly spaced"), "\($0)")
        }
        XCTAssertThrowsError(try resolve("auto/4", ["SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "8"])) {
            XCTAssertTrue("\($0)".contains("8 tasks"), "\($0)")
        }
        XCTAssertThrowsError(try resolve("auto", ["SLURM_ARRAY_TASK_ID": "x"])) {
            XCTAssertTrue("\($0)".contains("not a whole number"), "\($0)")
        }
    }

    func testKubernetesAndParallelNeedTheCount() throws {
        XCTAssertEqual(try resolve("auto/8", ["JOB_COMPLETION_INDEX": "7"]), ArrayTask(index: 7, count: 8, origin: "JOB_COMPLETION_INDEX=7"))
        XCTAssertEqual(try resolve("auto/8", ["PARALLEL_SEQ": "1"]).index, 0)   // GNU parallel counts from 1
        XCTAssertEqual(try resolve("auto/8", ["PARALLEL_SEQ": "8"]).index, 7)
        XCTAssertThrowsError(try resolve("auto", ["JOB_COMPLETION_INDEX": "2"])) {
            XCTAssertTrue("\($0)".contains("auto/N"), "\($0)")
        }
        XCTAssertThrowsError(try resolve("auto/8", ["PARALLEL_SEQ": "9"])) {
            XCTAssertTrue("\($0)".contains("past the last"), "\($0)")
        }
        XCTAssertThrowsError(try resolve("auto/8", ["PARALLEL_SEQ": "0"])) {
            XCTAssertEqual("\($0)", "--shard auto/8: PARALLEL_SEQ=0, but it counts from 1")
        }
        XCTAssertThrowsError(try resolve("auto", [:])) {
            XCTAssertTrue("\($0)".contains("no array task in the environment"), "\($0)")
        }
    }

    /// Numbers that would overflow the count's arithmetic are one line, not a trap.
    func testHugeNumbersAreALineNotATrap() {
        for (name, value) in [("SLURM_ARRAY_TASK_MAX", "9223372036854775807"), ("SLURM_ARRAY_TASK_STEP", "9223372036854775807"),
                              ("SLURM_ARRAY_TASK_ID", "4611686018427387904")] {
            var env = ["SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MIN": "0"]
            env[name] = value
            XCTAssertThrowsError(try resolve("auto", env)) {
                XCTAssertEqual("\($0)", "--shard auto: \(name)=\(value) is not a whole number in 0…100000000")
            }
        }
    }

    /// Every item is some task's, and only one task's.
    func testSharesPartitionTheItems() {
        let items = Array(0..<23)
        let shares = (0..<8).map { ArrayTask(index: $0, count: 8).share(items) }
        XCTAssertEqual(shares.flatMap { $0 }.sorted(), items)
        XCTAssertEqual(shares.map(\.count), [3, 3, 3, 3, 3, 3, 3, 2])
    }
}
