import Foundation
import Scenes
import TestData
import TrainingFixtures
import XCTest

/// `--trajectories` as a user runs it: `throws render` and `throws score`, `annotate` with
/// throws in its JSON and timeline, and `live --serve` whose page shows the thrower's card
/// in a real browser.
final class ThrowsCommandTests: PennSliceTestCase {
    var models: [String] { ["--models", PoseactCLITestCase.modelsDir.path] }

    /// The demo's scene (overhand 7 m/s at 20°, underhand at 40°, both on the board),
    /// rendered once per test process, the flags its truth gives, and the true speeds.
    func demoScene() throws -> (video: String, flags: [String], speeds: [Double]) {
        let folder = Self.dir.appendingPathComponent("throw-scene")
        let video = folder.appendingPathComponent("throws.mp4").path
        let scene = ThrowScenes.demoScene()
        if !FileManager.default.fileExists(atPath: video) {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try ThrowScenes.write(scene, name: "throws", to: folder)
        }
        let truth = ThrowSceneTruth(scene: scene, clip: "throws.mp4")
        let s = try XCTUnwrap(truth.scale), b = try XCTUnwrap(truth.target)
        let flags = ["--trajectories", "--scale", String(format: "%.2f,%.2f,%.2f,%.2f=%.2fm", s.x1, s.y1, s.x2, s.y2, s.metres),
                     "--target", String(format: "%.1f,%.1f,%.1f,%.1f", b.x, b.y, b.width, b.height)]
        return (video, flags, truth.throwsMade.map(\.speedMetresPerSecond))
    }

