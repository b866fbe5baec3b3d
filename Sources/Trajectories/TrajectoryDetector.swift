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
    /// Seconds a piece whose path is known (six points or more) may stay unseen and still be
    /// joined by what reappears on that path: the object hidden behind someone, or lost
    /// against something that moves behind it. Its hop after a bounce joins it too.
    public var maximumHidden = 0.5
    /// A shift of the camera between two frames of at least this many pixels means it moves.
    public var cameraMotion: Float = 1
    /// Still frames after the camera moved before trajectories are looked for again (the
    /// background is relearnt meanwhile).
    public var settleFrames = 5

    public init() {}

    public static func == (a: TrajectoryOptions, b: TrajectoryOptions) -> Bool {
        a.objectSize == b.objectSize && a.minimumPoints == b.minimumPoints && a.minimumSpeed == b.minimumSpeed && a.minimumStraightSpeed == b.minimumStraightSpeed && a.maximumGap == b.maximumGap
            && a.maximumHidden == b.maximumHidden
            && a.region.map { [$0.x, $0.y, $0.width, $0.height] } == b.region.map { [$0.x, $0.y, $0.width, $0.height] }
            && a.cameraMotion == b.cameraMotion && a.settleFrames == b.settleFrames
    }
}

/// Finds the trajectories of thrown objects in a video, frame by frame, with no trained
/// model and no idea what the object is (as Vision's `VNDetectTrajectoriesRequest`):
/// small moving blobs (`MovingBlobs`) are linked from frame to frame, each track
/// predicting where its object goes next from the motion fitted so far, and a track is a
/// trajectory when it ends with enough points that follow a ballistic motion (a parabola
/// in time, or a line) closely and keep going one way sideways. A track that ends with a
/// known path waits `maximumHidden` seconds for its object to reappear on that path, or
/// to hop up from where it landed (a bounce); a piece that joins it makes one trajectory,
/// reported again with the same id (`Trajectory.revision`). Where a track's object passes in
/// front of something large that moves, their blobs are one and too big: the track looks
/// at what changed since the frame before where its object should be, and a track whose
/// object was first seen on its own after flying clear of such a thing looks back the same
/// way, through the last frames kept, for where it was before. While the camera moves
/// (`SceneMotion`) nothing is looked for; tracks under way end there, and wait as others do.
public final class TrajectoryDetector {
    public let options: TrajectoryOptions
    /// Whether the camera stood still on the last frame (and long enough since it moved).
    public private(set) var sceneIsStable = true
    /// The camera's shift on the last frame, pixels.
    public private(set) var lastShift: (x: Float, y: Float) = (0, 0)
    private var blobs = MovingBlobs()
    private var motion = SceneMotion()
    private var tracks: [Track] = []
    /// Tracks of three points or more that ended lately (those of `minimumPoints` or more,
    /// only if they make a trajectory): a later piece of their object may still join them
    /// (`maximumHidden`), or take them in (by its sixth point, or looking back).
    private var waiting: [Track] = []
    private var nextID = 1
    private var stillFrames = 0
    private var frameWidth = 0, frameHeight = 0
    private var lastTime: Double?
    /// Seconds from the frame before to the last one.
    private var frameInterval = 1.0 / 30

    public init(options: TrajectoryOptions = TrajectoryOptions()) { self.options = options }

    public func reset() {
        blobs = MovingBlobs(); motion = SceneMotion(); tracks = []; waiting = []; nextID = 1; stillFrames = 0
        sceneIsStable = true; lastTime = nil
    }

    /// The tracks under way that already look like trajectories (for drawing as they fly).
    public var ongoing: [Trajectory] { tracks.compactMap { $0.trajectory(options: options, frame: (frameWidth, frameHeight), ending: .stopped) } }

    /// One frame: the trajectories that ended with it.
    public func push(_ image: RGBImage, time: Double) -> [Trajectory] {
        frameWidth = image.width; frameHeight = image.height
        if let last = lastTime, time > last { frameInterval = time - last }
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
        // Frames kept to look back on: what a track's first points and the time hidden before span.
        blobs.pastFrames = min(64, Int(((options.maximumHidden + 0.3) / frameInterval).rounded(.up)) + 2)
        let found = blobs.blobs(sizes: sizes, region: options.region, time: time)
        return link(found, time: time)
    }

    /// The end of the input: the tracks under way end.
    public func finish() -> [Trajectory] { endAll(.inputEnded) }

    /// Every track under way ends. When the camera moved they wait, with those waiting already:
    /// what looked like the camera moving for a frame or two may have been something large
    /// passing close to it, and an object seen again on its path once the picture is still
    /// (`maximumHidden` after it was last seen) is joined to it. After a real shake (half a
    /// second or more) none is left waiting.
    private func endAll(_ ending: Trajectory.Ending) -> [Trajectory] {
        var done: [Trajectory] = []
        for track in tracks {
            var track = track
            completeEnding(&track)
            let made = finish(&track, ending)
            if let made { done.append(made) }
            if ending == .cameraMoved, mayWait(track, made: made != nil) { waiting.append(track) }
        }
        tracks = []
        if ending != .cameraMoved { waiting = [] }
        return done
    }

