import OutputLines
import XCTest

/// The progress line is written by the command line and read back by the studio: what one
/// side writes, the other reads, field for field (to the printed precision: rates to 0.01,
/// times to the second).
final class ProgressLineTests: XCTestCase {
    func testWhatIsWrittenIsReadBack() throws {
        let lines = [
            ProgressLine(title: "extract", done: 12, total: 54, unit: "clips", rate: 3.1, eta: 14),
            ProgressLine(title: "pose: a/b c.mp4", done: 0, total: 1, unit: "frames", rate: 0, eta: 0),
            ProgressLine(title: "crossval", done: 7, total: 10, unit: "runs", rate: 0.01, eta: 3 * 3600 + 7 * 60),
            ProgressLine(title: "extract", done: 3, total: 9, unit: "clips", rate: 120.25, eta: 185),
            ProgressLine(title: "x", done: 1, total: 2, unit: "clips", rate: 1, eta: nil),
        ]
        for line in lines {
            let read = try XCTUnwrap(ProgressLine(parsing: line.text), line.text)
            XCTAssertEqual(read, line, line.text)
        }
        XCTAssertEqual(lines[0].text, "extract: 12/54 clips  3.10 clips/s  ETA 14s")
        XCTAssertEqual(lines[2].text, "crossval: 7/10 runs  0.01 runs/s  ETA 3h07m")
    }

    func testOtherLinesAreNotProgress() {
        for line in ["epoch 3/12  loss 0.41", "Error: keypoints.h5: no such file", "extract: 3/9 clips done",
                     "{\"type\": \"epoch\"}", "", "a: 1/2 clips  1.00 clips/s  ETA soon"] {
            XCTAssertNil(ProgressLine(parsing: line), line)
        }
    }
}
