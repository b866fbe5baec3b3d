import Basics
import Foundation

/// What a rendered throw scene truly holds, written beside its video (CLIP.json): every
/// throw's release, speed and angle, where it ended and whether it hit the board, the
/// scale, the target, and when the camera shook. Coordinates are the still camera's.
public struct ThrowSceneTruth: Codable, Sendable {
    public var clip: String
    public var width: Int, height: Int
    public var fps: Double
    public var frames: Int
    public var pixelsPerMetre: Double
    /// Two points on the board's top a known distance apart: `--scale X1,Y1,X2,Y2=METRESm`.
    public var scale: Scale?
    /// The board's region (pixels): `--target X,Y,W,H`.
    public var target: Box?
    public var shake: [Interval]
    public var distractors: [String]
    public var throwsMade: [TrueThrow]
    /// Cluttered scenes: the balls no one in view threw.
    public var strays: [TrueStray]?
    /// The scene itself, to render again.
    public var scene: ThrowScene

    public struct Scale: Codable, Sendable { public var x1, y1, x2, y2, metres: Double }
    public struct Box: Codable, Sendable { public var x, y, width, height: Double }
    public struct Interval: Codable, Sendable { public var start, end: Double }

    public struct TrueThrow: Codable, Sendable {
        public var type: ThrowType
        /// "right" or "left": the person's own.
        public var hand: String
        /// Seconds from the clip's start (frame i shows time i / fps).
        public var releaseTime: Double
        /// The ball's centre at release, pixels.
        public var releaseX: Double, releaseY: Double
        public var speedMetresPerSecond: Double
        public var speedPixelsPerSecond: Double
        /// Degrees above the horizontal, in the direction of the throw (the forearm's at release too).
        public var angle: Double
        /// +1: towards +x; −1: towards −x.
        public var direction: Double
        /// Pixels per second² downwards.
        public var gravity: Double
        /// When it first lands or leaves the picture, and where.
        public var endTime: Double
        public var endX: Double, endY: Double
        public var leavesFrame: Bool
        public var hit: Bool?
        public var bounces: Bool
        public var duringShake: Bool
        /// Cluttered scenes: when the ball's centre was behind something in front (the pieces
        /// it is seen in lie between), and where it bounced ([time, x, y]).
        public var hidden: [Interval]?
        public var bounce: [Double]?

        enum CodingKeys: String, CodingKey {
            case type, hand, angle, direction, gravity, hit, bounces, hidden, bounce
            case releaseTime, releaseX, releaseY
            case speedMetresPerSecond = "speedMps", speedPixelsPerSecond = "speedPxPerS"
            case endTime, endX, endY, leavesFrame, duringShake
        }
    }

    /// A ball no one in view threw (cluttered scenes): from where and when it came into view
    /// (its centre on the picture's edge), at what speed and angle, to where it ended.
    public struct TrueStray: Codable, Sendable {
        public var startTime: Double
        public var startX: Double, startY: Double
        public var speedPixelsPerSecond: Double
        public var angle: Double
        public var direction: Double
        public var gravity: Double
        public var endTime: Double
        public var endX: Double, endY: Double
        public var leavesFrame: Bool
        public var bounces: Bool
        public var bounce: [Double]?
        public var hidden: [Interval]

        enum CodingKeys: String, CodingKey {
            case startTime, startX, startY, angle, direction, gravity, endTime, endX, endY, leavesFrame, bounces, bounce, hidden
            case speedPixelsPerSecond = "speedPxPerS"
        }
    }

    enum CodingKeys: String, CodingKey {
        case clip, width, height, fps, frames, scale, target, shake, distractors, scene, strays
        case pixelsPerMetre, throwsMade = "throws"
    }

    public enum Failure {}
    public typealias TruthError = OneLineError<Failure>

    /// A truth file is a few kilobytes; one over this is refused before it is read.
    public static let maximumBytes = 16 << 20

    /// Reads and checks the truth at `path` (`throws render` writes them): one line names
    /// the file and what is wrong when it is not a scene's truth, or names a video outside
    /// its folder.
    public static func read(_ path: String) throws -> ThrowSceneTruth {
        let data: Data
        do { data = try InputFile.read(path, limit: maximumBytes, what: "scene's truth") } catch let error as InputFileError { throw TruthError(error.message) }
        let truth: ThrowSceneTruth
        do {
            truth = try JSONLines.decode(ThrowSceneTruth.self, from: data)
        } catch let error as DecodingError {
            throw TruthError(error.oneLine(file: path, expected: "a scene's truth (poseact throws render)", data: data))
        }
        if let problem = truth.problem() { throw TruthError("\(path): \(problem)") }
        guard !truth.clip.contains("/"), truth.clip.hasSuffix(".mp4") else {
            throw TruthError("\(path): clip '\(OneLine.excerpt(truth.clip))' must be a .mp4 name in the same folder")
        }
        return truth
    }

