import Images
import Trajectories
import XCTest

/// The detector on small synthetic scenes drawn here: a ball on an exact ballistic path in
/// front of a shaded wall with sensor noise. (The rendered throw scenes with a person, in
/// `Scenes`, test it end to end.)
final class TrajectoryDetectorTests: XCTestCase {
    struct Throw { var start: Double; var x0: Float; var y0: Float; var vx: Float; var vy: Float; var g: Float }

    /// A 640×360 wall, 30 fps, with noise of amplitude `noise` levels and the ball (radius 4)
    /// where `flight` puts it; `shake` offsets the whole picture.
    static func frame(_ i: Int, flights: [Throw], noise: Int = 4, seed: UInt64 = 1, shake: (Int) -> (Int, Int) = { _ in (0, 0) },
               extra: (inout RGBImage, Double) -> Void = { _, _ in }, front: (inout RGBImage, Double) -> Void = { _, _ in }) -> RGBImage {
        let t = Double(i) / 30
        var image = RGBImage(width: 640, height: 360)
        let (sx, sy) = shake(i)
        var state = seed &+ UInt64(i) &* 0x9E37_79B9_7F4A_7C15
        image.pixels.withUnsafeMutableBufferPointer { p in
            for y in 0..<360 {
                for x in 0..<640 {
                    // A wall with stripes (so that a shift of the camera shows).
                    let wx = x - sx, wy = y - sy
                    let stripe: Int = ((wx / 40 + wy / 40) % 2 == 0) ? 20 : -20
                    let base: Int = 150 + stripe + wy / 12
                    state = state &* 6364136223846793005 &+ 1442695040888963407
                    let n = noise > 0 ? Int(state >> 33) % (2 * noise + 1) - noise : 0
                    let i3 = (y * 640 + x) * 3
                    p[i3] = UInt8(clamping: base + n); p[i3 + 1] = UInt8(clamping: base + 10 + n); p[i3 + 2] = UInt8(clamping: base - 30 + n)
                }
            }
        }
        extra(&image, t)
        for th in flights where t >= th.start {
            let u = Float(t - th.start)
            let x = th.x0 + th.vx * u, y = th.y0 + th.vy * u + th.g * u * u / 2
            image.fillCircle(center: (x + Float(sx), y + Float(sy)), radius: 4, color: RGB(240, 120, 20))
        }
        front(&image, t)
        return image
    }

    /// Every trajectory reported (amendments included: `Trajectory.latest` makes them one).
    static func run(frames: Int, flights: [Throw], noise: Int = 4, shake: (Int) -> (Int, Int) = { _ in (0, 0) },
             extra: (inout RGBImage, Double) -> Void = { _, _ in },
             front: (inout RGBImage, Double) -> Void = { _, _ in }) -> (found: [Trajectory], unstable: [Int]) {
        let detector = TrajectoryDetector()
        var found: [Trajectory] = [], unstable: [Int] = []
        for i in 0..<frames {
            found += detector.push(Self.frame(i, flights: flights, noise: noise, shake: shake, extra: extra, front: front), time: Double(i) / 30)
            if !detector.sceneIsStable { unstable.append(i) }
        }
        return (found + detector.finish(), unstable)
    }

    func testFindsOneThrowAndItsSpeedAndAngle() {
        // 300 px/s sideways, 250 px/s up, gravity 400 px/s²: 1.2 s in the frame.
        let th = Throw(start: 0.3, x0: 60, y0: 250, vx: 300, vy: -250, g: 400)
        let (found, _) = Self.run(frames: 70, flights: [th])
        XCTAssertEqual(found.count, 1, "\(found.map { ($0.start, $0.end, $0.points.count) })")
        guard let t = found.first else { return }
        // The points are blob centres of a 4-pixel disc under noise of ±4 levels: a tenth of a
        // pixel each, so speed and angle at the throw's start within 1 %, 0.5°.
        let speed = t.motion.speed(at: th.start), truth = (300.0 * 300 + 250 * 250).squareRoot()
        XCTAssertEqual(speed, truth, accuracy: truth * 0.01)
        XCTAssertEqual(t.motion.elevation(at: th.start), atan2(250, 300) * 180 / .pi, accuracy: 0.5)
        XCTAssertEqual(t.motion.ay, 400, accuracy: 8)
        XCTAssertLessThan(t.residual, 0.5)
        XCTAssertEqual(t.ending, .leftFrame)
        // The equation as Vision gives it, at the first point's x.
        let eq = try! XCTUnwrap(t.equation)
        let p = t.points[3]
        XCTAssertEqual(eq.a * Double(p.x * p.x) + eq.b * Double(p.x) + eq.c, Double(p.y), accuracy: 1)
    }

