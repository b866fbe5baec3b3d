import Basics
import Evaluation
import Foundation
import XCTest

final class CrossValidationTests: XCTestCase {
    /// Folds are pooled per seed (clips right over clips), then averaged over the seeds.
    func testPooledPerSeedThenMeanAndSpread() throws {
        let summary = CrossValidationSummary(folds: 2, seeds: [1, 2], results: [
            [FoldResult(clips: 10, clipsRight: 9, windows: 40, windowsRight: 30), FoldResult(clips: 30, clipsRight: 21, windows: 60, windowsRight: 50)],
            [FoldResult(clips: 10, clipsRight: 6, windows: 40, windowsRight: 20), FoldResult(clips: 30, clipsRight: 30, windows: 60, windowsRight: 60)],
        ])
        XCTAssertEqual(summary.perSeed.map(\.clipAccuracy), [0.75, 0.9])   // 30/40 and 36/40, not the folds' mean
        XCTAssertEqual(summary.perSeed.map(\.clipsRight), [30, 36])
        XCTAssertEqual(summary.clipAccuracy, 0.825, accuracy: 1e-12)
        XCTAssertEqual(summary.clipAccuracySD, (2 * 0.075 * 0.075).squareRoot(), accuracy: 1e-12)
        XCTAssertEqual(summary.clipAccuracyMin, 0.75)
        XCTAssertEqual(summary.clipAccuracyMax, 0.9)
        XCTAssertEqual(summary.windowAccuracy, 0.8, accuracy: 1e-12)
        let text = JSONLines.encode(summary)
        for key in ["\"per_seed\":", "\"clip_accuracy_sd\":", "\"clips_right\":30", "\"folds\":2", "\"seeds\":[1,2]"] {
            XCTAssertTrue(text.contains(key), text)
        }
        XCTAssertEqual(try JSONLines.decode(CrossValidationSummary.self, from: text), summary)
    }

    func testAFoldFromItsReport() {
        let clips = ClassificationMetrics(labels: ["a", "b"], truth: [0, 0, 1], predicted: [0, 1, 1])
        let windows = ClassificationMetrics(labels: ["a", "b"], truth: [0, 0, 1, 1], predicted: [0, 0, 0, 1])
        let fold = FoldResult(EvaluationReport(model: "m", data: "d", split: "test", windows: windows, clips: clips))
        XCTAssertEqual(fold, FoldResult(clips: 3, clipsRight: 2, windows: 4, windowsRight: 3))
    }
}
