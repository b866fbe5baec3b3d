import Foundation
import Movement
import Tensor
import XCTest

/// The counter on generated movements whose repetitions are known exactly: a 33-joint body
/// (BlazePose's layout, x and y) whose moving joints follow 1 − cos of a phase that runs
/// through exactly N cycles, at tempos changing from cycle to cycle, with pose jitter of
/// 0.3 % of the image. The count must be exact: there is nothing to tolerate.
final class RepetitionCounterTests: XCTestCase {
    /// A standing body in image coordinates (0–1).
    static let body: [Float] = {
        var rng = SplitMix64(seed: 3)
        return (0..<66).map { i in i % 2 == 0 ? 0.45 + Float(rng.uniform()) * 0.1 : 0.2 + Float(i) / 66 * 0.6 }
    }()

    /// Feeds `cycles` repetitions with the given periods (seconds, one per cycle, repeated
    /// as needed), a rest of `rest` seconds before and after, at `fps`; `move` gives each
    /// frame's joints for a displacement 0 (rest) to 1 (the far end).
    func count(periods: [Double], cycles: Int, fps: Double = 30, rest: Double = 1, seed: UInt64 = 1,
               move: ([Float], Float) -> [Float]) -> (count: Int, repetitions: [RepetitionCounter.Repetition]) {
        let counter = RepetitionCounter()
        var rng = SplitMix64(seed: seed)
        var t = 0.0
        func feed(_ displacement: Float) {
            var joints = move(Self.body, displacement)
            for i in joints.indices { joints[i] += Float(rng.gaussian()) * 0.003 }
            counter.push(joints: joints, time: t)
            t += 1 / fps
        }
        for _ in 0..<Int(rest * fps) { feed(0) }
        for c in 0..<cycles {
            let frames = Int((periods[c % periods.count] * fps).rounded())
            for f in 0..<frames { feed(Float(1 - cos(2 * Double.pi * Double(f) / Double(frames))) / 2) }
        }
        for _ in 0..<Int(rest * fps) { feed(0) }
        return (counter.count, counter.repetitions)
    }

    /// Push-up-like: the upper body (joints 0–24) goes down 15 % of the image and back.
    func pushUp(_ body: [Float], _ d: Float) -> [Float] {
        var j = body
        for i in stride(from: 1, to: 50, by: 2) { j[i] += 0.15 * d }
        return j
    }

    /// Jumping jacks: arms (11–22) and legs (23–32) open sideways.
    func jumpingJack(_ body: [Float], _ d: Float) -> [Float] {
        var j = body
        for joint in 11...32 {
            let sideways: Float = joint % 2 == 1 ? -1 : 1
            j[2 * joint] += sideways * 0.12 * d
            if joint <= 22 { j[2 * joint + 1] -= 0.1 * d }
        }
        return j
    }

    /// Waving: the right wrist and hand (16, 18, 20, 22) go left and right around the rest.
    func wave(_ body: [Float], _ d: Float) -> [Float] {
        var j = body
        for joint in [16, 18, 20, 22] { j[2 * joint] += 0.08 * (d - 0.5) * 2; j[2 * joint + 1] -= 0.05 }
        return j
    }

    func testExactCountsAtChangingTempos() {
        let tempos: [[Double]] = [[1.0], [0.6, 2.0, 1.2], [2.5, 0.8], [0.5]]
        for (name, move) in [("push-ups", pushUp), ("jumping jacks", jumpingJack), ("waving", wave)] as [(String, ([Float], Float) -> [Float])] {
            for periods in tempos {
                for cycles in [1, 3, 8] {
                    let result = count(periods: periods, cycles: cycles, move: move)
                    XCTAssertEqual(result.count, cycles, "\(name), periods \(periods) s, \(cycles) repetitions")
                }
            }
        }
    }

    /// Each repetition ends after the far end, back at rest, and lasts about its period.
    func testRepetitionTimesAndDurations() {
        let result = count(periods: [1.0, 2.0], cycles: 4, move: pushUp)
        XCTAssertEqual(result.repetitions.map(\.index), [1, 2, 3, 4])
        // Starts: 1 s of rest, then cycles of 1, 2, 1, 2 s; each counted once the body is
        // back within the band, before the cycle's end.
        let ends = [2.0, 4.0, 5.0, 7.0]
        for (r, end) in zip(result.repetitions, ends) {
            XCTAssertLessThanOrEqual(r.end, end + 0.05, "\(r)")
            XCTAssertGreaterThan(r.end, end - 0.5, "\(r)")
        }
        // A repetition is timed between two crossings of the band's edge, whose level follows
        // the window (it moves as slower or faster cycles enter it): up to ~0.25 s here.
        for (r, period) in zip(result.repetitions.dropFirst(), [2.0, 1.0, 2.0]) {
            XCTAssertEqual(r.duration, period, accuracy: 0.3, "\(r)")
        }
        // The turn is the bottom, the middle of each cycle (1.5, 3, 4.5, 6 s), within a frame
        // and the signal's three-frame average (the average lags by a frame).
        for (r, bottom) in zip(result.repetitions, [1.5, 3.0, 4.5, 6.0]) {
            XCTAssertEqual(r.turn, bottom, accuracy: 2.5 / 30, "\(r)")
        }
    }

    func testStillPersonCountsNothing() {
        XCTAssertEqual(count(periods: [1], cycles: 0, rest: 10, move: pushUp).count, 0)
    }

    /// Where the person stands and how large they appear must not matter: the body drifts
    /// across the image and grows by half over the run.
    func testMovingAndZoomingCamera() {
        let counter = RepetitionCounter()
        var rng = SplitMix64(seed: 9)
        let fps = 30.0, frames = 6 * 30
        for f in 0..<frames {
            let t = Double(f) / fps, progress = Float(f) / Float(frames)
            let d = Float(1 - cos(2 * Double.pi * t / 1.2)) / 2   // 5 repetitions of 1.2 s
            var joints = pushUp(Self.body, d)
            let zoom = 1 + 0.5 * progress, shift = 0.2 * progress
            for i in joints.indices { joints[i] = (joints[i] - 0.5) * zoom + 0.5 + (i % 2 == 0 ? shift : 0) + Float(rng.gaussian()) * 0.003 }
            counter.push(joints: joints, time: t)
        }
        XCTAssertEqual(counter.count, 5)
    }

    /// Frames without a person (NaN) are skipped; the count goes on.
    func testFramesWithoutAPerson() {
        let counter = RepetitionCounter()
        let missing = [Float](repeating: .nan, count: 66)
        for f in 0..<(6 * 30) {
            let t = Double(f) / 30
            let d = Float(1 - cos(2 * Double.pi * t / 1.5)) / 2   // 4 repetitions
            counter.push(joints: (f / 10) % 4 == 3 ? missing : pushUp(Self.body, d), time: t)
        }
        XCTAssertEqual(counter.count, 4)
    }
}