    func testRenderAndScoreTheDetectorAlone() throws {
        let folder = Self.dir.appendingPathComponent("rendered-\(UUID().uuidString.prefix(6))").path
        let rendered = try poseact(["throws", "render", folder, "--count", "3", "--seed", "11"])
        XCTAssertEqual(rendered.status, 0, rendered.stderr)
        let truths = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".json") }
        XCTAssertFalse(truths.isEmpty)
        let scored = try poseact(["throws", "score", folder, "--json"])
        XCTAssertEqual(scored.status, 0, scored.stderr)
        let line = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(scored.stdout.utf8)) as? [String: Any], scored.stdout)
        // Three clear throws: each followed by a trajectory, and nothing else taken for one.
        XCTAssertEqual(line["throws"] as? Int, 3, "\(line)")
        XCTAssertEqual(line["flights_tracked"] as? Int, 3, "\(line)")
        XCTAssertEqual(line["false_trajectories"] as? Int, 0, "\(line)")
        XCTAssertEqual(line["flights_as_one"] as? Int, 3, "each flight one trajectory: \(line)")
        XCTAssertNil(line["throws_found"], "no --model: throws are not scored")
        // A cluttered scene: its truth names the stray ball, the score counts its flight.
        let cluttered = Self.dir.appendingPathComponent("clutter-\(UUID().uuidString.prefix(6))").path
        let clutter = try poseact(["throws", "render", cluttered, "--set", "clutter", "--count", "2", "--seed", "3"])
        XCTAssertEqual(clutter.status, 0, clutter.stderr)
        let clutterTruth = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: cluttered + "/clutter001.json"))) as? [String: Any])
        XCTAssertEqual((clutterTruth["strays"] as? [Any])?.count, 1, "\(clutterTruth.keys)")
        let clutterScore = try poseact(["throws", "score", cluttered, "--json"])
        XCTAssertEqual(clutterScore.status, 0, clutterScore.stderr)
        let clutterLine = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(clutterScore.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(clutterLine["flights"] as? Int, 3, "two throws and a stray: \(clutterLine)")
        // A stray whose speed is not a number is refused in one line.
        var badStray = clutterTruth
        if var strays = clutterTruth["strays"] as? [[String: Any]] { strays[0]["speed_px_per_s"] = -1; badStray["strays"] = strays }
        // Hostile truth files: not JSON, the wrong shape, a clip outside the folder, a FIFO.
        let hostile = Self.dir.appendingPathComponent("hostile-\(UUID().uuidString.prefix(6))")
        for (content, said) in [("{\"clip\": ", "not valid JSON"), ("{\"clip\": 3}", "expected"),
                                ((try String(contentsOfFile: folder + "/throw001.json", encoding: .utf8))
                                    .replacingOccurrences(of: "\"clip\" : \"throw001.mp4\"", with: "\"clip\" : \"../x.mp4\""), "same folder")] {
            try? FileManager.default.removeItem(at: hostile)
            try FileManager.default.createDirectory(at: hostile, withIntermediateDirectories: true)
            try content.write(to: hostile.appendingPathComponent("bad.json"), atomically: true, encoding: .utf8)
            let bad = try poseact(["throws", "score", hostile.path])
            XCTAssertNotEqual(bad.status, 0)
            XCTAssertEqual(bad.stderr.split(separator: "\n").count, 1, bad.stderr)
            XCTAssertTrue(bad.stderr.contains("bad.json") && bad.stderr.contains(said), bad.stderr)
        }
        try FileManager.default.removeItem(at: hostile.appendingPathComponent("bad.json"))
        XCTAssertEqual(mkfifo(hostile.appendingPathComponent("fifo.json").path, 0o600), 0)
        let fifo = try poseact(["throws", "score", hostile.path])
        XCTAssertNotEqual(fifo.status, 0)
        XCTAssertTrue(fifo.stderr.contains("fifo.json: a FIFO (named pipe), not a scene's truth"), fifo.stderr)
        try FileManager.default.removeItem(at: hostile.appendingPathComponent("fifo.json"))
        // Truths whose numbers a scoring cannot use (a shake that ends before it starts
        // trapped the scoring; a scale of 0 m), and a FIFO in the video's place.
        let good = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/throw001.json"))) as? [String: Any])
        var backwards = good; backwards["shake"] = [["start": 2.0, "end": 1.0]]
        var noScale = good; noScale["scale"] = ["x1": 0, "y1": 0, "x2": 10, "y2": 0, "metres": 0]
        for (truth, said) in [(backwards, "shake 1 runs from 2.0 to 1.0 s: it must end after it starts"), (noScale, "its metres > 0"),
                              (badStray, "stray 1: its numbers must be finite")] {
            try JSONSerialization.data(withJSONObject: truth).write(to: hostile.appendingPathComponent("bad.json"))
            let bad = try poseact(["throws", "score", hostile.path])
            XCTAssertNotEqual(bad.status, 0)
            XCTAssertEqual(bad.stderr.split(separator: "\n").count, 1, bad.stderr)
            XCTAssertTrue(bad.stderr.contains(said), bad.stderr)
        }
        try JSONSerialization.data(withJSONObject: good).write(to: hostile.appendingPathComponent("throw001.json"))
        try FileManager.default.removeItem(at: hostile.appendingPathComponent("bad.json"))
        XCTAssertEqual(mkfifo(hostile.appendingPathComponent("throw001.mp4").path, 0o600), 0)
        let fifoVideo = try poseact(["throws", "score", hostile.path])
        XCTAssertNotEqual(fifoVideo.status, 0)
        XCTAssertTrue(fifoVideo.stderr.contains("throw001.mp4: a FIFO (named pipe), not a video or picture"), fifoVideo.stderr)
        // A folder without truth is one line.
        let empty = try poseact(["throws", "score", Self.dir.path + "/no-such-folder"])
        XCTAssertNotEqual(empty.status, 0)
        XCTAssertEqual(empty.stderr.split(separator: "\n").count, 1, empty.stderr)
    }

    func testAnnotateFindsBothThrowsWithTheirSpeeds() throws {
        _ = try model("pose_landmark_full.tflite")
        let run = try trainedRun()
        let (video, flags, speeds) = try demoScene()
        let timeline = Self.dir.appendingPathComponent("throws-timeline.json").path
        let annotated = try poseact(["annotate", "--model", run, video, "--json", "--timeline", timeline] + flags + models)
        XCTAssertEqual(annotated.status, 0, annotated.stderr)
        let result = try json(annotated.stdout)
        let made = try XCTUnwrap(result["throws"] as? [[String: Any]], "\(result)")
        XCTAssertEqual(made.count, 2, "\(made)")
        // The issue's bound on a release speed: within 5 % of the truth.
        for (found, truth) in zip(made, speeds) {
            XCTAssertEqual(found["speed_unit"] as? String, "m/s")
            XCTAssertEqual(found["speed"] as? Double ?? 0, truth, accuracy: truth * 0.05, "\(found)")
            XCTAssertEqual(found["hit"] as? Bool, true, "\(found)")
        }
        // The direction of flight at release: 20° and 40°, within 3°.
        XCTAssertEqual(made.first?["launch_angle"] as? Double ?? 0, 20, accuracy: 3)
        XCTAssertEqual(made.last?["launch_angle"] as? Double ?? 0, 40, accuracy: 3)
        // The flights' own kinematics, in m/s with --scale: each first seen within a few frames
        // of its release, where gravity has changed the speed by under 10 %.
        let trajectories = try XCTUnwrap(result["trajectories"] as? [[String: Any]])
        for (flight, truth) in zip(trajectories, speeds) {
            XCTAssertEqual(flight["speed_unit"] as? String, "m/s", "\(flight)")
            XCTAssertEqual(flight["start_speed"] as? Double ?? 0, truth, accuracy: truth * 0.1, "\(flight)")
            XCTAssertNotNil(flight["flight_time"] as? Double)
        }
        let throwers = try XCTUnwrap(result["throwers"] as? [[String: Any]])
        XCTAssertEqual(throwers.count, 1)
        XCTAssertEqual(throwers.first?["throws"] as? Int, 2)
        let lines = try eventLines(try String(contentsOfFile: timeline, encoding: .utf8))
        XCTAssertEqual(lines.filter { $0.type == "throw" }.count, 2, "the throws in the timeline: \(lines)")
        XCTAssertEqual(lines.filter { $0.type == "occurrence" }.count, 1, "the thrower's occurrence: \(lines)")
        // annotate's summary holds the flights as trajectory lines.
        let flights = try eventLines(String(decoding: try JSONSerialization.data(withJSONObject: try XCTUnwrap(result["trajectories"])), as: UTF8.self))
        XCTAssertGreaterThanOrEqual(flights.filter { $0.type == "trajectory" }.count, 2, "their flights: \(flights)")
        // A flag for trajectories without --trajectories is one line before any work.
        let refused = try poseact(["annotate", "--model", run, video, "--target", "1,2,3,4"] + models)
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("add --trajectories"), refused.stderr)
    }

    /// `live --trajectories --serve`: the page, in headless chromium, shows the thrower's card
    /// with the last throw's speed and angle.
    func testThePageShowsTheThrowersCard() throws {
        let chromium = try tool(["chromium", "chromium-browser", "google-chrome"], install: "chromium")
        _ = try model("pose_landmark_full.tflite")
        let run = try trainedRun()
        let (video, flags, speeds) = try demoScene()
        let live = try start(["live", "--model", run, "--input", video, "--as-fast-as-possible", "--serve", "0"] + flags + models)
        defer { if live.process.isRunning { live.process.terminate() } }
        let stderr = wait(for: "until Ctrl-C", in: live.stderr, seconds: 120)
        let url = try XCTUnwrap(stderr.split(separator: "\n").first { $0.hasPrefix("live page: ") }?.dropFirst(11), stderr)
        let profile = Self.dir.appendingPathComponent("chromium-\(UUID().uuidString.prefix(6))").path
        let dom = try headless(chromium, String(url), profile: profile, flags: ["--window-size=1100,600", "--virtual-time-budget=4000", "--dump-dom"])
        let card = try XCTUnwrap(dom.components(separatedBy: "class=\"person thrower\"").dropFirst().first, "no thrower's card: \(dom)")
        XCTAssertTrue(card.contains("2 throws"), String(card.prefix(400)))
        // The last throw: underhand at 40° (the speed shown to a tenth; 5 % of it, as above).
        let speed = try XCTUnwrap(card.range(of: #"speed [0-9.]+ m/s"#, options: .regularExpression).map { String(card[$0]) }, String(card.prefix(400)))
        XCTAssertEqual(Double(speed.dropFirst(6).dropLast(4)) ?? 0, speeds[1], accuracy: speeds[1] * 0.05, speed)
        XCTAssertTrue(card.range(of: #"angle -?[0-9]+°"#, options: .regularExpression) != nil, String(card.prefix(400)))
        XCTAssertTrue(card.contains("2 hits"), String(card.prefix(400)))
    }
}
