import Basics
import Foundation
import Media
import Tensor

/// Sets of throw scenes drawn at random from a seed, and their videos and truth files.
public enum ThrowScenes {
    /// One scene of a set: its look (room, light, noise, size) and distractors drawn from
    /// `r`; `throwCount` throws (none: a distractor scene of `seconds`).
    public static func scene(_ r: inout SplitMix64, width: Int = 1280, height: Int = 720, throwCount: Int,
                             seconds: Double? = nil, bigFigure: Bool = false) -> ThrowScene {
        var s = ThrowScene()
        s.width = width; s.height = height
        let h = Double(height)
        s.floor = h * r.uniform(0.86...0.93)
        // The figure's height (1.75 m) as a share of the picture's: from far (0.3) to near (0.7).
        let share = bigFigure ? r.uniform(0.62...0.78) : r.uniform(0.3...0.6)
        s.pixelsPerMetre = share * h / 1.75
        let tone = r.uniform(150...220)
        s.wall = [UInt8(tone), UInt8(tone * r.uniform(0.9...1.02)), UInt8(tone * r.uniform(0.8...1.05))]
        s.floorColor = [UInt8(r.uniform(90...170)), UInt8(r.uniform(80...140)), UInt8(r.uniform(60...110))]
        s.brightness = r.uniform(0.6...1.15)
        s.lightFalloff = r.uniform(-0.25...0.3)
        s.noise = r.pick([0, 1.5, 3, 4.5, 6])
        s.noiseSeed = r.next()
        s.posters = (0..<Int(r.uniform(1...4.99))).map { _ in
            [r.uniform(0...(Double(width) - 120)), r.uniform(20...(s.floor * 0.5)), r.uniform(60...200), r.uniform(50...160),
             r.uniform(20...240), r.uniform(20...240), r.uniform(20...240)]
        }
        let direction: Double = r.chance(0.5) ? 1 : -1
        let throwerX = direction > 0 ? r.uniform(0.12...0.25) * Double(width) : r.uniform(0.75...0.88) * Double(width)
        s.thrower = ThrowScene.Thrower(x: throwerX, direction: direction, waves: r.chance(0.3))
        // The board beyond the thrower, where throws tend to land.
        let length = 1.22
        let boardX = throwerX + direction * r.uniform(2...4.5) * s.pixelsPerMetre
        s.board = ThrowScene.Board(x: direction > 0 ? boardX : boardX - length * s.pixelsPerMetre, length: length)
        var t = r.uniform(0.5...1.0)
        for _ in 0..<throwCount {
            let type = r.pick(ThrowType.allCases)
            let duration = r.uniform(0.6...0.9)
            let planned = ThrowScene.PlannedThrow(
                type: type, swingStart: t, swingDuration: duration, speed: 0, angle: 0,
                ballRadius: r.uniform(0.03...0.06), ballColor: r.pick([[255, 140, 0], [220, 30, 30], [250, 230, 40], [245, 245, 245], [30, 30, 40], [40, 160, 230]]),
                bounces: r.chance(0.3))
            // A throw the camera sees: its top within the picture, and half a second of
            // flight in it (as anyone filming throws frames them). Drawn again until so.
            s.throwsPlanned.append(planned)
            let k = s.throwsPlanned.count - 1
            for _ in 0..<50 {
                s.throwsPlanned[k].speed = r.uniform(4...12)
                s.throwsPlanned[k].angle = r.uniform(type.angles)
                let f = s.flight(s.throwsPlanned[k])
                let top = f.vy < 0 ? f.y - f.vy * f.vy / (2 * f.gravity) : f.y
                if top >= 0.04 * h && f.end - f.release >= 0.5 { break }
            }
            // The next swing starts once this ball is down.
            let f = s.flight(s.throwsPlanned.last!)
            t = f.end + r.uniform(0.4...1.0)
        }
        let length_ = seconds ?? t + 0.3
        s.frames = Int((length_ * s.fps).rounded())
        if r.chance(0.3) {
            s.walker = ThrowScene.Walker(start: r.uniform(0...1), x: direction > 0 ? Double(width) + 60 : -60,
                                         speed: -direction * r.uniform(1...1.6) * s.pixelsPerMetre, scale: r.uniform(0.7...1))
        }
        if r.chance(0.35) {
            let x = direction > 0 ? r.uniform(0.85...0.97) * Double(width) : r.uniform(0.03...0.15) * Double(width)
            s.leaves = (0..<Int(r.uniform(4...9.99))).map { _ in
                ThrowScene.Leaf(x: x + r.uniform(-60...60), y: r.uniform(30...(s.floor * 0.45)), radius: r.uniform(3...10),
                                amplitude: r.uniform(5...35), frequency: r.uniform(0.4...2), phase: r.uniform(0...6.28))
            }
        }
        if r.chance(0.3) {
            // A shake: in a quiet moment when there are throws (between them or at the end).
            let length = r.uniform(0.5...2)
            let start = throwCount == 0 ? r.uniform(0...max(0.1, length_ - length)) : s.throwsPlanned.last.map { s.flight($0).end + 0.1 } ?? 0
            s.shakes = [ThrowScene.Shake(start: start, end: start + length, amplitude: r.uniform(2...15))]
            s.frames = max(s.frames, Int(((start + length + 0.5) * s.fps).rounded()))
        }
        s.shadow = r.chance(0.4)
        return s
    }