    /// Whether an ended track waits for a later piece of its object: one of three points or
    /// more that made a trajectory (now or before), or too short to know its path (a later
    /// piece may take it in), wherever its path leads (out of the picture too: it may have
    /// bounced unseen). Not one with as many points seen in runs as a trajectory's minimum
    /// that makes none: what it followed was not in flight (a ball rolling along the floor
    /// goes straight and slowly), and a later piece must not bend its path into one.
    private func mayWait(_ track: Track, made: Bool) -> Bool {
        track.points.count >= 3 && (made || track.id != nil || Track.inRuns(track.points).count < options.minimumPoints)
    }

    /// The trajectory an ended track makes, numbered: a new one, or the next revision of the
    /// one it was (a piece joined it). A track revived by fewer than three points reports
    /// nothing new: it keeps them if they lie on its path (`Track.seenAgainOnPath`; its object
    /// glimpsed between two things that hide it, and it may be seen again for as long after
    /// them), else goes back to what it was, as one whose joined points spoil its path does.
    private func finish(_ track: inout Track, _ ending: Trajectory.Ending) -> Trajectory? {
        track.revivedByRegion = false
        if let base = track.revivedAt {
            if track.points.count - base < 3, track.seenAgainOnPath(from: base) { return nil }
            if track.points.count - base < 3 || track.trajectory(options: options, frame: (frameWidth, frameHeight), ending: ending) == nil {
                track.restore(count: base)
                return nil
            }
            track.revivedAt = nil
        }
        guard var t = track.trajectory(options: options, frame: (frameWidth, frameHeight), ending: ending), !isShadow(t, of: track) else { return nil }
        if let id = track.id {
            track.revision += 1
            t.id = id
            t.revision = track.revision
        } else {
            track.id = nextID
            t.id = nextID
            nextID += 1
        }
        return t
    }

    /// A straight trajectory that keeps under a curved one (or one that bounced), at its x
    /// where both were seen at once, is its object's shadow on the floor (a ball's shadow
    /// slides straight and fast, seen from the moment the ball is). The curved one is any other
    /// track: `track`'s own copy among those under way shares its first point (it may since
    /// have taken in earlier points, or been cut back to before a revival). Compared point by
    /// point, not along the other's fitted path: that is its last piece's, after a bounce
    /// the hop's.
    private func isShadow(_ t: Trajectory, of track: Track) -> Bool {
        let duration = t.end - t.start
        guard abs(t.motion.ay) * duration * duration / 8 < 2 else { return false }
        let reach = max(4, t.objectSize)
        return (tracks + waiting).contains { other in
            guard !other.hopStarts.isEmpty || (other.segmentCount >= 4 && abs(other.motion?.ay ?? 0) > 100),
                  !other.points.contains(track.points[0]), !track.points.contains(other.points[0]) else { return false }
            let both = t.points.compactMap { p in other.points.first { $0.time == p.time }.map { (p, $0) } }
            let under = both.filter { p, q in abs(q.x - p.x) <= Float(reach) && q.y < p.y - Float(reach) }
            return both.count >= 4 && under.count * 5 >= both.count * 4
        }
    }

    private func link(_ found: [Blob], time: Double) -> [Trajectory] {
        // Every pairing within a track's gate, nearest first (relative to the gate), tracks
        // with a fitted path before new ones.
        var pairs: [(track: Int, blob: Int, score: Float)] = []
        let maxStep = 0.12 * Float(frameWidth)
        let awaited = awaitedBlobs(found, time: time, maxStep: maxStep)
        for (i, track) in tracks.enumerated() {
            let (predicted, gate) = track.prediction(at: time, maxStep: maxStep)
            // A lone point whose blob is there again stands still (a speck, a still hand): it
            // takes no other blob, or it would take a passing ball's, frame after frame.
            if track.points.count == 1, found.contains(where: { hypot($0.x - predicted.x, $0.y - predicted.y) < 0.3 * $0.size }) { continue }
            for (j, b) in found.enumerated() {
                let d = hypot(b.x - predicted.x, b.y - predicted.y)
                guard d <= gate else { continue }
                // An object keeps its size: a speck of noise that flickers in place beside a
                // ball's path must not take the ball's first points, nor the ball its, and a
                // sliver of the ball (the rest of it lost against what moves behind) puts its
                // centre off the path.
                if max(b.size, track.medianSize) > 2.5 * min(b.size, track.medianSize) { continue }
                if track.segmentCount < 3, awaited.contains(j) { continue }
                pairs.append((i, j, d / gate + (track.segmentCount >= 3 ? 0 : 1)))
            }
        }
        pairs.sort { $0.score < $1.score }
        var trackTaken = Set<Int>(), blobTaken = Set<Int>()
        for p in pairs where !trackTaken.contains(p.track) && !blobTaken.contains(p.blob) {
            trackTaken.insert(p.track); blobTaken.insert(p.blob)
            tracks[p.track].add(found[p.blob], time: time)
            tracks[p.track].revivedByRegion = false
        }
        for i in tracks.indices where !trackTaken.contains(i) {
            if let b = changedRegion(for: tracks[i], time: time, maxStep: maxStep, widen: 1, found: found) {
                tracks[i].add(b, time: time)
                trackTaken.insert(i)
            }
        }
        var ended: [Trajectory] = []
        var kept: [Track] = []
        for (i, track) in tracks.enumerated() {
            if trackTaken.contains(i) { kept.append(track); continue }
            var track = track
            track.missed += 1
            // A revival by a region alone that finds nothing next ends at once, so that the
            // track is put back to wait (or keeps the points, if they lie on its path) while its
            // object may still be seen again: a region beside the path must not hold the path
            // for the frames a track may miss.
            let allowed = track.revivedByRegion ? 0 : track.segmentCount >= 4 ? options.maximumGap : 1
            let next = track.prediction(at: time, maxStep: maxStep).position
            let outside = !contains(next)
            if outside || track.missed > allowed {
                completeEnding(&track)
                let made = finish(&track, outside ? .leftFrame : .stopped)
                if let made { ended.append(made) }
                if mayWait(track, made: made != nil) { waiting.append(track) }
            } else {
                kept.append(track)
            }
        }
        kept += revive(found, taken: &blobTaken, time: time, maxStep: maxStep)
        for (j, b) in found.enumerated() where !blobTaken.contains(j) {
            kept.append(Track(first: TrajectoryPoint(time: time, x: b.x, y: b.y), size: b.size))
        }
        for k in kept.indices where kept[k].points.count == 6 { takeInWhatCameBefore(&kept[k]) }
        joinBounces(&kept, time: time)
        // Bounded however busy the scene: the longest tracks are kept.
        if kept.count > 200 { kept = Array(kept.sorted { $0.points.count > $1.points.count }.prefix(200)) }
        tracks = kept
        return ended
    }