    func testTwoThrowsInTurnAndNothingFromNoiseAlone() {
        let flights = [Throw(start: 0.2, x0: 600, y0: 200, vx: -350, vy: -200, g: 500),
                      Throw(start: 1.5, x0: 40, y0: 300, vx: 420, vy: -120, g: 450)]
        let (found, _) = Self.run(frames: 90, flights: flights, noise: 6)
        XCTAssertEqual(found.count, 2)
        XCTAssertEqual(found.map { $0.motion.vx < 0 }, [true, false])
        XCTAssertTrue(Self.run(frames: 60, flights: [], noise: 8).found.isEmpty)
    }

    func testSwayingLeavesAreNoTrajectory() {
        // A green disc that swings back and forth in place: it moves, but turns back.
        let (found, _) = Self.run(frames: 120, flights: []) { image, t in
            let x = 500 + 30 * Float(sin(t * 4)), y = 80 + 8 * Float(cos(t * 8))
            image.fillCircle(center: (x, y), radius: 6, color: RGB(40, 160, 40))
        }
        XCTAssertTrue(found.isEmpty, "\(found.map { ($0.start, $0.points.count, $0.residual) })")
    }

    func testSomethingDriftingAlongAPathThatBendsLessThanAFallIsNoTrajectory() {
        // A disc drifts left at 200 px/s for 1.5 s on a path that bends down at 40 px/s²: it
        // sags 11 px from its chord (a path, not a straight line), but nothing falling bends
        // that little (100 px/s² is a tenth of gravity at 100 pixels a metre). Pieces of
        // something rolling along the floor, joined across a gap, bend as little.
        let (found, _) = Self.run(frames: 50, flights: []) { image, t in
            guard t >= 0.1 else { return }
            let u = Float(t - 0.1)
            image.fillCircle(center: (600 - 200 * u, 150 + 20 * u * u), radius: 4, color: RGB(240, 120, 20))
        }
        XCTAssertTrue(found.isEmpty, "\(found.map { ($0.start, $0.points.count, $0.motion.ay) })")
    }

    func testSomethingFallingFasterThanGravityInAPictureAMetreTallIsNoTrajectory() {
        // A disc goes up and comes down at 5,400 px/s² (15 heights of this 360-px picture a
        // second²: gravity if the picture were 0.65 m tall), the way a hand's blobs linked up
        // and down can bend; and the same throw at a third of that, which is a flight.
        func run(_ g: Float) -> [Trajectory] {
            Self.run(frames: 40, flights: []) { image, t in
                guard t >= 0.1 else { return }
                let u = Float(t - 0.1)
                image.fillCircle(center: (300 + 150 * u, 300 - (g * 0.45 / 2) * u + g * u * u / 2), radius: 4, color: RGB(240, 120, 20))
            }.found
        }
        XCTAssertTrue(run(5400).isEmpty, "\(run(5400).map { ($0.start, $0.points.count, $0.motion.ay) })")
        XCTAssertEqual(run(1800).count, 1)
    }

