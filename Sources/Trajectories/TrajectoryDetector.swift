import Foundation
import Images

/// What the trajectory detector looks for.
public struct TrajectoryOptions: Sendable, Equatable {
    /// The object's size (its bounding box's larger side) as a share of the frame's width:
    /// smaller is noise, larger is an arm or a person.
    public var objectSize: ClosedRange<Double> = 0.003...0.04
    /// Detected points a trajectory needs (8: a quarter of a second at 30 fps).
    public var minimumPoints = 8
    /// Where trajectories are looked for (pixels: x, y, width, height); nil: the whole frame.
    public var region: (x: Float, y: Float, width: Float, height: Float)?
    /// The slowest a thrown object goes, on average along its path, in frame widths per
    /// second (0.15: 4 m/s seen 1280 pixels wide at 50 pixels a metre). Slower things that
    /// move along a line are a person's parts: a foot, a hand.
    public var minimumSpeed = 0.15
    /// The slowest a trajectory that does not bend goes (frame widths per second): 0.5 is a
    /// 12 m/s throw seen 1280 pixels wide at 53 pixels a metre.
    public var minimumStraightSpeed = 0.5
    /// Frames a trajectory with a fitted path may go unseen and still go on (a point missed,
    /// the object passing something of its colour).
    public var maximumGap = 4
    /// A shift of the camera between two frames of at least this many pixels means it moves.
    public var cameraMotion: Float = 1
    /// Still frames after the camera moved before trajectories are looked for again (the
    /// background is relearnt meanwhile).
    public var settleFrames = 5

    public init() {}

    public static func == (a: TrajectoryOptions, b: TrajectoryOptions) -> Bool {
        a.objectSize == b.objectSize && a.minimumPoints == b.minimumPoints && a.minimumSpeed == b.minimumSpeed && a.minimumStraightSpeed == b.minimumStraightSpeed && a.maximumGap == b.maximumGap
            && a.region.map { [$0.x, $0.y, $0.width, $0.height] } == b.region.map { [$0.x, $0.y, $0.width, $0.height] }
            && a.cameraMotion == b.cameraMotion && a.settleFrames == b.settleFrames
    }
}

/// Finds the trajectories of thrown objects in a video, frame by frame, with no trained
/// model and no idea what the object is (as Vision's `VNDetectTrajectoriesRequest`):
/// small moving blobs (`MovingBlobs`) are linked from frame to frame, each track
/// predicting where its object goes next from the motion fitted so far, and a track is a
/// trajectory when it ends with enough points that follow a ballistic motion (a parabola
/// in time, or a line) closely and keep going one way sideways. While the camera moves
/// (`SceneMotion`) nothing is looked for; tracks under way end there.
public final class TrajectoryDetector {
    public let options: TrajectoryOptions
    /// Whether the camera stood still on the last frame (and long enough since it moved).
    public private(set) var sceneIsStable = true
    /// The camera's shift on the last frame, pixels.
    public private(set) var lastShift: (x: Float, y: Float) = (0, 0)
    private var blobs = MovingBlobs()
    private var motion = SceneMotion()
    private var tracks: [Track] = []
    private var nextID = 1
    private var stillFrames = 0
    private var frameWidth = 0, frameHeight = 0
    private var lastTime: Double?

    public init(options: TrajectoryOptions = TrajectoryOptions()) { self.options = options }

    public func reset() {
        blobs = MovingBlobs(); motion = SceneMotion(); tracks = []; nextID = 1; stillFrames = 0
        sceneIsStable = true; lastTime = nil
    }

    /// The tracks under way that already look like trajectories (for drawing as they fly).
    public var ongoing: [Trajectory] { tracks.compactMap { $0.trajectory(options: options, frameWidth: frameWidth, ending: .stopped) } }