    /// Blobs where a waiting track's object would be now (`revivalGate`): a track too young
    /// to have a direction takes none of them. A speck that shows where a ball comes out from
    /// behind something would take its first blobs, and the ball be seen again too late to be
    /// joined to its path.
    private func awaitedBlobs(_ found: [Blob], time: Double, maxStep: Float) -> Set<Int> {
        var awaited = Set<Int>()
        for track in waiting {
            guard let (predicted, reach) = revivalGate(track, time: time, maxStep: maxStep) else { continue }
            for (j, b) in found.enumerated() where hypot(b.x - predicted.x, b.y - predicted.y) <= reach { awaited.insert(j) }
        }
        return awaited
    }

    /// Where a waiting track that may be seen again (`unseenWaiting`) has its object now, and
    /// how far from there a blob may be its object: its gate, `widening` with the time unseen.
    private func revivalGate(_ track: Track, time: Double, maxStep: Float) -> (predicted: (x: Float, y: Float), reach: Float)? {
        guard let unseen = unseenWaiting(track, time: time) else { return nil }
        let (predicted, gate) = track.prediction(at: time, maxStep: maxStep)
        guard contains(predicted) else { return nil }
        return (predicted, gate * widening(unseen: unseen))
    }

    /// How long a waiting track whose path is known has been unseen, if at most
    /// `maximumHidden` (it may be seen again).
    private func unseenWaiting(_ track: Track, time: Double) -> Double? {
        guard track.pathIsKnown, let last = track.points.last, time - last.time <= options.maximumHidden else { return nil }
        return time - last.time
    }

    /// How much a gate widens after `unseen` seconds unseen, five times at `maximumHidden`:
    /// the path is extrapolated, and an object coming out from behind something shows only
    /// part of itself at first.
    private func widening(unseen: Double) -> Float { 1 + 4 * Float(unseen) / Float(options.maximumHidden) }

    /// Blobs no track took that lie where a waiting track's object would be now
    /// (`revivalGate`): it was hidden and is seen again.
    private func revive(_ found: [Blob], taken: inout Set<Int>, time: Double, maxStep: Float) -> [Track] {
        // Kept as long as a later piece may take them in: one that started `maximumHidden`
        // after, by its sixth point.
        let span = options.maximumHidden + 6 * frameInterval
        waiting.removeAll { track in track.points.last.map { time - $0.time > span } ?? true }
        if waiting.count > 200 { waiting.removeFirst(waiting.count - 200) }
        var pairs: [(track: Int, blob: Int, score: Float)] = []
        for (i, track) in waiting.enumerated() {
            guard let (predicted, wide) = revivalGate(track, time: time, maxStep: maxStep) else { continue }
            for (j, b) in found.enumerated() where !taken.contains(j) {
                let d = hypot(b.x - predicted.x, b.y - predicted.y)
                if d <= wide { pairs.append((i, j, d / wide)) }
            }
        }
        pairs.sort { $0.score < $1.score }
        var revived: [Int: Track] = [:]
        func revive(_ i: Int, with blob: Blob) {
            var track = waiting[i]
            if track.revivedAt == nil { track.revivedAt = track.points.count }
            track.add(blob, time: time)
            revived[i] = track
        }
        for p in pairs where revived[p.track] == nil && !taken.contains(p.blob) {
            taken.insert(p.blob)
            revive(p.track, with: found[p.blob])
        }
        for (i, track) in waiting.enumerated() where revived[i] == nil {
            guard let unseen = unseenWaiting(track, time: time) else { continue }
            if let b = changedRegion(for: track, time: time, maxStep: maxStep, widen: widening(unseen: unseen), found: found) {
                revive(i, with: b)
                revived[i]?.revivedByRegion = true
            }
        }
        for i in revived.keys.sorted(by: >) { waiting.remove(at: i) }
        return revived.keys.sorted().compactMap { revived[$0] }
    }

