import Foundation
import TestData
import XCTest
@testable import Evaluation

/// `evaluate --report`'s page as a file: its template (Resources/report.*) and a page made
/// from it lint clean (notebooks-free-scripts/lint_page.py), and what comes from the data
/// is escaped. (In a browser: ReportPageTests, in PoseactCLITests.)
final class HTMLReportTests: XCTestCase {
    /// Labels and names that would break a page written as they are.
    static let hostile = "</script><b>&\"x\""

    func page() -> String {
        let labels = ["A", Self.hostile]
        let clips = ClassificationMetrics(labels: labels, truth: [0, 0, 1, 1], predicted: [0, 1, 1, 0])
        let windows = ClassificationMetrics(labels: labels, truth: [0, 1], predicted: [0, 0])
        let report = EvaluationReport(model: "m<1>.weights", data: "d&d.h5", split: nil, windows: windows, clips: clips,
                                      misclassified: [MisclassifiedClip(clip: "c1", label: "A", predicted: Self.hostile, confidence: 0.7, windows: 1)])
        let clip = HTMLReport.Clip(id: "c1", label: "A", predicted: Self.hostile, confidence: 0.7, fps: 30, aspect: 1,
                                   frames: [[0.5, 0.5, nil, nil], [0.4, 0.5, 0.6, 0.6]],
                                   windows: [HTMLReport.WindowPrediction(start: 0, length: 2, label: Self.hostile, confidence: 0.7)])
        let curves = LearningCurves.svg(LearningCurvesTests.history, title: "curves")
        return HTMLReport(title: "report <\(Self.hostile)>", report: report,
                          clipLabels: [("c0", "A", "A"), ("c1", "A", Self.hostile), ("c2", Self.hostile, Self.hostile), ("c3", Self.hostile, "A")],
                          joints: ["a", "b"], edges: [(0, 1)], misclassified: [clip], learningCurves: curves).html()
    }

    func testTemplateAndPageLintClean() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-report-\(getpid()).html")
        try page().write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let faults = try TestData.pageLintFaults(try TestData.pageResources(of: "Evaluation") + [file.path])
        XCTAssertEqual(faults, "")
    }

    func testDataIsEscaped() {
        let html = page()
        XCTAssertFalse(html.contains(Self.hostile), "nowhere as it is")
        XCTAssertTrue(html.contains("<title>report &lt;&lt;/script&gt;&lt;b&gt;&amp;&quot;x&quot;&gt;</title>"), "text: HTML-escaped")
        XCTAssertTrue(html.contains("model m&lt;1&gt;.weights · data d&amp;d.h5 · split all"))
        XCTAssertTrue(html.contains(#""\u003c/script>\u003cb>&\"x\"""#), "script data: JSON, < as \\u003c")
        XCTAssertEqual(html.components(separatedBy: "</script>").count - 1, 2, "only the page's own two scripts end")
        XCTAssertFalse(html.contains("{{"), "every placeholder filled")
    }

    /// The lint itself finds what it is for: an element closed out of order, a script and a
    /// style that do not parse, a placeholder left in a page.
    func testLintFindsFaults() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-lint-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let broken = [
            "a.html": "<!doctype html>\n<html><body><div><p>x</div><p>{{left}}</p><script>const = 1;</script></body></html>\n",
            "b.js": "const x = (;\n",
            "c.css": "a { color: red;\n",
        ]
        for (name, text) in broken { try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        let faults = try TestData.pageLintFaults(broken.keys.sorted().map { dir.appendingPathComponent($0).path })
        for fault in ["<p> not closed before </div>", "a placeholder left: {{left}}", "a.html: JavaScript does not parse",
                      "b.js: JavaScript does not parse", "c.css: 1 { never closed"] {
            XCTAssertTrue(faults.contains(fault), "\(fault) in: \(faults)")
        }
    }
}
