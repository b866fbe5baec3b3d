import Basics
import Foundation
import Keypoints
import Media
import Pose

/// Settings of an extraction run. Stored beside an unfinished run, so a resumed run can
/// refuse to mix keypoints made two different ways.
public struct ExtractOptions: Sendable, Codable, Equatable {
    /// Every clip is resampled to this rate: the model's frame rate.
    public var fps: Double = 30
    /// People the pose pipeline tracks; the prominent one's keypoints are stored.
    public var maxPeople: Int = 2
    /// Clips extracted at once, each with its own pipeline.
    public var jobs: Int = 2
    /// Threads per model inference (within a job).
    public var threads: Int = 1
    /// Extract only clips whose index (sorted by id) ≡ shard.index (mod shard.count).
    public var shardIndex: Int = 0
    public var shardCount: Int = 1
    /// The pose pipeline's test-time augmentation (`PipelineOptions.mirrorAverage`).
    public var mirrorAverage = false
    /// The pose pipeline's re-detection of drifted tracks (`PipelineOptions.redetect`).
    public var redetect = false
    /// Every frame mirrored before posing, the poses mirrored back: the clip as its own
    /// mirror image sees it, to measure how far the pose model agrees with itself
    /// (`poseact dataset quality --mirror`).
    public var mirror = false

    public init() {}

    /// What the store records as the clips' estimator: the models, and the settings that
    /// change keypoints.
    public var estimator: String { pose.estimator(models: Extractor.estimator) }

    /// The settings that change keypoints, as their record.
    public var pose: PoseSettings { PoseSettings(mirrorAverage: mirrorAverage, redetect: redetect, mirrored: mirror) }

    // Options files of runs from before the pose settings existed still resume.
    enum CodingKeys: String, CodingKey { case fps, maxPeople, jobs, threads, shardIndex, shardCount, mirrorAverage, redetect, mirror }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        fps = try c.decode(Double.self, forKey: .fps); maxPeople = try c.decode(Int.self, forKey: .maxPeople)
        jobs = try c.decode(Int.self, forKey: .jobs); threads = try c.decode(Int.self, forKey: .threads)
        shardIndex = try c.decode(Int.self, forKey: .shardIndex); shardCount = try c.decode(Int.self, forKey: .shardCount)
        mirrorAverage = try c.decodeIfPresent(Bool.self, forKey: .mirrorAverage) ?? false
        redetect = try c.decodeIfPresent(Bool.self, forKey: .redetect) ?? false
        mirror = try c.decodeIfPresent(Bool.self, forKey: .mirror) ?? false
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(fps, forKey: .fps); try c.encode(maxPeople, forKey: .maxPeople); try c.encode(jobs, forKey: .jobs)
        try c.encode(threads, forKey: .threads); try c.encode(shardIndex, forKey: .shardIndex); try c.encode(shardCount, forKey: .shardCount)
        if mirrorAverage { try c.encode(true, forKey: .mirrorAverage) }
        if redetect { try c.encode(true, forKey: .redetect) }
        if mirror { try c.encode(true, forKey: .mirror) }
    }
}

/// How a run went.
public struct ExtractSummary: Sendable {
    public var clips = 0                 // in this run's shard
    public var extracted = 0             // newly extracted now
    public var resumed = 0               // finished by an earlier, interrupted run
    public var cached = 0                // of `extracted`, read from the cache instead of posed
    public var skipped: [SkippedClip] = []
    public var warnings: [ClipWarning] = []
    public var frames = 0                // in the clips that went in
    public var framesWithPerson = 0
    public var seconds = 0.0
    public var stored = 0                // clips in the final store
}

/// One update for a progress display.
public struct ExtractProgress: Sendable {
    public var done: Int, total: Int, frames: Int, elapsed: Double
    public var lastClip: String
}

public enum ExtractFailure {}
public typealias ExtractError = OneLineError<ExtractFailure>

/// Labeled clips → keypoint store, with BlazePose.
///
/// Resumable by construction: each finished clip is written to `<store>.partial/` as a
/// small store of its own (temp file + rename), and skipped clips as a note with the
/// reason. A run killed at any point (even `kill -9`) leaves only whole files there; the
/// next run with the same options skips what is done. When every clip is accounted for,
/// the parts are merged into `<store>` (again temp file + rename) and the folder removed.
public final class Extractor {
    public let detectorPath: String, landmarkPath: String
    public let options: ExtractOptions
    public let modelHash: String
    /// Clips extracted before, by any run: reused instead of posed again.
    public var cache: ExtractionCache?
    public static let estimator = "blazepose-full mediapipe-0.10.14 (poseact)"

    public init(detectorPath: String, landmarkPath: String, options: ExtractOptions) throws {
        self.detectorPath = detectorPath; self.landmarkPath = landmarkPath; self.options = options
        modelHash = try SHA256.hex(file: detectorPath) + "+" + SHA256.hex(file: landmarkPath)
    }