    /// One frame: the trajectories that ended with it.
    public func push(_ image: RGBImage, time: Double) -> [Trajectory] {
        frameWidth = image.width; frameHeight = image.height
        lastTime = time
        blobs.load(image)
        let shift = motion.shift(width: blobs.width, height: blobs.height, rgb: blobs.working)
        let f = Float(blobs.factor)
        lastShift = shift.map { ($0.x * f, $0.y * f) } ?? (0, 0)
        let moved = (lastShift.x * lastShift.x + lastShift.y * lastShift.y).squareRoot() >= options.cameraMotion
        if moved || blobs.movingShare > 0.3 {
            stillFrames = 0
            sceneIsStable = false
            blobs.reset()
            return endAll(.cameraMoved)
        }
        stillFrames += 1
        if !sceneIsStable && stillFrames <= options.settleFrames {
            blobs.reset()
            return []
        }
        sceneIsStable = true
        let w = Float(image.width)
        let sizes = Float(options.objectSize.lowerBound) * w...Float(options.objectSize.upperBound) * w
        let found = blobs.blobs(sizes: sizes, region: options.region)
        return link(found, time: time)
    }

    /// The end of the input: the tracks under way end.
    public func finish() -> [Trajectory] { endAll(.inputEnded) }

    private func endAll(_ ending: Trajectory.Ending) -> [Trajectory] {
        let done = tracks.compactMap { finish($0, ending) }
        tracks = []
        return done
    }

    private func finish(_ track: Track, _ ending: Trajectory.Ending) -> Trajectory? {
        guard var t = track.trajectory(options: options, frameWidth: frameWidth, ending: ending) else { return nil }
        t.id = nextID
        nextID += 1
        return t
    }

    private func link(_ found: [Blob], time: Double) -> [Trajectory] {
        // Every pairing within a track's gate, nearest first (relative to the gate), tracks
        // with a fitted path before new ones.
        var pairs: [(track: Int, blob: Int, score: Float)] = []
        let maxStep = 0.12 * Float(frameWidth)
        for (i, track) in tracks.enumerated() {
            let (predicted, gate) = track.prediction(at: time, maxStep: maxStep)
            for (j, b) in found.enumerated() {
                let d = hypot(b.x - predicted.x, b.y - predicted.y)
                guard d <= gate else { continue }
                if track.points.count == 1, d < 0.3 * b.size { continue }   // not moving
                pairs.append((i, j, d / gate + (track.points.count >= 3 ? 0 : 1)))
            }
        }
        pairs.sort { $0.score < $1.score }
        var trackTaken = Set<Int>(), blobTaken = Set<Int>()
        for p in pairs where !trackTaken.contains(p.track) && !blobTaken.contains(p.blob) {
            trackTaken.insert(p.track); blobTaken.insert(p.blob)
            tracks[p.track].add(found[p.blob], time: time)
        }
        var ended: [Trajectory] = []
        var kept: [Track] = []
        for (i, track) in tracks.enumerated() {
            if trackTaken.contains(i) { kept.append(track); continue }
            var track = track
            track.missed += 1
            let allowed = track.points.count >= 4 ? options.maximumGap : 1
            let next = track.prediction(at: time, maxStep: maxStep).position
            let outside = !contains(next)
            if outside || track.missed > allowed {
                if let t = finish(track, outside ? .leftFrame : .stopped) { ended.append(t) }
            } else {
                kept.append(track)
            }
        }
        for (j, b) in found.enumerated() where !blobTaken.contains(j) {
            kept.append(Track(first: TrajectoryPoint(time: time, x: b.x, y: b.y), size: b.size))
        }
        // Bounded however busy the scene: the longest tracks are kept.
        if kept.count > 200 { kept = Array(kept.sorted { $0.points.count > $1.points.count }.prefix(200)) }
        tracks = kept
        return ended
    }

    private func contains(_ p: (x: Float, y: Float)) -> Bool {
        if let r = options.region { return p.x >= r.x && p.x < r.x + r.width && p.y >= r.y && p.y < r.y + r.height }
        return p.x >= 0 && p.x < Float(frameWidth) && p.y >= 0 && p.y < Float(frameHeight)
    }
}

/// One object followed from frame to frame.
struct Track {
    var points: [TrajectoryPoint]
    var sizes: [Float]
    var missed = 0
    /// The motion fitted to the points so far (refitted with each point).
    var motion: BallisticMotion?

    init(first: TrajectoryPoint, size: Float) { points = [first]; sizes = [size] }

