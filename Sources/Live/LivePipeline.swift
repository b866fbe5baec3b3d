import Foundation
import Images
import Media
import Pose
import Trajectories

/// What `live` reports as it goes.
public enum LiveEvent {
    case prediction(Prediction, fps: Double, dropped: Int)
    case stateChange(from: String?, to: String, time: Double, personID: Int?)
    /// An occurrence that has ended, with its repetitions.
    case occurrence(OccurrenceReport)
    case repetition(RepetitionReport)
    /// One person's angles on one frame (degrees, in `CoachOptions.angles` order; NaN: a joint missing).
    case angles(person: Int, time: Double, values: [Float])
    /// Every processed frame, with its overlay drawn (for a recorder or a viewer).
    case frame(RGBImage, time: Double)
    /// Everyone followed, after every frame (for a viewer): state, repetitions, angles; and
    /// everyone's seconds per action so far (the coach's, which the run's summary totals too).
    case people([PersonView], angleNames: [String], summary: ActionSummary)
    /// A trajectory that ended (`--trajectories`), or a later revision of one (a piece
    /// joined it: the same id, every point so far).
    case trajectory(Trajectory)
    /// A throw: a trajectory that started at someone's hand (again when its trajectory is amended).
    case throwMade(ThrowReport)
    /// The camera started moving (no trajectories are looked for) or stood still again.
    case scene(stable: Bool, time: Double)
}

public struct LiveStats: Sendable {
    public var frames = 0
    /// Frames the processing was too slow for: replaced in the capture's mailbox before being taken.
    public var dropped = 0
    /// People found, summed over the processed frames.
    public var persons = 0
    public var seconds = 0.0
    /// Capture to overlay (and, without a background model, prediction), per processed frame, milliseconds.
    public var latencies: [Double] = []
    /// Capture of a window's last frame to its prediction, per prediction, milliseconds.
    public var predictionLatencies: [Double] = []
    /// Windows a background model skipped: a newer one was due before it got to them.
    public var skippedWindows = 0
    /// Seconds per state, everyone's summed.
    public var summary = ActionSummary()
    /// Per person: seconds per state, occurrences, repetitions.
    public var people: [PersonSummary] = []
    /// Why the input ended early, if it did (a stream that stopped).
    public var error: String?
    /// Per thrower (`--trajectories`): throws per type, speeds, angles, hits.
    public var throwTallies: [ThrowTally] = []
    public var trajectories = 0
    /// The trajectory detector's milliseconds per frame (median, 95th percentile), on its own thread.
    public var trajectoryCost: (median: Double, p95: Double)?
    /// Frames the trajectory detector had no room for.
    public var trajectoryFramesDropped = 0
    /// Where the time went, stage by stage (`bench live`).
    public var costs = FrameCosts()
    /// Frames dropped while the first second's frames were processed (starting up).
    public var droppedAtStart = 0
    public var fps: Double { seconds > 0 ? Double(frames) / seconds : 0 }
}

/// The real-time pipeline: the newest frame of the input (a camera or a stream as it comes, a
/// file at its own speed unless `asFastAsPossible`) is posed, its people fed to the coach
/// (each their recognizer, occurrences, repetitions, angles), and the overlay drawn. Capture is the reader's live mode (`VideoReader`'s
/// `LiveCapture`): frames that arrive while one is processed are dropped and counted there,
/// never queued, and that one count is what the stats, the events and the page report.
public final class LivePipeline {
    public let pipeline: PosePipeline
    public let coach: PeopleCoach
    /// Trajectories and throws, when asked for (`--trajectories`).
    public var throwCoach: ThrowCoach?
    /// A file read frame by frame at the model's rate, as fast as it can be processed (none dropped).
    public var asFastAsPossible = false
    /// Frames to process at most (0: until the input ends or `stop()`).
    public var maxFrames = 0
    /// Whether to draw the overlay into each frame (`.frame` events).
    public var drawOverlay = true
    /// Seconds to wait for a stream to answer (and between its frames) before giving up.
    public var timeout = 5.0
    /// Applied to each frame before it is processed (benchmarks tile a frame into several people).
    public var capturedFrame: ((RGBImage) -> RGBImage)?
    /// While anyone is followed, the detector runs on its own thread (`PipelineOptions.detectInBackground`),
    /// for live sources (not with `asFastAsPossible`).
    public var detectInBackground = true
    /// When a frame's people would be posed too late to keep the next frame (two frame
    /// times after its capture, less 20 ms), those who moved least keep their last pose for
    /// it (`PipelineOptions.frameDeadline`); live sources only.
    public var holdPosesWhenLate = true
    private let lock = NSLock()
    private var stopped = false
    private var reader: VideoReader?

