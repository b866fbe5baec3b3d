import Foundation
import Tensor

/// A scene of throws and of things that move without being thrown, described in full so
/// that it renders the same from its description on any machine, with the exact truth of
/// every flight: a wall and a floor, a figure that throws (`ThrowFigure`), the balls on
/// exact ballistic paths in the picture's plane, a board on the floor, and what should not
/// count (the other arm waving, a second figure walking by, swaying leaves, a camera that
/// shakes for a while), with sensor noise.
public struct ThrowScene: Codable, Sendable {
    public var width = 1280, height = 720
    public var fps = 30.0
    public var frames = 150
    public var pixelsPerMetre = 150.0
    /// The floor line (pixels from the top): the feet stand on it, the balls land on it.
    public var floor = 620.0
    public var wall: [UInt8] = [200, 196, 190]
    public var floorColor: [UInt8] = [150, 120, 90]
    /// 1: as given; below, darker; the light falls off towards one side by `lightFalloff`.
    public var brightness = 1.0
    public var lightFalloff = 0.2
    /// Pictures on the wall (x, y, width, height, r, g, b): something for a shake to show on.
    public var posters: [[Double]] = []
    /// Sensor noise, levels (standard deviation).
    public var noise = 2.0
    public var noiseSeed: UInt64 = 1
    public var thrower: Thrower?
    public var throwsPlanned: [PlannedThrow] = []
    /// The board's left end (pixels) and length (metres); on the floor.
    public var board: Board?
    public var walker: Walker?
    public var leaves: [Leaf] = []
    public var shakes: [Shake] = []
    /// A soft shadow on the floor under each flying ball.
    public var shadow = false
    /// What crosses the flights in a cluttered scene (`--set clutter`): nil elsewhere.
    public var clutter: Clutter?

    public struct Thrower: Codable, Sendable {
        public var x: Double
        public var direction: Double
        /// The other arm waves all the while.
        public var waves: Bool
        /// The throwing arm waves too while it does not throw (distractor scenes).
        public var wavesThrowingArm = false
    }

    public struct PlannedThrow: Codable, Sendable {
        public var type: ThrowType
        /// When the swing starts and how long it lasts, seconds.
        public var swingStart: Double
        public var swingDuration: Double
        /// Metres per second and degrees above the horizontal, at release.
        public var speed: Double
        public var angle: Double
        /// Metres.
        public var ballRadius: Double
        public var ballColor: [UInt8]
        /// Whether it bounces once where it lands (restitution 0.5).
        public var bounces: Bool
    }

    public struct Board: Codable, Sendable {
        public var x: Double
        public var length: Double
    }

    public struct Walker: Codable, Sendable {
        public var start: Double
        public var x: Double
        /// Pixels per second, signed.
        public var speed: Double
        public var scale: Double
    }

    public struct Leaf: Codable, Sendable {
        public var x: Double, y: Double, radius: Double
        public var amplitude: Double, frequency: Double, phase: Double
    }

    public struct Shake: Codable, Sendable {
        public var start: Double, end: Double
        /// Pixels: each frame is moved by up to this much either way.
        public var amplitude: Double
    }

    public init() {}

    public var seconds: Double { Double(frames) / fps }
    var gravity: Double { 9.81 * pixelsPerMetre }

    func figure(at time: Double) -> ThrowFigure? {
        guard let t = thrower else { return nil }
        var f = ThrowFigure(x: Float(t.x), floor: Float(floor), pixelsPerMetre: Float(pixelsPerMetre), direction: Float(t.direction))
        let wave = Float(sin(time * 5))
        f.other = t.waves ? (150 + 20 * wave, 120 + 50 * wave) : (-95, -92)
        f.throwing = t.wavesThrowingArm ? (140 + 25 * wave, 100 + 60 * wave) : (-95, -92)
        for p in throwsPlanned where time >= p.swingStart && time <= p.swingStart + p.swingDuration {
            f.throwing = p.type.arm(phase: Float((time - p.swingStart) / p.swingDuration), angle: Float(p.angle))
        }
        return f
    }

    /// A throw's flight as it happens: released from the ball's place in the hand.
    public struct Flight: Sendable {
        public var release: Double
        public var x: Double, y: Double
        public var vx: Double, vy: Double
        public var gravity: Double
        /// When it first lands on the floor, or leaves the picture, whichever comes first.
        public var end: Double
        public var leavesFrame: Bool
        public var radius: Double

