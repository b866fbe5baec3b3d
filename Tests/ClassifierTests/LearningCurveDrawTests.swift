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
}
