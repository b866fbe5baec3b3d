import Live
import Pose
import PoseFixtures
import Trajectories
import XCTest

/// Throws from a hand-made person and a trajectory that leaves their right wrist (the
/// image's left): release, arm, forearm angle, speed in metres, the type and the hit.
final class ThrowCoachTests: XCTestCase {
    /// The standing pose with its right forearm raised to point 30° above the horizontal,
    /// towards the image's left, the wrist at (60, 150) at time `release`; 30 fps.
    func person(at time: Double, release: Double) -> Person {
        var l = makeStandingPose()
        let elbow = (x: Float(60) + 40 * cosf(.pi / 6), y: Float(150) + 40 * sinf(.pi / 6))
        l[14] = Landmark(x: elbow.x, y: elbow.y)
        // The wrist moves towards the release point and away after it (a swing).
        let dt = Float(time - release)
        l[16] = Landmark(x: 60 - 90 * dt, y: 150 - 20 * dt)
        return Person(id: 7, box: Box(x: 50, y: 30, width: 100, height: 270), landmarks: l,
                      worldLandmarks: [SIMD3<Float>](repeating: .zero, count: 33), presence: 1)
    }

    func testAThrowFromTheRightWrist() throws {
        var options = ThrowOptions()
        // 100 px a metre: a reference 200 px long is 2 m.
        options.scale = .reference(x1: 0, y1: 300, x2: 200, y2: 300, metres: 2)
        options.target = [(-380, 250), (-260, 250), (-260, 320), (-380, 320)]
        options.backgroundLabels = ["walk"]
        let coach = ThrowCoach(options: options, labels: ["walk", "overhand", "underhand"])
        let release = 1.0
        // Released at 30° up towards −x at 500 px/s (5 m/s), gravity 981 px/s².
        let speed = 500.0, angle = 30.0 * .pi / 180
        func at(_ t: Double) -> TrajectoryPoint {
            let u = t - release
            return TrajectoryPoint(time: t, x: Float(60 - speed * cos(angle) * u), y: Float(150 - speed * sin(angle) * u + 981 * u * u / 2))
        }
        for i in 0..<60 {
            let t = Double(i) / 30
            coach.push(persons: [person(at: t, release: release)], time: t)
            if i % 5 == 0 {
                // The model says walking, then overhand around the release.
                let p: [Float] = abs(t - release) < 0.4 ? [0.1, 0.7, 0.2] : [0.8, 0.1, 0.1]
                coach.push(prediction: Prediction(time: t, frame: i, personID: 7, state: .action(label: "x", confidence: p.max()!), probabilities: p))
            }
        }
        // First detected 4 frames after the release (it was in the hand's blob until then).
        let points = (34..<56).map { at(Double($0) / 30) }
        let motion = try XCTUnwrap(BallisticMotion.fit(points))
        let trajectory = Trajectory(id: 1, points: points, motion: motion, equation: nil, residual: 0, confidence: 1,
                                    objectSize: 8, ending: .stopped)
        let taken = coach.take(trajectory)
        let report = try XCTUnwrap(taken.throwMade)
        // The trajectory itself is in metres too: the same scale as the throw's.
        XCTAssertEqual(try XCTUnwrap(taken.trajectory.metresPerPixel), try XCTUnwrap(report.metresPerPixel), accuracy: 1e-12)
        XCTAssertEqual(report.person, 7)
        XCTAssertEqual(report.arm, "right")
        // Found where the path meets the wrist: within 2 ms (the search's step) of the truth.
        XCTAssertEqual(report.releaseTime, release, accuracy: 0.003)
        XCTAssertEqual(report.speedUnit, "m/s")
        // Gravity changes the speed by 9.81·sin(30°) m/s² · 3 ms at most: under 0.02 m/s.
        XCTAssertEqual(report.speed, 5, accuracy: 0.02)
        XCTAssertEqual(try XCTUnwrap(report.releaseAngle), 30, accuracy: 0.5)
        XCTAssertEqual(report.launchAngle, 30, accuracy: 0.5)
        XCTAssertEqual(report.type, "overhand")
        // Its last point, 0.83 s after the release, is at (−301, 282): in the target.
        XCTAssertEqual(report.hit, true)
        let tally = try XCTUnwrap(coach.tallies[7])
        XCTAssertEqual(tally.count, 1)
        XCTAssertEqual(tally.throwsPerType, ["overhand": 1])
        // An amendment of its trajectory (a piece joined it) replaces the throw, and the
        // trajectory drawn: one throw, one trajectory.
        var amended = trajectory
        amended.revision = 1
        XCTAssertNotNil(coach.take(amended).throwMade)
        XCTAssertEqual(coach.tallies[7]?.count, 1)
        XCTAssertEqual(coach.recent.count, 1)
        XCTAssertEqual(coach.recent.first?.trajectory.revision, 1)
    }

    func testATrajectoryFarFromEveryHandIsNoThrow() throws {
        let coach = ThrowCoach(options: ThrowOptions(), labels: ["a"])
        for i in 0..<30 { coach.push(persons: [person(at: Double(i) / 30, release: 0.5)], time: Double(i) / 30) }
        let points = (20..<30).map { TrajectoryPoint(time: Double($0) / 30, x: 600 + Float($0) * 10, y: 100) }
        let t = Trajectory(id: 1, points: points, motion: try XCTUnwrap(BallisticMotion.fit(points)), equation: nil, residual: 0,
                           confidence: 1, objectSize: 8, ending: .leftFrame)
        XCTAssertNil(coach.take(t).throwMade)
        XCTAssertEqual(coach.recent.count, 1, "still drawn as a trajectory")
    }
}