    func testNothingWhileTheCameraShakes() {
        // The camera shakes from frame 20 to 40; the ball flies from frame 15 to the end.
        let th = Throw(start: 0.5, x0: 40, y0: 300, vx: 250, vy: -300, g: 300)
        let (found, unstable) = Self.run(frames: 75, flights: [th], shake: { i in (20..<40).contains(i) ? ((i * 7) % 9 - 4, (i * 5) % 7 - 3) : (0, 0) })
        XCTAssertTrue(unstable.contains(25))
        XCTAssertFalse(unstable.contains(60))
        for t in found {
            XCTAssertTrue(t.points.allSatisfy { !(20.0 / 30...45.0 / 30).contains($0.time) }, "a point while the camera moved: \(t.points.map(\.time))")
        }
        // The flight after the shake is still found.
        XCTAssertTrue(found.contains { $0.start > 45.0 / 30 })
    }

    /// The speed of `th` at `t`, pixels per second.
    static func speed(_ th: Throw, at t: Double) -> Double {
        let u = Float(t - th.start)
        return Double(hypot(th.vx, th.vy + th.g * u))
    }

    func testAHiddenStretchIsOneTrajectory() throws {
        // A post in front from x 250 to 330 hides the ball for 0.2 s in the middle of its flight.
        let th = Throw(start: 0.2, x0: 40, y0: 250, vx: 400, vy: -320, g: 500)
        let (found, _) = Self.run(frames: 60, flights: [th], front: { image, _ in
            image.fillRect((250, 0, 80, 360), color: RGB(70, 60, 120))
        })
        let one = Trajectory.latest(found)
        XCTAssertEqual(one.count, 1, "\(one.map { ($0.start, $0.end, $0.points.count) })")
        let t = try XCTUnwrap(one.first)
        // Reported when it went behind the post, then amended with the points after it.
        XCTAssertGreaterThan(t.revision, 0)
        XCTAssertTrue(t.points.contains { $0.x < 240 } && t.points.contains { $0.x > 340 })
        // The start speed of the whole flight: within 2 % (the target) of the truth.
        XCTAssertEqual(t.startSpeed, Self.speed(th, at: t.start), accuracy: 0.02 * Self.speed(th, at: t.start))
        XCTAssertEqual(t.flightTime, t.end - t.start, accuracy: 1e-9)
        // Its apex is where vy = 0: 0.64 s after the throw, at x = 40 + 400·0.64.
        let apex = try XCTUnwrap(t.apex)
        XCTAssertEqual(apex.time, 0.2 + 320.0 / 500, accuracy: 0.02)
        XCTAssertEqual(Double(apex.x), 40 + 400 * 0.64, accuracy: 8)
    }

    func testABallGlimpsedBetweenTwoPostsIsOneTrajectory() throws {
        // Two posts in front: the ball (13.3 px a frame) is hidden 0.3 s, seen whole in the
        // 20 px between them on one frame, hidden 0.3 s more: 0.6 s from its last point
        // before the first post to its first after the second, longer than a path waits
        // (`maximumHidden`), but what was glimpsed between lies on its path.
        let th = Throw(start: 0.1, x0: 40, y0: 250, vx: 400, vy: -320, g: 500)
        let (found, _) = Self.run(frames: 60, flights: [th], front: { image, _ in
            image.fillRect((200, 0, 110, 360), color: RGB(70, 60, 120))
            image.fillRect((330, 0, 100, 360), color: RGB(70, 60, 120))
        })
        let one = Trajectory.latest(found)
        XCTAssertEqual(one.count, 1, "\(found.map { ($0.id, $0.start, $0.end, $0.points.count) })")
        let t = try XCTUnwrap(one.first)
        XCTAssertTrue(t.points.contains { $0.x < 190 } && t.points.contains { $0.x > 440 })
        XCTAssertEqual(t.startSpeed, Self.speed(th, at: t.start), accuracy: 0.02 * Self.speed(th, at: t.start))
    }

