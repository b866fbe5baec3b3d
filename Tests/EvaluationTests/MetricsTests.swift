import Basics
import Foundation
import Images
import XCTest
@testable import Evaluation

/// The hand-computed example shared by several tests: 3 classes, 10 samples.
/// confusion (rows true, columns predicted): A [3 1 0], B [1 2 0], C [0 1 2].
let exampleLabels = ["A", "B", "C"]
let exampleTruth = [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]
let examplePredicted = [0, 0, 0, 1, 1, 1, 0, 2, 1, 2]

final class MetricsTests: XCTestCase {
    // Every expected value is a ratio of small integers; the code reaches it in a handful of
    // Double operations (relative error ~1e-16), so 1e-12 only absorbs rounding order
    // while any wrong count or formula is off by far more.
    let tol = 1e-12

    func testHandComputedExample() {
        let m = ClassificationMetrics(labels: exampleLabels, truth: exampleTruth, predicted: examplePredicted)
        XCTAssertEqual(m.confusion, [[3, 1, 0], [1, 2, 0], [0, 1, 2]])
        XCTAssertEqual(m.count, 10)
        XCTAssertEqual(m.accuracy, 7.0 / 10, accuracy: tol)
        // precision = diagonal / column sum; recall = diagonal / row sum.
        let expected: [(p: Double, r: Double, f1: Double, n: Int)] = [
            (3.0 / 4, 3.0 / 4, 3.0 / 4, 4),   // A: 3/4, 3/4
            (2.0 / 4, 2.0 / 3, 4.0 / 7, 3),   // B: 2·(1/2)(2/3)/(1/2+2/3) = 4/7
            (2.0 / 2, 2.0 / 3, 4.0 / 5, 3),   // C: 2·1·(2/3)/(5/3) = 4/5
        ]
        for (c, e) in zip(m.perClass, expected) {
            XCTAssertEqual(c.precision, e.p, accuracy: tol, c.label)
            XCTAssertEqual(c.recall, e.r, accuracy: tol, c.label)
            XCTAssertEqual(c.f1, e.f1, accuracy: tol, c.label)
            XCTAssertEqual(c.support, e.n, c.label)
        }
        XCTAssertEqual(m.perClass.map(\.label), exampleLabels)
        XCTAssertEqual(m.macroF1, 99.0 / 140, accuracy: tol)   // (3/4 + 4/7 + 4/5) / 3
    }

    func testZeroDivisionConventions() {
        // B has support but is never predicted; C neither occurs nor is predicted.
        let m = ClassificationMetrics(labels: ["A", "B", "C"], truth: [0, 0, 1], predicted: [0, 0, 0])
        XCTAssertEqual(m.perClass[1], ClassMetrics(label: "B", precision: 0, recall: 0, f1: 0, support: 1))
        XCTAssertEqual(m.perClass[2], ClassMetrics(label: "C", precision: 0, recall: 0, f1: 0, support: 0))
        XCTAssertEqual(m.perClass[0].precision, 2.0 / 3, accuracy: tol)
        XCTAssertEqual(m.perClass[0].f1, 0.8, accuracy: tol)
        XCTAssertEqual(m.macroF1, 0.4, accuracy: tol)          // over A and B only: (0.8 + 0) / 2

        // B predicted once but without support: precision 0/1, recall 0 by convention, and
        // it stays out of the macro mean (sklearn would give 1/3 here).
        let n = ClassificationMetrics(labels: ["A", "B"], truth: [0, 0], predicted: [0, 1])
        XCTAssertEqual(n.perClass[1], ClassMetrics(label: "B", precision: 0, recall: 0, f1: 0, support: 0))
        XCTAssertEqual(n.macroF1, 2.0 / 3, accuracy: tol)      // A: P 1, R 1/2, F1 2/3

        let empty = ClassificationMetrics(labels: ["A", "B"], truth: [], predicted: [])
        XCTAssertEqual(empty.count, 0)
        XCTAssertEqual(empty.accuracy, 0)
        XCTAssertEqual(empty.macroF1, 0)
        XCTAssertEqual(empty.confusion, [[0, 0], [0, 0]])
    }

    func testCodableSnakeCaseRoundTrip() throws {
        let m = ClassificationMetrics(labels: exampleLabels, truth: exampleTruth, predicted: examplePredicted)
        let data = Data(JSONLines.encode(m).utf8)
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(Set(obj.keys), ["labels", "confusion", "count", "accuracy", "per_class", "macro_f1"])
        XCTAssertEqual(try JSONLines.decode(ClassificationMetrics.self, from: data), m)
    }
}

