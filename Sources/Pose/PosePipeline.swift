import Foundation
import Images
import Media
import Tensor

/// Settings of the pose pipeline.
public struct PipelineOptions: Sendable {
    /// People tracked at most (BlazePose's detector is built for one to about four people
    /// fairly near the camera).
    public var maxPeople: Int = 4
    /// The most `maxPeople` may be: each tracked person runs the landmark model on every
    /// frame, and a crowd of 64 already takes seconds a frame.
    public static let mostPeople = 64
    /// While fewer than `maxPeople` are tracked, the detector re-runs every this many
    /// frames to pick up newcomers (every frame while nobody is tracked).
    public var detectEvery: Int = 10
    /// Below this pose presence the person is lost and their track ends.
    public var minPresence: Float = 0.5
    /// A hard cut (`ShotChangeDetector`) drops every track: the people after it are found
    /// by the detector afresh, as at the start of a video.
    public var resetOnCut: Bool = true
    /// One-Euro smoothing of landmarks over time (MediaPipe's settings); off by default.
    public var smoothing: Bool = false
    /// Threads per model inference.
    public var threads: Int = 2
    /// In a frame wider (or taller) than 3:2, also look for people in squares of the
    /// frame's short side (`PoseDetector.tiles`), where smaller people keep the size the
    /// detector finds them at: all squares when nobody is tracked, else one per detection
    /// in turn (a newcomer is found within a few detections, for one detector run more).
    public var detectInTiles: Bool = false
    /// Test-time augmentation: every landmark run on the crop and its mirror image, the
    /// two poses averaged (`PoseLandmarker.runMirrorAveraged`; twice the landmark work).
    public var mirrorAverage: Bool = false
    /// Every `detectEvery` frames, also while everyone is tracked, the detector looks again;
    /// a track whose region has drifted from its person's detection (boxes overlapping by
    /// less than half, or turned more than 45° apart) starts again from the detection.
    public var redetect: Bool = false
    /// With two or more people, each core runs a whole person's landmark model at a time
    /// (one-thread inferences side by side), not every operator split over the cores: a
    /// split operator waits at its end for the slower core, about 200 times an inference,
    /// and on a shared machine one late core holds up every person (docs/speed.md, "Several
    /// people"). An odd person out still runs on all the cores. Same poses either way.
    public var personPerCore: Bool = true
    /// A person whose landmarks moved less than `stillness` (a share of their region's
    /// width, mean over the body's landmarks) between their last two posed frames keeps
    /// that pose for one frame, without a landmark run; the frame after, they are posed
    /// again. 0: everyone is posed on every frame. What it saves and costs on the push-up
    /// montages: docs/speed.md, "Several people".
    public var stillness: Float = 0
    /// While anyone is followed, the detector looks for newcomers (and drift) on a thread of
    /// its own and its people join on a later frame, so that no frame waits for it; while
    /// nobody is, it runs on the frame as before. Live sets this for live sources; `annotate`,
    /// extraction and tests leave it off, as their poses must not depend on timing.
    public var detectInBackground: Bool = false
    /// Live: seconds after a frame's capture by which its poses must be done, or a newer frame
    /// would replace the next one unseen (a drop). When the people's landmark runs would end
    /// later (by the recent time of a run, one person per core), those who moved least keep
    /// their last pose for this frame, never two frames in a row: some people's poses a frame
    /// old rather than everyone's frame lost (a dropped frame reaches each person's model as
    /// their last pose held too). nil: never. `annotate` and extraction leave it nil.
    public var frameDeadline: Double?

    public init(maxPeople: Int = 4, detectEvery: Int = 10, minPresence: Float = 0.5, smoothing: Bool = false, threads: Int = 2) {
        self.maxPeople = maxPeople; self.detectEvery = detectEvery; self.minPresence = minPresence
        self.smoothing = smoothing; self.threads = threads
    }
}