    func testACameraJoltedForAFrameLeavesTheFlightOneTrajectory() throws {
        // The picture jumps 3 px right and 2 down on frame 25 only: the detector takes it for
        // the camera moving (frames 25 and 26) and looks for nothing until it has been still
        // for five frames; the flight seen before and after is one trajectory, with no point
        // from those frames.
        let th = Throw(start: 0.2, x0: 40, y0: 250, vx: 300, vy: -300, g: 400)
        let (found, unstable) = Self.run(frames: 60, flights: [th], shake: { i in i == 25 ? (3, 2) : (0, 0) })
        XCTAssertTrue(unstable.contains(25), "\(unstable)")
        let one = Trajectory.latest(found)
        XCTAssertEqual(one.count, 1, "\(found.map { ($0.id, $0.start, $0.end, $0.points.count) })")
        let t = try XCTUnwrap(one.first)
        XCTAssertTrue(t.points.contains { $0.time < 24.5 / 30 } && t.points.contains { $0.time > 32.5 / 30 })
        XCTAssertFalse(t.points.contains { unstable.contains(Int(($0.time * 30).rounded())) }, "\(t.points.map(\.time))")
    }

    /// The left edge of a box of 160 × 200 px (y 100–300), carried in at 0.3 s, that swings
    /// 40 px either side.
    static func boxX(_ t: Double) -> Float { 240 + 40 * Float(sin(2 * Double.pi * t / 1.5)) }

    /// The box, and `th`'s ball drawn over it: where the ball is in front of the box, their
    /// moving regions are one blob, too big to be a ball.
    static func ballInFrontOfTheBox(_ th: Throw) -> (inout RGBImage, Double) -> Void {
        { image, t in
            if t >= 0.3 { image.fillRect((boxX(t), 100, 160, 200), color: RGB(60, 130, 200)) }
            guard t >= th.start else { return }
            let u = Float(t - th.start)
            image.fillCircle(center: (th.x0 + th.vx * u, th.y0 + th.vy * u + th.g * u * u / 2), radius: 4, color: RGB(240, 120, 20))
        }
    }

    /// Whether a point lies well inside the box (6 px in from its sides) when it was found.
    static func inFrontOfTheBox(_ p: TrajectoryPoint) -> Bool {
        p.x > boxX(p.time) + 6 && p.x < boxX(p.time) + 154 && p.y > 106 && p.y < 294
    }

    func testABallInFrontOfAMovingBoxIsFollowedAcrossIt() throws {
        // The ball passes in front of the box in the middle of its flight.
        let th = Throw(start: 0.2, x0: 40, y0: 250, vx: 400, vy: -320, g: 500)
        let (found, _) = Self.run(frames: 60, flights: [], extra: Self.ballInFrontOfTheBox(th))
        let one = Trajectory.latest(found)
        XCTAssertEqual(one.count, 1, "\(one.map { ($0.start, $0.end, $0.points.count) })")
        let t = try XCTUnwrap(one.first)
        // Followed in front of the box, not only on either side of it.
        XCTAssertGreaterThanOrEqual(t.points.filter(Self.inFrontOfTheBox).count, 6, "\(t.points.map { ($0.time, $0.x, $0.y) })")
        XCTAssertEqual(t.startSpeed, Self.speed(th, at: t.start), accuracy: 0.02 * Self.speed(th, at: t.start))
    }

    func testABallThrownInFrontOfAMovingBoxIsFoundFromItsStart() throws {
        // The ball is thrown from in front of the box (x 290 at 0.5 s, when the box spans
        // 275–435) and flies clear of it after six frames. Until then its pixels and the box's
        // are one region: it is first seen on its own past the box's edge, and found back
        // along its path from there.
        let th = Throw(start: 0.5, x0: 290, y0: 200, vx: 600, vy: -200, g: 500)
        let (found, _) = Self.run(frames: 40, flights: [], extra: Self.ballInFrontOfTheBox(th))
        let one = Trajectory.latest(found)
        XCTAssertEqual(one.count, 1, "\(one.map { ($0.start, $0.end, $0.points.count) })")
        let t = try XCTUnwrap(one.first)
        // Half its six frames in front of the box at least.
        XCTAssertGreaterThanOrEqual(t.points.filter(Self.inFrontOfTheBox).count, 3, "\(t.points.map { ($0.time, $0.x, $0.y) })")
        XCTAssertLessThanOrEqual(t.start, th.start + 0.1)
        XCTAssertEqual(t.startSpeed, Self.speed(th, at: t.start), accuracy: 0.02 * Self.speed(th, at: t.start))
    }