    /// The clips of this run's shard, in id order.
    public func shard(_ clips: [ClipSource]) -> [ClipSource] {
        ArrayTask(index: options.shardIndex, count: options.shardCount).share(clips.sorted { $0.id < $1.id })
    }

    /// Extracts this run's shard of `all` into the store `output`: what an earlier run
    /// finished is kept, what the cache has is taken, the rest is extracted by `jobs`
    /// workers, each clip a file in the journal (`output.partial`), merged at the end.
    public func run(_ all: [ClipSource], output: String, progress: @escaping (ExtractProgress) -> Void = { _ in }) throws -> ExtractSummary {
        let start = Date()
        let clips = shard(all)
        var summary = ExtractSummary()
        summary.clips = clips.count
        let journal = output + ".partial"
        // The lock lives in the journal, so it goes with it when the store is finished.
        try FileManager.default.createDirectory(atPath: journal, withIntermediateDirectories: true)
        let lock = try FileLock(journal + "/.lock", what: output)
        defer { withExtendedLifetime(lock) {} }
        try openJournal(journal)

        var todo = unfinished(clips, journal: journal, summary: &summary)
        var keys: [String: String] = [:], fromCache = 0
        if let cache {
            let resumed = summary.resumed
            (todo, keys, fromCache) = try takeFromCache(cache, todo, journal: journal, summary: &summary) { clip, taken in
                progress(ExtractProgress(done: resumed + taken, total: clips.count, frames: 0,
                                         elapsed: Date().timeIntervalSince(start), lastClip: clip.id))
            }
        }
        let state = RunState(queue: todo, done: summary.resumed + fromCache)
        extract(state, jobs: max(1, min(options.jobs, todo.count)), journal: journal, cacheKeys: keys) { clip, outcome, warnings in
            let update = state.record(clip, outcome, warnings: warnings, total: clips.count, since: start)
            self.progressLock.withLock { progress(update) }
        }
        if let error = state.error { throw error }
        summary.extracted += state.extracted
        summary.skipped += state.skipped
        summary.warnings += state.warnings
        try merge(clips, journal: journal, into: output, summary: &summary)
        summary.seconds = Date().timeIntervalSince(start)
        return summary
    }

    /// The clips an earlier run did not finish (those it did are counted as resumed).
    private func unfinished(_ clips: [ClipSource], journal: String, summary: inout ExtractSummary) -> [ClipSource] {
        clips.filter { clip in
            let base = journal + "/" + Self.fileKey(clip.id)
            if FileManager.default.fileExists(atPath: base + ".h5") { summary.resumed += 1; return false }
            if let note = ExtractionCache.note(base + ".skip") {
                summary.resumed += 1; summary.skipped.append(SkippedClip(id: clip.id, reason: note)); return false
            }
            return true
        }
    }

    /// What the cache has of `todo`, written into the journal; the clips it lacks, the cache
    /// keys worked out, and how many it gave. Taken before any worker starts: a file from
    /// elsewhere is read first in a forked child (HDF5Copy), and a fork beside busy threads
    /// can inherit a lock that one of them held.
    private func takeFromCache(_ cache: ExtractionCache, _ todo: [ClipSource], journal: String, summary: inout ExtractSummary,
                               taken: (ClipSource, Int) -> Void) throws -> ([ClipSource], [String: String], Int) {
        var keys: [String: String] = [:], fromCache = 0, misses: [ClipSource] = []
        for clip in todo {
            // (A video that cannot be hashed cannot be read either: its extraction says why.)
            guard let key = try? ExtractionCache.key(video: clip.video, start: clip.start, end: clip.end,
                                                     modelHash: modelHash, options: options) else { misses.append(clip); continue }
            keys[clip.id] = key
            let entry: ExtractionCache.Entry?
            do { entry = try cache.lookup(key, as: clip, estimator: options.estimator, modelHash: modelHash) } catch {
                summary.warnings.append(ClipWarning(clip: clip.id, "the cache's copy does not read back (\(error)): extracted again"))
                entry = nil
            }
            guard let entry else { misses.append(clip); continue }
            let base = journal + "/" + Self.fileKey(clip.id)
            switch entry {
            case .keypoints(let keypoints, let notes):
                summary.warnings += notes.map { ClipWarning(clip: clip.id, $0) }
                try write(keypoints, to: base + ".h5")
                summary.extracted += 1; summary.cached += 1; fromCache += 1
            case .skipped(let reason):
                try AtomicFile.write(reason, to: base + ".skip")
                summary.skipped.append(SkippedClip(id: clip.id, reason: reason)); fromCache += 1
            }
            taken(clip, fromCache)
        }
        return (misses, keys, fromCache)
    }

