import Foundation

/// Where live's time goes, for `bench live`: each stage's milliseconds on every frame, on
/// the frame's thread; one person's landmark run; the capture thread's decoding; the model
/// threads' milliseconds per window; and the process's CPU time.
public struct FrameCosts: Sendable {
    /// The stages of a frame on the frame's thread, in order.
    public enum Stage: String, CaseIterable, Sendable {
        /// The decoded frame turned into RGB.
        case convert
        /// `capturedFrame`'s tiling (benchmarks' people): stands for a bigger frame.
        case tile
        case detector
        /// Everyone's landmark models, side by side or one after another.
        case landmarks
        /// Cut detection, regions, tracking, the pose pipeline's smoothing.
        case tracking
        /// Everyone's recognizer (windows handed to the model threads), occurrences, repetitions, angles.
        case coach
        case overlay
        /// What the caller does with the frame's events (a page's JPEG, printing).
        case output
    }

    /// Per stage, the milliseconds of each processed frame (the last 100,000 frames).
    public private(set) var milliseconds: [Stage: [Double]] = [:]
    /// One person's landmark run, its own time, mean per frame with anyone in it.
    public private(set) var landmarkRunMilliseconds: [Double] = []
    /// Landmark runs, over all frames.
    public private(set) var landmarkRuns = 0
    /// The capture thread's seconds reading and decoding (`VideoReader.captureSeconds`).
    public var captureSeconds = 0.0
    /// The model threads' milliseconds per classified window (people's windows all together).
    public var modelMilliseconds: [Double] = []
    /// User and system CPU seconds of the whole process over the run.
    public var cpuSeconds = 0.0

    public init() {}

    mutating func add(_ frame: [Stage: Double], landmarkRuns runs: Int, landmarkRunSeconds: Double) {
        for (stage, ms) in frame {
            milliseconds[stage, default: []].append(ms)
            if milliseconds[stage]!.count > 100_000 { milliseconds[stage]!.removeFirst(50_000) }
        }
        landmarkRuns += runs
        if runs > 0 {
            landmarkRunMilliseconds.append(landmarkRunSeconds * 1000 / Double(runs))
            if landmarkRunMilliseconds.count > 100_000 { landmarkRunMilliseconds.removeFirst(50_000) }
        }
    }

    /// The process's user + system CPU seconds so far.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

/// Milliseconds measured on several threads (the people's model threads), kept together.
final class SharedTimes: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Double] = []

    func add(_ ms: Double) {
        lock.lock(); defer { lock.unlock() }
        values.append(ms)
        if values.count > 100_000 { values.removeFirst(50_000) }
    }

    func all() -> [Double] { lock.lock(); defer { lock.unlock() }; return values }
    func reset() { lock.lock(); values = []; lock.unlock() }
}
