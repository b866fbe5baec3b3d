import ThrowEvaluation
import Trajectories
import XCTest

/// `ThrowScore` on flights and trajectories made by hand: which trajectories count as a
/// flight's, and so whether the flight makes exactly one.
final class ThrowScoreTests: XCTestCase {
    /// A stray that comes down at 1.0 s and hops on, and a throw the other way released 0.2 s
    /// later, 22 px from where the stray landed: where and when a hop of the stray could
    /// start (within a quarter second of its speed, in the second after it came down).
    let stray = TrueFlight(release: 0, x: 0, y: 300, speed: 500, angle: 30, direction: 1, gravity: 900, end: 1.0,
                           metricSpeed: 0, type: "", bounces: true, duringShake: false, hit: nil, thrown: false)
    var landing: (x: Double, y: Double) { stray.position(at: stray.end) }
    var thrown: TrueFlight {
        TrueFlight(release: 1.2, x: landing.x + 20, y: landing.y - 10, speed: 800, angle: 40, direction: -1, gravity: 900, end: 1.8,
                   metricSpeed: 0, type: "overhand", bounces: false, duringShake: false, hit: nil)
    }

    /// The trajectory of points on `f` every 1/30 s from `start` to `end`, fitted.
    func trajectory(along f: TrueFlight, from start: Double, to end: Double) throws -> Trajectory {
        let points = stride(from: start, through: end, by: 1.0 / 30).map { t -> TrajectoryPoint in
            let p = f.position(at: t); return TrajectoryPoint(time: t, x: Float(p.x), y: Float(p.y))
        }
        let motion = try XCTUnwrap(BallisticMotion.fit(points))
        return Trajectory(id: 1, points: points, motion: motion, equation: nil, residual: 0, confidence: 1, objectSize: 10, ending: .stopped)
    }

    func testATrajectoryThatFollowsAnotherFlightIsNotAHopOfTheOneThatLandedNearItsStart() throws {
        var score = ThrowScore()
        score.add(ClipOutcome(clip: "c", seconds: 3, flights: [stray, thrown], shaking: [],
                              trajectories: [try trajectory(along: stray, from: 0, to: 1.0), try trajectory(along: thrown, from: 1.2, to: 1.8)],
                              throwsFound: []))
        XCTAssertEqual(score.flightsScored, 2)
        XCTAssertEqual(score.flightsAsOne, 2, "\(score.notOne)")
        XCTAssertEqual(score.falseTrajectories, 0)
    }

    func testTheStraysOwnHopStillCountsAsItsPieceAfterTheBounce() throws {
        // The hop on its own, beside the flight: two trajectories of the one flight.
        var hopFlight = stray
        hopFlight.release = stray.end; hopFlight.x = landing.x; hopFlight.y = landing.y; hopFlight.speed = 250; hopFlight.angle = 45
        hopFlight.end = stray.end + 0.4
        var score = ThrowScore()
        score.add(ClipOutcome(clip: "c", seconds: 3, flights: [stray], shaking: [],
                              trajectories: [try trajectory(along: stray, from: 0, to: 1.0), try trajectory(along: hopFlight, from: 1.03, to: 1.4)],
                              throwsFound: []))
        XCTAssertEqual(score.flightsAsOne, 0)
        XCTAssertEqual(score.notOne, ["c 0.00 s: 2 trajectories"])
        XCTAssertEqual(score.falseTrajectories, 0, "the hop is the stray's, not false")
    }
}
