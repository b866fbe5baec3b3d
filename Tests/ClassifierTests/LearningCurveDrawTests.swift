import Foundation
import Keypoints
import TestData
import TrainingFixtures
import XCTest
@testable import Classifier

/// `data.clips_per_label` and `data.draw`: a learning curve's training clips.
final class LearningCurveDrawTests: XCTestCase {
    /// n groups per label, the same for the same draw, others for another draw, all of a
    /// label when it has fewer; clips of one source video go together.
    func testDrawKeepsGroupsPerLabel() {
        var labelOf: [String: String] = [:], groupOf: [String: String] = [:]
        for i in 0..<30 { labelOf["a\(i)"] = "a"; groupOf["a\(i)"] = "video\(i / 2)" }
        for i in 0..<3 { labelOf["b\(i)"] = "b" }
        let one = TrainingData.drawGroups(labelOf: labelOf, groupOf: groupOf, perLabel: 5, draw: 1)
        XCTAssertEqual(one.filter { $0.hasPrefix("video") }.count, 5)
        XCTAssertEqual(one.filter { $0.hasPrefix("b") }.count, 3)
        XCTAssertEqual(one, TrainingData.drawGroups(labelOf: labelOf, groupOf: groupOf, perLabel: 5, draw: 1))
        XCTAssertNotEqual(one, TrainingData.drawGroups(labelOf: labelOf, groupOf: groupOf, perLabel: 5, draw: 2))
    }

    /// A store imported from a keypoint CSV with a time column (what `dataset export`
    /// writes): each clip is its own group, so the draw takes n clips a label and validation
    /// gets its share. (They were one group, the CSV: the draw took every clip, validation none.)
    func testImportedClipsAreTheirOwnGroups() throws {
        let store = temporaryPath("slice.h5", prefix: "poseact-draw"), csv = temporaryPath("slice.csv", prefix: "poseact-draw")
        let imported = temporaryPath("imported.h5", prefix: "poseact-draw")
        try PennSlice.store(at: store)
        try KeypointCSV.export(try KeypointStore(path: store), to: csv)
        let writer = try KeypointStoreWriter(path: imported)
        for clip in try KeypointCSV.read(csv).clips { try writer.append(clip) }
        try writer.finish()
        let entries = try KeypointStore(path: imported).entries
        XCTAssertTrue(entries.allSatisfy { $0.isImported && $0.start != nil }, "imported, with spans from the time column")
        var config = PennSlice.config(epochs: 1)
        config.data.validationShare = 0
        config.data.clipsPerLabel = 3
        let drawn = try TrainingData.load(path: imported, config: config)
        for label in PennSlice.labels {
            XCTAssertEqual(Set(drawn.train.filter { $0.label == label }.map(\.clipID)).count, 3, label)
        }
        config.data.clipsPerLabel = 0
        config.data.validationShare = 0.2
        let validated = try TrainingData.load(path: imported, config: config)
        XCTAssertEqual(Set(validated.validation.map(\.clipID)).count, 3 * 2, "a fifth of 12 clips a label, rounded")
    }
}