    func testSomeoneWalkingPastCloseToTheCameraIsNotTheCameraMoving() {
        // A plain wall with eight striped posters, and a striped body of 240 × 100 px walking
        // across in front at 8 px a frame (a sixth of the picture: under the 30 % that means
        // everything moves). The body outweighs the posters, so the best shift of the whole
        // picture is its 8 px; the posters' tiles stand still. The ball flies above it.
        let stripes = { (image: inout RGBImage, x: Float, y: Float, width: Float, height: Float) -> Void in
            for s in stride(from: Float(0), to: width, by: 12) {
                image.fillRect((x + s, y, 6, height), color: RGB(30, 30, 40))
                image.fillRect((x + s + 6, y, 6, height), color: RGB(200, 190, 170))
            }
        }
        let wall = { (image: inout RGBImage, _: Double) -> Void in
            image.fillRect((0, 0, 640, 360), color: RGB(150, 160, 120))
            for k in 0..<4 {
                stripes(&image, Float(60 + 160 * k), 5, 40, 40)
                stripes(&image, Float(60 + 160 * k), 290, 40, 40)
            }
        }
        let th = Throw(start: 0.3, x0: 600, y0: 100, vx: -420, vy: -100, g: 200)
        let (found, unstable) = Self.run(frames: 45, flights: [th], extra: wall, front: { image, t in
            stripes(&image, Float(-60 + 8 * Int((30 * t).rounded())), 135, 240, 100)
        })
        XCTAssertEqual(unstable, [], "taken for the camera moving on frames \(unstable)")
        XCTAssertEqual(Trajectory.latest(found).count, 1, "\(found.map { ($0.start, $0.end, $0.points.count) })")
    }

    func testWalkersOutweighingTheOneStillThingAreNotTheCameraMoving() {
        // A plain wall with one small striped poster, and two plain bodies (40 × 200 px)
        // walking across in front at 8 px a frame. Only the poster's tile stands still, and
        // aligning with the bodies leaves its stripes: about as much difference as the
        // bodies made (the rendered scenes' walkers in front of a plain wall do the same).
        let wall = { (image: inout RGBImage, _: Double) -> Void in
            image.fillRect((0, 0, 640, 360), color: RGB(150, 160, 120))
            for s in stride(from: Float(0), to: 40, by: 12) { image.fillRect((20 + s, 230, 6, 60), color: RGB(30, 30, 40)) }
        }
        let th = Throw(start: 0.3, x0: 600, y0: 80, vx: -420, vy: -100, g: 200)
        let (found, unstable) = Self.run(frames: 45, flights: [th], noise: 0, extra: wall, front: { image, t in
            let x = Float(8 * Int((30 * t).rounded()))
            image.fillRect((100 + x, 150, 40, 200), color: RGB(60, 110, 60))
            image.fillRect((260 + x, 150, 40, 200), color: RGB(60, 110, 60))
        })
        XCTAssertEqual(unstable, [], "taken for the camera moving on frames \(unstable)")
        XCTAssertEqual(Trajectory.latest(found).count, 1, "\(found.map { ($0.start, $0.end, $0.points.count) })")
    }

    func testABallsShadowSeenFromTheSameFrameIsNoTrajectory() throws {
        // A flat dark patch on the floor (y 320) under the ball from the frame it appears:
        // straight and fast (400 px/s, over the 0.5 frame widths a second a straight path
        // needs), so a trajectory of its own were it not the shadow of the curved one above.
        let th = Throw(start: 0.1, x0: 40, y0: 200, vx: 400, vy: -250, g: 500)
        let (found, _) = Self.run(frames: 40, flights: [th], extra: { image, t in
            guard t >= th.start else { return }
            image.fillRect((th.x0 + th.vx * Float(t - th.start) - 7, 318, 14, 5), color: RGB(90, 95, 70))
        })
        let one = Trajectory.latest(found)
        XCTAssertEqual(one.count, 1, "\(one.map { ($0.start, $0.end, $0.points.map(\.y).max() ?? 0) })")
        // The ball's, not the shadow's: it bends.
        let t = try XCTUnwrap(one.first)
        XCTAssertGreaterThan(t.motion.ay, 100)
    }

