import Foundation
import ReaderFuzzing
import TestData
import XCTest

/// Every reader of files from strangers through the fuzzing campaign CI also runs under
/// AddressSanitizer (notebooks-free-scripts/fuzz.sh), here a few cases each in the suite's
/// own build: each changed file is read or refused in one line. A crash fails the suite.
final class ReaderCampaignTests: XCTestCase {
    func testEveryReaderReadsOrRefusesInOneLine() throws {
        let seeds = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-seeds-\(UUID().uuidString)").path
        let work = seeds + "-work"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: seeds); try? FileManager.default.removeItem(atPath: work) }
        try Seeds.make(in: seeds, keypointCSV: try TestData.shared("data/penn-action/keypoints.csv").path,
                       samples: TestData.packageRoot.appendingPathComponent("Tests/KeypointsTests/Samples").path,
                       configYAML: TestData.packageRoot.appendingPathComponent("configs/penn-action.yaml").path,
                       models: try TestData.model("pose_landmark_full.tflite").deletingLastPathComponent().path)
        let readers = try Readers.all(seeds: seeds)
        XCTAssertEqual(Set(readers.map(\.reader.name)),
                       ["store", "weights", "checkpoint", "windows", "keypoint-csv", "annotations-csv", "annotations-json",
                        "config-yaml", "coco", "mediapipe", "openpose", "ntu", "throws-truth", "studio-proposals", "studio-poses", "cache-entry",
                        "tflite-pose_detection", "tflite-pose_landmark_full"])
        var refused = 0
        for (index, (reader, seed)) in readers.enumerated() {
            // The seed itself is read: the cases start from a good file.
            XCTAssertNoThrow(try reader.read(seed), reader.name)
            let result = try Campaign.run(reader, seedFile: seed, iterations: 10, seed: UInt64(34 + index), workDir: work)
            print("fuzz \(reader.name): \(result.summary)")
            XCTAssertEqual(result.violations, [], reader.name)
            refused += result.refused
        }
        // 10 cases each (fuzz.sh runs 100 under AddressSanitizer); 25 each refused 65 % (293 of 450).
        XCTAssertGreaterThan(refused, readers.count * 3, "the changes reach the readers' checks")
    }
}