    /// Where a moving track (two points or more; a waiting one whose path is known) found no
    /// blob, its object may be passing in front of something that moves, their regions one:
    /// what changed since the frame before at the predicted place
    /// (`MovingBlobs.changedRegion`), if the object moves 1.2 of its sizes a frame or more
    /// (else where it was and where it is are one region). Not where a blob was found: that
    /// one is another track's, or it was not this object.
    private func changedRegion(for track: Track, time: Double, maxStep: Float, widen: Float, found: [Blob]) -> Blob? {
        guard track.segmentCount >= 2, let m = track.motion else { return nil }
        let (predicted, gate) = track.prediction(at: time, maxStep: maxStep)
        guard contains(predicted) else { return nil }
        let size = track.medianSize
        let radius = gate * widen
        guard !found.contains(where: { hypot($0.x - predicted.x, $0.y - predicted.y) <= radius + size }) else { return nil }
        let before = m.position(at: time - frameInterval)
        guard hypot(Float(before.x) - predicted.x, Float(before.y) - predicted.y) >= 1.2 * size else { return nil }
        return blobs.changedRegion(near: predicted, radius: radius, size: size)
    }

    /// A track that ends before its path is known (under six points): what came before it
    /// (`takeInWhatCameBefore`); if it then rises from where a waiting track came down, it is
    /// that track's hop after a bounce (`joinBounces` joins a hop seen from its start while
    /// it is young; one found by looking back is joined here).
    private func completeEnding(_ track: inout Track) {
        guard track.points.count < 6 else { return }
        takeInWhatCameBefore(&track)
        guard track.id == nil, track.bounces.isEmpty, track.revivedAt == nil else { return }
        var best: (join: Bounce, index: Int)?
        for (w, fall) in waiting.enumerated() {
            guard let join = bounce(of: fall, into: track), join.distance < (best?.join.distance ?? .infinity) else { continue }
            best = (join, w)
        }
        guard let best else { return }
        var fall = waiting.remove(at: best.index)
        fall.append(hop: best.join.hop, bounce: best.join.point)
        track = fall
    }

    /// A track whose path has just become known (six points), or a shorter one as it ends:
    /// the pieces before it (`joinEarlierPieces`), then where its object was before it was
    /// first seen on its own (`lookBack`), then the pieces before that.
    private func takeInWhatCameBefore(_ track: inout Track) {
        joinEarlierPieces(&track)
        if lookBack(&track) { joinEarlierPieces(&track) }
    }

    /// A track of four points or more, followed back along its path through the frames kept
    /// (`MovingBlobs.pastFrames`): in each, what changed where its object should have been
    /// (`MovingBlobs.changedRegion`, within the gate a track of its length has, widened with
    /// the time unseen as `revive` does), the path refitted with each point found, until it
    /// has been unseen `maximumHidden` seconds, leaves the picture, or moved less than 1.2 of
    /// its sizes since the frame before (followed further back unchecked, a slow thing's path
    /// extrapolated leads anywhere). An object thrown in front of something
    /// that moves is one region with it until it flies clear: this finds its start. Whether
    /// it took in a point.
    private func lookBack(_ track: inout Track) -> Bool {
        guard track.id == nil, track.hopStarts.isEmpty, track.revivedAt == nil, track.segmentCount >= 4,
              let first = track.points.first else { return false }
        let size = track.medianSize
        var ago = 1
        while let t = blobs.pastTime(ago: ago), t >= first.time - 1e-6 { ago += 1 }
        var lastSeen = first.time, added = false
        // Points found after two frames unseen or more are taken three in a row, or not at all:
        // fewer are as likely the thrower's hand, moving the ball along before the release.
        var held: [(point: TrajectoryPoint, size: Float, ago: Int)] = []
        while ago <= blobs.framesToLookBack, let t = blobs.pastTime(ago: ago), let before = blobs.pastTime(ago: ago + 1),
              lastSeen - t <= options.maximumHidden, let m = track.motion {
            defer { ago += 1 }
            let q = m.position(at: t), p = (x: Float(q.x), y: Float(q.y))
            guard contains(p) else { break }
            let b = m.position(at: before)
            guard hypot(Float(b.x) - p.x, Float(b.y) - p.y) >= 1.2 * size else { break }
            let gate = track.points.count >= 6 ? Track.knownPathGate(size: size) : max(6, 1.5 * size)
            let unseen = Float(lastSeen - t) - Float(frameInterval)
            guard let blob = blobs.changedRegion(near: p, radius: gate * widening(unseen: Double(max(0, unseen))),
                                                 size: size, ago: ago) else { continue }
            // A piece that ended there (seen on its own) is the same object's: it goes before,
            // less its points off the path (`Track.offPath`), and the look back ends. One that
            // does not fit is another object's if its path is known, and keeps its points if it
            // was reported (they would be reported twice): the look back ends there. A shorter
            // one, not reported, is no one's yet (a ball's first points, and the hand's blob it
            // left), and the look back goes on through it.
            if let w = waiting.firstIndex(where: { piece in
                piece.points.contains { $0.time == t && hypot($0.x - blob.x, $0.y - blob.y) <= Track.knownPathGate(size: size) }
            }) {
                var earlier = waiting[w]
                if let k = earlier.points.firstIndex(where: { $0.time == t }), k + 1 < earlier.points.count {
                    // (after this point, it took what the look back passed by)
                    earlier.restore(count: k + 1)
                }
                if let off = Track.offPath(earlier.piece, before: track.points, tolerance: Track.tolerance(size: Double(size))) {
                    waiting.remove(at: w)
                    track.prepend(earlier, without: off)
                    return true
                }
                if earlier.id != nil || earlier.pathIsKnown { return added }
            }
            let point = TrajectoryPoint(time: t, x: blob.x, y: blob.y)
            if held.last?.ago != ago - 1 {
                held.removeAll()
                if unseen < 2 * Float(frameInterval) - 1e-4 {
                    track.prepend(point, size: blob.size)
                    lastSeen = t
                    added = true
                    continue
                }
            }
            held.append((point, blob.size, ago))
            guard held.count >= 3 else { continue }
            for h in held { track.prepend(h.point, size: h.size) }
            held.removeAll()
            lastSeen = t
            added = true
        }
        return added
    }

