import Trajectories
import XCTest

final class BallisticMotionTests: XCTestCase {
    /// Points at `times` of x = 100 + 200·t, y = 300 − 150·t + 600·t²/2.
    static func points(_ times: [Double]) -> [TrajectoryPoint] {
        times.map { t in TrajectoryPoint(time: t, x: Float(100 + 200 * t), y: Float(300 - 150 * t + 300 * t * t)) }
    }

    func testAFitWithItsPullGivenNeedsTwoPoints() throws {
        let two = Self.points([0.3, 1.0 / 3])
        XCTAssertNil(BallisticMotion.fit(two), "a free fit needs three points")
        let m = try XCTUnwrap(BallisticMotion.fit(two, ay: 600))
        // The points are Floats near 300 px (a few 1e-5 px apart from the truth), 1/30 s
        // apart: the velocity is within a few 1e-3 px/s.
        XCTAssertEqual(m.ay, 600)
        XCTAssertEqual(m.velocity(at: 0).y, -150, accuracy: 0.05)
        XCTAssertEqual(m.velocity(at: 0).x, 200, accuracy: 0.05)
        // Followed back to t = 0 at that pull, it is where the motion began.
        XCTAssertEqual(m.position(at: 0).y, 300, accuracy: 0.05)
        // A straight fit of the same two points rises at their mean, not at the start.
        let straight = try XCTUnwrap(BallisticMotion.fit(two, straight: true))
        XCTAssertEqual(straight.ay, 0)
        XCTAssertEqual(straight.vy, -150 + 600 * (0.3 + 1.0 / 3) / 2, accuracy: 0.05)
    }

    func testAFreeFitFindsThePull() throws {
        let m = try XCTUnwrap(BallisticMotion.fit(Self.points([0, 0.1, 0.2, 0.3, 0.4])))
        XCTAssertEqual(m.ay, 600, accuracy: 0.05)
        XCTAssertEqual(m.velocity(at: 0).y, -150, accuracy: 0.05)
    }
}