    /// `jobs` workers, each with its own pose pipeline, take clips from `state`'s queue
    /// until it is empty or one fails; each clip's result is a file in the journal.
    private func extract(_ state: RunState, jobs: Int, journal: String, cacheKeys: [String: String],
                         done: @escaping (ClipSource, Outcome, [ClipWarning]) -> Void) {
        let worker = { [self] in
            let pipeline: PosePipeline
            do {
                var settings = PipelineOptions(maxPeople: options.maxPeople, threads: options.threads)
                settings.mirrorAverage = options.mirrorAverage; settings.redetect = options.redetect
                pipeline = try PosePipeline(detectorPath: detectorPath, landmarkPath: landmarkPath, options: settings)
            } catch { state.fail(error); return }
            while let clip = state.take() {
                do {
                    var warnings: [ClipWarning] = []
                    let outcome = try extractOne(clip, pipeline: pipeline, journal: journal, cacheKey: cacheKeys[clip.id], warnings: &warnings)
                    done(clip, outcome, warnings)
                } catch { state.fail(error); return }
            }
        }
        guard jobs > 1 else { worker(); return }
        let group = DispatchGroup()
        for _ in 0..<jobs {
            group.enter()
            let thread = Thread { worker(); group.leave() }
            thread.stackSize = 8 << 20
            thread.start()
        }
        group.wait()
    }

    /// Everything accounted for: the parts merged into the store, then the journal dropped.
    private func merge(_ clips: [ClipSource], journal: String, into output: String, summary: inout ExtractSummary) throws {
        let parts = clips.map { journal + "/" + Self.fileKey($0.id) + ".h5" }.filter { FileManager.default.fileExists(atPath: $0) }
        guard !parts.isEmpty else {
            let first = summary.skipped.first.map { " (first: \($0.id): \($0.reason))" } ?? ""
            throw ExtractError("\(output): no clip gave keypoints, so nothing was written; \(summary.skipped.count) of \(clips.count) skipped\(first)")
        }
        summary.stored = try KeypointStore.merge(parts, into: output)
        let store = try KeypointStore(path: output)
        summary.frames = store.entries.reduce(0) { $0 + $1.frames }
        summary.framesWithPerson = store.entries.reduce(0) { $0 + $1.framesWithPerson }
        try? FileManager.default.removeItem(atPath: journal)
    }

    private let progressLock = NSLock()

    /// What became of one clip.
    enum Outcome { case stored(frames: Int), skipped(reason: String, frames: Int) }

    /// Extracts one clip into the journal: a one-clip store, or a note saying why not; and
    /// into the cache under `cacheKey`. A video that cannot be read is a skipped clip;
    /// anything else wrong stops the run.
    func extractOne(_ clip: ClipSource, pipeline: PosePipeline, journal: String, cacheKey key: String?,
                    warnings: inout [ClipWarning]) throws -> Outcome {
        let base = journal + "/" + Self.fileKey(clip.id)
        let keypoints: ClipKeypoints
        var clipWarnings: [ClipWarning] = []
        defer { warnings += clipWarnings }
        do {
            keypoints = try extract(clip, pipeline: pipeline, warnings: &clipWarnings)
        } catch let error as MediaError {
            try AtomicFile.write(error.message, to: base + ".skip")
            return .skipped(reason: error.message, frames: 0)
        }
        let reason = keypoints.frameCount == 0 ? "no frames in the clip's range"
            : keypoints.framesWithPerson == 0 ? "no person found in any of its \(keypoints.frameCount) frames" : nil
        // The cache is a convenience: a clip it cannot keep (a full disk, a link planted in a
        // shared folder) is said and the run goes on.
        func keep(_ save: (ExtractionCache, String) throws -> Void) {
            guard let cache, let key else { return }
            do { try save(cache, key) } catch { clipWarnings.append(ClipWarning(clip: clip.id, "not kept in the cache: \(error)")) }
        }
        if let reason {
            keep { try $0.save($1, skipped: reason) }
            try AtomicFile.write(reason, to: base + ".skip")
            return .skipped(reason: reason, frames: keypoints.frameCount)
        }
        keep { try $0.save($1, keypoints, warnings: clipWarnings.map(\.message)) }
        try write(keypoints, to: base + ".h5")
        return .stored(frames: keypoints.frameCount)
    }

    private func write(_ keypoints: ClipKeypoints, to path: String) throws {
        let writer = try KeypointStoreWriter(path: path)
        try writer.append(keypoints)
        try writer.finish()
    }

