import Foundation
import Synchronization

/// A fixed pool of worker threads for the per-operator parallel loops of an inference.
///
/// An inference runs ~100–150 small operators back to back, each split over the cores, so
/// handing out work must be cheap: GCD's `concurrentPerform` costs tens of microseconds a
/// call, milliseconds per model run. Here workers spin on an atomic generation counter
/// for a while after each job (the next operator follows within microseconds) and only
/// then sleep on a semaphore. Work is split into more tasks than threads: each thread
/// starts on a contiguous range of its own and then takes what the others have not yet
/// claimed (see `work`).
public final class ThreadPool: @unchecked Sendable {
    /// Threads that take part in a job, the caller included.
    public let threadCount: Int

    private let generation = Atomic<Int>(0)
    private let nextTasks: [TaskCounter]    // per thread: the next task of its own range
    private let doneTasks = Atomic<Int>(0)
    private let activeWorkers = Atomic<Int>(0)
    private let shutdown = Atomic<Bool>(false)
    private let busy = Atomic<Bool>(false)   // one job at a time; other callers run inline
    private let sleeping: [SleepFlag]
    private let wakeups: [DispatchSemaphore]
    // Written by the caller before `generation` is bumped, read by workers after.
    private var job: ((_ task: Int, _ thread: Int) -> Void)?
    private var taskCount = 0
    private var taskEnds: [Int]   // per thread: the end of its own range
    private var jobThreads = 0
    /// Checks of the job counter before an idle worker sleeps.
    private let spinIterations: Int

    /// A pool with one thread per core, shared by all plans of the process.
    public static let shared = ThreadPool(threads: ProcessInfo.processInfo.activeProcessorCount)

    /// `spinIterations`: how long an idle worker waits for the next job before it sleeps; the
    /// default, tens of µs, suits an inference's operators, which follow each other within
    /// microseconds.
    public init(threads: Int, spinIterations: Int = 100_000) {
        threadCount = max(1, threads)
        self.spinIterations = spinIterations
        sleeping = (0..<threadCount).map { _ in SleepFlag() }
        nextTasks = (0..<threadCount).map { _ in TaskCounter() }
        taskEnds = [Int](repeating: 0, count: threadCount)
        wakeups = (0..<threadCount).map { _ in DispatchSemaphore(value: 0) }
        for worker in 1..<threadCount {
            let thread = Thread { [unowned self] in self.workerLoop(worker) }
            thread.name = "poseact-worker-\(worker)"
            thread.start()
        }
    }

    deinit {
        shutdown.store(true, ordering: .sequentiallyConsistent)
        generation.add(1, ordering: .sequentiallyConsistent)
        for w in wakeups { w.signal() }
    }

    private func workerLoop(_ index: Int) {
        flushDenormalsToZero()
        var seen = 0
        while true {
            var spins = 0
            var current = generation.load(ordering: .acquiring)
            while current == seen {
                spins += 1
                if spins > spinIterations {
                    sleeping[index].value.store(true, ordering: .sequentiallyConsistent)
                    // Re-check after announcing sleep, so a job posted meanwhile is not missed.
                    if generation.load(ordering: .sequentiallyConsistent) == seen { wakeups[index].wait() }
                    sleeping[index].value.store(false, ordering: .sequentiallyConsistent)
                    spins = 0
                }
                current = generation.load(ordering: .acquiring)
            }
            seen = current
            if shutdown.load(ordering: .acquiring) { return }
            if index < jobThreads { work(thread: index) }
            activeWorkers.subtract(1, ordering: .releasing)
        }
    }

    /// Thread t runs the tasks of its own contiguous range first, in order, then takes what
    /// is left of the others' ranges. The same thread thus works on the same part of the
    /// data operator after operator (the part it wrote is in its own cache when the next
    /// operator reads it), and a thread the OS has descheduled does not hold the others up.
    @inline(__always)
    private func work(thread: Int) {
        for offset in 0..<jobThreads {
            let owner = (thread + offset) % jobThreads
            let end = taskEnds[owner]
            while true {
                let task = nextTasks[owner].value.add(1, ordering: .relaxed).oldValue
                if task >= end { break }
                job!(task, thread)
                doneTasks.add(1, ordering: .releasing)
            }
        }
    }