final class ClipVoteTests: XCTestCase {
    func testArgmax() {
        XCTAssertEqual(argmax([0.1, 0.7, 0.2]), 1)
        XCTAssertEqual(argmax([0.4, 0.4, 0.2]), 0)             // tie → lowest index
        XCTAssertEqual(argmax([.nan, 0.3, 0.5]), 2)            // NaN never wins
    }

    func testMeanOfProbabilitiesNotMajorityVote() {
        // Clip "a": two windows lean to class 0, one is sure of class 1. Majority vote says
        // 0; the mean is (0.4, 0.6), so 1. Clip "b" comes first and is interleaved with "a".
        let ids = ["b", "a", "a", "b", "a", "c"]
        let truth = [1, 1, 1, 1, 1, 0]
        let probs: [[Float]] = [[0.2, 0.8], [0.6, 0.4], [0.6, 0.4], [0.3, 0.7], [0.0, 1.0], [0.5, 0.5]]
        let majority = [0.6, 0.6, 0.0].filter { $0 > 0.5 }.count >= 2 ? 0 : 1
        XCTAssertEqual(majority, 0)                            // the case really separates the two rules
        let r = ClipVote.aggregate(clipIDs: ids, truth: truth, probabilities: probs)
        XCTAssertEqual(r.clipIDs, ["b", "a", "c"])             // first-appearance order
        XCTAssertEqual(r.truth, [1, 1, 0])
        XCTAssertEqual(r.predicted, [1, 1, 0])                 // "c" ties 0.5/0.5 → lowest index
        XCTAssertEqual(r.windows, [2, 3, 1])
        for (c, want) in zip(r.confidence, [0.75, 0.6, 0.5]) { XCTAssertEqual(c, want, accuracy: 1e-6) }   // mean of the predicted class
    }
}

final class ReportTests: XCTestCase {
    func report(split: String? = "test") -> EvaluationReport {
        let clips = ClassificationMetrics(labels: exampleLabels, truth: exampleTruth, predicted: examplePredicted)
        let windows = ClassificationMetrics(labels: exampleLabels, truth: [0, 0, 1, 1, 2, 2], predicted: [0, 1, 1, 1, 2, 0])
        return EvaluationReport(model: "runs/a/model.weights", data: "data/penn.h5", split: split, windows: windows, clips: clips,
                                misclassified: [MisclassifiedClip(clip: "0042", label: "A", predicted: "B|C", confidence: 0.91, windows: 3)])
    }