        public func position(at t: Double) -> (x: Double, y: Double) {
            let u = t - release
            return (x + vx * u, y + vy * u + gravity * u * u / 2)
        }

        /// The bounce: up at half the speed it came down with, sideways at 0.7 of it; nil
        /// when it left the picture.
        func hop(floor: Double) -> (vx: Double, vy: Double, duration: Double)? {
            guard !leavesFrame else { return nil }
            let vyDown = vy + gravity * (end - release)
            let up = -0.5 * vyDown
            return (0.7 * vx, up, -2 * up / gravity)
        }

        /// Where the ball is at `time` from its release on (nil: it left the picture): in
        /// flight, then one hop if it `bounces`, then lying still.
        func place(at time: Double, bounces: Bool, floor: Double) -> (x: Double, y: Double)? {
            if time <= end { return position(at: time) }
            guard let hop = hop(floor: floor) else { return nil }
            let landed = position(at: end)
            guard bounces else { return (landed.x, floor - radius) }
            let u = min(time - end, hop.duration)
            return (landed.x + hop.vx * u, floor - radius + hop.vy * u + gravity * u * u / 2)
        }
    }

    public func releaseTime(_ p: PlannedThrow) -> Double { p.swingStart + p.swingDuration * Double(ThrowType.release) }

    /// The ball in the hand at `time`: just beyond the wrist, along the forearm.
    func ballInHand(_ p: PlannedThrow, at time: Double) -> (x: Double, y: Double) {
        guard let f = figure(at: time) else { return (0, 0) }
        let w = f.throwingWrist, d = f.forearmDirection
        let r = p.ballRadius * pixelsPerMetre
        return (Double(w.x) + Double(d.x) * r, Double(w.y) + Double(d.y) * r)
    }

    public func flight(_ p: PlannedThrow) -> Flight {
        let t = releaseTime(p)
        let start = ballInHand(p, at: t)
        let a = p.angle * .pi / 180, v = p.speed * pixelsPerMetre, dir = thrower?.direction ?? 1
        return launch(at: t, from: start, vx: dir * v * cos(a), vy: -v * sin(a), radius: p.ballRadius * pixelsPerMetre)
    }

    /// A ball's flight from `start` at `t`, to the first time its bottom reaches the floor or
    /// its centre leaves the picture sideways.
    func launch(at t: Double, from start: (x: Double, y: Double), vx: Double, vy: Double, radius: Double) -> Flight {
        var f = Flight(release: t, x: start.x, y: start.y, vx: vx, vy: vy, gravity: gravity, end: t, leavesFrame: false, radius: radius)
        let ground = floor - f.radius
        let disc = f.vy * f.vy + 2 * gravity * (ground - f.y)
        let landing = disc >= 0 ? t + (-f.vy + disc.squareRoot()) / gravity : .infinity
        var leaving = Double.infinity
        if f.vx > 0 { leaving = t + (Double(width) - f.x) / f.vx } else if f.vx < 0 { leaving = t + (0 - f.x) / f.vx }
        f.end = min(landing, leaving)
        f.leavesFrame = leaving < landing
        return f
    }

    /// Where a throw's ball is at `time` (nil: not in the picture), with the bounce and the
    /// ball lying where it came to rest.
    func ball(_ p: PlannedThrow, index: Int, at time: Double) -> (x: Double, y: Double)? {
        let release = releaseTime(p)
        // A ball is in the hand from the previous throw's release (or the start) to its own.
        let previous = index > 0 ? releaseTime(throwsPlanned[index - 1]) : -1
        if time < release { return time >= previous ? ballInHand(p, at: time) : nil }
        return flight(p).place(at: time, bounces: p.bounces, floor: floor)
    }
    /// Whether the ball ends up in the board (it lands between its ends).
    public func hits(_ p: PlannedThrow) -> Bool? {
        guard let board else { return nil }
        let f = flight(p)
        guard !f.leavesFrame else { return false }
        let x = f.position(at: f.end).x
        return x >= board.x && x <= board.x + board.length * pixelsPerMetre
    }

    /// The camera's offset on frame `index` (pixels).
    public func shakeOffset(frame index: Int) -> (x: Int, y: Int) {
        let t = Double(index) / fps
        guard let s = shakes.first(where: { t >= $0.start && t < $0.end }) else { return (0, 0) }
        var r = SplitMix64(seed: noiseSeed &+ UInt64(index) &* 7919)
        let a = s.amplitude
        return (Int(r.uniform(-a...a).rounded()), Int(r.uniform(-a...a).rounded()))
    }
}