    /// Runs `body(task, thread)` for every task in 0..<tasks on up to `threads` threads (the
    /// caller is thread 0) and returns when all are done. `thread` < `threads` identifies
    /// the running thread, for per-thread scratch memory.
    public func run(tasks: Int, threads requested: Int, _ body: (_ task: Int, _ thread: Int) -> Void) {
        let n = min(max(1, requested), threadCount, tasks)
        // Single-threaded work, or the pool is serving another caller (two pipelines of a
        // parallel extraction): run here. Correct either way, never a shared job slot.
        if n <= 1 || !busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
            for t in 0..<tasks { body(t, 0) }
            return
        }
        defer { busy.store(false, ordering: .releasing) }
        withoutActuallyEscaping(body) { escapable in
            job = escapable
            taskCount = tasks
            jobThreads = n
            for t in 0..<n {
                let range = chunk(tasks, parts: n, index: t)
                nextTasks[t].value.store(range.lowerBound, ordering: .relaxed)
                taskEnds[t] = range.upperBound
            }
            doneTasks.store(0, ordering: .relaxed)
            activeWorkers.store(threadCount - 1, ordering: .relaxed)
            generation.add(1, ordering: .sequentiallyConsistent)
            for w in 1..<threadCount where sleeping[w].value.load(ordering: .sequentiallyConsistent) {
                wakeups[w].signal()
            }
            work(thread: 0)
            var spins = 0
            // Wait for the tasks, then for every worker to be out of `job` before it changes.
            while doneTasks.load(ordering: .acquiring) < tasks || activeWorkers.load(ordering: .acquiring) > 0 {
                spins += 1
                if spins > 1000 { sched_yield(); spins = 0 }
            }
            job = nil
        }
    }
}

/// A thread's next task (atomics are not copyable, so not array elements).
private final class TaskCounter: Sendable {
    let value = Atomic<Int>(0)
}

/// A worker's "I am about to sleep" flag (atomics are not copyable, so not array elements).
private final class SleepFlag: Sendable {
    let value = Atomic<Bool>(false)
}

/// Splits 0..<count into `parts` nearly equal contiguous ranges; part `index` of them.
@inline(__always)
public func chunk(_ count: Int, parts: Int, index: Int) -> Range<Int> {
    let base = count / parts, extra = count % parts
    let start = index * base + min(index, extra)
    return start..<(start + base + (index < extra ? 1 : 0))
}

extension ThreadPool {
    /// Calls `body(range, thread)` on contiguous pieces of 0..<count, spread over up to
    /// `threads` threads (a few pieces per thread). Counts below `minPerThread` per thread
    /// stay on the calling thread. Piece boundaries fall on multiples of `alignment` (a GEMM
    /// tile's rows), and each thread's own pieces hold an equal share of the items, not of
    /// the pieces: with 17 tiles of 12 rows, 196 rows in all, the threads get 96 and 100 rows
    /// (by whole tiles they got 108 and 88, and the layer took 55 % of its 1-thread time).
    @inline(__always)
    public func parallelFor(_ count: Int, threads: Int, minPerThread: Int = 1, alignment: Int = 1,
                            _ body: (_ range: Range<Int>, _ thread: Int) -> Void) {
        let align = max(1, alignment)
        let units = (count + align - 1) / align
        let n = min(threads, threadCount, max(1, count / max(1, minPerThread)), units)
        if n <= 1 { if count > 0 { body(0..<count, 0) }; return }
        // A multiple of n pieces, so that `run` gives every thread as many.
        let pieces = max(n, min(units, n * 4) / n * n)
        @inline(__always) func boundary(_ i: Int) -> Int {
            i >= pieces ? count : min(count, (count * i / pieces + align / 2) / align * align)
        }
        run(tasks: pieces, threads: n) { task, thread in
            let range = boundary(task)..<boundary(task + 1)
            if !range.isEmpty { body(range, thread) }
        }
    }
}