    /// Why a truth read from a file cannot be scored, or nil: numbers a scoring divides by
    /// or ranges over (a shake that ends before it starts, a scale of 0 m, a NaN time).
    public func problem() -> String? {
        guard (1...100_000).contains(width), (1...100_000).contains(height) else { return "width and height must be 1…100000 pixels" }
        guard fps.isFinite, fps > 0, fps <= 1000 else { return "fps \(fps) is not a frame rate in (0, 1000]" }
        guard (0...10_000_000).contains(frames) else { return "frames \(frames) is not a count in 0…10000000" }
        guard pixelsPerMetre.isFinite, pixelsPerMetre > 0 else { return "pixels_per_metre \(pixelsPerMetre) must be a number > 0" }
        for (i, interval) in shake.enumerated() {
            guard interval.start.isFinite, interval.end.isFinite, interval.start <= interval.end else {
                return "shake \(i + 1) runs from \(interval.start) to \(interval.end) s: it must end after it starts"
            }
        }
        if let scale {
            guard [scale.x1, scale.y1, scale.x2, scale.y2].allSatisfy(\.isFinite), scale.metres.isFinite, scale.metres > 0 else {
                return "scale's points must be numbers and its metres > 0"
            }
        }
        if let target {
            guard [target.x, target.y].allSatisfy(\.isFinite), target.width.isFinite, target.height.isFinite,
                  target.width > 0, target.height > 0 else { return "target's box must be numbers, with width and height > 0" }
        }
        for (i, t) in throwsMade.enumerated() {
            let numbers = [t.releaseTime, t.releaseX, t.releaseY, t.speedMetresPerSecond, t.speedPixelsPerSecond, t.angle,
                           t.direction, t.gravity, t.endTime, t.endX, t.endY]
            guard numbers.allSatisfy(\.isFinite), t.endTime >= t.releaseTime, t.releaseTime >= 0 else {
                return "throw \(i + 1): its numbers must be finite, its release at 0 s or later and its end after its release"
            }
            if let problem = Self.problem(hidden: t.hidden ?? [], bounce: t.bounce) { return "throw \(i + 1): \(problem)" }
        }
        for (i, t) in (strays ?? []).enumerated() {
            let numbers = [t.startTime, t.startX, t.startY, t.speedPixelsPerSecond, t.angle, t.direction, t.gravity, t.endTime, t.endX, t.endY]
            guard numbers.allSatisfy(\.isFinite), t.endTime >= t.startTime, t.startTime >= 0, t.speedPixelsPerSecond > 0 else {
                return "stray \(i + 1): its numbers must be finite, its start at 0 s or later, its end after its start and its speed > 0"
            }
            if let problem = Self.problem(hidden: t.hidden, bounce: t.bounce) { return "stray \(i + 1): \(problem)" }
        }
        return nil
    }

    private static func problem(hidden: [Interval], bounce: [Double]?) -> String? {
        guard hidden.allSatisfy({ $0.start.isFinite && $0.end.isFinite && $0.start <= $0.end }) else {
            return "a hidden interval must be numbers that end after they start"
        }
        if let bounce, bounce.count != 3 || !bounce.allSatisfy(\.isFinite) { return "its bounce must be [time, x, y], numbers" }
        return nil
    }

    public init(scene s: ThrowScene, clip: String) {
        self.clip = clip
        width = s.width; height = s.height; fps = s.fps; frames = s.frames; pixelsPerMetre = s.pixelsPerMetre
        scene = s
        if let b = s.board {
            scale = Scale(x1: b.x, y1: s.floor - 0.03 * s.pixelsPerMetre, x2: b.x + b.length * s.pixelsPerMetre,
                          y2: s.floor - 0.03 * s.pixelsPerMetre, metres: b.length)
            // The board, and the space a ball lying on it takes.
            target = Box(x: b.x, y: s.floor - 0.3 * s.pixelsPerMetre, width: b.length * s.pixelsPerMetre, height: 0.35 * s.pixelsPerMetre)
        }
        shake = s.shakes.map { Interval(start: $0.start, end: $0.end) }
        var d: [String] = []
        if s.thrower?.waves == true || s.thrower?.wavesThrowingArm == true { d.append("waving_arm") }
        if s.walker != nil { d.append("walking_person") }
        if !s.leaves.isEmpty { d.append("leaves") }
        if !s.shakes.isEmpty { d.append("camera_shake") }
        distractors = d
        throwsMade = s.throwsPlanned.map { p in
            let f = s.flight(p)
            let end = f.position(at: f.end)
            return TrueThrow(type: p.type, hand: (s.thrower?.direction ?? 1) < 0 ? "right" : "left", releaseTime: f.release,
                             releaseX: f.x, releaseY: f.y, speedMetresPerSecond: p.speed, speedPixelsPerSecond: p.speed * s.pixelsPerMetre,
                             angle: p.angle, direction: s.thrower?.direction ?? 1, gravity: f.gravity, endTime: f.end,
                             endX: end.x, endY: end.y, leavesFrame: f.leavesFrame, hit: s.hits(p), bounces: p.bounces && !f.leavesFrame,
                             // Shaking from a little before the release to the first frames of flight.
                             duringShake: s.shakes.contains { $0.start - 0.2 < f.release && $0.end + 0.3 > f.release },
                             hidden: s.clutter.map { _ in s.hidden(f, bounces: p.bounces).map { Interval(start: $0.lowerBound, end: $0.upperBound) } },
                             bounce: Self.bounce(f, p.bounces))
        }
        strays = s.clutter.map { c in
            c.strays.map { stray in
                let f = s.flight(stray), end = f.position(at: f.end)
                return TrueStray(startTime: f.release, startX: f.x, startY: f.y, speedPixelsPerSecond: hypot(f.vx, f.vy),
                                 angle: atan2(-f.vy, abs(f.vx)) * 180 / .pi, direction: f.vx >= 0 ? 1 : -1, gravity: f.gravity,
                                 endTime: f.end, endX: end.x, endY: end.y, leavesFrame: f.leavesFrame, bounces: stray.bounces && !f.leavesFrame,
                                 bounce: Self.bounce(f, stray.bounces),
                                 hidden: s.hidden(f, bounces: stray.bounces).map { Interval(start: $0.lowerBound, end: $0.upperBound) })
            }
        }
    }

    private static func bounce(_ f: ThrowScene.Flight, _ bounces: Bool) -> [Double]? {
        guard bounces, !f.leavesFrame else { return nil }
        let p = f.position(at: f.end)
        return [f.end, p.x, p.y]
    }
}