/// Time spent per stage, summed over the frames processed.
public struct StageTimes: Sendable {
    public var detectorRuns = 0, landmarkRuns = 0, frames = 0
    /// Landmark runs made side by side, one person per core (`personPerCore`).
    public var sideBySideRuns = 0
    /// Poses held for a frame instead of a landmark run (`stillness`, `frameDeadline`), and
    /// of those, the ones held because the frame was late (`frameDeadline`).
    public var heldPoses = 0, lateHolds = 0
    /// People just detected on a late frame, posed from the next one (`frameDeadline`).
    public var lateDeferrals = 0
    /// Detections made on the detector's own thread (`detectInBackground`; not in
    /// `detectorRuns` and `detectSeconds`, which are the frames' own), and their seconds.
    public var backgroundDetections = 0
    public var backgroundDetectSeconds = 0.0
    /// Hard cuts that dropped the tracks.
    public var cuts = 0
    /// Seconds in the detector, and in landmark runs: `landmarkSeconds` sums each run's own
    /// time (runs side by side count each), `landmarkStageSeconds` the frames' wall time in
    /// the landmark stage.
    public var detectSeconds = 0.0, landmarkSeconds = 0.0, landmarkStageSeconds = 0.0
    /// Seconds of the frames' pose work outside the models: cut detection, the crops'
    /// bookkeeping, tracking, smoothing.
    public var trackingSeconds = 0.0
}

/// Frames in, people out: BlazePose's detector finds people, the landmark model follows
/// each from frame to frame on its own region of interest (the detector runs again only
/// when someone is lost or, every few frames, to pick up newcomers), a tracker keeps each
/// person's id, and the prominent person is chosen and kept stable.
public final class PosePipeline {
    public let detector: PoseDetector
    public let landmarker: PoseLandmarker
    private let detectorPath: String
    /// The detector's own thread (`detectInBackground`), made by `reset()` when first asked for.
    private var detectionWorker: DetectionWorker?
    /// One single-thread detector per core, for `personPerCore`: a frame's squares side by side.
    private let coreDetectors: [PoseDetector]
    /// One single-thread landmark model per core, for `personPerCore` (empty otherwise).
    private let coreLandmarkers: [PoseLandmarker]
    public var options: PipelineOptions
    public private(set) var times = StageTimes()

    private struct Track {
        var roi: RotatedRect
        /// The person's id (`PersonTracker`) since they were posed and taken for a person: a
        /// track started again from a detection keeps it, whatever its new box.
        var id: Int? = nil
        /// The last pose found, and whether this frame shows it again without a landmark run.
        var pose: Person? = nil
        var held = false
        /// The mean landmark movement between the last two posed frames, in region widths.
        var movement: Float = .infinity
    }
    private var tracks: [Track] = []
    private var framesSinceDetection = Int.max
    /// The spurious newcomers of the push-up montages (a hand, a head at the frame's edge, a
    /// bad pose after a lost frame) last one frame; 3 frames in a row hold a real newcomer
    /// back by 0.07 s at 30 fps.
    private let tracker = PersonTracker(confirmFrames: 3)
    private var shots = ShotChangeDetector()
    private var smoothers: [Int: LandmarkSmoother] = [:]
    /// A landmark run's own seconds, averaged over recent frames (`frameDeadline`).
    private var recentRunSeconds = 0.0
    /// The square `detect` looks in next, when it looks in one.
    private var nextTile = 0

    public init(detectorPath: String, landmarkPath: String, options: PipelineOptions = .init()) throws {
        self.options = options
        self.detectorPath = detectorPath
        detector = try PoseDetector(modelPath: detectorPath, threads: options.threads)
        landmarker = try PoseLandmarker(modelPath: landmarkPath, threads: options.threads)
        let cores = min(options.threads, ThreadPool.shared.threadCount)
        let sideBySide = options.personPerCore && options.maxPeople > 1 && cores > 1
        coreLandmarkers = sideBySide ? try (0..<cores).map { _ in try PoseLandmarker(modelPath: landmarkPath, threads: 1) } : []
        coreDetectors = sideBySide ? try (0..<cores).map { _ in try PoseDetector(modelPath: detectorPath, threads: 1) } : []
    }

