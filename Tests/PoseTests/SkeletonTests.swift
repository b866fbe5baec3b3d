import XCTest
import Media
@testable import Pose

/// A hand-made standing pose, 33 landmarks at plausible pixel positions (person facing the
/// camera, so the person's left is the image's right).
func makeStandingPose(offsetX: Float = 0, offsetY: Float = 0, scale: Float = 1) -> [Landmark] {
    let xy: [(Float, Float)] = [
        (100, 40),                                   // nose
        (104, 36), (107, 36), (110, 36),             // left eye inner, eye, outer
        (96, 36), (93, 36), (90, 36),                // right eye inner, eye, outer
        (116, 40), (84, 40),                         // left ear, right ear
        (104, 50), (96, 50),                         // mouth left, right
        (125, 70), (75, 70),                         // shoulders L, R
        (135, 110), (65, 110),                       // elbows
        (140, 150), (60, 150),                       // wrists
        (142, 158), (58, 158),                       // pinkies
        (140, 160), (60, 160),                       // index
        (136, 156), (64, 156),                       // thumbs
        (115, 160), (85, 160),                       // hips
        (117, 220), (83, 220),                       // knees
        (118, 280), (82, 280),                       // ankles
        (116, 290), (84, 290),                       // heels
        (124, 294), (76, 294),                       // foot index
    ]
    return xy.map { Landmark(x: offsetX + $0.0 * scale, y: offsetY + $0.1 * scale, z: 0, visibility: 0.9, presence: 0.95) }
}

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

    func testDerivedJointsOnHandMadePose() throws {
        var pose = makeStandingPose()
        let neck = try XCTUnwrap(Skeleton.joint("neck", in: pose))
        XCTAssertEqual(neck.x, 100); XCTAssertEqual(neck.y, 70)
        let root = try XCTUnwrap(Skeleton.joint("root", in: pose))
        XCTAssertEqual(root.x, 100); XCTAssertEqual(root.y, 160)
        // Head: nose, eyes, ears all visible → mean of the five.
        var head = try XCTUnwrap(Skeleton.joint("head", in: pose))
        XCTAssertEqual(head.x, (100 + 107 + 93 + 116 + 84) / 5, accuracy: 1e-4)
        XCTAssertEqual(head.y, (40 + 36 + 36 + 40 + 40) / 5, accuracy: 1e-4)
        // Visibility/presence of a derived joint = min over its parts.
        pose[11].visibility = 0.6; pose[12].visibility = 0.8; pose[12].presence = 0.3
        let neck2 = try XCTUnwrap(Skeleton.joint("neck", in: pose))
        XCTAssertEqual(neck2.visibility, 0.6); XCTAssertEqual(neck2.presence, 0.3)
        // Ears hidden → head from nose and eyes only; its visibility from those.
        pose[7].visibility = 0.1; pose[8].visibility = 0.2
        head = try XCTUnwrap(Skeleton.joint("head", in: pose))
        XCTAssertEqual(head.x, (100 + 107 + 93) / 3, accuracy: 1e-4)
        XCTAssertEqual(head.y, (40 + 36 + 36) / 3, accuracy: 1e-4)
        XCTAssertEqual(head.visibility, 0.9)
        // Nothing visible → the nose as it is.
        for i in [0, 2, 5, 7, 8] { pose[i].visibility = 0.1 }
        head = try XCTUnwrap(Skeleton.joint("head", in: pose))
        XCTAssertEqual(head, pose[0])
        // Plain names, unknown names, short poses.
        XCTAssertEqual(Skeleton.joint("left_knee", in: pose), pose[25])
        XCTAssertEqual(Skeleton.joint("leftKnee", in: pose), pose[25], "Vision's camel case")
        XCTAssertNil(Skeleton.joint("tail", in: pose))
        XCTAssertNil(Skeleton.joint("nose", in: Array(pose.prefix(10))))
    }

    func testVisionLayoutMapping() throws {
        let pose = makeStandingPose()
        let mapped = Skeleton.map(pose, to: Skeleton.visionLayout)
        XCTAssertEqual(mapped.count, 18)
        XCTAssertEqual(mapped[0], pose[0])                                    // nose
        XCTAssertEqual(mapped[1], Skeleton.joint("neck", in: pose))           // neck
        XCTAssertEqual(mapped[2], pose[12])                                   // right_shoulder
        XCTAssertEqual(mapped[4], pose[16])                                   // right_wrist
        XCTAssertEqual(mapped[5], pose[11])                                   // left_shoulder
        XCTAssertEqual(mapped[8], pose[24])                                   // right_hip
        XCTAssertEqual(mapped[13], pose[27])                                  // left_ankle
        XCTAssertEqual(mapped[14], pose[5])                                   // right_eye
        XCTAssertEqual(mapped[17], pose[7])                                   // left_ear
        XCTAssertTrue(mapped.allSatisfy { $0 != nil })
        // Unknown names give nil, in place.
        let odd = Skeleton.map(pose, to: ["head", "tail", "root"])
        XCTAssertNotNil(odd[0]); XCTAssertNil(odd[1]); XCTAssertEqual(odd[2]?.y, 160)
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
        XCTAssertEqual(Skeleton.blazePoseIndex(of: "right_heel"), 30)
    }
}
