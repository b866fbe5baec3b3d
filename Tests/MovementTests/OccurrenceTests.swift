import Movement
import XCTest

/// Occurrences from streams of predictions: hysteresis, minimum duration, background label,
/// boundaries halfway between predictions.
final class OccurrenceTests: XCTestCase {
    let labels = ["squat", "pushup", "other"]

    /// Predictions every 0.25 s: `plan` gives, per prediction, the label and its probability
    /// (the rest shared by the others); nil: no person.
    func run(_ plan: [(String, Float)?], rules: OccurrenceRules = .init()) -> [Occurrence] {
        let tracker = OccurrenceTracker(labels: labels, rules: rules)
        var out: [Occurrence] = []
        for (i, step) in plan.enumerated() {
            let p: [Float]? = step.map { label, q in
                labels.map { $0 == label ? q : (1 - q) / Float(labels.count - 1) }
            }
            if let o = tracker.push(time: Double(i) * 0.25, probabilities: p) { out.append(o) }
        }
        if let o = tracker.finish(at: Double(plan.count) * 0.25) { out.append(o) }
        return out
    }

    func testOneFlickerDoesNotSplitAnOccurrence() {
        // 3 s of squats with a 0.5 s stretch where push-up wins, then 3 s of push-ups.
        let plan: [(String, Float)?] = Array(repeating: ("squat", 0.9), count: 6) + Array(repeating: ("pushup", 0.8), count: 2)
            + Array(repeating: ("squat", 0.9), count: 6) + Array(repeating: ("pushup", 0.9), count: 12)
        let o = run(plan)
        XCTAssertEqual(o.map(\.label), ["squat", "pushup"])
        // The change: between the prediction at 3.25 s (squat) and 3.5 s (push-up): 3.375 s.
        XCTAssertEqual(o[0].start, 0, accuracy: 1e-9)
        XCTAssertEqual(o[0].end, 3.375, accuracy: 1e-9)
        XCTAssertEqual(o[1].start, 3.375, accuracy: 1e-9)
        XCTAssertEqual(o[1].end, 6.5, accuracy: 1e-9, "the end of the input")
        XCTAssertEqual(o[0].peakConfidence, 0.9, accuracy: 1e-6)
        XCTAssertEqual(o[0].meanConfidence, 0.9, accuracy: 1e-6, "the flicker's predictions do not hold the label")
        XCTAssertEqual(o[0].predictions, 12)
    }

    /// A flicker in an occurrence's first second (before it has lasted the minimum) does not
    /// start it over either: the montage 2 case, wrong for 0.8 s, correct for one prediction,
    /// wrong again until the cut.
    func testFlickerBeforeTheMinimumDurationDoesNotRestart() {
        let plan: [(String, Float)?] = [("squat", 0.5), ("squat", 0.5)] + Array(repeating: ("pushup", 0.95), count: 3)
            + [("squat", 0.72)] + Array(repeating: ("pushup", 0.95), count: 3) + Array(repeating: nil, count: 6)
        let o = run(plan)
        XCTAssertEqual(o.map(\.label), ["pushup"])
        XCTAssertEqual(o[0].start, 0.375, accuracy: 1e-9)
        XCTAssertEqual(o[0].end, 2.125, accuracy: 1e-9)
        XCTAssertEqual(o[0].predictions, 6, "the flicker's prediction does not hold push-up")
    }

    func testHysteresisBetweenEnterAndExit() {
        // 0.5 never enters; 0.7 enters; then 0.45 (under enter, over exit) holds; 0.3 ends.
        let plan: [(String, Float)?] = Array(repeating: ("squat", 0.5), count: 8) + Array(repeating: ("squat", 0.7), count: 4)
            + Array(repeating: ("squat", 0.45), count: 8) + Array(repeating: ("squat", 0.3), count: 8)
        let o = run(plan, rules: OccurrenceRules(enter: 0.6, exit: 0.4, minimumDuration: 1, background: []))
        XCTAssertEqual(o.count, 1)
        XCTAssertEqual(o[0].start, 1.875, accuracy: 1e-9)
        XCTAssertEqual(o[0].end, 4.875, accuracy: 1e-9, "held at 0.45, ended by 0.3 lasting 2 s")
        XCTAssertEqual(o[0].peakConfidence, 0.7, accuracy: 1e-6)
    }

    func testBackgroundAndNoPersonAreNoOccurrence() {
        let plan: [(String, Float)?] = Array(repeating: ("other", 0.95), count: 8) + Array(repeating: ("pushup", 0.9), count: 8)
            + Array(repeating: nil, count: 8) + Array(repeating: ("other", 0.9), count: 8) + Array(repeating: ("pushup", 0.9), count: 3)
        let o = run(plan)
        XCTAssertEqual(o.map(\.label), ["pushup"], "the last 0.75 s of push-ups are under the minimum duration")
        XCTAssertEqual(o[0].start, 1.875, accuracy: 1e-9)
        XCTAssertEqual(o[0].end, 3.875, accuracy: 1e-9)
    }

    func testShortChangeAtTheEndStaysInTheOccurrence() {
        let plan: [(String, Float)?] = Array(repeating: ("squat", 0.9), count: 8) + Array(repeating: ("pushup", 0.9), count: 2)
        let o = run(plan)
        XCTAssertEqual(o.count, 1)
        XCTAssertEqual(o[0].end, 2.5, accuracy: 1e-9, "0.5 s of something else is no change: to the end")
    }
}