    deinit { detectionWorker?.close() }

    /// Forgets all tracks (a new video).
    public func reset() {
        dropTracks(); shots.reset()
        prepareBackgroundDetector()
    }

    /// Loads the detector's own thread's model now, if `detectInBackground` will need it (a
    /// live source's frames start coming when it opens: load before).
    public func prepareBackgroundDetector() {
        // A model that loaded once loads again; if it did not, detection stays on the frame.
        if options.detectInBackground && detectionWorker == nil,
           let second = try? PoseDetector(modelPath: detectorPath, threads: 1) {
            detectionWorker = DetectionWorker(detector: second)
        }
    }

    /// Forgets the people followed (tracks, ids, smoothing): the next frame detects afresh.
    private func dropTracks() {
        tracks = []; framesSinceDetection = .max; tracker.reset(); smoothers = [:]
        detectionWorker?.discard()
    }

    /// A still image: detection, then landmarks for every detected person, no tracking.
    public func process(image: RGBImage) -> [Person] {
        reset()
        let found = landmarks(image, rois: detect(image)).compactMap { $0.map { Track(roi: $0.1, pose: $0.0) } }
        let people = deduplicate(found).map(\.pose!)
        var result = people.enumerated().map { i, p -> Person in var q = p; q.id = i + 1; return q }
        if let best = result.indices.max(by: { result[$0].box.area < result[$1].box.area }) { result[best].isProminent = true }
        return result
    }

    /// The next frame of a video: tracking mode.
    public func process(frame: Frame) -> [Person] {
        let image = frame.image
        let start = DispatchTime.now().uptimeNanoseconds, modelsBefore = times.detectSeconds + times.landmarkStageSeconds
        defer {
            let all = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            times.trackingSeconds += all - (times.detectSeconds + times.landmarkStageSeconds - modelsBefore)
        }
        times.frames += 1
        framesSinceDetection = framesSinceDetection == .max ? .max : framesSinceDetection + 1
        // Tracking carries each ROI over from the last frame. Across a hard cut it lands on
        // whoever is there now and, if they lie the other way, stays locked on an upside-down
        // body with full confidence (montage 1 of the push-ups, correct121 → wrong102), so a
        // cut starts over as a new video does.
        if options.resetOnCut, shots.isCut(image) {
            dropTracks()
            times.cuts += 1
        }
        let due = framesSinceDetection >= options.detectEvery
        let looking = due && (tracks.count < options.maxPeople || options.redetect)
        if let worker = options.detectInBackground && !tracks.isEmpty ? detectionWorker : nil {
            if let found = worker.take() {
                times.backgroundDetections += 1
                times.backgroundDetectSeconds += found.seconds
                adopt(found.rois)
            }
            if looking, worker.submit(image, tiles: tiles(image, everywhere: false), limit: options.maxPeople) { framesSinceDetection = 0 }
        } else if tracks.isEmpty || looking {
            adopt(detect(image, everywhere: tracks.isEmpty))
            framesSinceDetection = 0
        }
        let (found, deferred) = nextTracks(image, capturedAt: frame.decodedAt)
        var kept = deduplicate(found)
        let ids = tracker.update(kept.map(\.pose!.box), continuing: kept.map(\.id), time: frame.time)
        for i in kept.indices { kept[i].id = ids[i] }
        tracks = kept + deferred
        // A track not yet taken for a person is followed, but not shown (`PersonTracker`).
        var people = kept.compactMap { t in t.id.map { id -> Person in var p = t.pose!; p.id = id; return p } }
        if options.smoothing {
            for i in people.indices {
                let smoother = smoothers[people[i].id] ?? LandmarkSmoother()
                smoothers[people[i].id] = smoother
                people[i].landmarks = smoother.smooth(people[i].landmarks, time: frame.time)
            }
            let live = Set(people.map(\.id))
            smoothers = smoothers.filter { live.contains($0.key) }
        }
        if let prominent = tracker.prominent(people) {
            for i in people.indices { people[i].isProminent = people[i].id == prominent }
        }
        return people
    }

