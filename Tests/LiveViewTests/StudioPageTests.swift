import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Basics
import Keypoints
import OutputLines
import PageServing
import Studio
import TestData
import XCTest

/// The studio's own requests: what a page may send it, what it writes, what it serves. (The
/// live page's tests of Host, Origin, token and limits run against the studio too:
/// `servedPages`.) The whole path in a real browser is StudioCommandTests'.
final class StudioPageTests: XCTestCase {
    var folder = ""
    var studio: Studio!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-studio-\(UUID().uuidString)").path
        var limits = PageLimits()
        limits.headSeconds = 1   // (an upload outlasts it: testASlowUploadIsNotCutOff)
        studio = try Studio(project: StudioProject(folder: folder), executable: "/bin/false", recipes: nil, port: 0, limits: limits)
    }

    override func tearDown() {
        studio.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A request to the studio (with its token, unless `token` is false): status, headers
    /// (lower-cased names) and body.
    func call(_ method: String, _ path: String, body: Data? = nil, headers: [String: String] = [:], token: Bool = true) throws -> (status: Int, headers: [String: String], body: Data) {
        let withToken = token ? path + (path.contains("?") ? "&" : "?") + "token=" + studio.access.token! : path
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(studio.port)\(withToken)")!)
        request.httpMethod = method
        request.httpBody = body
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        final class Answer: @unchecked Sendable { var value: (Int, [String: String], Data) = (0, [:], Data()) }
        let done = DispatchSemaphore(value: 0), answer = Answer()
        URLSession.shared.dataTask(with: request) { data, response, _ in
            let http = response as? HTTPURLResponse
            let fields = (http?.allHeaderFields ?? [:]).reduce(into: [String: String]()) { $0["\($1.key)".lowercased()] = "\($1.value)" }
            answer.value = (http?.statusCode ?? 0, fields, data ?? Data())
            done.signal()
        }.resume()
        done.wait()
        return answer.value
    }

    func post(_ action: String, _ json: String) throws -> (status: Int, text: String) {
        let r = try call("POST", "/api/\(action)", body: Data(json.utf8), headers: ["Content-Type": "application/json"])
        return (r.status, String(decoding: r.body, as: UTF8.self))
    }

    /// A one-byte video `name` in a folder of untrimmed videos, opened in the label view: its path.
    func openInLabelView(_ name: String) throws -> String {
        let videos = folder + "/untrimmed"
        try FileManager.default.createDirectory(atPath: videos, withIntermediateDirectories: true)
        let video = videos + "/" + name
        _ = FileManager.default.createFile(atPath: video, contents: Data([0]))
        XCTAssertEqual(try post("label-video", #"{"video": "\#(video)"}"#).status, 200)
        return video
    }

    /// The studio acts for its user and serves their videos: even on loopback, nothing
    /// without the token printed with its URL (the machine's other users reach 127.0.0.1 too).
    func testEvenOnLoopbackTheTokenIsNeeded() throws {
        let token = try XCTUnwrap(studio.access.token)
        XCTAssertTrue(studio.url.hasSuffix("/?token=\(token)"), studio.url)
        for path in ["/", "/state.json", "/data/clips", "/media?path=videos/a.mp4", "/download?file=a.onnx"] {
            XCTAssertEqual(try call("GET", path, token: false).status, 403, path)
        }
        XCTAssertEqual(try call("POST", "/api/stop", body: Data("{\"job\": 1}".utf8), token: false).status, 403)
        XCTAssertEqual(try call("POST", "/api/upload?name=a.mp4", body: Data([1]), token: false).status, 403)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/videos/a.mp4"))
        XCTAssertEqual(try call("GET", "/").status, 200)
    }

    /// A request's head must be whole within `headSeconds` (1 s here), but an upload's body
    /// may take longer as long as it keeps coming: 3 s of a body sent in pieces is taken.
    func testASlowUploadIsNotCutOff() throws {
        let token = try XCTUnwrap(studio.access.token)
        let fd = loopbackConnection(studio.port)
        defer { close(fd) }
        let piece = [UInt8](repeating: 7, count: 1000)
        func send(_ bytes: [UInt8]) { _ = bytes.withUnsafeBytes { Foundation.send(fd, $0.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) } }
        send(Array("POST /api/upload?name=slow.mp4&token=\(token) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 6000\r\nConnection: close\r\n\r\n".utf8))
        for _ in 0..<6 { usleep(500_000); send(piece) }
        var answer: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let r = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 4096, 0) }
            guard r > 0 else { break }
            answer += chunk[0..<r]
        }
        XCTAssertTrue(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 200"), String(decoding: answer.prefix(200), as: UTF8.self))
        XCTAssertEqual(FileManager.default.contents(atPath: folder + "/videos/slow.mp4")?.count, 6000)
    }

    /// The page as served lints clean, as its template does, and carries the state as JSON
    /// that no name in it can end ("<" as \u003c): a source folder named </script>.
    func testServedPageLintsClean() throws {
        let evil = folder + "/</script><b>"
        try FileManager.default.createDirectory(atPath: evil + "/squat", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: evil + "/squat/a.mp4", contents: Data([0]))
        XCTAssertEqual(try post("sources", #"{"folder": "\#(evil)"}"#).status, 200)
        let page = String(decoding: try call("GET", "/").body, as: UTF8.self)
        XCTAssertTrue(page.contains(#"\u003c/script>\u003cb>"#), "the folder's name, inline and escaped")
        XCTAssertTrue(page.contains("\"?token=\(studio.access.token!)\""), "the page's requests carry the token")
        XCTAssertEqual(page.components(separatedBy: "</script>").count - 1, 3, "only the page's own three scripts end")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-studio-\(getpid()).html")
        try page.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        XCTAssertEqual(try TestData.pageLintFaults(try TestData.pageResources(of: "Studio") + [file.path]), "")
    }

    /// What the page sends is checked before anything runs: one line (400) for a run name
    /// with a path in it, an action that does not exist, a folder that is not one, a
    /// segment that ends before it starts, a video the project does not know; a body over
    /// 1 MB is refused (413) before it is read whole.
    func testBadRequestsAreOneLine() throws {
        let refusals: [(String, String, String)] = [
            ("train", #"{"name": "../escape", "recipe": "pushups"}"#, "a run's name: 1 to 64 letters"),
            ("evaluate", #"{"run": "nothing"}"#, "runs/nothing: no model yet"),
            ("format-disk", "{}", "format-disk: no such action"),
            ("sources", #"{"folder": "/nonexistent/clips"}"#, "/nonexistent/clips: no such folder"),
            ("extract", "{}", "no data yet: add a folder of labeled clips first"),
            ("labels", #"{"video": "/etc/passwd", "segments": []}"#, "/etc/passwd: not a video of this project"),
            ("label-video", #"{"video": "/etc/passwd"}"#, "/etc/passwd: not a video file"),
            ("sources", "{not json", "POST /api/sources: not valid JSON"),
        ]
        for (action, body, words) in refusals {
            let (status, text) = try post(action, body)
            XCTAssertEqual(status, 400, "\(action) \(body): \(text)")
            XCTAssertTrue(text.contains(words), "\(action): \(text)")
            XCTAssertEqual(text.trimmingCharacters(in: .newlines).split(separator: "\n").count, 1, "one line: \(text)")
        }
        let big = Data(("{\"folder\": \"" + String(repeating: "a", count: 2 << 20) + "\"}").utf8)
        XCTAssertEqual(try call("POST", "/api/sources", body: big, headers: ["Content-Type": "application/json"]).status, 413)
        XCTAssertEqual(studio.jobs.all.count, 0, "nothing ran")
    }

    /// The label view's file is Create ML's annotation CSV, and `extract` finds in it the
    /// clips the segments mark (the scan `extract --annotations` runs; the browser test runs
    /// the command itself on a real montage).
    func testTheLabelViewWritesWhatExtractReads() throws {
        let video = try openInLabelView("gym, day 1.mp4"), videos = folder + "/untrimmed"
        let saved = try post("labels", #"{"video": "\#(video)", "segments": [{"label": "wrong", "start": 7.5, "end": 9.25}, {"label": "correct", "start": 1, "end": 4}]}"#)
        XCTAssertEqual(saved.status, 200, saved.text)
        let file = folder + "/labels/gym__day_1.csv"
        XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8),
                       "video,label,start,end\n\"gym, day 1.mp4\",correct,1.00,4.00\n\"gym, day 1.mp4\",wrong,7.50,9.25\n")
        let listing = try DatasetSources.scan(videos, annotations: file)
        XCTAssertEqual(listing.problems, [])
        XCTAssertEqual(listing.clips.map(\.label), ["correct", "wrong"])
        XCTAssertEqual(listing.clips.map(\.start), [1, 7.5])
        XCTAssertEqual(listing.clips.map(\.end), [4, 9.25])
        XCTAssertEqual(listing.clips.map(\.video), [video, video])
        let bad = try post("labels", #"{"video": "\#(video)", "segments": [{"label": "x", "start": 5, "end": 2}]}"#)
        XCTAssertEqual(bad.status, 400)
        XCTAssertTrue(bad.text.contains("a segment ends after it starts"), bad.text)
    }

    /// A model's proposals for a video (`annotate --timeline proposals/NAME.json`) reach the
    /// label view read with annotate's own line types: its occurrences only; a file of another
    /// shape is one line naming it.
    func testProposalsAreReadAsAnnotateWritesThem() throws {
        let video = try openInLabelView("set.mp4")
        let occurrence = OccurrenceLine(person: 1, label: "correct", start: 1.5, end: 4, peakConfidence: 0.9, meanConfidence: 0.8, repetitions: 2)
        let file = folder + "/proposals/\(StudioProject.safeName(video)).json"
        try TimelineFile(occurrences: [occurrence], throwsMade: []).text.write(toFile: file, atomically: true, encoding: .utf8)
        let query = "/data/proposals?video=" + video.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let served = try call("GET", query)
        XCTAssertEqual(served.status, 200)
        XCTAssertEqual(try JSONLines.decode([OccurrenceLine].self, from: served.body), [occurrence])
        // The throws are not the label view's: a throw whose speed was not finite (written as
        // null) does not keep the occurrences from it.
        try (TimelineFile(occurrences: [occurrence], throwsMade: []).text + #"{"type":"throw","speed":null}"# + "\n")
            .write(toFile: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(try JSONLines.decode([OccurrenceLine].self, from: try call("GET", query).body), [occurrence])
        try #"[{"type":"occurrence","label":"correct"}]"#.write(toFile: file, atomically: true, encoding: .utf8)
        let bad = try call("GET", query)
        XCTAssertEqual(bad.status, 400)
        let text = String(decoding: bad.body, as: UTF8.self)
        XCTAssertTrue(text.contains("set.json line 1: [0].person: missing"), text)
    }

    /// Videos: only the project's, never through a link, in the byte ranges a browser seeks
    /// with; an upload is streamed into videos/ whole or not at all, bounded.
    func testVideosAreTheProjectsOnlyAndUploadsAreBounded() throws {
        let bytes = Data((0..<5000).map { UInt8($0 % 251) })
        let up = try call("POST", "/api/upload?name=my%20clip.mp4", body: bytes)
        XCTAssertEqual(up.status, 200, String(decoding: up.body, as: UTF8.self))
        let path = folder + "/videos/my_clip.mp4"
        XCTAssertEqual(FileManager.default.contents(atPath: path), bytes)
        let whole = try call("GET", "/media?path=videos/my_clip.mp4")
        XCTAssertEqual(whole.status, 200)
        XCTAssertEqual(whole.body, bytes)
        let part = try call("GET", "/media?path=videos/my_clip.mp4", headers: ["Range": "bytes=1000-1999"])
        XCTAssertEqual(part.status, 206)
        XCTAssertEqual(part.headers["content-range"], "bytes 1000-1999/5000")
        XCTAssertEqual(part.body, bytes[1000..<2000])
        XCTAssertEqual(try call("GET", "/media?path=videos/my_clip.mp4", headers: ["Range": "bytes=9000-"]).status, 416)
        // Not the project's: a file elsewhere, a link planted in videos/.
        XCTAssertEqual(try call("GET", "/media?path=/etc/passwd").status, 404)
        try FileManager.default.createSymbolicLink(atPath: folder + "/videos/secret.mp4", withDestinationPath: "/etc/passwd")
        XCTAssertEqual(try call("GET", "/media?path=videos/secret.mp4").status, 404)
        XCTAssertEqual(try call("GET", "/download?file=..%2Fstudio.json").status, 404)
        // Over the limit: refused, nothing left behind (no video, no temporary file).
        studio.uploadBytes = 4096
        let over = try call("POST", "/api/upload?name=big.mp4", body: bytes)
        XCTAssertEqual(over.status, 413)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder + "/videos").sorted(), ["my_clip.mp4", "secret.mp4"])
        XCTAssertEqual(try call("POST", "/api/upload?name=notes.txt", body: Data([1])).status, 400)
    }

    /// A project folder the studio did not make is said in one line, not overwritten: a file
    /// where it keeps a folder, a settings file that is not its own.
    func testAForeignProjectFolderIsOneLine() throws {
        let other = folder + "-other"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: other) }
        _ = FileManager.default.createFile(atPath: other + "/runs", contents: Data("mine".utf8))
        XCTAssertThrowsError(try StudioProject(folder: other)) { error in
            XCTAssertTrue("\(error)".contains("runs: is not a folder; the studio keeps its runs there"), "\(error)")
        }
        try FileManager.default.removeItem(atPath: other + "/runs")
        _ = FileManager.default.createFile(atPath: other + "/studio.json", contents: Data("[1, 2]".utf8))
        XCTAssertThrowsError(try StudioProject(folder: other)) { error in
            XCTAssertTrue("\(error)".contains("studio.json"), "\(error)")
            XCTAssertTrue("\(error)".contains("the studio's settings"), "\(error)")
        }
        XCTAssertEqual(try String(contentsOfFile: other + "/studio.json", encoding: .utf8), "[1, 2]")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: other), ["studio.json"], "nothing made beside it")
    }
}