    func testASpeckFlickeringBesideABallsFirstPointTakesNoneOfItsPoints() throws {
        // A ball seen for eight frames only (it comes out from behind a post at x 372 and
        // leaves the picture), the fewest a trajectory needs; a dark speck of 3 × 3 px that
        // blinks in place 9 px below where the ball is first seen, nearer to it than the ball's
        // next point (33 px on), and a blob on every frame (the background never learns it
        // whole). Were the speck to take the ball's second point, seven would be left.
        let th = Throw(start: 0.2, x0: 200, y0: 200, vx: 1000, vy: -150, g: 500)
        let (found, _) = Self.run(frames: 40, flights: [th], extra: { image, t in
            if Int((t * 30).rounded()) % 2 == 0 { image.fillRect((399, 188, 3, 3), color: RGB(20, 20, 30)) }
        }, front: { image, _ in
            image.fillRect((250, 0, 122, 360), color: RGB(70, 60, 120))
        })
        let one = Trajectory.latest(found)
        XCTAssertEqual(one.count, 1, "\(one.map { ($0.start, $0.end, $0.points.count) })")
        let t = try XCTUnwrap(one.first)
        XCTAssertFalse(t.points.contains { abs($0.x - 400.5) < 3 && abs($0.y - 189.5) < 3 }, "\(t.points.map { ($0.time, $0.x, $0.y) })")
    }

    func testAStillSquareBesideWhereABallIsFirstSeenTakesNoneOfItsBlobs() throws {
        // A slow ball (8 px a frame, about its size: where it was and where it is touch, so
        // neither a search nor a look back can tell it) comes out from behind a post at x 372
        // and is seen for 22 frames until the input ends. A dark square of 6 × 6 px stands
        // still 55 px below its path from 0.1 s on: a blob on every frame (where something
        // moved, the background learns slowly), nearer to the ball's first twelve blobs than
        // a lone point's next one may be (77 px here). Were the square's lone point of each
        // frame to take the ball's blob, the ball would have a track of its own only from
        // 0.7 s on, its last ten frames.
        let th = Throw(start: 0.2, x0: 360, y0: 200, vx: 240, vy: -100, g: 200)
        let (found, _) = Self.run(frames: 31, flights: [th], extra: { image, t in
            if t >= 0.1 { image.fillRect((427, 232, 6, 6), color: RGB(20, 20, 30)) }
        }, front: { image, _ in
            image.fillRect((250, 0, 122, 360), color: RGB(70, 60, 120))
        })
        let one = Trajectory.latest(found)
        XCTAssertEqual(one.count, 1, "\(one.map { ($0.start, $0.end, $0.points.count) })")
        let t = try XCTUnwrap(one.first)
        XCTAssertLessThan(t.start, 0.3, "\(t.points.map { ($0.time, $0.x, $0.y) })")
        XCTAssertFalse(t.points.contains { abs($0.x - 430) < 4 && abs($0.y - 235) < 4 })
    }

