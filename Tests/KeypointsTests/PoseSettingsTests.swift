import Keypoints
import XCTest

/// The pose settings as a record, and as the words a store's estimator has always held.
final class PoseSettingsTests: XCTestCase {
    func testTheWordsAndTheRecordAgree() {
        let models = "blazepose-full mediapipe-0.10.14 (poseact)"
        for settings in [PoseSettings(), PoseSettings(mirrorAverage: true), PoseSettings(redetect: true, mirrored: true),
                         PoseSettings(mirrorAverage: true, redetect: true, mirrored: true)] {
            XCTAssertEqual(PoseSettings(estimator: settings.estimator(models: models)), settings)
        }
        XCTAssertEqual(PoseSettings(mirrorAverage: true, redetect: true).estimator(models: models), models + " mirror-average redetect")
        // Other tools' estimators hold no setting.
        XCTAssertEqual(PoseSettings(estimator: "import:coco"), PoseSettings())
        XCTAssertEqual(PoseSettings(estimator: "openpose"), PoseSettings())
    }
}
