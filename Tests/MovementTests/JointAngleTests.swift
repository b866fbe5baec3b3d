import Movement
import XCTest

final class JointAngleTests: XCTestCase {
    let names = ["left_shoulder", "left_elbow", "left_wrist", "right_shoulder", "left_hip", "right_hip", "left_ankle", "right_ankle"]

    func testAnglesByName() throws {
        // Shoulder (0, 0), elbow (1, 0), wrist (1, 1): 90° at the elbow.
        var joints = [Float](repeating: .nan, count: 2 * names.count)
        func set(_ name: String, _ x: Float, _ y: Float) { let i = names.firstIndex(of: name)!; joints[2 * i] = x; joints[2 * i + 1] = y }
        set("left_shoulder", 0, 0); set("left_elbow", 1, 0); set("left_wrist", 1, 1)
        XCTAssertEqual(try JointAngle.named("left_elbow", jointNames: names).degrees(joints), 90, accuracy: 1e-4)
        set("left_wrist", 2, 0)
        XCTAssertEqual(try JointAngle.named("left_elbow", jointNames: names).degrees(joints), 180, accuracy: 1e-3)
        XCTAssertEqual(try JointAngle.named("left_shoulder-left_elbow-left_wrist", jointNames: names).degrees(joints), 180, accuracy: 1e-3)
        // The body line through the middles: shoulders (0, 0)/(0, 2), hips (3, 1)±0, ankles (6, 0)/(6, 2): 180°; hips sagging by 1: less.
        set("right_shoulder", 0, 2); set("left_hip", 3, 0); set("right_hip", 3, 2); set("left_ankle", 6, 0); set("right_ankle", 6, 2)
        let line = try JointAngle.named("body_line", jointNames: names)
        XCTAssertEqual(line.degrees(joints), 180, accuracy: 1e-3)
        set("left_hip", 3, 1); set("right_hip", 3, 3)
        XCTAssertEqual(line.degrees(joints), Float(180 - 2 * atan(1.0 / 3) * 180 / .pi), accuracy: 1e-3)
        // A missing joint: NaN.
        set("left_wrist", .nan, .nan)
        XCTAssertTrue(try JointAngle.named("left_elbow", jointNames: names).degrees(joints).isNaN)
    }

    func testUnknownNamesSayWhatIsKnown() {
        XCTAssertThrowsError(try JointAngle.named("left_elbo", jointNames: names)) { error in
            XCTAssertTrue("\(error)".contains("left_elbow"), "\(error)")
        }
        XCTAssertThrowsError(try JointAngle.named("right_knee", jointNames: names)) { error in
            XCTAssertTrue("\(error)".contains("no joint \"right_knee\"") || "\(error)".contains("right_hip"), "\(error)")
        }
        // An end at the vertex is no angle (NaN in every frame): refused.
        XCTAssertThrowsError(try JointAngle.named("left_elbow-left_elbow-left_wrist", jointNames: names)) { error in
            XCTAssertTrue("\(error)".contains("the vertex left_elbow is also an end"), "\(error)")
        }
    }

    func testRangeOverARepetition() {
        let times = (0..<10).map { Double($0) * 0.1 }
        let values: [Float] = [170, 150, 120, 95, 90, 92, .nan, 130, 160, 171]
        let r = AngleRange.over(values, times: times, start: 0.05, end: 0.85, turn: 0.4)!
        XCTAssertEqual(r.minimum, 90); XCTAssertEqual(r.maximum, 160); XCTAssertEqual(r.rangeOfMotion, 70)
        XCTAssertEqual(r.atTurn, 90)
        XCTAssertNil(AngleRange.over([.nan], times: [0], start: 0, end: 1, turn: nil))
    }
}
