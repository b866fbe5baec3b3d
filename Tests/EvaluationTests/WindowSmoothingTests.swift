import XCTest
@testable import Evaluation

/// `WindowSmoothing`: window accuracy with the last k predictions of a clip averaged.
final class WindowSmoothingTests: XCTestCase {
    /// One clip of truth 0 whose third window alone leans wrong, given out of order: k = 1
    /// gets it wrong, k = 2 averages it with the window before (right), and a second clip's
    /// windows never mix with the first's.
    func testAveragesTheLastWindowsOfEachClip() {
        let probs: [[Float]] = [[0.9, 0.1], [0.4, 0.6], [0.8, 0.2], [0.1, 0.9], [0.2, 0.8]]
        let acc = WindowSmoothing.accuracies(clipIDs: ["a", "a", "a", "b", "b"], starts: [0, 16, 8, 0, 8], truth: [0, 0, 0, 1, 1],
                                             probabilities: probs, largest: 3)
        XCTAssertEqual(acc.count, 3)
        XCTAssertEqual(acc[0], 4.0 / 5, accuracy: 1e-12)
        XCTAssertEqual(acc[1], 1, accuracy: 1e-12)
        XCTAssertEqual(acc[2], 1, accuracy: 1e-12)
    }
}
