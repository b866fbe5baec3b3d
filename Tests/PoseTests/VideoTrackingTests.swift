import Foundation
import Media
import Pose
import XCTest

/// The tracking pipeline on real push-up videos: a slice of the test split covering its
/// formats (640×360, 320×240 with burnt-in bars, 1920×1080, 4:4:4 chroma). The full split
/// (45 videos, 7,224 frames) is measured by hand with `poseact pose` (README): 99.8 %.
final class VideoTrackingTests: XCTestCase {
    func testPushupVideosHaveAPersonInNearlyEveryFrame() throws {
        let fixtures = FixturePipelineTests.fixtures
        let data = fixtures.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("data/pushups/test")
        let det = FixturePipelineTests.modelsDir.appendingPathComponent("pose_detection.tflite")
        let lm = FixturePipelineTests.modelsDir.appendingPathComponent("pose_landmark_full.tflite")
        for url in [data, det, lm] where !FileManager.default.fileExists(atPath: url.path) { throw XCTSkip("\(url.path) not found") }
        let pipeline = try PosePipeline(detectorPath: det.path, landmarkPath: lm.path, options: .init(maxPeople: 1))
        var frames = 0, found = 0
        for clip in ["correct/correct39.mp4", "wrong/wrong64.mp4", "correct/correct121.mp4", "wrong/wrong13.mp4"] {
            pipeline.reset()
            let reader = try VideoReader(data.appendingPathComponent(clip).path)
            var ids = Set<Int>(), clipFrames = 0, clipFound = 0
            while clipFrames < 60, let frame = try reader.next() {
                let persons = pipeline.process(frame: frame)
                clipFrames += 1
                if let p = persons.first { clipFound += 1; ids.insert(p.id); XCTAssertTrue(p.isProminent) }
            }
            print("\(clip): a person in \(clipFound) of \(clipFrames) frames, ids \(ids.sorted())")
            XCTAssertLessThanOrEqual(ids.count, 2, "\(clip): the one person should keep their id")
            frames += clipFrames; found += clipFound
        }
        // The bar: a person found in ≥ 95 % of the frames.
        XCTAssertGreaterThanOrEqual(Double(found) / Double(frames), 0.95)
        // Tracking mode: the detector ran only to (re)acquire, not on every frame.
        XCTAssertLessThan(pipeline.times.detectorRuns, 10)
    }
}
