import Foundation
import Basics

/// Runs a classification on a thread of its own, one window at a time and in order, so
/// that live's frame thread never waits for the model: a four-stream graph-net ensemble
/// takes longer than a frame's 33 ms, once every `stride` frames.
///
/// At most one window waits: a window due while another still waits replaces it (counted
/// in `replaced`), as live keeps the newest frame rather than queueing.
final class ClassifierWorker<Job, Result>: @unchecked Sendable {
    private let waiting = NewestItemSlot<Job>()
    private let lock = NSLock()
    private var done: [Result] = []
    private let work: (Job) -> Result

    init(name: String, work: @escaping (Job) -> Result) {
        self.work = work
        let thread = Thread { [self] in
            // Below the frame loop's priority: when the cores are short, the frames go on
            // and the predictions wait (several people's nets at once took frames from the
            // poses and dropped them). On Linux a nice value is per thread; who = 0 is this one.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
            loop()
        }
        thread.name = name
        thread.start()
    }

    /// Windows dropped because a newer one came before they were started.
    var replaced: Int { waiting.dropped }

    func submit(_ job: Job) {
        _ = waiting.put(job)
    }

    /// The results finished since the last call, oldest first.
    func takeFinished() -> [Result] {
        lock.lock(); defer { lock.unlock() }
        let out = done
        done = []
        return out
    }

    /// Waits for the waiting and running jobs, then returns every unreturned result.
    func finishAll() -> [Result] {
        waiting.waitUntilIdle()
        return takeFinished()
    }

    /// Ends the thread once its running job is done; a waiting one is dropped.
    func close() {
        waiting.close(discarding: true)
    }

    private func loop() {
        while let job = waiting.take() {
            let result = work(job)
            lock.lock(); done.append(result); lock.unlock()
            waiting.doneWithTaken()
        }
    }
}