    /// A track whose path has just become known (six points), or a shorter one as it ends,
    /// takes in the pieces before it that lie on its path followed back (its object seen
    /// briefly, then hidden): the latest such piece that ended at most `maximumHidden` before
    /// it started, again and again, until it takes in one that bounced (whose last hop it
    /// goes on). A piece joins when its points (of its last hop) and the track's make one
    /// path (`Track.offPath`, within `Track.tolerance`; its points off that path are dropped).
    private func joinEarlierPieces(_ track: inout Track) {
        guard track.id == nil, track.hopStarts.isEmpty else { return }
        // (Once it took in a piece with hops, what came before is that piece's.)
        while track.hopStarts.isEmpty, let first = track.points.first {
            let tolerance = Track.tolerance(size: Double(track.medianSize)), later = track
            let candidates = waiting.indices.filter { i in
                // A lone point gives no direction: a piece whose path is known must predict it
                // (`revive`), not be bent to it.
                guard let last = waiting[i].points.last, later.points.count >= 2 || !waiting[i].pathIsKnown else { return false }
                return last.time < first.time && first.time - last.time <= options.maximumHidden
            }.sorted { waiting[$0].points.last!.time > waiting[$1].points.last!.time }
            // Of one that bounced, its last hop: the later piece may be the rest of it.
            guard let (i, off) = candidates.lazy.compactMap({ i in
                Track.offPath(self.waiting[i].piece, before: later.points, tolerance: tolerance).map { (i, $0) }
            }).first else { return }
            track.prepend(waiting.remove(at: i), without: off)
        }
    }

    /// A young track that rises from where a falling one came down is that object's hop
    /// after a bounce: the falling track (ended, or missing its object) takes its points as
    /// a new piece, with the bounce where the two paths meet.
    private func joinBounces(_ kept: inout [Track], time: Double) {
        for y in kept.indices where kept[y].id == nil && kept[y].bounces.isEmpty && kept[y].revivedAt == nil
            && (3...5).contains(kept[y].points.count) {
            // The candidates: waiting tracks, and tracks under way that lost their object.
            var best: (join: Bounce, waitingIndex: Int?, keptIndex: Int?)?
            let candidates = waiting.indices.map { (Optional($0), Int?.none, waiting[$0]) }
                + kept.indices.filter { $0 != y && kept[$0].missed > 0 }.map { (Int?.none, Optional($0), kept[$0]) }
            for (w, k, fall) in candidates {
                guard let join = bounce(of: fall, into: kept[y]), join.distance < (best?.join.distance ?? .infinity) else { continue }
                best = (join, w, k)
            }
            guard let best else { continue }
            var fall = best.waitingIndex.map { waiting[$0] } ?? kept[best.keptIndex!]
            fall.append(hop: best.join.hop, bounce: best.join.point)
            kept[y] = fall
            if let w = best.waitingIndex { waiting.remove(at: w) }
            if let k = best.keptIndex { kept.remove(at: k) }
            return   // indices moved; the next frame looks again
        }
    }

    struct Bounce {
        /// How far apart the two paths pass at their nearest, pixels; where and when that is.
        var distance: Double
        var point: TrajectoryPoint
        /// The rising track's points after the falling one's last.
        var hop: Track
    }

