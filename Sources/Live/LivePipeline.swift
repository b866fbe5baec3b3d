import Classifier
import Dataset
import Foundation
import Media
import Pose

/// A one-frame mailbox between capture and processing: capture always leaves the newest
/// frame; one that was not taken in time is replaced and counted as dropped, so nothing
/// queues up and memory stays flat however slow processing is.
final class LatestFrame: @unchecked Sendable {
    private let condition = NSCondition()
    private var frame: (Frame, captured: UInt64)?
    private var finished = false
    private(set) var dropped = 0

    /// Leaves `frame`; when `wait`, blocks until the slot is free instead of dropping.
    func put(_ frame: Frame, captured: UInt64, wait: Bool) {
        condition.lock()
        defer { condition.unlock() }
        while wait && self.frame != nil && !finished { condition.wait() }
        if self.frame != nil { dropped += 1 }
        self.frame = (frame, captured)
        condition.broadcast()
    }

    /// The newest frame, waiting for one; nil once capture has finished and the slot is empty.
    func take() -> (Frame, captured: UInt64)? {
        condition.lock()
        defer { condition.unlock() }
        while frame == nil && !finished { condition.wait() }
        let f = frame
        frame = nil
        condition.broadcast()
        return f
    }

    /// Why capture ended early, if it did.
    private(set) var error: String?

    func finish(error: String? = nil) {
        condition.lock()
        if let error { self.error = error }
        finished = true
        condition.broadcast()
        condition.unlock()
    }
}

/// What `live` reports as it goes.
public enum LiveEvent {
    case prediction(Prediction, fps: Double, dropped: Int)
    case stateChange(from: String?, to: String, time: Double, personID: Int?)
    /// Every processed frame, with its overlay drawn (for a recorder or a viewer).
    case frame(RGBImage, time: Double)
}

public struct LiveStats: Sendable {
    public var frames = 0
    public var dropped = 0
    /// People found, summed over the processed frames.
    public var persons = 0
    public var seconds = 0.0
    /// Capture to overlay-and-prediction, per processed frame, milliseconds.
    public var latencies: [Double] = []
    public var summary = ActionSummary()
    /// Why the input ended early, if it did (a stream that stopped).
    public var error: String?
    public var fps: Double { seconds > 0 ? Double(frames) / seconds : 0 }
}

/// The real-time pipeline: a capture thread reads the input (a file at its own speed unless
/// `asFastAsPossible`, a camera or a stream as it comes) into a one-frame mailbox; this
/// thread takes the newest frame, poses it, feeds the prominent person to the recognizer,
/// and draws the overlay. Frames that arrive while a frame is processed are dropped and
/// counted, never queued.
public final class LivePipeline {
    public let pipeline: PosePipeline
    public let recognizer: ActionRecognizer
    public var asFastAsPossible = false
    /// Frames to process at most (0: until the input ends or `stop()`).
    public var maxFrames = 0
    /// Whether to draw the overlay into each frame (`.frame` events).
    public var drawOverlay = true
    /// Seconds to wait for a stream to answer (and between its frames) before giving up.
    public var timeout = 5.0
    /// Applied to each frame as it is captured (benchmarks tile a frame into several people).
    public var capturedFrame: ((RGBImage) -> RGBImage)?
    private let stopFlag = NSLock()
    private var stopped = false

    public init(pipeline: PosePipeline, recognizer: ActionRecognizer) {
        self.pipeline = pipeline
        self.recognizer = recognizer
    }

    /// Ends a run from another thread (Ctrl-C): the summary still comes.
    public func stop() { stopFlag.lock(); stopped = true; stopFlag.unlock() }
    var isStopped: Bool { stopFlag.lock(); defer { stopFlag.unlock() }; return stopped }

    public func run(input: String, events: (LiveEvent) -> Void) throws -> LiveStats {
        pipeline.reset()
        recognizer.reset()
        let fps = recognizer.spec.fps
        let reader = try VideoReader(input, options: ReaderOptions(targetFPS: fps, timeout: timeout))
        let info = reader.info
        let mailbox = LatestFrame()
        let paced = !asFastAsPossible && !info.isLive
        let capture = Thread { [self] in
            let start = DispatchTime.now().uptimeNanoseconds
            var first: Double?
            var captureError: String?
            do {
                while !isStopped, var frame = try reader.next() {
                    if let capturedFrame { frame.image = capturedFrame(frame.image) }
                    if paced {
                        // A file plays at its own speed, as if it were live.
                        if first == nil { first = frame.time }
                        let due = start + UInt64(max(0, frame.time - first!) * 1e9)
                        let now = DispatchTime.now().uptimeNanoseconds
                        if due > now { usleep(useconds_t((due - now) / 1000)) }
                    }
                    mailbox.put(frame, captured: DispatchTime.now().uptimeNanoseconds, wait: asFastAsPossible)
                }
                captureError = reader.endReason   // a stream that stopped (nil at the end of a file)
            } catch {
                captureError = "\(error)"
            }
            mailbox.finish(error: captureError)
        }
        capture.start()
        defer { reader.close() }

        var stats = LiveStats()
        var width = info.width, height = info.height
        var lastState: String?
        let started = DispatchTime.now().uptimeNanoseconds
        var recentTimes: [UInt64] = []
        var state: ActionState?
        while let (frame, captured) = mailbox.take() {
            let persons = pipeline.process(frame: frame)
            stats.persons += persons.count
            width = frame.image.width; height = frame.image.height
            let time = frame.time
            if let p = recognizer.push(persons: persons, width: width, height: height, time: time) {
                state = p.state
                stats.summary.add(p)
                let now = DispatchTime.now().uptimeNanoseconds
                let windowFPS = recentTimes.count > 1 ? Double(recentTimes.count - 1) / (Double(now - recentTimes[0]) / 1e9) : 0
                events(.prediction(p, fps: windowFPS, dropped: mailbox.dropped))
                if p.state.name != lastState {
                    events(.stateChange(from: lastState, to: p.state.name, time: p.time, personID: p.personID))
                    lastState = p.state.name
                }
            }
            if drawOverlay {
                var image = frame.image
                let now = DispatchTime.now().uptimeNanoseconds
                let shownFPS = recentTimes.count > 1 ? Double(recentTimes.count - 1) / (Double(now - recentTimes[0]) / 1e9) : nil
                Overlay.draw(&image, persons: persons, state: state, fps: shownFPS)
                events(.frame(image, time: time))
            }
            let done = DispatchTime.now().uptimeNanoseconds
            stats.latencies.append(Double(done - captured) / 1e6)
            if stats.latencies.count > 100_000 { stats.latencies.removeFirst(50_000) }   // bounded over long runs
            recentTimes.append(done)
            if recentTimes.count > 31 { recentTimes.removeFirst() }
            stats.frames += 1
            if maxFrames > 0 && stats.frames >= maxFrames { stop() }
            if isStopped { break }
        }
        stop()
        mailbox.finish()
        while !capture.isFinished { usleep(1000) }
        stats.seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        stats.dropped = mailbox.dropped
        stats.error = mailbox.error
        stats.summary.finish(at: stats.frames > 0 ? (recognizer.lastTime ?? 0) : 0)
        return stats
    }
}
