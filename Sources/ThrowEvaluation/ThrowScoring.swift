import Basics
import Foundation
import Live
import Media
import Scenes
import Trajectories

/// Scores `--trajectories` on rendered scenes (a folder of CLIP.mp4 with CLIP.json truth,
/// `poseact throws render`): each clip with throws goes through annotate's pipeline (poses,
/// the model, the trajectory detector, the throws) with the truth's scale and target;
/// a clip without throws goes through the trajectory detector alone (every trajectory
/// found there is a false one).
public enum ThrowScoring {
    /// Every CLIP.json of `folder`, read and checked (`ThrowSceneTruth.read`).
    public static func truths(in folder: String) throws -> [(video: String, truth: ThrowSceneTruth)] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".json") }.sorted()
        return try names.map { name in
            let path = (folder as NSString).appendingPathComponent(name)
            let truth = try ThrowSceneTruth.read(path)
            return ((folder as NSString).appendingPathComponent(truth.clip), truth)
        }
    }

    /// The throw options a clip's truth implies: its scale and its target.
    public static func options(_ truth: ThrowSceneTruth, base: ThrowOptions) -> ThrowOptions {
        var o = base
        if let s = truth.scale { o.scale = .reference(x1: Float(s.x1), y1: Float(s.y1), x2: Float(s.x2), y2: Float(s.y2), metres: s.metres) }
        if let b = truth.target {
            let (x, y, w, h) = (Float(b.x), Float(b.y), Float(b.width), Float(b.height))
            o.target = [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]
        }
        return o
    }

    public static func flights(_ truth: ThrowSceneTruth) -> [TrueFlight] {
        truth.throwsMade.map { t in
            TrueFlight(release: t.releaseTime, x: t.releaseX, y: t.releaseY, speed: t.speedPixelsPerSecond, angle: t.angle,
                       direction: t.direction, gravity: t.gravity, end: t.endTime, metricSpeed: t.speedMetresPerSecond,
                       type: t.type.rawValue, bounces: t.bounces, duringShake: t.duringShake, hit: t.hit)
        } + (truth.strays ?? []).map { s in
            TrueFlight(release: s.startTime, x: s.startX, y: s.startY, speed: s.speedPixelsPerSecond, angle: s.angle,
                       direction: s.direction, gravity: s.gravity, end: s.endTime, metricSpeed: s.speedPixelsPerSecond / truth.pixelsPerMetre,
                       type: "stray", bounces: s.bounces, duringShake: false, hit: nil, thrown: false)
        }
    }

    /// The trajectory detector alone over a video.
    public static func trajectories(in video: String, options: TrajectoryOptions) throws -> (found: [Trajectory], seconds: Double) {
        let reader = try VideoReader(video)
        defer { reader.close() }
        let detector = TrajectoryDetector(options: options)
        var found: [Trajectory] = [], last = 0.0
        while let frame = try reader.next() {
            found += detector.push(frame.image, time: frame.time)
            last = frame.time
        }
        return (Trajectory.latest(found + detector.finish()), last + 1 / max(1, reader.info.fps))
    }
}