    mutating func add(_ b: Blob, time: Double) {
        points.append(TrajectoryPoint(time: time, x: b.x, y: b.y))
        sizes.append(b.size)
        missed = 0
        motion = points.count >= 4 ? BallisticMotion.fit(points) : points.count >= 2 ? BallisticMotion.fit(points, straight: true) : nil
    }

    var medianSize: Float { sizes.sorted()[sizes.count / 2] }

    /// Where the object should be at `time`, and how far from there a blob may be to be it.
    func prediction(at time: Double, maxStep: Float) -> (position: (x: Float, y: Float), gate: Float) {
        let last = points[points.count - 1]
        guard let motion, points.count >= 2 else { return ((last.x, last.y), maxStep) }
        let q = motion.position(at: time)
        let p = (x: Float(q.x), y: Float(q.y))
        let step = hypot(p.x - last.x, p.y - last.y)
        let size = medianSize
        // A long track's path is known to a fraction of a pixel: a bounce or a landing falls outside.
        if points.count >= 6 { return (p, max(4, 0.6 * size)) }
        if points.count >= 4 { return (p, max(6, 1.5 * size, 0.2 * step)) }
        return (p, max(8, 2.5 * size, 0.6 * step))
    }

    /// The trajectory this track makes, if it makes one: enough points, a path that fits
    /// within max(1 px, 10 % of the object's size) root mean square (a thrown object's centre
    /// follows its parabola to a fraction of a pixel; a swaying or swinging thing's does not),
    /// that goes at least four object sizes and 20 pixels, does not turn back sideways, and
    /// does not fall upwards (its acceleration along the image's up is under 100 px/s²,
    /// a tenth of gravity at 100 pixels a metre), and at `minimumSpeed` at least.
    func trajectory(options: TrajectoryOptions, frameWidth: Int, ending: Trajectory.Ending) -> Trajectory? {
        guard points.count >= options.minimumPoints, var motion = BallisticMotion.fit(points) else { return nil }
        let size = Double(medianSize)
        let tolerance = max(1, 0.1 * size)
        // A few points may not be free flight: the object still touching the hand's blob, a
        // piece of another blob taken on the way, the landing. The worst point is dropped
        // while it lies more than three tolerances off the path the others make, a fifth of
        // the points at most.
        var points = points
        let keep = max(options.minimumPoints, points.count * 4 / 5)
        while points.count > keep {
            let off = points.map { p -> Double in let q = motion.position(at: p.time); return hypot(Double(p.x) - q.x, Double(p.y) - q.y) }
            guard let worst = off.indices.max(by: { off[$0] < off[$1] }), off[worst] > 3 * tolerance else { break }
            points.remove(at: worst)
            guard let refit = BallisticMotion.fit(points) else { return nil }
            motion = refit
        }
        let residual = motion.residual(points)
        guard residual <= tolerance, motion.ay > -100 else { return nil }
        let first = points[0], last = points[points.count - 1]
        let path = zip(points, points.dropFirst()).reduce(0.0) { $0 + Double(hypot($1.1.x - $1.0.x, $1.1.y - $1.0.y)) }
        guard path >= max(20, 4 * size) else { return nil }
        let duration = max(1e-6, last.time - first.time)
        guard path / duration >= options.minimumSpeed * Double(frameWidth) else { return nil }
        // A path that does not bend (it sags under 2 px from its chord) is a straight line: free
        // flight seen for long enough always bends, so a straight one must be fast (a hard
        // throw seen briefly); feet and hands of people walking go straight and slowly.
        let sag = abs(motion.ay) * duration * duration / 8
        guard sag >= 2 || path / duration >= options.minimumStraightSpeed * Double(frameWidth) else { return nil }
        let direction: Float = last.x >= first.x ? 1 : -1
        let backwards = zip(points, points.dropFirst()).filter { ($0.1.x - $0.0.x) * direction < -Float(tolerance) }.count
        guard backwards <= 1 else { return nil }
        let confidence = 0.5 * max(0, 1 - residual / tolerance) + 0.5 * min(1, Double(points.count) / Double(2 * options.minimumPoints))
        return Trajectory(id: 0, points: points, motion: motion, equation: motion.equation(duration: duration),
                          residual: residual, confidence: confidence, objectSize: size, ending: ending)
    }
}
