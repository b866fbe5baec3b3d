import Basics
import Foundation
import XCTest

final class JSONLinesTests: XCTestCase {
    struct Line: Codable, Equatable {
        var path: String
        var median: Double
        var counts: [String: Int]
        var note: String?
    }

    /// One line, keys sorted, slashes as they are, and what decodes back is what was encoded.
    func testOneSortedLineThatReadsBack() throws {
        let line = Line(path: "runs/a/model.poseact.h5", median: 0.25, counts: ["b": 2, "a": 1], note: "two\nlines")
        let text = JSONLines.encode(line)
        XCTAssertFalse(text.contains("\n"), text)
        XCTAssertTrue(text.contains("\"path\":\"runs/a/model.poseact.h5\""), text)
        XCTAssertEqual(text, #"{"counts":{"a":1,"b":2},"median":0.25,"note":"two\nlines","path":"runs/a/model.poseact.h5"}"#)
        XCTAssertEqual(try JSONLines.decode(Line.self, from: text), line)
    }

    /// A number that is not finite (a median of nothing) is null, and the line still parses.
    func testNonFiniteNumbersAreNull() throws {
        let text = JSONLines.encode(["nan": Double.nan, "inf": .infinity, "minus": -.infinity, "one": 1.5])
        XCTAssertEqual(text, #"{"inf":null,"minus":null,"nan":null,"one":1.5}"#)
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    func testAStringAlone() {
        XCTAssertEqual(JSONLines.encode("a \"quoted\" path/name"), #""a \"quoted\" path/name""#)
    }

    struct Record: Codable, Equatable {
        var clipAccuracy: Double
        var latencyMSMedian: Double
        var latencyMSP95: Double
        var speedMetresPerSecond: Double
        var perLabel: [String: Int]
        enum CodingKeys: String, CodingKey {
            case clipAccuracy, latencyMSMedian = "latencyMsMedian", latencyMSP95 = "latencyMsP95", perLabel
            case speedMetresPerSecond = "speedMps"
        }
    }

    /// The wire vocabulary, set once: snake_case keys written and read, a camelCase raw value
    /// where the wire name is not the property's, dictionary keys (labels) as they are, and a
    /// record written before the rule (camelCase keys) still read.
    func testKeysAreSnakeCaseOnTheWire() throws {
        let r = Record(clipAccuracy: 0.5, latencyMSMedian: 7, latencyMSP95: 16, speedMetresPerSecond: 9.5,
                       perLabel: ["pushUp_wrong": 3, "jumping jacks": 1])
        let text = JSONLines.encode(r)
        XCTAssertEqual(text, #"{"clip_accuracy":0.5,"latency_ms_median":7,"latency_ms_p95":16,"per_label":{"jumping jacks":1,"pushUp_wrong":3},"speed_mps":9.5}"#)
        XCTAssertEqual(try JSONLines.decode(Record.self, from: text), r)
        let older = #"{"clipAccuracy":0.5,"latencyMsMedian":7,"latencyMsP95":16,"perLabel":{"jumping jacks":1,"pushUp_wrong":3},"speedMps":9.5}"#
        XCTAssertEqual(try JSONLines.decode(Record.self, from: older), r)
        // A document is the same keys and values over several lines.
        let document = String(decoding: JSONLines.document(r), as: UTF8.self)
        XCTAssertGreaterThan(document.split(separator: "\n").count, 5)
        XCTAssertEqual(try JSONLines.decode(Record.self, from: document), r)
    }
}
