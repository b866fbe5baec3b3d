import Foundation
import Images
import Media
import Trajectories

/// The trajectory detector on a thread of its own (live), so that it never holds up the
/// poses; or in step with the frames (annotate, tests: results that do not depend on timing).
///
/// Unlike the classifier, the detector needs every frame, in order: frames wait in a queue
/// of at most `capacity` (half a second at 30 fps); one that comes to a full queue is
/// dropped and counted (the scene's background and the tracks go on without it).
final class TrajectoryWorker: @unchecked Sendable {
    struct Output {
        var ended: [Trajectory] = []
        var ongoing: [Trajectory] = []
        var sceneIsStable = true
    }

    let detector: TrajectoryDetector
    let capacity = 15
    private let condition = NSCondition()
    private var queue: [(RGBImage, Double)] = []
    private var busy = false
    private var closed = false
    private var output = Output()
    private(set) var droppedFrames = 0
    /// Seconds the detector took per frame (the last 10 000).
    private var costs: [Double] = []
    private let background: Bool

    init(detector: TrajectoryDetector, background: Bool) {
        self.detector = detector
        self.background = background
        guard background else { return }
        let thread = Thread { [self] in loop() }
        thread.name = "trajectories"
        thread.start()
    }

    func submit(_ image: RGBImage, time: Double) {
        guard background else { run(image, time); return }
        condition.lock(); defer { condition.unlock() }
        guard !closed else { return }
        if queue.count >= capacity { droppedFrames += 1; return }
        queue.append((image, time))
        condition.broadcast()
    }

    /// What the detector found since the last call.
    func take() -> Output {
        condition.lock(); defer { condition.unlock() }
        let out = output
        output.ended = []
        return out
    }

    /// Waits for the queued frames, ends the tracks under way, and ends the thread.
    func finish() -> Output {
        condition.lock()
        while background && (!queue.isEmpty || busy) { condition.wait() }
        closed = true
        condition.broadcast()
        condition.unlock()
        let last = detector.finish()
        condition.lock(); defer { condition.unlock() }
        output.ended += last
        output.ongoing = []
        let out = output
        output.ended = []
        return out
    }

    /// Ends the thread without waiting for the queued frames (the input broke off).
    func close() {
        condition.lock(); closed = true; queue = []; condition.broadcast(); condition.unlock()
    }

    /// The detector's milliseconds per frame: median and 95th percentile.
    var costMilliseconds: (median: Double, p95: Double)? {
        condition.lock(); let c = costs.sorted(); condition.unlock()
        guard !c.isEmpty else { return nil }
        return (c[c.count / 2] * 1000, c[min(c.count - 1, Int(Double(c.count) * 0.95))] * 1000)
    }

    private func run(_ image: RGBImage, _ time: Double) {
        let start = monotonicSeconds()
        let ended = detector.push(image, time: time)
        let ongoing = detector.ongoing, stable = detector.sceneIsStable
        let cost = monotonicSeconds() - start
        condition.lock()
        output.ended += ended
        output.ongoing = ongoing
        output.sceneIsStable = stable
        costs.append(cost)
        if costs.count > 10_000 { costs.removeFirst(5_000) }
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while queue.isEmpty && !closed { condition.wait() }
            if queue.isEmpty && closed { condition.unlock(); return }
            let (image, time) = queue.removeFirst()
            busy = true
            condition.unlock()
            run(image, time)
            condition.lock(); busy = false; condition.broadcast(); condition.unlock()
        }
    }
}
