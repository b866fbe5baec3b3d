import XCTest
@testable import Keypoints
@testable import KeypointWindows

final class SkeletonTests: XCTestCase {
    func testNamesCountAndUniqueness() {
        XCTAssertEqual(Skeleton.blazePoseNames.count, 33)
        XCTAssertEqual(Skeleton.derivedNames, ["head", "neck", "root"])
        XCTAssertEqual(Skeleton.allNames.count, 36)
        XCTAssertEqual(Set(Skeleton.allNames).count, 36, "names must be unique")
        XCTAssertEqual(Skeleton.blazePoseNames.first, "nose")
        XCTAssertEqual(Skeleton.blazePoseNames[11], "left_shoulder")
        XCTAssertEqual(Skeleton.blazePoseNames[24], "right_hip")
        XCTAssertEqual(Skeleton.blazePoseNames.last, "right_foot_index")
        XCTAssertEqual(Skeleton.visionLayout.count, 18)
        XCTAssertEqual(Set(Skeleton.visionLayout).count, 18)
        for n in Skeleton.visionLayout { XCTAssertTrue(Skeleton.allNames.contains(n), n) }
    }

    func testEdgesAreMediaPipeConnections() {
        XCTAssertEqual(Skeleton.edges.count, 35)
        var seen = Set<[Int]>()
        for (a, b) in Skeleton.edges {
            XCTAssertTrue((0..<33).contains(a) && (0..<33).contains(b))
            XCTAssertLessThan(a, b)
            XCTAssertTrue(seen.insert([a, b]).inserted, "duplicate edge \(a)-\(b)")
        }
        // Every landmark is on some edge; the torso is a closed quad.
        XCTAssertEqual(Set(Skeleton.edges.flatMap { [$0.0, $0.1] }).count, 33)
        for e in [[11, 12], [11, 23], [12, 24], [23, 24]] { XCTAssertTrue(seen.contains(e)) }
    }

    func testMirrorPairs() {
        XCTAssertEqual(Skeleton.mirror("left_wrist"), "right_wrist")
        XCTAssertEqual(Skeleton.mirror("right_foot_index"), "left_foot_index")
        XCTAssertEqual(Skeleton.mirror("mouth_left"), "mouth_right")
        XCTAssertEqual(Skeleton.mirror("left_eye_inner"), "right_eye_inner")
        for c in ["nose", "head", "neck", "root"] { XCTAssertEqual(Skeleton.mirror(c), c) }
        for n in Skeleton.allNames {
            let m = Skeleton.mirror(n)
            XCTAssertTrue(Skeleton.allNames.contains(m), "\(n) → \(m)")
            XCTAssertEqual(Skeleton.mirror(m), n, "mirror is an involution")
        }
        // Mirroring maps edges onto edges.
        let edgeSet = Set(Skeleton.edges.map { [$0.0, $0.1] })
        let perm = Skeleton.mirrorPermutation(of: Skeleton.blazePoseNames).map { $0! }
        for (a, b) in Skeleton.edges {
            let e = [perm[a], perm[b]].sorted()
            XCTAssertTrue(edgeSet.contains(e), "mirror of \(a)-\(b)")
        }
        XCTAssertEqual(Skeleton.mirrorPermutation(of: Skeleton.visionLayout).compactMap { $0 }.count, 18)
    }

    func testIndexInOtherLayouts() {
        // Penn Action's 13 joints, in poseact's spelling.
        let penn = ["head", "left_shoulder", "right_shoulder", "left_elbow", "right_elbow", "left_wrist",
                    "right_wrist", "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle"]
        XCTAssertEqual(Skeleton.index(of: "head", in: penn), 0)
        XCTAssertEqual(Skeleton.index(of: "right_ankle", in: penn), 12)
        XCTAssertEqual(Skeleton.index(of: "rightAnkle", in: penn), 12)
        XCTAssertEqual(Skeleton.index(of: "Right Ankle", in: penn), 12)
        XCTAssertNil(Skeleton.index(of: "nose", in: penn))
        XCTAssertEqual(Skeleton.canonicalName("leftShoulder"), "left_shoulder")
        XCTAssertEqual(Skeleton.canonicalName("root"), "root")
        XCTAssertEqual(Skeleton.index(of: "right_heel", in: Skeleton.blazePoseNames), 30)
    }
}

