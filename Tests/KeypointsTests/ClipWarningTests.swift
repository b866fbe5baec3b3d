import Foundation
import Keypoints
import XCTest

final class ClipWarningTests: XCTestCase {
    /// One line per message: a clip alone is named, several are counted with three named.
    func testGroupedByMessage() {
        let slow = "12.00 fps, below the 30 fps extraction rate: frames are repeated"
        let warnings = ["a", "b", "c", "d"].map { ClipWarning(clip: $0, slow) } + [ClipWarning(clip: "e", "a damaged packet")]
            + [ClipWarning(clip: "f", slow)]
        XCTAssertEqual(ClipWarning.grouped(warnings), ["5 clips: \(slow) (a, b, c, …)", "e: a damaged packet"])
        XCTAssertEqual(ClipWarning.grouped([ClipWarning(clip: "x: y", "z")]), ["x: y: z"], "a clip id with a colon is not split")
        XCTAssertEqual(ClipWarning(clip: "a", "b").description, "a: b")
    }

    /// An annotation file's ranges of one video, found by its file name.
    func testAnnotatedRangesOfAVideo() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-ranges-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in ["one.mp4", "two.mp4"] { try Data().write(to: dir.appendingPathComponent(name)) }
        let csv = dir.appendingPathComponent("a.csv").path
        try Data("video,label,start,end\none.mp4,up,0,2\ntwo.mp4,down,0,1\none.mp4,down,2,3.5\n".utf8).write(to: URL(fileURLWithPath: csv))
        let ranges = try DatasetSources.annotatedRanges(ofVideo: "/elsewhere/one.mp4", in: csv)
        XCTAssertEqual(ranges.map(\.label), ["up", "down"])
        XCTAssertEqual(ranges.map(\.end), [2, 3.5])
        XCTAssertThrowsError(try DatasetSources.annotatedRanges(ofVideo: "three.mp4", in: csv)) { error in
            XCTAssertEqual("\(error)", "\(csv): no time ranges for three.mp4")
        }
    }
}