    /// Detections as new tracks: one over someone already followed is that person, not a
    /// newcomer (with `redetect`, their track starts again from it if it drifted). Only the
    /// best detection of a person can restart their track: the detector often also finds
    /// the same body turned the other way, with a lower score, and that one, judged drifted,
    /// put a good track on an upside-down region (montage 1 of the push-ups, 12.6 s: the pose
    /// collapsed, and the tracker took it for someone new).
    private func adopt(_ rois: [RotatedRect]) {
        let known = tracks.map { axisBox($0.roi) }
        var answered = Set<Int>()
        for roi in rois {
            let box = axisBox(roi)
            if let k = known.indices.max(by: { known[$0].iou(box) < known[$1].iou(box) }), known[k].iou(box) > 0.3 {
                guard answered.insert(k).inserted else { continue }
                if options.redetect && Self.drifted(tracks[k].roi, from: roi, known[k].iou(box)) { tracks[k] = Track(roi: roi, id: tracks[k].id) }
                continue
            }
            if tracks.count < options.maxPeople { tracks.append(Track(roi: roi)) }
        }
    }

    // MARK: stages

    /// The squares of the frame the detector also looks in (`detectInTiles`): all of them,
    /// or the next one in turn.
    private func tiles(_ image: RGBImage, everywhere: Bool) -> [RotatedRect] {
        let tiles = options.detectInTiles && options.maxPeople > 1 ? PoseDetector.tiles(width: image.width, height: image.height) : []
        guard !tiles.isEmpty else { return [] }
        defer { nextTile += 1 }
        return everywhere ? tiles : [tiles[nextTile % tiles.count]]
    }

    private func detect(_ image: RGBImage, everywhere: Bool = true) -> [RotatedRect] {
        let start = DispatchTime.now().uptimeNanoseconds
        let chosen = tiles(image, everywhere: everywhere)
        var detections: [Detection]
        if coreDetectors.count > 1 && !chosen.isEmpty {
            // The whole frame and its squares, one per core at a time (same detections, in
            // the same order, as one after another).
            let regions: [RotatedRect?] = [nil] + chosen
            var found = [[Detection]](repeating: [], count: regions.count)
            found.withUnsafeMutableBufferPointer { out in
                ThreadPool.shared.run(tasks: regions.count, threads: coreDetectors.count) { task, thread in
                    out[task] = coreDetectors[thread].detect(image, region: regions[task])
                }
            }
            detections = found.flatMap { $0 }
        } else {
            detections = detector.detect(image)
            for tile in chosen { detections += detector.detect(image, region: tile) }
        }
        times.detectorRuns += 1 + chosen.count
        if !chosen.isEmpty { detections = Self.distinct(detections) }
        times.detectSeconds += Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return detections.prefix(options.maxPeople).map {
            regionOfInterest(center: $0.keypoints[0], scalePoint: $0.keypoints[1], imageWidth: image.width, imageHeight: image.height)
        }
    }

    /// One detection per person, best first: of detections from overlapping squares, the
    /// best of those whose hip centres lie within half a body's scale of each other.
    static func distinct(_ detections: [Detection]) -> [Detection] {
        var kept: [Detection] = []
        for d in detections.sorted(by: { $0.score > $1.score }) {
            let same = kept.contains { k in
                let dx = d.keypoints[0].x - k.keypoints[0].x, dy = d.keypoints[0].y - k.keypoints[0].y
                let sx = k.keypoints[1].x - k.keypoints[0].x, sy = k.keypoints[1].y - k.keypoints[0].y
                return dx * dx + dy * dy < 0.25 * (sx * sx + sy * sy) || k.box.iou(d.box) > 0.3
            }
            if !same { kept.append(d) }
        }
        return kept
    }