/// The derived joints (`head`, `neck`, `root`) as preprocessing builds them: the one place
/// that derives them, for extracted clips, imports and live alike.
final class DerivedJointTests: XCTestCase {
    /// A standing person facing the camera in a 200 × 300 frame, BlazePose's 33 joints as a
    /// clip row (x, y in 0–1, confidence).
    static func standingRow(confidence: Float = 0.9) -> [Float] {
        let xy: [(Float, Float)] = [
            (100, 40), (104, 36), (107, 36), (110, 36), (96, 36), (93, 36), (90, 36), (116, 40), (84, 40),
            (104, 50), (96, 50), (125, 70), (75, 70), (135, 110), (65, 110), (140, 150), (60, 150),
            (142, 158), (58, 158), (140, 160), (60, 160), (136, 156), (64, 156), (115, 160), (85, 160),
            (117, 220), (83, 220), (118, 280), (82, 280), (116, 290), (84, 290), (124, 294), (76, 294),
        ]
        return xy.flatMap { [$0.0 / 200, $0.1 / 300, confidence] }
    }

    func mapped(_ row: [Float], to layout: [String]) -> [Float] {
        let mapper = Preprocessing.JointMapper(source: Skeleton.blazePoseNames, layout: layout, spec: PreprocessingSpec())
        return mapper.map(row, width: 200, height: 300).joints
    }

    func testNeckAndRootAreMidpointsWithTheLeastConfidence() {
        var row = Self.standingRow()
        row[11 * 3 + 2] = 0.6; row[12 * 3 + 2] = 0.8
        let j = mapped(row, to: ["neck", "root"])
        // Exact in binary for these halves and sums; 1e-6 covers the division by 200 and 300.
        XCTAssertEqual(j[0], 100 / 200, accuracy: 1e-6); XCTAssertEqual(j[1], 70 / 300, accuracy: 1e-6)
        XCTAssertEqual(j[2], 0.6, "a derived joint is as trustworthy as its least trustworthy part")
        XCTAssertEqual(j[3], 100 / 200, accuracy: 1e-6); XCTAssertEqual(j[4], 160 / 300, accuracy: 1e-6)
    }

    func testHeadIsTheMeanOfTheVisibleFacePoints() {
        var row = Self.standingRow()
        var head = mapped(row, to: ["head"])
        XCTAssertEqual(head[0] * 200, (100 + 107 + 93 + 116 + 84) / 5, accuracy: 1e-4)
        XCTAssertEqual(head[1] * 300, (40 + 36 + 36 + 40 + 40) / 5, accuracy: 1e-4)
        // Ears under the confidence gate: nose and eyes only.
        row[7 * 3 + 2] = 0.1; row[8 * 3 + 2] = 0.1
        head = mapped(row, to: ["head"])
        XCTAssertEqual(head[0] * 200, (100 + 107 + 93) / 3, accuracy: 1e-4)
        XCTAssertEqual(head[1] * 300, (40 + 36 + 36) / 3, accuracy: 1e-4)
        XCTAssertEqual(head[2], 0.9)
        // No face point seen: the head is missing (confidence 0), not guessed.
        for i in [0, 2, 5] { row[i * 3 + 2] = 0.1 }
        XCTAssertEqual(mapped(row, to: ["head"])[2], 0)
    }

    func testPlainAndUnknownNames() {
        let row = Self.standingRow()
        let j = mapped(row, to: ["leftKnee", "tail"])
        XCTAssertEqual(Array(j[0..<3]), Array(row[25 * 3..<26 * 3]), "Vision's camel case finds left_knee")
        XCTAssertEqual(Array(j[3..<6]), [0, 0, 0], "an unknown name is missing")
    }

    func testAppleVisionLayout() {
        let row = Self.standingRow()
        let j = mapped(row, to: Skeleton.visionLayout)
        XCTAssertEqual(j.count, 18 * 3)
        for (k, source) in [(0, 0), (2, 12), (4, 16), (5, 11), (8, 24), (13, 27), (14, 5), (17, 7)] {
            XCTAssertEqual(Array(j[k * 3..<k * 3 + 3]), Array(row[source * 3..<source * 3 + 3]), Skeleton.visionLayout[k])
        }
        XCTAssertEqual(j[1 * 3] * 200, 100, accuracy: 1e-4, "neck")
        XCTAssertTrue(stride(from: 2, to: j.count, by: 3).allSatisfy { j[$0] > 0 }, "every Vision joint is found")
    }
}
