import Basics
import Classifier
import Keypoints
import XCTest

/// What `live` poses with comes from the weights file's record, or, in a file written before
/// the record existed, from its estimator's words.
final class PoseSettingsRecordTests: XCTestCase {
    func testTheRecordOrAnOlderFilesWords() throws {
        let side = #"{"clips":1,"windows":1,"windows_per_label":{"a":1}}"#
        let base = #"{"path":"s.h5","train":\#(side),"validation":\#(side),"test":\#(side),"unseen_test_labels":[]"#
        let words = #","estimator":"blazepose-full mediapipe-0.10.14 (poseact) redetect""#
        let record = try JSONLines.decode(DataSummary.self, from: base + words + #","pose":{"mirror_average":true,"mirrored":false,"redetect":false}}"#)
        XCTAssertEqual(record.poseSettings, PoseSettings(mirrorAverage: true), "the record wins")
        XCTAssertTrue(JSONLines.encode(record).contains(#""pose":{"mirror_average":true,"mirrored":false,"redetect":false}"#))
        XCTAssertEqual(try JSONLines.decode(DataSummary.self, from: base + words + "}").poseSettings, PoseSettings(redetect: true))
        XCTAssertNil(try JSONLines.decode(DataSummary.self, from: base + "}").poseSettings)
    }
}