    /// Whether `young` is `fall`'s hop: it starts within 0.3 s of `fall`'s last point (a point
    /// it took before then, a still blob where the object came down, is not the hop's), goes
    /// up at a tenth of the speed `fall` came down at or more (a ball that rolls on from where
    /// it landed does not), the same way sideways at 0.3 of `fall`'s sideways speed or more
    /// (which must be 5 % of the frame's width a second), and the two paths meet, within two
    /// object sizes, at the lowest point of both. What came down must be a flight itself.
    private func bounce(of fall: Track, into young: Track) -> Bounce? {
        guard fall.pathIsKnown, let m = fall.motion, let last = fall.points.last else { return nil }
        let hop = young.keeping(after: last.time)
        guard hop.points.count >= 2, let first = hop.points.first, first.time - last.time <= 0.3,
              let straight = BallisticMotion.fit(hop.points, straight: true) else { return nil }
        let downwards = m.velocity(at: last.time).y, rising = -max(20, 0.1 * downwards)
        // It rises. A hop first seen near its top (its rise hidden) rises too slowly for that:
        // followed back at the fall's pull, it rose from the floor, if it is a size or more
        // above where it came down (a ball rolling on along the floor fits that pull as well).
        let nearItsTop = straight.vy >= rising
        guard let rise = nearItsTop ? BallisticMotion.fit(hop.points, ay: m.ay) : straight else { return nil }
        // Sideways it goes on the same way, at a good part of its speed (what sways in place,
        // a leaf on a branch, goes down and up again too, but not along).
        guard downwards > 0, abs(m.vx) >= 0.05 * Double(frameWidth),
              (rise.vx >= 0) == (m.vx >= 0), abs(rise.vx) >= 0.3 * abs(m.vx) else { return nil }
        var meet: (distance: Double, time: Double) = (.infinity, last.time)
        var t = last.time
        while t <= first.time {
            let a = m.position(at: t), b = rise.position(at: t)
            let d = hypot(a.x - b.x, a.y - b.y)
            if d < meet.distance { meet = (d, t) }
            t += 0.002
        }
        guard meet.distance <= max(8, 2 * Double(fall.medianSize)), rise.velocity(at: meet.time).y < rising else { return nil }
        let a = m.position(at: meet.time), b = rise.position(at: meet.time)
        let point = TrajectoryPoint(time: meet.time, x: Float((a.x + b.x) / 2), y: Float((a.y + b.y) / 2))
        if nearItsTop, let top = hop.points.map(\.y).min(), top > point.y - fall.medianSize { return nil }
        guard Double(point.y) >= Double(max(last.y, first.y)) - Double(fall.medianSize),
              fall.trajectory(options: options, frame: (frameWidth, frameHeight), ending: .stopped) != nil else { return nil }
        return Bounce(distance: meet.distance, point: point, hop: hop)
    }

    private func contains(_ p: (x: Float, y: Float)) -> Bool {
        if let r = options.region { return p.x >= r.x && p.x < r.x + r.width && p.y >= r.y && p.y < r.y + r.height }
        return p.x >= 0 && p.x < Float(frameWidth) && p.y >= 0 && p.y < Float(frameHeight)
    }
}

/// One object followed from frame to frame: its flight, and its hops after bounces.
struct Track {
    var points: [TrajectoryPoint]
    var sizes: [Float]
    var missed = 0
    /// Where each hop starts in `points` (the first point after a bounce), and the bounces.
    var hopStarts: [Int] = []
    var bounces: [TrajectoryPoint] = []
    /// The motion fitted to the current piece's points so far (refitted with each point).
    var motion: BallisticMotion?
    /// The trajectory's id once reported, and how many times it was reported since.
    var id: Int?
    var revision = 0
    /// The point count when it was revived from waiting (its object seen again), until it ends.
    var revivedAt: Int?
    /// Revived by what changed where its object should be (`changedRegion`), and no blob of
    /// its own taken since: such a track ends at its first frame without one.
    var revivedByRegion = false

    init(first: TrajectoryPoint, size: Float) { points = [first]; sizes = [size] }

    /// Points of the current piece (since the last bounce).
    var segmentCount: Int { points.count - (hopStarts.last ?? 0) }
    /// Whether the current piece's path is known well enough to follow it unseen.
    var pathIsKnown: Bool { segmentCount >= 6 && motion != nil }

    mutating func add(_ b: Blob, time: Double) {
        points.append(TrajectoryPoint(time: time, x: b.x, y: b.y))
        sizes.append(b.size)
        missed = 0
        refit()
    }

    /// The current piece's points (since the last bounce).
    var piece: [TrajectoryPoint] { Array(points[(hopStarts.last ?? 0)...]) }

    mutating func refit() {
        motion = piece.count >= 4 ? BallisticMotion.fit(piece) : piece.count >= 2 ? BallisticMotion.fit(piece, straight: true) : nil
    }

    /// A hop after a bounce at `bounce`: `hop`'s points become this track's next piece.
    mutating func append(hop: Track, bounce: TrajectoryPoint) {
        hopStarts.append(points.count)
        bounces.append(bounce)
        points += hop.points
        sizes += hop.sizes
        missed = hop.missed
        refit()
    }

    /// `earlier`'s points before its own (and its hops: its own points go on its last one),
    /// but those of its last piece at the offsets `off` (off the path, `offPath`); its id too,
    /// if it was reported.
    mutating func prepend(_ earlier: Track, without off: [Int]) {
        var earlier = earlier
        let start = earlier.hopStarts.last ?? 0
        for k in off.sorted(by: >) { earlier.points.remove(at: start + k); earlier.sizes.remove(at: start + k) }
        hopStarts = earlier.hopStarts + hopStarts.map { $0 + earlier.points.count }
        bounces = earlier.bounces + bounces
        points = earlier.points + points
        sizes = earlier.sizes + sizes
        if id == nil, let reported = earlier.id { id = reported; revision = earlier.revision }
        refit()
    }

