import Basics
import Foundation
import Keypoints
import XCTest

/// Every CSV poseact writes goes through `CSV` (RFC 4180): a label or joint name with a
/// comma, a quote or a line break stays one field, and poseact's reader gives it back.
final class CSVWriterTests: XCTestCase {
    static let label = "jump, \"high\""

    func testFieldsAreQuotedWhenTheyMustBe() {
        XCTAssertEqual(CSV.row(["a", "1.5", ""]), "a,1.5,\n")
        XCTAssertEqual(CSV.row([Self.label, "two\nlines", "cr\r"]), "\"jump, \"\"high\"\"\",\"two\nlines\",\"cr\r\"\n")
        XCTAssertEqual(CSV.text(header: ["h"], rows: [["x,y"]]), "h\n\"x,y\"\n")
    }

    /// A store whose label and joint names need quoting, exported and imported again.
    func testLabelsAndJointNamesWithCommasAndQuotesRoundTrip() throws {
        // (The importer turns spaces in joint names into underscores: none here.)
        let joints = ["head,top", "neck\"n\"", "hip"]
        let frames = 3
        var keypoints: [Float] = []
        for f in 0..<frames { for j in 0..<joints.count { keypoints += [0.1 * Float(j + 1), 0.05 * Float(f + 1), 0.9] } }
        let clip = ClipKeypoints(id: "clip, 1", label: Self.label, split: "train", source: "test", start: nil, end: nil, fps: 30,
                                 width: 640, height: 480, jointNames: joints, keypoints: keypoints,
                                 times: (0..<frames).map { Double($0) / 30 }, estimator: "import")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-csv-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = dir.appendingPathComponent("s.h5").path, csv = dir.appendingPathComponent("s.csv").path
        let writer = try KeypointStoreWriter(path: store)
        try writer.append(clip)
        try writer.finish()
        try KeypointCSV.export(try KeypointStore(path: store), to: csv)
        let back = try KeypointCSV.read(csv)
        XCTAssertEqual(back.problems.map(\.description).filter { !$0.contains("is not a poseact joint name") }, [])
        let read = try XCTUnwrap(back.clips.first)
        XCTAssertEqual(back.clips.count, 1)
        XCTAssertEqual(read.id, clip.id)
        XCTAssertEqual(read.label, Self.label)
        XCTAssertEqual(read.jointNames, joints)
        XCTAssertEqual(read.keypoints.count, keypoints.count)
        for i in keypoints.indices { XCTAssertEqual(read.keypoints[i], keypoints[i], accuracy: 1e-3) }
    }
}