    public init(pipeline: PosePipeline, coach: PeopleCoach) {
        self.pipeline = pipeline
        self.coach = coach
    }

    /// Ends a run from another thread (Ctrl-C): the summary still comes.
    public func stop() {
        lock.lock(); stopped = true; let reader = self.reader; lock.unlock()
        reader?.interrupt()
    }
    private var isStopped: Bool { lock.lock(); defer { lock.unlock() }; return stopped }

    /// Opens `input` (live mode unless `asFastAsPossible` on a file; frames at most at the
    /// model's rate) and runs it.
    public func run(input: String, events: (LiveEvent) -> Void) throws -> LiveStats {
        configurePipeline()   // its models load before the source's frames start coming
        let reader = try VideoReader(input, options: ReaderOptions(targetFPS: coach.spec.fps,
                                                                   live: asFastAsPossible ? nil : true, timeout: timeout))
        defer { reader.close() }
        return try run(reader: reader, events: events)
    }

    private func configurePipeline() {
        pipeline.options.detectInBackground = detectInBackground && !asFastAsPossible
        // Two frame times after capture the next frame is replaced unseen; 20 ms of those are
        // kept for the rest of the frame (3–4 ms) and for a run slower than the recent ones.
        pipeline.options.frameDeadline = holdPosesWhenLate && !asFastAsPossible ? 2 / coach.spec.fps - 0.020 : nil
        pipeline.prepareBackgroundDetector()
    }

    /// Runs an open reader to its end, `maxFrames` or `stop()`.
    public func run(reader: VideoReader, events: (LiveEvent) -> Void) throws -> LiveStats {
        lock.lock(); self.reader = reader; let stoppedAlready = stopped; lock.unlock()
        defer { lock.lock(); self.reader = nil; lock.unlock() }
        if stoppedAlready { reader.interrupt() }
        var run = Run(reader: reader, window: coach.spec.window, fps: coach.spec.fps)
        let angleNames = coach.options.angles.map(\.name)
        configurePipeline()
        var loop = FrameLoop(pipeline: pipeline, coach: coach, drawOverlay: drawOverlay)
        loop.transform = capturedFrame
        loop.throwCoach = throwCoach
        loop.trajectoriesInBackground = !asFastAsPossible
        let ending = try loop.run(reader, time: \.time, shownFPS: { run.recentFPS() }) { step in
            let outputStart = monotonicSeconds()
            run.frameStarted(step)
            step.events.forEach { run.handle($0, events) }
            if step.sceneIsStable != run.stable {
                run.stable = step.sceneIsStable
                events(.scene(stable: run.stable, time: step.frame.time))
            }
            run.stats.trajectories += step.trajectories.filter { $0.revision == 0 }.count
            step.trajectories.forEach { events(.trajectory($0)) }
            step.throwsMade.forEach { events(.throwMade($0)) }
            events(.people(coach.views, angleNames: angleNames, summary: coach.secondsSoFar))
            if let image = step.overlay { events(.frame(image, time: step.frame.time)) }
            run.frameDone(step, outputStart: outputStart)
            return !(maxFrames > 0 && run.stats.frames >= maxFrames) && !isStopped
        }
        run.stats.trajectories += ending.trajectories.filter { $0.revision == 0 }.count
        ending.trajectories.forEach { events(.trajectory($0)) }
        ending.throwsMade.forEach { events(.throwMade($0)) }
        let skipped = coach.skippedWindows
        coach.finish(at: run.stats.frames > 0 ? (coach.lastFrameTime ?? 0) : 0).forEach { run.handle($0, events) }
        return run.finished(ending: ending, skippedBefore: skipped, coach: coach, throwCoach: throwCoach)
    }

