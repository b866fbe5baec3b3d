import Foundation
import Images
import Tensor

/// What crosses the flights of a cluttered scene (`throws render --set clutter`): things in
/// front that hide a ball for a while, a person walking in front of the flight, large things
/// moving back and forth behind it, objects of a ball's size and colour crossing its path,
/// and balls thrown by no one in view, in flight at the same time.
public struct Clutter: Codable, Sendable {
    /// Things in front of the flights, still (a pillar, a hanging banner): a ball passing
    /// behind one is hidden.
    public var panels: [Panel] = []
    /// People walking in front of everything.
    public var walkersInFront: [ThrowScene.Walker] = []
    /// Large boxes moving back and forth behind the flights (a door, a cart, a screen): a
    /// ball in front of one is not told apart from it.
    public var movers: [Mover] = []
    /// Objects of a ball's size and colour that are not thrown.
    public var lookalikes: [Lookalike] = []
    /// Balls in flight that no one in view threw (they come in from the side).
    public var strays: [Stray] = []

    public struct Panel: Codable, Sendable {
        public var x: Double, y: Double, width: Double, height: Double
        public var color: [UInt8]
    }

    public struct Mover: Codable, Sendable {
        /// The box at the middle of its travel (pixels), how far it goes either way (pixels),
        /// its period (seconds) and phase (radians).
        public var x: Double, y: Double, width: Double, height: Double
        public var amplitude: Double, period: Double, phase: Double
        public var color: [UInt8]

        func left(at t: Double) -> Double { x + amplitude * sin(2 * .pi * t / period + phase) }
    }

    public struct Lookalike: Codable, Sendable {
        /// Rolling along the floor at `speed` px/s from `x` at `start`; or swinging on a
        /// string from (x, y) (`length` px, `amplitude` degrees, `period` s).
        public enum Motion: String, Codable, Sendable { case rolling, swinging }
        public var motion: Motion
        public var x: Double, y: Double
        public var start: Double
        public var speed: Double
        public var length: Double, amplitude: Double, period: Double
        public var radius: Double
        public var color: [UInt8]

        func position(at t: Double, floor: Double) -> (x: Double, y: Double)? {
            switch motion {
            case .rolling:
                guard t >= start else { return nil }
                return (x + speed * (t - start), floor - radius)
            case .swinging:
                let a = amplitude * .pi / 180 * sin(2 * .pi * t / period)
                return (x + length * sin(a), y + length * cos(a))
            }
        }
    }

    public struct Stray: Codable, Sendable {
        /// Where and when it comes into view (its centre on the picture's edge), its velocity
        /// there (px/s), its size and colour, and whether it bounces where it lands.
        public var start: Double
        public var x: Double, y: Double
        public var vx: Double, vy: Double
        public var radius: Double
        public var color: [UInt8]
        public var bounces: Bool
    }

    /// The ball's centre is behind something in front at `t` (a panel, or a walker's body).
    func hides(_ p: (x: Double, y: Double), at t: Double, in scene: ThrowScene) -> Bool {
        for panel in panels where p.x >= panel.x && p.x <= panel.x + panel.width && p.y >= panel.y && p.y <= panel.y + panel.height {
            return true
        }
        for w in walkersInFront where t >= w.start {
            let x = w.x + w.speed * (t - w.start), body = 0.45 * scene.pixelsPerMetre * w.scale
            let top = scene.floor - 1.75 * scene.pixelsPerMetre * w.scale
            if abs(p.x - x) <= body / 2 && p.y >= top && p.y <= scene.floor { return true }
        }
        return false
    }
}

extension ThrowScene {
    /// A stray ball's flight.
    func flight(_ s: Clutter.Stray) -> Flight {
        launch(at: s.start, from: (s.x, s.y), vx: s.vx, vy: s.vy, radius: s.radius)
    }

    /// Every thrown ball's flight (the figure's, then the strays'), with whether it bounces.
    public var flights: [(flight: Flight, bounces: Bool, thrown: Bool)] {
        throwsPlanned.map { (flight($0), $0.bounces, true) } + (clutter?.strays ?? []).map { (flight($0), $0.bounces, false) }
    }

