import Foundation
import TestData
import TrainingFixtures
import XCTest

/// `notebooks-free-scripts/preprocess_reference.py`, the numpy-only preprocessing for apps
/// that run an exported model elsewhere: from the slice's keypoint CSV it makes the windows
/// `poseact windows` cuts from the imported store, within the 1e-5, for specs that
/// together take every option's every value (but the `world` feature, which a CSV cannot
/// give): both normalisations and centres, both torso lengths, both outside-frame rules,
/// the six 2-D features, frame rates above, below and at the data's, layouts with derived
/// joints (neck, root, head), and the thresholds at their edges. ONNXExportTests runs it on
/// every model it exports, reading the spec from the .onnx file.
final class PreprocessingReferenceTests: PennSliceTestCase {
    static let specs: [(name: String, preprocessing: String)] = [
        ("every feature, no normalisation", """
            normalization: none
            features: [position, confidence, presence, velocity, bone, bone_velocity]
            """),
        ("frame centre, median torso, outside missing, 25 fps", """
            centre: frame
            torso: median
            outside_frame: missing
            fps: 25
            window: 16
            stride: 4
            features: [position, velocity, bone_velocity]
            """),
        ("BlazePose's 33 at 60 fps", """
            joints: blazepose
            fps: 60
            window: 48
            stride: 16
            min_confidence: 0.5
            features: [position, presence, bone]
            """),
        ("all 36 at 7.5 fps, every window kept", """
            joints: all
            centre: frame
            fps: 7.5
            min_pose_share: 0
            features: [position, confidence, velocity]
            """),
        ("Penn's own joints, every joint needed, windows longer than clips", """
            joints: [head, left_shoulder, right_shoulder, left_elbow, right_elbow, left_wrist, right_wrist,
                     left_hip, right_hip, left_knee, right_knee, left_ankle, right_ankle]
            min_joint_share: 1
            window: 150
            stride: 50
            min_pose_share: 0.3
            torso: median
            features: [position, bone, bone_velocity]
            """),
        ("a stride longer than the window", """
            window: 10
            stride: 25
            min_joint_share: 0.9
            features: [position, confidence]
            """),
    ]

    func testReferenceMakesPoseactsWindows() throws {
        let py = try python()
        let store = try store(), csv = Self.dir.appendingPathComponent("slice.csv").path
        let script = TestData.packageRoot.appendingPathComponent("notebooks-free-scripts/preprocess_reference.py").path
        for (i, spec) in Self.specs.enumerated() {
            let indented = spec.preprocessing.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n")
            let cfg = try config("preprocessing:\n\(indented)\n", name: "reference-\(i)")
            let windows = Self.dir.appendingPathComponent("reference-\(i).h5").path
            let cut = try poseact(["windows", store, "--config", cfg, "--output", windows])
            XCTAssertEqual(cut.status, 0, "\(spec.name): \(cut.stderr)")
            // The windows file carries the spec poseact used; the reference reads it there.
            let compared = try external(py, [script, csv, windows, "--compare", windows])
            XCTAssertEqual(compared.status, 0, "\(spec.name): \(compared.stdout)")
            let result = try json(compared.stdout)
            print("preprocessing reference, \(spec.name): \(result)")
            XCTAssertGreaterThanOrEqual(result["windows"] as? Int ?? 0, 5, spec.name)
            XCTAssertLessThanOrEqual(result["max_abs_difference"] as? Double ?? 1, 1e-5, spec.name)
            XCTAssertEqual(result["mask_equal"] as? Bool, true, spec.name)
            XCTAssertEqual(result["same_order"] as? Bool, true, spec.name)
            XCTAssertEqual(result["labels_splits_equal"] as? Bool, true, spec.name)
        }
    }
}