    /// What one run keeps as it goes: its figures, each person's last state, when recent
    /// frames were captured and done.
    struct Run {
        let reader: VideoReader
        /// A prediction's frame is at most this many frames back (four windows).
        let window: Int, fps: Double
        var stats = LiveStats()
        let cpuAtStart = FrameCosts.processCPUSeconds()
        let started = monotonicSeconds()
        var lastState: [Int: String] = [:]
        /// When each recent frame was captured, by its index since the start (a prediction's `frame`).
        var capturedAt: [Int: Double] = [:]
        /// When the last 31 frames were done.
        var recentTimes: [Double] = []
        var stable = true

        init(reader: VideoReader, window: Int, fps: Double) { self.reader = reader; self.window = window; self.fps = fps }

        func recentFPS() -> Double? {
            guard recentTimes.count > 1 else { return nil }
            return Double(recentTimes.count - 1) / (monotonicSeconds() - recentTimes[0])
        }

        mutating func frameStarted(_ step: FrameLoop.Step) {
            capturedAt[stats.frames] = step.frame.decodedAt
            capturedAt[stats.frames - 4 * window] = nil
            stats.persons += step.persons.count
        }

        /// A coach event as live events: a prediction (and a change of the person's state),
        /// an occurrence, a repetition, angles.
        mutating func handle(_ e: CoachEvent, _ events: (LiveEvent) -> Void) {
            switch e {
            case .prediction(let p):
                if let t = capturedAt[p.frame] { stats.predictionLatencies.append((monotonicSeconds() - t) * 1000) }
                if stats.predictionLatencies.count > 100_000 { stats.predictionLatencies.removeFirst(50_000) }
                events(.prediction(p, fps: recentFPS() ?? 0, dropped: reader.droppedFrames))
                let person = p.personID ?? -1
                if p.state.name != lastState[person] {
                    events(.stateChange(from: lastState[person], to: p.state.name, time: p.time, personID: p.personID))
                    lastState[person] = p.state.name
                }
            case .occurrence(let o): events(.occurrence(o))
            case .repetition(let r): events(.repetition(r))
            case .angles(let person, let time, let values): events(.angles(person: person, time: time, values: values))
            }
        }

        /// The frame's costs, its latency, the recent rate; the frame counted.
        mutating func frameDone(_ step: FrameLoop.Step, outputStart: Double) {
            let done = monotonicSeconds()
            var costs = step.costs
            costs[.output] = (done - outputStart) * 1000
            stats.costs.add(costs, landmarkRuns: step.landmarkRuns, landmarkRunSeconds: step.landmarkRunSeconds)
            if Double(stats.frames) < fps { stats.droppedAtStart = reader.droppedFrames }
            stats.latencies.append((done - step.frame.decodedAt) * 1000)
            if stats.latencies.count > 100_000 { stats.latencies.removeFirst(50_000) }   // bounded over long runs
            recentTimes.append(done)
            if recentTimes.count > 31 { recentTimes.removeFirst() }
            stats.frames += 1
        }

        /// The run's figures at its end.
        mutating func finished(ending: FrameLoop.Ending, skippedBefore skipped: Int, coach: PeopleCoach, throwCoach: ThrowCoach?) -> LiveStats {
            stats.trajectoryCost = ending.trajectoryCost
            stats.trajectoryFramesDropped = ending.trajectoryFramesDropped
            stats.throwTallies = (throwCoach?.tallies.values).map { $0.sorted { $0.person < $1.person } } ?? []
            stats.seconds = monotonicSeconds() - started
            stats.costs.cpuSeconds = FrameCosts.processCPUSeconds() - cpuAtStart
            stats.costs.captureSeconds = reader.captureSeconds
            stats.costs.modelMilliseconds = coach.modelTimes.all()
            stats.dropped = reader.droppedFrames
            stats.skippedWindows = max(skipped, coach.skippedWindows)
            stats.error = reader.endReason
            stats.people = coach.summaries
            stats.summary = .total(stats.people.map(\.seconds))
            return stats
        }
    }
}