    /// When a ball's centre is behind something in front, from its release to when it comes
    /// to rest or leaves the picture: intervals of seconds, to a frame.
    func hidden(_ f: Flight, bounces: Bool) -> [ClosedRange<Double>] {
        guard let clutter else { return [] }
        let last = f.end + (bounces ? (f.hop(floor: floor)?.duration ?? 0) : 0)
        // Frame by frame: from the first frame it is hidden on to the last.
        var out: [ClosedRange<Double>] = [], start: Int?
        var i = Int((f.release * fps).rounded(.up))
        while Double(i) / fps <= last {
            let t = Double(i) / fps
            let hid = f.place(at: t, bounces: bounces, floor: floor).map { clutter.hides($0, at: t, in: self) } ?? false
            if hid, start == nil { start = i }
            if !hid, let s = start { out.append(Double(s) / fps...Double(i - 1) / fps); start = nil }
            i += 1
        }
        if let s = start { out.append(Double(s) / fps...Double(max(s, i - 1)) / fps) }
        return out
    }
}

extension ThrowSceneRenderer {
    /// What is drawn behind the figure and the balls: the movers and the lookalikes.
    static func drawBehind(_ clutter: Clutter, into image: inout RGBImage, at t: Double, scene s: ThrowScene) {
        for m in clutter.movers {
            image.fillRect((Float(m.left(at: t)), Float(m.y), Float(m.width), Float(m.height)), color: RGB(m.color[0], m.color[1], m.color[2]))
        }
        for l in clutter.lookalikes {
            guard let p = l.position(at: t, floor: s.floor) else { continue }
            if l.motion == .swinging {
                image.drawLine(from: (Float(l.x), Float(l.y)), to: (Float(p.x), Float(p.y)), color: RGB(60, 60, 60), thickness: 1.5)
            }
            image.fillCircle(center: (Float(p.x), Float(p.y)), radius: Float(l.radius), color: RGB(l.color[0], l.color[1], l.color[2]))
        }
        for stray in clutter.strays {
            let f = s.flight(stray)
            guard t >= stray.start, let p = f.place(at: t, bounces: stray.bounces, floor: s.floor) else { continue }
            image.fillCircle(center: (Float(p.x), Float(p.y)), radius: Float(stray.radius),
                             color: RGB(stray.color[0], stray.color[1], stray.color[2]))
        }
    }

    /// What is drawn in front of everything: the panels and the walkers in front.
    static func drawInFront(_ clutter: Clutter, into image: inout RGBImage, at t: Double, scene s: ThrowScene) {
        for w in clutter.walkersInFront where t >= w.start {
            walker(w, at: t, floor: s.floor, pixelsPerMetre: s.pixelsPerMetre, shirt: RGB(70, 110, 60)).draw(into: &image)
        }
        for p in clutter.panels {
            image.fillRect((Float(p.x), Float(p.y), Float(p.width), Float(p.height)), color: RGB(p.color[0], p.color[1], p.color[2]))
        }
    }
}

extension ThrowScenes {
    /// The scenes of a cluttered throw set: each of `sceneThrowCount` throws by the figure
    /// (one or two a scene), with clutter drawn from `r` around its flights: a panel that
    /// hides the ball for 0.1–0.5 s, a person walking in front across the flight, a large box
    /// moving back and forth behind it, lookalikes rolling on the floor or swinging across
    /// its path, and a stray ball in flight at the same time; each with its own chance, at
    /// least two of them a scene.
    public static func clutterSet(throwCount: Int, seed: UInt64, width: Int = 1280, height: Int = 720) -> [ThrowScene] {
        var r = SplitMix64(seed: seed)
        var scenes: [ThrowScene] = [], left = throwCount
        while left > 0 {
            let n = min(left, r.chance(0.5) ? 2 : 1)
            var s = scene(&r, width: width, height: height, throwCount: n)
            s.shakes = []
            s.clutter = clutter(&r, for: s)
            // Time for the strays to come down.
            let end = s.flights.map { $0.flight.end + ($0.bounces ? 1 : 0.3) }.max() ?? s.seconds
            s.frames = max(s.frames, Int(((end + 0.3) * s.fps).rounded()))
            scenes.append(s)
            left -= n
        }
        return scenes
    }