    /// The demo's scene: the figure throws overhand (7 m/s at 20°), then underhand at 40° at
    /// the speed that lands it where the first one landed, on the middle of a board;
    /// 1280×720 at 150 pixels a metre.
    public static func demoScene() -> ThrowScene {
        var s = ThrowScene()
        s.pixelsPerMetre = 150; s.floor = 640; s.noise = 1.5
        s.posters = [[420, 120, 160, 110, 60, 110, 160], [900, 80, 120, 150, 170, 80, 60]]
        s.thrower = ThrowScene.Thrower(x: 240, direction: 1, waves: false)
        s.board = ThrowScene.Board(x: 780, length: 1.22)
        s.throwsPlanned = [
            ThrowScene.PlannedThrow(type: .overhand, swingStart: 0.8, swingDuration: 0.75, speed: 7, angle: 20, ballRadius: 0.045,
                                    ballColor: [255, 140, 0], bounces: false),
            ThrowScene.PlannedThrow(type: .underhand, swingStart: 3.0, swingDuration: 0.8, speed: 6, angle: 40, ballRadius: 0.045,
                                    ballColor: [220, 30, 30], bounces: false),
        ]
        func landing(_ k: Int) -> Double { let f = s.flight(s.throwsPlanned[k]); return f.position(at: f.end).x }
        let spot = landing(0)
        s.board = ThrowScene.Board(x: spot - 0.61 * s.pixelsPerMetre, length: 1.22)
        // The underhand throw's speed, to a hundredth of a metre per second.
        s.throwsPlanned[1].speed = stride(from: 3.0, through: 12, by: 0.01).min { a, b in
            s.throwsPlanned[1].speed = a; let la = abs(landing(1) - spot)
            s.throwsPlanned[1].speed = b; return la < abs(landing(1) - spot)
        } ?? 6
        s.frames = Int(((s.flight(s.throwsPlanned[1]).end + 0.6) * s.fps).rounded())
        return s
    }

    /// Renders `scene` to CLIP.mp4 (H.264) and its truth to CLIP.json in `folder`.
    public static func write(_ scene: ThrowScene, name: String, to folder: URL) throws {
        let renderer = ThrowSceneRenderer(scene: scene)
        let video = folder.appendingPathComponent(name + ".mp4").path
        let writer = try VideoWriter(path: video, width: scene.width, height: scene.height, fps: scene.fps)
        for i in 0..<scene.frames { try writer.write(renderer.frame(i)) }
        try writer.finish()
        let truth = ThrowSceneTruth(scene: scene, clip: name + ".mp4")
        // Like every output: written whole through a temporary file, never through a link.
        try AtomicFile.write(JSONLines.document(truth), to: folder.appendingPathComponent(name + ".json").path)
    }

