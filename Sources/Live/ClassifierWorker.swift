import Foundation

/// Runs a classification on a thread of its own, one window at a time and in order, so
/// that live's frame thread never waits for the model: a four-stream graph-net ensemble
/// takes longer than a frame's 33 ms, once every `stride` frames.
///
/// At most one window waits: a window due while another still waits replaces it (counted
/// in `replaced`), as live keeps the newest frame rather than queueing.
final class ClassifierWorker<Job, Result>: @unchecked Sendable {
    private let condition = NSCondition()
    private var waiting: Job?
    private var running = false
    private var done: [Result] = []
    private var closed = false
    private var replacedCount = 0
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
    var replaced: Int { condition.lock(); defer { condition.unlock() }; return replacedCount }

    func submit(_ job: Job) {
        condition.lock()
        if waiting != nil { replacedCount += 1 }
        waiting = job
        condition.broadcast()
        condition.unlock()
    }

    /// The results finished since the last call, oldest first.
    func takeFinished() -> [Result] {
        condition.lock(); defer { condition.unlock() }
        let out = done
        done = []
        return out
    }

    /// Waits for the waiting and running jobs, then returns every unreturned result.
    func finishAll() -> [Result] {
        condition.lock()
        while waiting != nil || running { condition.wait() }
        let out = done
        done = []
        condition.unlock()
        return out
    }

    /// Ends the thread once its running job is done; a waiting one is dropped.
    func close() {
        condition.lock()
        closed = true
        waiting = nil
        condition.broadcast()
        condition.unlock()
    }

    private func loop() {
        condition.lock()
        while true {
            while waiting == nil && !closed { condition.wait() }
            if closed { break }
            let job = waiting!
            waiting = nil
            running = true
            condition.unlock()
            let result = work(job)
            condition.lock()
            running = false
            done.append(result)
            condition.broadcast()
        }
        condition.unlock()
    }
}
