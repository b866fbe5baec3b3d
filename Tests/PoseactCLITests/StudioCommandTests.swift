import Foundation
import TestData
import XCTest

/// `poseact studio`: the whole path as a user walks it, in a real browser
/// (notebooks-free-scripts/studio-browser.sh: Playwright from PyPI driving the system's
/// chromium) on 14 push-up clips and a montage: add the folder, extract, train (stopped in
/// the middle and resumed from the page), evaluate, label a segment of the montage by
/// keyboard and save it, add it to the run's labels (enroll), preview a dropped clip, export
/// ONNX.
final class StudioCommandTests: PoseactCLITestCase {
    func testTheWholePathInARealBrowser() throws {
        _ = try tool(["chromium", "chromium-browser", "google-chrome"], install: "chromium")
        _ = try tool(["python3"], install: "python3-venv")
        _ = try TestData.shared("data/pushups/montage/montage_01.mp4")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [TestData.packageRoot.appendingPathComponent("notebooks-free-scripts/studio-browser.sh").path, binary.path]
        var environment = ProcessInfo.processInfo.environment
        environment["POSEACT_SHARED"] = TestData.sharedFolder.path
        environment["POSEACT_MODELS_DIR"] = Self.modelsDir.path
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // (stderr read beside stdout, so that neither pipe fills up and blocks the script.)
        final class Collected: @unchecked Sendable { var data = Data() }
        let errors = Collected(), read = DispatchSemaphore(value: 0)
        Thread { errors.data = err.fileHandleForReading.readDataToEndOfFile(); read.signal() }.start()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        read.wait()
        let stderr = String(decoding: errors.data, as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, String(stderr.suffix(3000)))
        guard process.terminationStatus == 0 else { return }
        let line = String(decoding: stdout, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        let result = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line)
        print("studio, the whole path: \(line)")
        // Stopped from the page in the middle, resumed from the page: the weights of the
        // uninterrupted `poseact train` that the page showed, bit for bit.
        XCTAssertEqual(result["weights_stopped_and_resumed"] as? String, result["weights_uninterrupted"] as? String)
        XCTAssertLessThan(result["stopped_after_epoch"] as? Int ?? 99, 20)
        // The label view's file, as extract --annotations reads it.
        XCTAssertEqual(result["annotation_file"] as? String, "video,label,start,end\nmontage_01.mp4,correct,1.00,4.00\n")
        XCTAssertEqual((result["labelled_store"] as? [String: Any])?["clips"] as? Int, 1)
        XCTAssertTrue((result["extract_command"] as? String ?? "").hasPrefix("poseact extract "))
        // Enrolled from the page: the run's labels, "correct" with the one labelled clip more.
        let enrolled = result["enrolled"] as? [String: Any]
        XCTAssertEqual(enrolled?["labels"] as? [String], ["correct", "wrong"])
        XCTAssertEqual(enrolled?["clips"] as? [String: Int], ["correct": 1])
    }
}
