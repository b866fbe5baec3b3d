import Basics
import CFFmpeg
import Foundation

/// The one capture path for inputs read as they come: a camera, a stream, or a file played as
/// if it were live. A thread decodes continuously into a one-frame mailbox, so nothing queues
/// up and memory stays flat however slow the consumer is (a `NewestItemSlot` of frames).
///
/// Two counts, kept apart because they mean different things:
/// - `dropped`: frames replaced in the mailbox before the consumer took them: lost because the
///   consumer was slower than the source. This is the count `live` reports (summary, JSON, page).
/// - `skipped`: frames left out on purpose by the rate cap (at most `rateCap` frames a second of
///   the source's own time: the first frame of every 1/rateCap slot of its timestamps is kept).
///
/// Sources that do not deliver in real time by themselves (a file, a video over HTTP) are paced
/// to their own timestamps. Times are wall-clock seconds since `start`, taken when the frame
/// entered the mailbox.
final class LiveCapture {
    /// A decoded frame (owned: freed by whoever takes it out of the mailbox) and its time.
    private typealias TimedFrame = (frame: UnsafeMutablePointer<AVFrame>, time: Double)
    private let mailbox = NewestItemSlot<TimedFrame>()
    /// Guards the rest of the state, apart from the mailbox.
    private let condition = NSCondition()
    private var ended = false
    private var stopRequested = false
    private var threadDone = false
    private var endMessage: String?
    private var skippedCount = 0
    private var receivingSeconds = 0.0

    /// Starts the decoding thread on `core`, which from now on belongs to that thread until `stop()`.
    init(core: DecoderCore, start: Double, paced: Bool, rateCap: Double?) {
        self.start = start
        let thread = Thread { [self] in
            decodeLoop(core: core, start: start, paced: paced, rateCap: rateCap.flatMap { $0 > 0 ? $0 : nil })
        }
        thread.name = "poseact.media.live"
        thread.start()
    }

    deinit { Self.free(mailbox.close(discarding: true)) }

    var dropped: Int { mailbox.dropped }
    var skipped: Int { condition.lock(); defer { condition.unlock() }; return skippedCount }
    /// Seconds the thread spent in receiving frames (reading and decoding; pacing not included).
    var receiveSeconds: Double { condition.lock(); defer { condition.unlock() }; return receivingSeconds }

    /// Waits for an unread frame and moves it into `dst`; returns its time, or nil once the
    /// source has ended (`reason` then says why, nil for the natural end of a file) or `stop()`
    /// was called.
    func take(into dst: UnsafeMutablePointer<AVFrame>) -> (time: Double?, reason: String?) {
        guard let taken = mailbox.take() else {
            condition.lock(); defer { condition.unlock() }
            return (nil, stopRequested ? nil : endMessage)
        }
        av_frame_move_ref(dst, taken.frame)
        Self.free(taken)
        return (taken.time, nil)
    }

    /// The start of `time` on the monotonic clock.
    let start: Double

    /// Blocks until the thread has decoded the last frame of the input (or was stopped).
    func waitForEndOfInput() {
        condition.lock()
        while !ended && !threadDone { condition.wait() }
        condition.unlock()
    }

    /// Asks the thread to stop (from any thread): a waiting `take` returns nil at once.
    func requestStop(interrupting interrupt: InterruptState) {
        condition.lock()
        stopRequested = true
        condition.broadcast()
        condition.unlock()
        Self.free(mailbox.close(discarding: true))
        interrupt.abort()
    }

    /// Stops the thread and waits for it to finish; `interrupt` wakes a blocking read.
    func stop(interrupting interrupt: InterruptState) {
        requestStop(interrupting: interrupt)
        condition.lock()
        while !threadDone { condition.wait() }
        condition.unlock()
    }

    // MARK: the decoding thread

    private func decodeLoop(core: DecoderCore, start: Double, paced: Bool, rateCap: Double?) {
        defer { condition.lock(); threadDone = true; condition.broadcast(); condition.unlock() }
        guard let work = av_frame_alloc() else { finish("\(core.input): out of memory"); return }
        defer { var w: UnsafeMutablePointer<AVFrame>? = work; av_frame_free(&w) }
        var paceOrigin: Double?   // wall time minus media time of the first frame
        var lastSlot = Int.min
        while true {
            let receiving = monotonicSeconds()
            let received = core.receive(into: work)
            condition.lock(); receivingSeconds += monotonicSeconds() - receiving; condition.unlock()
            guard let media = received else {
                let message: String?
                if isStopping || core.kind.isFile { message = nil }
                else { message = core.stopReason
                    ?? "\(core.input): the stream stopped at \(String(format: "%.1f s", monotonicSeconds() - start)) (End of file)" }
                finish(message)
                return
            }
            if paced {
                let now = monotonicSeconds()
                if paceOrigin == nil { paceOrigin = now - media }
                if abs(paceOrigin! + media - now) > 2 { paceOrigin = now - media }   // a jump in the timestamps
                guard sleep(until: paceOrigin! + media) else { finish(nil); return }
            }
            let time = monotonicSeconds() - start
            if let rateCap {
                // By the source's own timestamps, not the arrival time: a stream that arrives in
                // bursts, or a decode made late by a busy machine, keeps the frames it should.
                let slot = Int((media * rateCap + 1e-6).rounded(.down))
                if slot <= lastSlot {
                    av_frame_unref(work)
                    condition.lock(); skippedCount += 1; condition.unlock()
                    continue
                }
                lastSlot = slot
            }
            guard put(work, time: time) else { finish(nil); return }
        }
    }

    private var isStopping: Bool { condition.lock(); defer { condition.unlock() }; return stopRequested }

    /// Waits until the monotonic time `deadline`; false when `stop()` was asked meanwhile.
    private func sleep(until deadline: Double) -> Bool {
        condition.lock(); defer { condition.unlock() }
        while !stopRequested {
            let left = deadline - monotonicSeconds()
            if left <= 0 { return true }
            _ = condition.wait(until: Date(timeIntervalSinceNow: left))
        }
        return false
    }

    /// Moves `frame` into the mailbox, replacing (and counting) an unread one; false once
    /// stopping (or out of memory: then the capture ends as if stopped).
    private func put(_ frame: UnsafeMutablePointer<AVFrame>, time: Double) -> Bool {
        guard let owned = av_frame_alloc() else { av_frame_unref(frame); return false }
        av_frame_move_ref(owned, frame)
        switch mailbox.put((owned, time)) {
        case .put: return true
        case .replaced(let old): Self.free(old); return true
        case .refused(let back): Self.free(back); return false
        }
    }

    private static func free(_ item: TimedFrame?) {
        guard let item else { return }
        var f: UnsafeMutablePointer<AVFrame>? = item.frame
        av_frame_free(&f)
    }

    /// The end of the input (or a stop): what is in the mailbox is still taken, then `take` returns nil.
    private func finish(_ message: String?) {
        condition.lock(); ended = true; endMessage = message; condition.broadcast(); condition.unlock()
        mailbox.close()
    }
}
