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
}