    func testAPieceThatBeganAtTheHandIsJoinedAcrossAHiddenStretch() throws {
        // The hand (a square of 10 px) is seen for one frame where the ball is let go, 20 px
        // below its path; the ball flies for six frames, is hidden behind a post for 0.3 s,
        // and is seen again on its path for twelve. The first piece's first point is the hand:
        // off the path by far more than the three tolerances a joined piece's points may be.
        let th = Throw(start: 0.3, x0: 60, y0: 250, vx: 500, vy: -300, g: 500)
        let (found, _) = Self.run(frames: 36, flights: [th], extra: { image, t in
            if Int((t * 30).rounded()) == 8 { image.fillRect((45, 265, 10, 10), color: RGB(200, 150, 120)) }
        }, front: { image, _ in
            image.fillRect((148, 0, 156, 360), color: RGB(70, 60, 120))
        })
        let one = Trajectory.latest(found)
        XCTAssertEqual(one.count, 1, "\(one.map { ($0.start, $0.end, $0.points.count) })")
        let t = try XCTUnwrap(one.first)
        // Both pieces, without the hand.
        XCTAssertGreaterThanOrEqual(t.points.filter { $0.x < 148 }.count, 5, "\(t.points.map { ($0.time, $0.x, $0.y) })")
        XCTAssertTrue(t.points.contains { $0.x > 304 })
        XCTAssertFalse(t.points.contains { $0.y > 262 })
        XCTAssertEqual(t.startSpeed, Self.speed(th, at: t.start), accuracy: 0.02 * Self.speed(th, at: t.start))
    }

    func testASpeckWhereABallComesOutFromHidingTakesNoneOfItsBlobs() throws {
        // The ball is seen for eleven frames (half of it in the last), hidden behind a post for
        // 0.43 s (near the half second a path waits), seen for one frame between that post and a
        // second one (half of it), hidden for three more, then seen for thirteen. In the frame before it shows
        // between the posts, a speck of 5 × 5 px shows 35 px from where it is then, further than
        // the waiting path reaches, and 19 px from where it shows. Were the speck's lone point
        // to take that blob, the half second would be over when the ball is seen again, and the
        // flight two trajectories.
        let th = Throw(start: 0.1, x0: 40, y0: 250, vx: 450, vy: -300, g: 500)
        let (found, _) = Self.run(frames: 44, flights: [th], front: { image, t in
            image.fillRect((190, 0, 195, 360), color: RGB(70, 60, 120))
            image.fillRect((395, 0, 45, 360), color: RGB(70, 60, 120))
            if Int((t * 30).rounded()) == 25 { image.fillRect((398, 178, 5, 5), color: RGB(20, 20, 30)) }
        })
        let one = Trajectory.latest(found)
        XCTAssertEqual(one.count, 1, "\(one.map { ($0.start, $0.end, $0.points.count) })")
        let t = try XCTUnwrap(one.first)
        XCTAssertTrue(t.points.contains { $0.x < 190 } && t.points.contains { $0.x > 440 }, "\(t.points.map { ($0.time, $0.x, $0.y) })")
        XCTAssertFalse(t.points.contains { abs($0.x - 400.5) < 3 && abs($0.y - 180.5) < 3 }, "\(t.points.map { ($0.time, $0.x, $0.y) })")
    }

    func testAHandOnTheWayBackAlongAPathIsNotTheThrowsStart() throws {
        // The ball comes out from behind a post (x 140–300) at 0.5 s; 0.2 s before, a square of
        // 8 × 8 px (the thrower's hand, say) shows for two frames in front of the post, where the
        // ball's path followed back would have been. Two points after five frames unseen are
        // not where the flight began.
        let th = Throw(start: 0.2, x0: 160, y0: 250, vx: 500, vy: -300, g: 500)
        let (found, _) = Self.run(frames: 30, flights: [th], front: { image, t in
            image.fillRect((140, 0, 164, 360), color: RGB(70, 60, 120))
            let i = Int((t * 30).rounded())
            if i == 8 || i == 9 {
                let u = Float(t - th.start), x = th.x0 + th.vx * u, y = th.y0 + th.vy * u + th.g * u * u / 2
                image.fillRect((x - 4, y - 4, 8, 8), color: RGB(240, 120, 20))
            }
        })
        let one = Trajectory.latest(found)
        XCTAssertEqual(one.count, 1, "\(one.map { ($0.start, $0.end, $0.points.count) })")
        let t = try XCTUnwrap(one.first)
        XCTAssertGreaterThan(t.start, 0.4, "\(t.points.map { ($0.time, $0.x, $0.y) })")
    }