    static func clutter(_ r: inout SplitMix64, for s: ThrowScene) -> Clutter {
        var c = Clutter()
        let w = Double(s.width), ppm = s.pixelsPerMetre
        var kinds = [0.6, 0.5, 0.4, 0.5, 0.5].map { r.chance($0) }
        while kinds.filter({ $0 }).count < 2 { kinds[Int(r.uniform(0...4.999))] = true }
        let flights = s.throwsPlanned.map(s.flight)
        let color = { (r: inout SplitMix64) -> [UInt8] in [UInt8(r.uniform(20...235)), UInt8(r.uniform(20...235)), UInt8(r.uniform(20...235))] }
        for f in flights {
            let duration = f.end - f.release
            if kinds[0], duration >= 0.65 {
                // Hidden for 0.1–0.5 s, with at least 0.3 s of flight seen before (its path is
                // known when it goes) and 0.25 s after: a panel from the top down to a little
                // below the ball's lowest point meanwhile.
                let hide = min(r.uniform(0.1...0.5), duration - 0.55)
                let from = f.release + 0.3 + r.uniform(0...1) * (duration - 0.55 - hide)
                let a = f.position(at: from), b = f.position(at: from + hide)
                let low = stride(from: from, through: from + hide, by: 0.01).map { f.position(at: $0).y }.max() ?? b.y
                c.panels.append(Clutter.Panel(x: min(a.x, b.x) + f.radius, y: 0, width: max(1, abs(b.x - a.x) - 2 * f.radius),
                                              height: min(s.floor - 4, low + f.radius + r.uniform(10...80)), color: color(&r)))
            }
            if kinds[1] {
                // A person walking in front, level with the flight's middle at that moment.
                let t = f.release + r.uniform(0.3...0.7) * duration
                let speed = (r.chance(0.5) ? 1 : -1) * r.uniform(1...1.6) * ppm
                c.walkersInFront.append(ThrowScene.Walker(start: 0, x: f.position(at: t).x - speed * t, speed: speed, scale: r.uniform(1.0...1.25)))
            }
            if kinds[2] {
                let t = f.release + r.uniform(0.3...0.7) * duration
                let p = f.position(at: t), boxW = r.uniform(0.1...0.25) * w, boxH = r.uniform(0.15...0.35) * Double(s.height)
                c.movers.append(Clutter.Mover(x: p.x - boxW / 2, y: max(0, p.y - boxH * r.uniform(0.3...0.7)), width: boxW, height: boxH,
                                              amplitude: r.uniform(0.05...0.2) * w, period: r.uniform(1.5...4), phase: r.uniform(0...6.28),
                                              color: color(&r)))
            }
        }
        let ball = s.throwsPlanned.first
        let radius = (ball?.ballRadius ?? 0.045) * ppm, ballColor = ball?.ballColor ?? [255, 140, 0]
        if kinds[3], let f = flights.first {
            // Rolling along the floor under the flight's end, or swinging across its middle.
            if r.chance(0.5) {
                let t = f.release + r.uniform(0.2...0.9) * (f.end - f.release)
                let speed = (r.chance(0.5) ? 1 : -1) * r.uniform(0.7...2.5) * ppm
                c.lookalikes.append(Clutter.Lookalike(motion: .rolling, x: f.position(at: f.end).x - speed * t, y: 0, start: 0, speed: speed,
                                                      length: 0, amplitude: 0, period: 1, radius: radius, color: ballColor))
            } else {
                let p = f.position(at: (f.release + f.end) / 2), length = r.uniform(0.4...0.9) * ppm
                c.lookalikes.append(Clutter.Lookalike(motion: .swinging, x: p.x, y: max(0, p.y - length), start: 0, speed: 0, length: length,
                                                      amplitude: r.uniform(20...45), period: r.uniform(1.2...2.5), radius: radius, color: ballColor))
            }
        }
        if kinds[4], let f = flights.first {
            // A ball from the other side, in the air while the figure's is, seen for half a
            // second at least with its top in the picture (drawn again until so).
            let fromLeft = f.vx < 0
            for _ in 0..<50 {
                let speed = r.uniform(5...10) * ppm, angle = r.uniform(15...50) * .pi / 180
                let stray = Clutter.Stray(start: f.release + r.uniform(-0.2...0.4), x: fromLeft ? 0 : w, y: r.uniform(0.25...0.6) * s.floor,
                                          vx: (fromLeft ? 1 : -1) * speed * cos(angle), vy: -speed * sin(angle),
                                          radius: r.uniform(0.03...0.06) * ppm,
                                          color: r.pick([[255, 140, 0], [220, 30, 30], [250, 230, 40], [40, 160, 230]]), bounces: r.chance(0.3))
                let g = s.flight(stray)
                let top = g.y - g.vy * g.vy / (2 * g.gravity)
                if top >= 0.04 * Double(s.height) && g.end - g.release >= 0.5 { c.strays = [stray]; break }
            }
        }
        return c
    }
}
