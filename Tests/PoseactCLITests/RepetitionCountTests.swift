import Foundation
import Keypoints
import Movement
import TestData
import XCTest

/// The repetition counter on real push-ups: the 45 clips of `shared/data/pushups/test`,
/// extracted by `poseact extract`, against the counts made by looking at their frames
/// (`datasets/pushups-test-repetitions.csv`). Issue 20's targets: mean absolute error at
/// most 0.5 a clip and at least 90 % of the clips within one. Measured when this test was
/// written: 0.267 and 95.6 % (82 % exact); the margins are what the issue allows, not
/// slack around a lucky run (extraction and counting are deterministic).
final class RepetitionCountTests: PoseactCLITestCase {
    func testCountsOnThePushUpTestClips() throws {
        _ = try TestData.model("pose_detection.tflite")
        let truthURL = TestData.packageRoot.appendingPathComponent("datasets/pushups-test-repetitions.csv")
        var truth: [String: Int] = [:]
        for line in try String(contentsOf: truthURL, encoding: .utf8).split(separator: "\n").dropFirst() {
            let fields = line.split(separator: ",", maxSplits: 3, omittingEmptySubsequences: false)
            truth[String(fields[0])] = Int(fields[1])
        }
        XCTAssertEqual(truth.count, 45)

        let store = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-reps-\(getpid()).h5").path
        defer { try? FileManager.default.removeItem(atPath: store) }
        let source = try TestData.shared("data/pushups/test").path
        let extract = try poseact(["extract", source, "--output", store, "--models", Self.modelsDir.path])
        XCTAssertEqual(extract.status, 0, extract.stderr)

        let clips = try KeypointStore(path: store)
        var errors: [Int] = []
        var report: [String] = []
        for entry in clips.entries {
            let clip = try clips.read(entry.id)
            let joints = clip.jointNames.count
            let aspect = Float(clip.width) / Float(clip.height)   // x and y in the same unit
            let counter = RepetitionCounter()
            for f in clip.times.indices {
                var frame = [Float](repeating: .nan, count: 2 * joints)
                for j in 0..<joints {
                    frame[2 * j] = clip.keypoints[(f * joints + j) * 3] * aspect
                    frame[2 * j + 1] = clip.keypoints[(f * joints + j) * 3 + 1]
                }
                counter.push(joints: frame, time: clip.times[f])
            }
            let name = entry.source.components(separatedBy: "pushups/test/").last ?? entry.source
            let expected = try XCTUnwrap(truth[name], "no hand count for \(name)")
            errors.append(counter.count - expected)
            if counter.count != expected { report.append("\(name): \(counter.count) counted, \(expected) by hand") }
        }
        XCTAssertEqual(errors.count, 45)
        let mae = Double(errors.map(abs).reduce(0, +)) / Double(errors.count)
        let withinOne = Double(errors.filter { abs($0) <= 1 }.count) / Double(errors.count)
        print(String(format: "repetitions on the push-up test clips: mean absolute error %.3f, within one %.1f %%, exact %.1f %%",
                     mae, withinOne * 100, Double(errors.filter { $0 == 0 }.count) / Double(errors.count) * 100))
        print(report.joined(separator: "\n"))
        XCTAssertLessThanOrEqual(mae, 0.5, report.joined(separator: "; "))
        XCTAssertGreaterThanOrEqual(withinOne, 0.9, report.joined(separator: "; "))
    }
}