    /// A ball thrown at 0.3 s from (60, 150), 250 px/s sideways and 100 up under 600 px/s²,
    /// comes down onto the floor at y 300 at 1.19 s (`landing`, at x `landX`), goes up again at
    /// `rebound` of the speed it came down at and 0.8 of its speed sideways, and rolls on along
    /// the floor once down again.
    static func bounce(rebound: Float) -> (draw: (inout RGBImage, Double) -> Void, landing: Double, landX: Float) {
        let floorY: Float = 300
        let th = Throw(start: 0.3, x0: 60, y0: 150, vx: 250, vy: -100, g: 600)
        let fall: Double = (100 + Double(100 * 100 + 2 * 600 * 150).squareRoot()) / 600
        let landing: Double = 0.3 + fall
        let down: Float = th.vy + th.g * Float(fall), landX: Float = th.x0 + th.vx * Float(fall)
        let draw = { (image: inout RGBImage, t: Double) -> Void in
            guard t >= th.start else { return }
            var p: (x: Float, y: Float)
            if t <= landing {
                let u = Float(t - th.start)
                p = (th.x0 + th.vx * u, th.y0 + th.vy * u + th.g * u * u / 2)
            } else {
                let u = Float(t - landing)
                p = (landX + 0.8 * th.vx * u, min(floorY, floorY - rebound * down * u + th.g * u * u / 2))
            }
            image.fillCircle(center: p, radius: 4, color: RGB(240, 120, 20))
        }
        return (draw, landing, landX)
    }

    func testABounceGoesOnAsOneTrajectoryWithItsBouncePoint() throws {
        // Up again at half the speed it came down at.
        let (draw, landing, landX) = Self.bounce(rebound: 0.5)
        let (found, _) = Self.run(frames: 75, flights: [], extra: draw)
        let one = Trajectory.latest(found)
        XCTAssertEqual(one.count, 1, "\(one.map { ($0.start, $0.end, $0.points.count, $0.bounces.count) })")
        let t = try XCTUnwrap(one.first)
        let bounce = try XCTUnwrap(t.bounces.first)
        // Where the two paths meet: within two frames and 6 px of the true bounce.
        XCTAssertEqual(bounce.time, landing, accuracy: 2.0 / 30)
        XCTAssertEqual(Double(bounce.x), Double(landX), accuracy: 6)
        XCTAssertEqual(Double(bounce.y), 300, accuracy: 6)
        XCTAssertEqual(t.flightTime, bounce.time - t.start, accuracy: 1e-9)
        XCTAssertEqual(t.hops.count, 1)
        XCTAssertTrue(t.points.contains { $0.time > landing + 0.1 }, "the hop's points are the trajectory's")
    }

    func testAHopFirstSeenAtItsTopGoesOnAsOneTrajectory() throws {
        // A low hop (up at 0.3 of the speed it came down at: 14 px high, 0.44 s long), its rise
        // hidden behind a post from x 285 to 313. It is seen from 0.17 s after the bounce, near
        // its top: its first three points rise at 7 px/s on average, where a bounce wants 44
        // (a tenth of the fall's speed down) or more.
        let (draw, landing, landX) = Self.bounce(rebound: 0.3)
        let (found, _) = Self.run(frames: 52, flights: [], extra: draw, front: { image, _ in
            image.fillRect((285, 0, 28, 360), color: RGB(70, 60, 120))
        })
        let one = Trajectory.latest(found)
        XCTAssertEqual(one.count, 1, "\(one.map { ($0.start, $0.end, $0.points.count, $0.bounces.count) })")
        let t = try XCTUnwrap(one.first)
        let bounce = try XCTUnwrap(t.bounces.first, "\(t.points.map { ($0.time, $0.x, $0.y) })")
        XCTAssertEqual(bounce.time, landing, accuracy: 2.0 / 30)
        XCTAssertEqual(Double(bounce.x), Double(landX), accuracy: 8)
        XCTAssertTrue(t.points.contains { $0.time > landing + 0.25 }, "the hop's points are the trajectory's")
    }
}