    /// The scenes of a throw set: one or two throws each, `throwCount` throws in all.
    public static func throwSet(throwCount: Int, seed: UInt64, width: Int = 1280, height: Int = 720) -> [ThrowScene] {
        var r = SplitMix64(seed: seed)
        var scenes: [ThrowScene] = [], left = throwCount
        while left > 0 {
            let n = min(left, r.chance(0.5) ? 2 : 1)
            scenes.append(scene(&r, width: width, height: height, throwCount: n))
            left -= n
        }
        return scenes
    }

    /// One long scene of `throwCount` throws in a row by one person and nothing else moving
    /// (a practice session; what `bench live --trajectories` plays).
    public static func sessionScene(throwCount: Int, seed: UInt64, width: Int = 1280, height: Int = 720) -> ThrowScene {
        var r = SplitMix64(seed: seed)
        var s = scene(&r, width: width, height: height, throwCount: throwCount)
        s.walker = nil; s.leaves = []; s.shakes = []; s.thrower?.waves = false
        s.frames = Int(((s.throwsPlanned.last.map { s.flight($0).end } ?? 0) + 1) * s.fps)
        return s
    }

    /// Distractor scenes (no throw) of 20 s each, `minutes` in all: the figure waving,
    /// people walking by, leaves, shakes, noise.
    public static func distractorSet(minutes: Double, seed: UInt64, width: Int = 1280, height: Int = 720) -> [ThrowScene] {
        var r = SplitMix64(seed: seed)
        return (0..<max(1, Int((minutes * 3).rounded(.up)))).map { _ in
            var s = scene(&r, width: width, height: height, throwCount: 0, seconds: 20)
            s.thrower?.waves = true
            s.thrower?.wavesThrowingArm = r.chance(0.5)
            if s.walker == nil { s.walker = ThrowScene.Walker(start: r.uniform(0...8), x: -60, speed: r.uniform(1...1.6) * s.pixelsPerMetre,
                                                              scale: r.uniform(0.7...1)) }
            if s.leaves.isEmpty {
                s.leaves = (0..<6).map { _ in ThrowScene.Leaf(x: r.uniform(0.05...0.95) * Double(width), y: r.uniform(30...200), radius: r.uniform(3...10),
                                                              amplitude: r.uniform(5...35), frequency: r.uniform(0.4...2), phase: r.uniform(0...6.28)) }
            }
            return s
        }
    }

    /// Labeled clips for a throw-type classifier, as `poseact extract` reads them:
    /// train/LABEL/*.mp4 and test/LABEL/*.mp4 for overhand, underhand and background (the
    /// figure walking across, waving, or standing), `perLabel` train clips and a third as
    /// many test clips per label; 640×480, 1.6 s, the figure large.
    public static func writeTypeDataset(to folder: URL, perLabel: Int, seed: UInt64,
                                        progress: (String) -> Void = { _ in }) throws {
        var r = SplitMix64(seed: seed)
        for (split, count) in [("train", perLabel), ("test", max(1, perLabel / 3))] {
            for label in ThrowType.allCases.map(\.rawValue) + ["background"] {
                let dir = folder.appendingPathComponent("\(split)/\(label)")
                try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
                for n in 1...count {
                    var s = scene(&r, width: 640, height: 480, throwCount: label == "background" ? 0 : 1, seconds: 1.6, bigFigure: true)
                    s.shakes = []; s.walker = nil
                    s.thrower?.x = r.uniform(0.35...0.65) * 640
                    if let type = ThrowType(rawValue: label) {
                        s.throwsPlanned[0].type = type
                        s.throwsPlanned[0].angle = r.uniform(type.angles)
                        s.throwsPlanned[0].swingStart = r.uniform(0.1...0.5)
                    } else {
                        switch n % 3 {
                        case 0: s.thrower?.waves = true; s.thrower?.wavesThrowingArm = r.chance(0.5)
                        case 1: s.walker = ThrowScene.Walker(start: 0, x: r.uniform(100...540), speed: r.uniform(-1.2...1.2) * s.pixelsPerMetre, scale: 1)
                                s.thrower = nil
                        default: s.thrower?.waves = false
                        }
                    }
                    s.frames = 48
                    try write(s, name: "\(label)\(n)", to: dir)
                    progress("\(split)/\(label)/\(label)\(n).mp4")
                }
            }
        }
    }
}