    /// Whether `earlier` goes before `later` on one path, and which of its points (offsets in
    /// `earlier`) are off that path: every other one of its points lies within three
    /// tolerances (`tolerance`) of the path they make with `later`'s, which fits all of those
    /// within one and a half. A third of `earlier`'s points at most, the worst first, may be
    /// off, and three must stay: a piece's first point is often the hand that threw, its last
    /// a blob beside the object where it went into something that moves.
    static func offPath(_ earlier: [TrajectoryPoint], before later: [TrajectoryPoint], tolerance: Double) -> [Int]? {
        var kept = Array(earlier.indices), off: [Int] = []
        let most = min(earlier.count / 3, max(0, earlier.count - 3))
        while true {
            let together = kept.map { earlier[$0] } + later
            guard let m = BallisticMotion.fit(together) else { return nil }
            let distance = kept.map { k -> Double in
                let q = m.position(at: earlier[k].time)
                return hypot(Double(earlier[k].x) - q.x, Double(earlier[k].y) - q.y)
            }
            guard let worst = distance.indices.max(by: { distance[$0] < distance[$1] }) else { return nil }
            if distance[worst] <= 3 * tolerance { return m.residual(together) <= 1.5 * tolerance ? off.sorted() : nil }
            guard off.count < most else { return nil }
            off.append(kept.remove(at: worst))
        }
    }

    /// A point before all its own (its object found where it was before).
    mutating func prepend(_ point: TrajectoryPoint, size: Float) {
        points.insert(point, at: 0)
        sizes.insert(size, at: 0)
        hopStarts = hopStarts.map { $0 + 1 }
        refit()
    }

    /// The points with another within a tenth of a second before or after them.
    static func inRuns(_ points: [TrajectoryPoint]) -> [TrajectoryPoint] {
        points.indices.filter { k in
            (k > 0 && points[k].time - points[k - 1].time < 0.1) || (k + 1 < points.count && points[k + 1].time - points[k].time < 0.1)
        }.map { points[$0] }
    }

    /// Six points or more, over `minimumSpan` seconds at least, with two on each side of a
    /// tenth of a second unseen.
    static func arePieces(_ points: [TrajectoryPoint], minimumSpan: Double) -> Bool {
        guard points.count >= 6, let first = points.first, let last = points.last, last.time - first.time >= minimumSpan else { return false }
        return zip(points, points.dropFirst()).enumerated().contains { k, pair in
            pair.1.time - pair.0.time >= 0.1 && k + 1 >= 2 && points.count - (k + 1) >= 2
        }
    }

    /// How far from where a track whose path is known (six points) predicts its object a blob
    /// may be to be it: the path is known to a fraction of a pixel, and a bounce or a landing
    /// falls outside.
    static func knownPathGate(size: Float) -> Float { max(4, 0.6 * size) }

    /// How closely a thrown object's centre follows its path: max(1 px, 10 % of its size)
    /// root mean square (a swaying or swinging thing's does not).
    static func tolerance(size: Double) -> Double { max(1, 0.1 * size) }

    /// The track of its points after `time` only.
    func keeping(after time: Double) -> Track {
        let k = points.firstIndex { $0.time > time } ?? points.count
        var t = self
        t.points = Array(points[k...]); t.sizes = Array(sizes[k...])
        t.hopStarts = []; t.bounces = []
        t.refit()
        return t
    }

    /// Whether the points from `base` on (a revival's) lie on the path of the piece before them,
    /// within the gate a track whose path is known has (`knownPathGate`).
    func seenAgainOnPath(from base: Int) -> Bool {
        let start = hopStarts.last ?? 0
        guard base - start >= 6, base < points.count, let m = BallisticMotion.fit(Array(points[start..<base])) else { return false }
        let gate = Double(Track.knownPathGate(size: medianSize))
        return points[base...].allSatisfy { p in
            let q = m.position(at: p.time)
            return hypot(Double(p.x) - q.x, Double(p.y) - q.y) <= gate
        }
    }

    /// Back to its first `count` points (what a revival added did not hold).
    mutating func restore(count: Int) {
        points.removeLast(points.count - count)
        sizes.removeLast(sizes.count - count)
        while let s = hopStarts.last, s >= count { hopStarts.removeLast(); bounces.removeLast() }
        revivedAt = nil
        refit()
    }

    var medianSize: Float { sizes.sorted()[sizes.count / 2] }

    /// Where the object should be at `time`, and how far from there a blob may be to be it.
    func prediction(at time: Double, maxStep: Float) -> (position: (x: Float, y: Float), gate: Float) {
        let last = points[points.count - 1]
        let n = segmentCount
        guard let motion, n >= 2 else { return ((last.x, last.y), maxStep) }
        let q = motion.position(at: time)
        let p = (x: Float(q.x), y: Float(q.y))
        let step = hypot(p.x - last.x, p.y - last.y)
        let size = medianSize
        if n >= 6 { return (p, Track.knownPathGate(size: size)) }
        if n >= 4 { return (p, max(6, 1.5 * size, 0.2 * step)) }
        return (p, max(8, 2.5 * size, 0.6 * step))
    }

