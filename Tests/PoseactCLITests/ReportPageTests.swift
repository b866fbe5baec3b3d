import Foundation
import Media
import TestData
import TrainingFixtures
import XCTest

/// `evaluate --report`'s `index.html`, opened in headless chromium: the per-class table, the
/// confusion matrix with each cell's clips, the learning curves, and each misclassified
/// clip as an animated skeleton with its predictions. To have mistakes to show, the slice's
/// test clips go out as CSV (`dataset export`), two labels swapped, and back in.
final class ReportPageTests: PennSliceTestCase {
    func testReportPageInAHeadlessBrowser() throws {
        let chromium = try tool(["chromium", "chromium-browser", "google-chrome"], install: "chromium")
        let run = try trainedRun()
        let dir = Self.dir.appendingPathComponent("report-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let csv = dir.appendingPathComponent("slice.csv").path
        XCTAssertEqual(try poseact(["dataset", "export", try store(), "--csv", csv]).status, 0)
        let swapped = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.replacingOccurrences(of: ",squat,", with: ",SWAP,").replacingOccurrences(of: ",pullup,", with: ",squat,")
                .replacingOccurrences(of: ",SWAP,", with: ",pullup,")
        }.joined(separator: "\n")
        try swapped.write(toFile: csv, atomically: true, encoding: .utf8)
        let wrongStore = dir.appendingPathComponent("swapped.h5").path
        XCTAssertEqual(try poseact(["import", csv, "--output", wrongStore]).status, 0)

        let report = dir.appendingPathComponent("report").path
        let evaluated = try poseact(["evaluate", run, "--data", wrongStore, "--report", report, "--json"])
        XCTAssertEqual(evaluated.status, 0, evaluated.stderr)
        let result = try json(evaluated.stdout)
        let wrong = try XCTUnwrap(result["misclassified"] as? [[String: Any]])
        XCTAssertGreaterThanOrEqual(wrong.count, 6, "the squat and pull-up clips, swapped, are the model's mistakes now")
        let page = report + "/index.html"
        let html = try String(contentsOfFile: page, encoding: .utf8)
        // Self-contained: nothing fetched from anywhere.
        for outside in ["src=\"http", "href=\"http", "src=\"//", "@import", "url(http"] { XCTAssertFalse(html.contains(outside), outside) }

        let profile = dir.appendingPathComponent("chromium").path
        func browse(_ extra: [String]) throws -> String {
            try headless(chromium, URL(fileURLWithPath: page).absoluteString, profile: profile,
                         flags: ["--window-size=1100,1400", "--virtual-time-budget=3000"] + extra)
        }
        let dom = try browse(["--dump-dom"])
        XCTAssertTrue(dom.contains("<table id=\"classes\">"), "the per-class table")
        for label in Self.labels { XCTAssertTrue(dom.contains("<td>\(label)</td>"), label) }
        // A confusion cell lists its clips: every misclassified clip is in one.
        for m in wrong { XCTAssertTrue(dom.contains(m["clip"] as? String ?? "?"), "\(m["clip"] ?? "")") }
        XCTAssertTrue(dom.contains("<svg"), "the learning curves")
        // The script ran: one animated clip per mistake, each showing a frame and its prediction.
        XCTAssertEqual(dom.components(separatedBy: "class=\"clip\"").count - 1, wrong.count)
        XCTAssertEqual(dom.components(separatedBy: "<canvas").count - 1, wrong.count)
        XCTAssertTrue(dom.range(of: #"frame \d+ of \d+ · (jumping_jacks|pullup|squat) \d+ %"#, options: .regularExpression) != nil,
                      "a frame and its window's prediction under a skeleton")

        let shot = dir.appendingPathComponent("report.png").path
        _ = try browse(["--screenshot=\(shot)"])
        let picture = try XCTUnwrap(try VideoReader(shot).next()?.image, "screenshot")
        XCTAssertEqual(picture.width, 1100)
        // The skeletons are drawn on dark canvases in their labels' colours: pixels of the
        // canvas background (#1b1b1b) must be there, and bright saturated ones among them.
        var dark = 0, drawn = 0
        for y in 0..<picture.height {
            var inCanvas = false
            for x in 0..<picture.width {
                let (r, g, b) = picture.pixel(x, y)
                if r == 27 && g == 27 && b == 27 { dark += 1; inCanvas = true; continue }
                if inCanvas && max(r, g, b) > 150 && Int(max(r, g, b)) - Int(min(r, g, b)) > 80 { drawn += 1 }
                if r > 240 && g > 240 && b > 240 { inCanvas = false }
            }
        }
        XCTAssertGreaterThan(dark, 20_000, "the canvases")
        XCTAssertGreaterThan(drawn, 100, "coloured skeleton lines on them")
    }
}