    /// The journal folder, created or checked against this run's options.
    private func openJournal(_ journal: String) throws {
        let manifest = journal + "/options.json"
        let encoder = JSONEncoder(); encoder.outputFormatting = [.sortedKeys]
        var recorded = options; recorded.jobs = 0; recorded.threads = 0   // how, not what
        let mine = try encoder.encode(recorded)
        if FileManager.default.fileExists(atPath: manifest) {
            let theirs = try InputFile.read(manifest, limit: 1 << 20, what: "run's options")
            guard theirs == mine else {
                throw ExtractError("\(journal) holds an unfinished run made with other options (\(String(decoding: theirs, as: UTF8.self))): rerun with those, or delete the folder to start over")
            }
            return
        }
        try FileManager.default.createDirectory(atPath: journal, withIntermediateDirectories: true)
        try AtomicFile.write(mine, to: manifest)
    }

    /// One clip: its frames resampled to the model rate, the prominent person's 33 landmarks
    /// per frame (x, y normalised to the frame, visibility as confidence), missing frames kept.
    public func extract(_ clip: ClipSource, pipeline: PosePipeline, warnings: inout [ClipWarning]) throws -> ClipKeypoints {
        pipeline.reset()
        let reader = try VideoReader(clip.video, options: ReaderOptions(targetFPS: options.fps, threads: 1))
        defer { reader.close() }
        let info = reader.info
        // 29.97 is 30 for this purpose: only a rate more than 1 % lower repeats frames visibly.
        if info.fps > 0 && info.fps < options.fps * 0.99 {
            warnings.append(ClipWarning(clip: clip.id, String(format: "%.2f fps, below the %g fps extraction rate: frames are repeated",
                                                              info.fps, options.fps)))
        }
        if let duration = info.duration, let start = clip.start, start >= duration {
            throw MediaError(String(format: "%@: the range starts at %.2f s, after the video ends (%.2f s)", clip.id, start, duration))
        }
        if let duration = info.duration, let end = clip.end, end > duration + 1 / max(info.fps, 1) {
            warnings.append(ClipWarning(clip: clip.id, String(format: "the range ends at %.2f s, past the video's end (%.2f s): cut there",
                                                              end, duration)))
        }
        let names = Skeleton.blazePoseNames, joints = names.count
        var keypoints: [Float] = [], times: [Double] = [], world: [Float] = []
        if let frames = info.frameCount { keypoints.reserveCapacity(frames * joints * 3) }
        while let frame = try reader.next() {
            if let start = clip.start, frame.time < start - 1e-6 { continue }
            if let end = clip.end, frame.time >= end - 1e-6 { break }
            var seen = frame
            if options.mirror { seen.image = frame.image.mirrored() }
            let persons = pipeline.process(frame: seen)
            times.append(Double(times.count) / options.fps)
            var person = persons.first(where: \.isProminent) ?? persons.first
            if options.mirror { person = person?.mirrored(width: info.width) }
            keypoints += ClipKeypoints.row(person?.landmarks, width: info.width, height: info.height)
            world += ClipKeypoints.worldRow(person?.worldLandmarks)
        }
        for warning in reader.warnings { warnings.append(ClipWarning(clip: clip.id, warning)) }
        return ClipKeypoints(id: clip.id, label: clip.label, split: clip.split, source: clip.video, start: clip.start, end: clip.end,
                             fps: options.fps, width: info.width, height: info.height, jointNames: names, keypoints: keypoints,
                             times: times, estimator: options.estimator, modelHash: modelHash, world: world)
    }

    /// What the workers of one run share, behind one lock.
    final class RunState: @unchecked Sendable {
        private let lock = NSLock()
        private let queue: [ClipSource]
        private var next = 0, done: Int, frames = 0
        private(set) var extracted = 0
        private(set) var skipped: [SkippedClip] = []
        private(set) var warnings: [ClipWarning] = []
        private(set) var error: Error?

        init(queue: [ClipSource], done: Int) { self.queue = queue; self.done = done }

        /// The next clip to extract, or nil when none are left or the run failed.
        func take() -> ClipSource? {
            lock.lock(); defer { lock.unlock() }
            guard next < queue.count, error == nil else { return nil }
            next += 1
            return queue[next - 1]
        }

        func fail(_ e: Error) { lock.lock(); error = error ?? e; lock.unlock() }

        func record(_ clip: ClipSource, _ outcome: Outcome, warnings clipWarnings: [ClipWarning], total: Int, since start: Date) -> ExtractProgress {
            lock.lock(); defer { lock.unlock() }
            switch outcome {
            case .stored(let n): extracted += 1; frames += n
            case .skipped(let reason, let n): skipped.append(SkippedClip(id: clip.id, reason: reason)); frames += n
            }
            done += 1
            warnings += clipWarnings
            return ExtractProgress(done: done, total: total, frames: frames, elapsed: Date().timeIntervalSince(start), lastClip: clip.id)
        }
    }

    /// A file name for a clip id (ids hold '/' and '@').
    static func fileKey(_ id: String) -> String { String(SHA256.hex(Array(id.utf8)).prefix(24)) }
}