    /// The trajectory this track makes: its flight (the points up to its first bounce, which
    /// must make a trajectory on their own, `flight(_:)`) and the hops after each bounce that
    /// follow a path of their own (three points or more, within twice the flight's tolerance).
    func trajectory(options: TrajectoryOptions, frame: (width: Int, height: Int), ending: Trajectory.Ending) -> Trajectory? {
        let flightEnd = hopStarts.first ?? points.count
        guard var t = flight(Array(points[..<flightEnd]), sizes: Array(sizes[..<flightEnd]), options: options,
                             frame: frame, ending: ending) else { return nil }
        let tolerance = Track.tolerance(size: t.objectSize)
        for (k, start) in hopStarts.enumerated() {
            let hop = Array(points[start..<(k + 1 < hopStarts.count ? hopStarts[k + 1] : points.count)])
            guard hop.count >= 3, let m = BallisticMotion.fit(hop, straight: hop.count < 5), m.residual(hop) <= 2 * tolerance else { break }
            t.points += hop
            t.bounces.append(bounces[k])
            t.hops.append(m)
        }
        t.id = id ?? 0
        t.revision = revision
        return t
    }

    /// The trajectory a flight's points make, if they make one: enough points, a path that fits
    /// within max(1 px, 10 % of the object's size) root mean square (a thrown object's centre
    /// follows its parabola to a fraction of a pixel; a swaying or swinging thing's does not),
    /// that goes at least four object sizes and 20 pixels, does not turn back sideways, does
    /// not fall upwards (its acceleration along the image's up is under 100 px/s², a tenth of
    /// gravity at 100 pixels a metre) and, if it bends, falls at that at least and at ten
    /// frame heights a second² at most, and at `minimumSpeed` at least.
    private func flight(_ points: [TrajectoryPoint], sizes: [Float], options: TrajectoryOptions, frame: (width: Int, height: Int),
                        ending: Trajectory.Ending) -> Trajectory? {
        // Enough points, or pieces of a flight seen on either side of a tenth of a second or
        // more unseen: six points at least, two on each side, spanning as long as the
        // minimum's would at 30 fps. A point seen alone (a tenth of a second or more from
        // the points before and after it) counts for neither: a blob that happens to lie on
        // the path across a gap confirms nothing.
        let seen = Track.inRuns(points)
        guard seen.count >= options.minimumPoints || Track.arePieces(seen, minimumSpan: Double(options.minimumPoints - 1) / 30),
              var motion = BallisticMotion.fit(points) else { return nil }
        let size = Double(sizes.sorted()[sizes.count / 2])
        let tolerance = Track.tolerance(size: size)
        // A few points may not be free flight: the object still touching the hand's blob, a
        // piece of another blob taken on the way, the landing, a ball half out from behind
        // something (its centre a few pixels off). The worst point is dropped while it lies
        // more than two tolerances off the path the others make, a fifth of the points at most.
        var points = points
        let keep = max(min(options.minimumPoints, points.count), points.count * 4 / 5)
        while points.count > keep {
            let off = points.map { p -> Double in let q = motion.position(at: p.time); return hypot(Double(p.x) - q.x, Double(p.y) - q.y) }
            guard let worst = off.indices.max(by: { off[$0] < off[$1] }), off[worst] > 2 * tolerance else { break }
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
        guard path / duration >= options.minimumSpeed * Double(frame.width) else { return nil }
        // Pieces must be that fast end to end too: the path of a small thing that jitters in
        // place is long, its chord is not.
        let chord = Double(hypot(last.x - first.x, last.y - first.y))
        let asPieces = seen.count < options.minimumPoints || points.count < options.minimumPoints
        guard !asPieces || chord / duration >= options.minimumSpeed * Double(frame.width) else { return nil }
        // A path that does not bend (it sags under 2 px from its chord) is a straight line: free
        // flight seen for long enough always bends, so a straight one must be fast (a hard
        // throw seen briefly); feet and hands of people walking go straight and slowly. One that
        // bends must bend down as free fall does, at 100 px/s² at least (a tenth of gravity at
        // 100 pixels a metre): pieces of something rolling along the floor, joined across a
        // gap, bend a little either way. And at ten frame heights a second² at most: gravity
        // seen in a picture a metre tall (a thrower in view makes it two or more); a hand's
        // blobs linked up and down bend as they happen to.
        let sag = abs(motion.ay) * duration * duration / 8
        // (Pieces with fewer points than the minimum must bend: a shadow sliding along the
        // floor under a ball is seen in pieces too.)
        let falls = motion.ay >= 100 && motion.ay <= 10 * Double(frame.height)
        guard sag >= 2 ? falls : !asPieces && path / duration >= options.minimumStraightSpeed * Double(frame.width) else { return nil }
        let direction: Float = last.x >= first.x ? 1 : -1
        let backwards = zip(points, points.dropFirst()).filter { ($0.1.x - $0.0.x) * direction < -Float(tolerance) }.count
        guard backwards <= 1 else { return nil }
        let confidence = 0.5 * max(0, 1 - residual / tolerance) + 0.5 * min(1, Double(points.count) / Double(2 * options.minimumPoints))
        return Trajectory(id: 0, points: points, motion: motion, equation: motion.equation(duration: duration),
                          residual: residual, confidence: confidence, objectSize: size, ending: ending)
    }
}