    /// Whether a tracked region has drifted from its person's fresh detection: their boxes
    /// overlap by less than half, or their rotations differ by more than 45°.
    static func drifted(_ tracked: RotatedRect, from detected: RotatedRect, _ iou: Float) -> Bool {
        var turn = abs(tracked.rotation - detected.rotation).truncatingRemainder(dividingBy: 2 * .pi)
        if turn > .pi { turn = 2 * .pi - turn }
        return iou < 0.5 || turn > .pi / 4
    }

    /// The people in `rois`, in order, each with the ROI for the next frame; nil for those
    /// whose presence is too low. With `coreLandmarkers`, pairs of people run side by
    /// side, one per core (the pool's caller thread is core 0); an odd one out runs last on
    /// every core.
    private func landmarks(_ image: RGBImage, rois: [RotatedRect]) -> [(Person, RotatedRect)?] {
        let stageStart = DispatchTime.now().uptimeNanoseconds
        var results = [LandmarkResult?](repeating: nil, count: rois.count)
        var seconds = [Double](repeating: 0, count: rois.count)
        let cores = coreLandmarkers.count
        let sideBySide = cores > 1 && rois.count > 1 ? rois.count / cores * cores : 0
        func run(_ i: Int, on model: PoseLandmarker) -> (LandmarkResult, Double) {
            let start = DispatchTime.now().uptimeNanoseconds
            let result = options.mirrorAverage ? model.runMirrorAveraged(image, roi: rois[i]) : model.run(image, roi: rois[i])
            return (result, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        if sideBySide > 0 {
            results.withUnsafeMutableBufferPointer { out in
                seconds.withUnsafeMutableBufferPointer { took in
                    // Each task writes its own slots; `thread` picks the model, so no two
                    // threads share one (if the pool is busy elsewhere, all run here on model 0).
                    ThreadPool.shared.run(tasks: sideBySide, threads: cores) { task, thread in
                        (out[task], took[task]) = run(task, on: coreLandmarkers[thread])
                    }
                }
            }
        }
        for i in sideBySide..<rois.count { (results[i], seconds[i]) = run(i, on: landmarker) }
        times.landmarkRuns += rois.count
        times.sideBySideRuns += sideBySide
        times.landmarkSeconds += seconds.reduce(0, +)
        times.landmarkStageSeconds += Double(DispatchTime.now().uptimeNanoseconds - stageStart) / 1e9
        return zip(rois, results).map { roi, result in result.flatMap { person($0, roi: roi, image: image) } }
    }

    /// This frame's tracks: each posed on its region (a track whose person is lost ends),
    /// or, if still (`stillness`) and posed on the frame before, its last pose held. On a
    /// late frame (`frameDeadline`), beyond the runs that fit (one per core at least), the
    /// people who moved least keep their last pose, and people just detected are `deferred`:
    /// followed, and posed from the next frame on.
    private func nextTracks(_ image: RGBImage, capturedAt: Double) -> (found: [Track], deferred: [Track]) {
        var holds = tracks.map { options.stillness > 0 && !$0.held && $0.pose != nil && $0.movement < options.stillness }
        var defers = [Bool](repeating: false, count: tracks.count)
        if let deadline = options.frameDeadline, capturedAt > 0, recentRunSeconds > 0 {
            let cores = max(1, coreLandmarkers.count), toPose = holds.filter { !$0 }.count
            let left = deadline - (monotonicSeconds() - capturedAt)
            let fit = max(1, Int(left / recentRunSeconds)) * cores
            if toPose > fit {
                let candidates = tracks.indices.filter { !holds[$0] && !tracks[$0].held && tracks[$0].pose != nil }
                    .sorted { tracks[$0].movement < tracks[$1].movement }
                for i in candidates.prefix(toPose - fit) { holds[i] = true; times.lateHolds += 1 }
                let over = holds.filter { !$0 }.count - fit
                for i in tracks.indices.filter({ !holds[$0] && tracks[$0].pose == nil }).suffix(max(0, over)) {
                    defers[i] = true; times.lateDeferrals += 1
                }
            }
        }
        let posed = tracks.indices.filter { !holds[$0] && !defers[$0] }
        let before = times.landmarkSeconds
        var found = landmarks(image, rois: posed.map { tracks[$0].roi })[...]
        if !posed.isEmpty {
            // One run's own time, recently: what the next frame's runs are expected to take.
            let run = (times.landmarkSeconds - before) / Double(posed.count)
            recentRunSeconds = recentRunSeconds == 0 ? run : 0.8 * recentRunSeconds + 0.2 * run
        }
        var next: [Track] = [], deferred: [Track] = []
        for (i, track) in tracks.enumerated() {
            if defers[i] { deferred.append(track); continue }
            if holds[i] {
                var held = track
                held.held = true
                next.append(held)
                times.heldPoses += 1
                continue
            }
            guard let (person, roi) = found.popFirst()! else { continue }
            var movement = Float.infinity
            if let last = track.pose {
                let body = zip(person.landmarks, last.landmarks)
                let moved = body.reduce(Float(0)) { $0 + hypotf($1.0.x - $1.1.x, $1.0.y - $1.1.y) } / Float(max(person.landmarks.count, 1))
                movement = moved / max(track.roi.width, 1)
            }
            next.append(Track(roi: roi, id: track.id, pose: person, held: false, movement: movement))
        }
        return (next, deferred)
    }

    /// A landmark result as a person, with the ROI for the next frame; nil when presence is too low.
    private func person(_ result: LandmarkResult, roi: RotatedRect, image: RGBImage) -> (Person, RotatedRect)? {
        guard result.presence >= options.minPresence else { return nil }
        let body = Array(result.landmarks.prefix(33))
        let w = Float(image.width), h = Float(image.height)
        var box = Box.enclosing(body.map { (min(max($0.x, 0), w), min(max($0.y, 0), h)) })
        if box.area == 0 { box = axisBox(roi) }
        let person = Person(id: 0, box: box, landmarks: body, worldLandmarks: Array(result.worldLandmarks.prefix(33)),
                            presence: result.presence)
        return (person, result.nextROI)
    }

    /// Two tracks that converged on one person: keep the more confident. And a pose that lies
    /// mostly (70 %) inside a larger one is part of that person (the legs a square of the
    /// frame saw alone, `PoseDetector.tiles`): keep the larger.
    private func deduplicate(_ found: [Track]) -> [Track] {
        var kept: [Track] = []
        for candidate in found.sorted(by: { $0.pose!.presence > $1.pose!.presence }) {
            if kept.contains(where: { $0.pose!.box.iou(candidate.pose!.box) > 0.5 }) { continue }
            kept.append(candidate)
        }
        func inside(_ a: Box, _ b: Box) -> Bool {
            guard a.area > 0, a.area < b.area else { return false }
            let w = max(0, min(a.x + a.width, b.x + b.width) - max(a.x, b.x)), h = max(0, min(a.y + a.height, b.y + b.height) - max(a.y, b.y))
            return w * h >= 0.7 * a.area
        }
        return kept.filter { p in !kept.contains { inside(p.pose!.box, $0.pose!.box) } }
    }

    /// The axis-aligned box around a rotated rectangle.
    func axisBox(_ r: RotatedRect) -> Box {
        let c = abs(cosf(r.rotation)), s = abs(sinf(r.rotation))
        let w = r.width * c + r.height * s, h = r.width * s + r.height * c
        return Box(x: r.centerX - w / 2, y: r.centerY - h / 2, width: w, height: h)
    }
}
