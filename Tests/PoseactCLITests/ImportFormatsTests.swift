import Foundation
import Keypoints
import TestData
import XCTest

/// `poseact import` on the other tools' formats (the samples of `Tests/KeypointsTests/Samples`),
/// all of them at once from one labeled folder, then `dataset export --csv` and `import`
/// of that CSV: the same keypoints. Broken inputs: one line each.
final class ImportFormatsTests: PoseactCLITestCase {
    static let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-import-cli-\(getpid())")

    func json(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    var samples: URL { TestData.packageRoot.appendingPathComponent("Tests/KeypointsTests/Samples") }

    func testEveryFormatIntoAStoreAndBackOutAsCSV() throws {
        // One dataset of the four formats: <label>/<clip> with the samples linked in.
        let root = Self.dir.appendingPathComponent("foreign-\(UUID().uuidString.prefix(6))")
        let label = root.appendingPathComponent("pushup")
        try FileManager.default.createDirectory(at: label, withIntermediateDirectories: true)
        for (from, to) in [("coco/pushup/clip2.json", "coco.json"), ("mediapipe/pushup/clip3.json", "mediapipe.json"),
                           ("ntu/S001C001P001R001A010.skeleton", "ntu.skeleton")] {
            try FileManager.default.createSymbolicLink(at: label.appendingPathComponent(to), withDestinationURL: samples.appendingPathComponent(from))
        }
        // The MediaPipe and COCO samples are 640×360 frames; NTU's own camera is 1920×1080.
        let store = root.appendingPathComponent("all.h5").path
        let imported = try poseact(["import", root.path, "--output", store, "--json"])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        let summary = try json(imported.stdout)
        XCTAssertEqual(summary["clips"] as? Int, 3)
        XCTAssertEqual(summary["format"] as? String, "coco,mediapipe,ntu")
        XCTAssertEqual(summary["frames"] as? Int, 8)

        let openpose = root.appendingPathComponent("openpose.h5").path
        XCTAssertEqual(try poseact(["import", samples.appendingPathComponent("openpose").path, "--size", "640x360",
                                    "--output", openpose]).status, 0)

        // A CSV has one set of joint columns: three skeletons are refused in one line...
        try assertOneLineError(["dataset", "export", store, "--csv", root.appendingPathComponent("all.csv").path],
                               mentions: ["other joints", "export them apart"])
        // ...one goes out and back in as it was (to the 4 decimals written).
        let csv = root.appendingPathComponent("openpose.csv").path
        let exported = try poseact(["dataset", "export", openpose, "--csv", csv, "--json"])
        XCTAssertEqual(exported.status, 0, exported.stderr)
        XCTAssertEqual(try json(exported.stdout)["rows"] as? Int, 3)
        let again = root.appendingPathComponent("again.h5").path
        let reimport = try poseact(["import", csv, "--output", again])
        XCTAssertEqual(reimport.status, 0, reimport.stderr)
        let a = try KeypointStore(path: openpose), b = try KeypointStore(path: again)
        let x = try a.read(a.entries[0].id), y = try b.read(b.entries[0].id)
        XCTAssertEqual(x.jointNames, y.jointNames)
        XCTAssertEqual(x.keypoints.count, y.keypoints.count)
        for (u, v) in zip(x.keypoints, y.keypoints) where !u.isNaN { XCTAssertEqual(u, v, accuracy: 1e-4) }
        XCTAssertEqual(x.keypoints.filter(\.isNaN).count, y.keypoints.filter(\.isNaN).count)
    }

    func testBrokenInputsAreOneLine() throws {
        let root = Self.dir.appendingPathComponent("broken-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("wave"), withIntermediateDirectories: true)
        let bad = root.appendingPathComponent("wave/bad.json")
        try Data("{\"images\": [".utf8).write(to: bad)
        try assertOneLineError(["import", root.path, "--output", root.appendingPathComponent("o.h5").path], mentions: ["bad.json", "not valid JSON"])
        try assertOneLineError(["import", samples.appendingPathComponent("make_samples.py").path, "--output", root.appendingPathComponent("p.h5").path],
                               mentions: ["make_samples.py", "not a keypoint format"])
        try assertOneLineError(["import", samples.appendingPathComponent("openpose").path, "--output", root.appendingPathComponent("q.h5").path],
                               mentions: ["clip1", "--size"])
        try assertOneLineError(["import", samples.appendingPathComponent("coco").path, "--format", "ntu", "--output", root.appendingPathComponent("r.h5").path],
                               mentions: ["clip2.json", "not the --format ntu"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("o.h5").path), "nothing written")
    }
}