    func testJSONKeysAndValues() throws {
        let json = report().json()
        XCTAssertFalse(json.contains("\n"))
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        for key in ["clip_accuracy", "window_accuracy", "per_class", "confusion", "labels", "window_confusion",
                    "window_per_class", "clips", "windows", "macro_f1", "model", "data", "split"] {
            XCTAssertNotNil(obj[key], key)
        }
        XCTAssertEqual(obj["clip_accuracy"] as? Double ?? -1, 0.7, accuracy: 1e-12)
        XCTAssertEqual(obj["window_accuracy"] as? Double ?? -1, 4.0 / 6, accuracy: 1e-12)
        XCTAssertEqual(obj["clips"] as? Int, 10)
        XCTAssertEqual(obj["windows"] as? Int, 6)
        XCTAssertEqual(obj["confusion"] as? [[Int]], [[3, 1, 0], [1, 2, 0], [0, 1, 2]])
        XCTAssertEqual(obj["model"] as? String, "runs/a/model.weights")   // slashes not escaped
        XCTAssertTrue(json.contains("\"model\":\"runs/a/model.weights\""))
        let first = try XCTUnwrap((obj["per_class"] as? [[String: Any]])?.first)
        XCTAssertEqual(first["label"] as? String, "A")
        XCTAssertEqual(first["support"] as? Int, 4)
        XCTAssertEqual(Set(first.keys), ["label", "precision", "recall", "f1", "support"])
        // Keys sorted: "clip_accuracy" comes before "confusion".
        XCTAssertLessThan(json.range(of: "\"clip_accuracy\"")!.lowerBound, json.range(of: "\"confusion\"")!.lowerBound)

        let noSplit = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(report(split: nil).json().utf8)) as? [String: Any])
        XCTAssertTrue(noSplit["split"] is NSNull)

        let wrong = try XCTUnwrap((obj["misclassified"] as? [[String: Any]])?.first)
        XCTAssertEqual(wrong["clip"] as? String, "0042")
        XCTAssertEqual(wrong["predicted"] as? String, "B|C")
        XCTAssertEqual(wrong["windows"] as? Int, 3)
        XCTAssertTrue(report().markdown(confusionPicture: nil).contains("| 0042 | A | B\\|C | 91.0% | 3 |"), "the misclassified table")

        // The Codable form round-trips too.
        let r = report()
        let back = try JSONLines.decode(EvaluationReport.self, from: JSONLines.encode(r))
        XCTAssertEqual(back.clips, r.clips)
        XCTAssertEqual(back.windows, r.windows)
        XCTAssertEqual(back.split, "test")
        XCTAssertEqual(back.misclassified, r.misclassified)
    }

    func testMarkdownTables() {
        let md = report().markdown(confusionPicture: "confusion.png")
        let lines = Set(md.split(separator: "\n").map(String.init))
        for row in ["- Split: test",
                    "| Windows | 6 |", "| Clips | 10 |",
                    "| Window accuracy | 66.7% |", "| Clip accuracy | 70.0% |", "| Macro F1 (clips) | 70.7% |",
                    // A: clips P 3/4 R 3/4; windows P 1/2 (A predicted twice, once right) R 1/2.
                    "| A | 75.0% | 75.0% | 75.0% | 4 | 50.0% | 50.0% | 50.0% | 2 |",
                    "| true \\ predicted | A | B | C |",
                    "| A | 3 | 1 | 0 |", "| B | 1 | 2 | 0 |", "| C | 0 | 1 | 2 |",
                    "![Confusion matrix](confusion.png)"] {
            XCTAssertTrue(lines.contains(row), "missing: \(row)\n\(md)")
        }
        XCTAssertFalse(report(split: nil).markdown(confusionPicture: nil).contains("!["))
    }

    /// The picture, the page and the Markdown draw one `ConfusionTable`: the same counts,
    /// shares, colours and zeros. A [3 1 0]: 75% (over half: white text), 25%, a faint 0.
    func testOneConfusionTableForThePictureThePageAndTheMarkdown() {
        let r = report()
        let table = ConfusionTable(r.clips)
        let a = table.rows[0].cells
        XCTAssertEqual(a.map(\.shareText), ["75%", "25%", nil])
        XCTAssertEqual(a.map(\.textColour), [.white, ConfusionTable.ink, ConfusionTable.faint])
        XCTAssertEqual(a[2].colour, .white)

        let page = HTMLReport(title: "t", report: r, clipLabels: [], joints: [], edges: [], misclassified: [], learningCurves: nil).html()
        let picture = ConfusionPicture.render(r.clips, title: "t")
        let L = ConfusionPicture.Layout(r.clips, title: "t")
        let md = Set(r.markdown(confusionPicture: nil).split(separator: "\n").map(String.init))
        for (i, row) in table.rows.enumerated() {
            XCTAssertTrue(md.contains("| \(row.label) | " + row.cells.map(\.countText).joined(separator: " | ") + " |"), row.label)
            for (j, c) in row.cells.enumerated() {
                let cell = "background:\(c.colour.hex);color:\(c.textColour.hex)\"><b>\(c.countText)</b>" + (c.shareText.map { " " + $0 } ?? "")
                XCTAssertTrue(page.contains(cell), "page cell \(i),\(j): \(cell)")
                // 3 px inside the cell's top-left corner, clear of the centred text.
                let p = picture.pixel(L.gridX + j * L.cell + 3, L.gridY + i * L.cell + 3)
                XCTAssertEqual(RGB(p.r, p.g, p.b), c.colour, "picture cell \(i),\(j)")
            }
        }
    }

    func testAbbreviations() {
        let labels = ["squat", "tennis_forehand", "tennis_serve", "clean_and_jerk", "baseball_pitch", "baseball_pitcher"]
        let a = LabelText.abbreviations(labels, maxLength: 8)
        XCTAssertEqual(Array(a.prefix(4)), ["squat", "ten_fore", "ten_serv", "cle_jerk"])
        XCTAssertEqual(Set(a).count, a.count)                 // clashes made unique
        XCTAssertTrue(a.allSatisfy { $0.count <= 8 })
    }
}
