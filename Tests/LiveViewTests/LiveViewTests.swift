import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Images
import Live
import LiveView
import PageServing
import Media
import TestData
import XCTest

/// Gradients with a white square: every pixel differs from its neighbours.
private func picture(width: Int, height: Int) -> RGBImage {
    var image = RGBImage(width: width, height: height)
    for y in 0..<height {
        for x in 0..<width {
            let i = 3 * (y * width + x)
            image.pixels[i] = UInt8(x * 255 / (width - 1)); image.pixels[i + 1] = UInt8(y * 255 / (height - 1))
            image.pixels[i + 2] = UInt8((x + y) % 256)
            if x >= 10 && x < 30 && y >= 10 && y < 30 { image.pixels[i] = 255; image.pixels[i + 1] = 255; image.pixels[i + 2] = 255 }
        }
    }
    return image
}

/// A socket connected to 127.0.0.1:`port`, with a 5 s receive timeout (the page tests' one client socket).
func loopbackConnection(_ port: Int, file: StaticString = #filePath, line: UInt = #line) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    XCTAssertEqual(connected, 0, "connect to 127.0.0.1:\(port)", file: file, line: line)
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    return fd
}

/// `live --window`: a real X server (Xvfb), a real window; what the window shows is read
/// back from the server.
final class LiveWindowTests: XCTestCase {
    func testWindowShowsEachFrameExactly() throws {
        let xvfb = try TestData.tool(["Xvfb"], install: "xvfb")
        let display = ":\(100 + Int(getpid()) % 400)"
        let server = Process()
        server.executableURL = URL(fileURLWithPath: xvfb)
        server.arguments = [display, "-screen", "0", "800x600x24", "-nolisten", "tcp"]
        server.standardOutput = FileHandle.nullDevice; server.standardError = FileHandle.nullDevice
        try server.run()
        defer { server.terminate(); server.waitUntilExit() }
        let socket = "/tmp/.X11-unix/X\(display.dropFirst())"
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(20_000) }

        let window = try LiveWindow(title: "poseact test", width: 320, height: 240, display: display)
        // 24-bit true colour is lossless: the window holds exactly the frame's pixels.
        for (w, h) in [(320, 240), (200, 120)] {
            let frame = picture(width: w, height: h)
            window.show(frame)
            XCTAssertEqual(window.screenshot(), frame, "\(w)×\(h)")
        }
        XCTAssertFalse(window.closed)
    }

    func testNoDisplayIsOneClearError() {
        XCTAssertThrowsError(try LiveWindow(title: "t", width: 10, height: 10, display: ":987")) { error in
            XCTAssertTrue("\(error)".contains("cannot open the display :987"), "\(error)")
        }
    }
}

/// `live --serve`'s server, in process: the state and the newest frame over HTTP, and a
/// port already taken refused with one line. (The page itself is tested in a real browser
/// in LiveCommandTests.)
final class BrowserViewTests: XCTestCase {
    /// Two people: each has their card (state, count, angles); the headline is the
    /// prominent person's, whoever predicted last.
    func testEveryPersonOnTheBoardAndTheProminentInTheHeadline() {
        let board = LiveBoard(model: "pushups")
        func view(_ id: Int, _ label: String, reps: Int, prominent: Bool) -> PersonView {
            PersonView(id: id, state: .action(label: label, confidence: 0.9), occurrence: label, repetitions: reps,
                       angles: [171.26, .nan], isProminent: prominent)
        }
        // The seconds per action are the pipeline's own (its coach's), not the board's sum.
        var seconds = ActionSummary()
        seconds.add(Prediction(time: 0.5, frame: 15, personID: 1, state: .action(label: "correct", confidence: 0.8), probabilities: [0.8, 0.2]))
        seconds.add(Prediction(time: 1.5, frame: 45, personID: 1, state: .action(label: "correct", confidence: 0.8), probabilities: [0.8, 0.2]))
        board.handle(.people([view(1, "correct", reps: 3, prominent: false), view(2, "wrong", reps: 1, prominent: true)],
                             angleNames: ["body_line", "left_elbow"], summary: seconds))
        XCTAssertEqual(board.current.summary.map(\.label), seconds.longestFirst.map(\.label))
        XCTAssertEqual(board.current.summary.map(\.seconds), seconds.longestFirst.map { ($0.seconds * 10).rounded() / 10 })
        XCTAssertFalse(board.current.summary.isEmpty)
        board.handle(.prediction(Prediction(time: 1, frame: 30, personID: 2, state: .action(label: "wrong", confidence: 0.9),
                                            probabilities: [0.1, 0.9]), fps: 30, dropped: 0))
        board.handle(.prediction(Prediction(time: 1, frame: 30, personID: 1, state: .action(label: "correct", confidence: 0.8),
                                            probabilities: [0.8, 0.2]), fps: 30, dropped: 0))
        let state = board.current
        XCTAssertEqual(state.state, .action("wrong"), "the prominent person's, though person 1 predicted last")
        XCTAssertEqual(state.person, 2)
        XCTAssertEqual(state.people.map(\.id), [1, 2])
        XCTAssertEqual(state.people.map(\.repetitions), [3, 1])
        XCTAssertEqual(state.people[0].angles, ["body_line": 171.3], "one decimal; a missing joint's angle left out")
        XCTAssertEqual(state.people[1].occurrence, "wrong")
    }

    func testStateAndFrameOverHTTP() throws {
        let board = LiveBoard(model: "pushups")
        let frame = picture(width: 320, height: 240)
        board.handle(.frame(frame, time: 1.5))
        board.handle(.prediction(Prediction(time: 1.5, frame: 45, personID: 3, state: .action(label: "correct", confidence: 0.875),
                                            probabilities: [0.875, 0.125]), fps: 29.94, dropped: 2))
        let view = try BrowserView(board: board, port: 0)
        defer { view.stop() }
        XCTAssertTrue(view.url.hasPrefix("http://127.0.0.1:"))

        let state = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(string: view.url + "state.json")!)) as? [String: Any])
        XCTAssertEqual(state["state"] as? String, "correct")
        XCTAssertEqual(state["label"] as? String, "correct")
        XCTAssertEqual(state["confidence"] as? Double, 0.875)
        XCTAssertEqual(state["person"] as? Int, 3)
        XCTAssertEqual(state["fps"] as? Double, 29.9)
        XCTAssertEqual(state["dropped"] as? Int, 2)
        XCTAssertEqual(state["time"] as? Double, 1.5)

        let jpeg = try Data(contentsOf: URL(string: view.url + "frame.jpg")!)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-frame-\(getpid()).jpg").path
        try jpeg.write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let back = try XCTUnwrap(try VideoReader(path).next()?.image)
        XCTAssertEqual(back.width, 320)
        XCTAssertEqual(back.height, 240)
        var error = 0
        for i in 0..<frame.pixels.count { error += abs(Int(back.pixels[i]) - Int(frame.pixels[i])) }
        XCTAssertLessThan(Double(error) / Double(frame.pixels.count), 4, "the frame, as JPEG (mean error in levels)")

        let page = String(decoding: try Data(contentsOf: URL(string: view.url)!), as: UTF8.self)
        XCTAssertTrue(page.contains("new WebSocket"), "the page")

        board.finish(summary: ActionSummary(), message: "the input ended")
        let ended = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(string: view.url + "state.json")!)) as? [String: Any])
        XCTAssertEqual(ended["message"] as? String, "the input ended")

        XCTAssertThrowsError(try BrowserView(board: board, port: view.port)) { error in
            XCTAssertTrue("\(error)".contains("is the port in use"), "\(error)")
        }
    }

    /// The page's WebSocket, from a minimal client written here (RFC 6455): the handshake,
    /// "next" answered by one update (4-byte length, state JSON, JPEG), and a new update
    /// only when something changed.
    func testWebSocketSendsAnUpdatePerNext() throws {
        let board = LiveBoard(model: "m")
        board.handle(.frame(picture(width: 320, height: 240), time: 0.5))
        board.handle(.prediction(Prediction(time: 0.5, frame: 15, personID: 1, state: .noPerson, probabilities: []), fps: 30, dropped: 0))
        let view = try BrowserView(board: board, port: 0)
        defer { view.stop() }
        let fd = loopbackConnection(view.port)
        defer { close(fd) }
        func write(_ bytes: [UInt8]) { _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) } }
        func read(_ n: Int) throws -> [UInt8] {
            var out = [UInt8](repeating: 0, count: n), got = 0
            while got < n {
                let r = out.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + got, n - got, 0) }
                guard r > 0 else { throw ViewError("connection closed or timed out after \(got) of \(n) bytes") }
                got += r
            }
            return out
        }
        write(Array("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n".utf8)
              + Array("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".utf8))
        var head: [UInt8] = []
        while !head.suffix(4).elementsEqual([13, 10, 13, 10]) { head += try read(1) }
        let response = String(decoding: head, as: UTF8.self)
        XCTAssertTrue(response.hasPrefix("HTTP/1.1 101"), response)
        XCTAssertTrue(response.contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), "RFC 6455's example accept key: \(response)")

        func next() {   // a masked text frame, as browsers send
            let mask: [UInt8] = [1, 2, 3, 4]
            write([0x81, 0x80 | 4] + mask + Array("next".utf8).enumerated().map { $0.element ^ mask[$0.offset % 4] })
        }
        func message() throws -> (state: [String: Any], jpeg: [UInt8]) {
            var payload: [UInt8] = [], fin = false
            while !fin {   // a message may come in several frames
                let h = try read(2)
                fin = h[0] & 0x80 != 0
                var n = Int(h[1] & 0x7f)
                if n == 126 { n = try read(2).reduce(0) { $0 << 8 | Int($1) } } else if n == 127 { n = try read(8).reduce(0) { $0 << 8 | Int($1) } }
                payload += try read(n)
            }
            let n = payload.prefix(4).reduce(0) { $0 << 8 | Int($1) }
            let state = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(payload[4..<(4 + n)])) as? [String: Any])
            return (state, Array(payload[(4 + n)...]))
        }
        next()
        let first = try message()
        XCTAssertEqual(first.state["state"] as? String, "no person")
        XCTAssertEqual(Array(first.jpeg.prefix(2)), [0xFF, 0xD8], "a JPEG follows the state")
        board.handle(.prediction(Prediction(time: 0.8, frame: 23, personID: 1, state: .action(label: "wave", confidence: 0.9),
                                            probabilities: [0.9, 0.1]), fps: 30, dropped: 0))
        next()
        XCTAssertEqual(try message().state["state"] as? String, "wave", "the next update is the newer state")
    }

    /// One raw HTTP request to the page; the status line and the body.
    func request(_ port: Int, _ head: String, body wanted: Bool = false) throws -> (status: String, body: String) {
        let fd = loopbackConnection(port)
        defer { close(fd) }
        let bytes = Array(head.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        // The head only, or (with `Connection: close` sent) everything to the end.
        while wanted || !String(decoding: out, as: UTF8.self).contains("\r\n\r\n") {
            let r = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 4096, 0) }
            guard r > 0 else { break }
            out += chunk[0..<r]
        }
        let text = String(decoding: out, as: UTF8.self)
        let status = String(text.prefix { $0 != "\r" })
        return (status, text.components(separatedBy: "\r\n\r\n").dropFirst().joined())
    }

    static let upgrade = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"

    /// Another web page cannot read the camera: a request with a foreign Origin, or a Host
    /// name that is not loopback (DNS rebinding), gets 403 and the reason; a WebSocket upgrade
    /// from there is refused too (400: the WebSocket library answers every refused upgrade so,
    /// without a body); the page's own origin and scripts without an Origin are answered.
    func testOtherOriginsAreRefused() throws {
        let board = LiveBoard(model: "m")
        board.handle(.frame(picture(width: 64, height: 48), time: 0.1))
        for view in try servedPages(board: board) {
            defer { view.stop() }
            let port = view.port, own = "127.0.0.1:\(port)"
            XCTAssertEqual(view.access.token == nil, view.name == "live page", "\(view.name): a token on loopback is the studio's alone")
            let evil = try request(port, "GET \(view.path("/ws")) HTTP/1.1\r\nHost: \(own)\r\nOrigin: http://evil.example.com\r\n\(Self.upgrade)\r\n")
            XCTAssertTrue(evil.status.hasPrefix("HTTP/1.1 400"), "no upgrade, no frames: \(evil.status)")
            let evilPage = try request(port, "GET \(view.path("/frame.jpg")) HTTP/1.1\r\nHost: \(own)\r\nOrigin: http://evil.example.com\r\nConnection: close\r\n\r\n", body: true)
            XCTAssertTrue(evilPage.status.hasPrefix("HTTP/1.1 403"), evilPage.status)
            XCTAssertTrue(evilPage.body.contains("cross-origin request (from http://evil.example.com) refused"), evilPage.body)
            let evilWebSocket = try request(port, "GET \(view.path("/ws")) HTTP/1.1\r\nHost: \(own)\r\nOrigin: http://evil.example.com\r\nConnection: close\r\n\r\n", body: true)
            XCTAssertTrue(evilWebSocket.status.hasPrefix("HTTP/1.1 403"), evilWebSocket.status)
            let mine = try request(port, "GET \(view.path("/ws")) HTTP/1.1\r\nHost: \(own)\r\nOrigin: http://\(own)\r\n\(Self.upgrade)\r\n")
            XCTAssertTrue(mine.status.hasPrefix("HTTP/1.1 101"), mine.status)
            let rebound = try request(port, "GET \(view.path("/frame.jpg")) HTTP/1.1\r\nHost: evil.example.com:\(port)\r\nOrigin: http://evil.example.com:\(port)\r\n\r\n")
            XCTAssertTrue(rebound.status.hasPrefix("HTTP/1.1 403"), rebound.status)
            let script = try request(port, "GET \(view.path("/state.json")) HTTP/1.1\r\nHost: localhost:\(port)\r\n\r\n")
            XCTAssertTrue(script.status.hasPrefix("HTTP/1.1 200"), script.status)
            // Nor can another page make it act (a form or a fetch that posts from elsewhere).
            let forged = try request(port, "POST \(view.path("/api/stop")) HTTP/1.1\r\nHost: \(own)\r\nOrigin: http://evil.example.com\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}", body: true)
            XCTAssertTrue(forged.status.hasPrefix("HTTP/1.1 403"), "\(view.name): \(forged.status)")
        }
    }

    /// Served beyond loopback, the page needs the token printed with its URL: without it, or
    /// with a wrong one, 403; with it, the page, whose own requests carry it on.
    func testBeyondLoopbackATokenIsNeeded() throws {
        let board = LiveBoard(model: "m")
        board.handle(.frame(picture(width: 64, height: 48), time: 0.1))
        for view in try servedPages(host: "0.0.0.0", board: board) {
            defer { view.stop() }
            let token = try XCTUnwrap(view.access.token)
            XCTAssertEqual(token.count, 64)
            XCTAssertTrue(view.url.hasSuffix("/?token=\(token)"), view.url)
            let host = "Host: 192.0.2.1:\(view.port)\r\n"
            let wrong = token.dropLast() + (token.last == "0" ? "1" : "0")   // one character off
            for path in ["/", "/state.json", "/frame.jpg", "/?token=\(wrong)", "/?token="] {
                let r = try request(view.port, "GET \(path) HTTP/1.1\r\n\(host)\r\n")
                XCTAssertTrue(r.status.hasPrefix("HTTP/1.1 403"), "\(path): \(r.status)")
            }
            let page = try request(view.port, "GET /?token=\(token) HTTP/1.1\r\n\(host)Connection: close\r\n\r\n", body: true)
            XCTAssertTrue(page.status.hasPrefix("HTTP/1.1 200"), page.status)
            XCTAssertTrue(page.body.contains(view.tokenMarker(token)), "\(view.name): the page's requests carry the token")
            let ws = try request(view.port, "GET /ws?token=\(token) HTTP/1.1\r\n\(host)\(Self.upgrade)\r\n")
            XCTAssertTrue(ws.status.hasPrefix("HTTP/1.1 101"), ws.status)
        }
    }

    /// The page as served lints clean, as its template does (Resources/live.*), and carries
    /// the state of the moment as JSON that no label can end ("<" as \u003c).
    func testServedPageLintsClean() throws {
        let board = LiveBoard(model: "m</script>")
        board.handle(.prediction(Prediction(time: 1, frame: 30, personID: 1, state: .action(label: "</script><b>&", confidence: 0.9),
                                            probabilities: [0.9, 0.1]), fps: 30, dropped: 0))
        let view = try BrowserView(board: board, port: 0)
        defer { view.stop() }
        let page = String(decoding: try Data(contentsOf: URL(string: view.url)!), as: UTF8.self)
        XCTAssertTrue(page.contains(#""state":"\u003c/script>\u003cb>&""#), "the state, inline")
        XCTAssertEqual(page.components(separatedBy: "</script>").count - 1, 2, "only the page's own two scripts end")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-live-\(getpid()).html")
        try page.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        XCTAssertEqual(try TestData.pageLintFaults(try TestData.pageResources(of: "LiveView") + [file.path]), "")
    }

    /// A state in the JSON is the one string the page has always read: "starting", the
    /// recognizer's "no person" and "low confidence", or the action's label.
    func testPageStatesAreTheirStrings() throws {
        let states: [(ActionState?, PageState)] = [(nil, .starting), (.noPerson, .noPerson),
                                                   (.lowConfidence(label: "a", confidence: 0.3), .lowConfidence),
                                                   (.action(label: "wave", confidence: 0.9), .action("wave"))]
        for (action, page) in states {
            XCTAssertEqual(PageState(action), page)
            XCTAssertEqual(page.rawValue, action?.name ?? "starting")
            XCTAssertEqual(PageState(rawValue: page.rawValue), page)
            XCTAssertEqual(String(decoding: try JSONEncoder().encode([page]), as: UTF8.self), "[\"\(page.rawValue)\"]")
        }
    }

    func testConstantTimeComparison() {
        XCTAssertTrue(PageAccess.equalInConstantTime(Array("abc".utf8), Array("abc".utf8)))
        XCTAssertFalse(PageAccess.equalInConstantTime(Array("abc".utf8), Array("abd".utf8)))
        XCTAssertFalse(PageAccess.equalInConstantTime(Array("ab".utf8), Array("abc".utf8)))
        XCTAssertFalse(PageAccess.equalInConstantTime([], Array("a".utf8)))
    }
}

/// Nobody can knock the page over (`PageLimits`): idle connections by the thousand, a
/// megabyte URL, a megabyte WebSocket message. All traffic on 127.0.0.1, bounded in count.
final class PageLimitsTests: XCTestCase {
    /// Sends `bytes`; returns how many went before the server closed the connection.
    @discardableResult
    func send(_ fd: Int32, _ bytes: [UInt8]) -> Int {
        var sent = 0
        while sent < bytes.count {
            let r = bytes.withUnsafeBytes { Foundation.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            guard r > 0 else { break }   // the server closed: the rest is not wanted
            sent += r
        }
        return sent
    }

    /// Everything the server sends until it closes the connection or the 5 s receive timeout
    /// passes; `closedByServer` tells which.
    func receiveAll(_ fd: Int32) -> (text: String, closedByServer: Bool) {
        var out: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let r = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 4096, 0) }
            guard r > 0 else { return (String(decoding: out, as: UTF8.self), r == 0 || errno == ECONNRESET) }
            out += chunk[0..<r]
        }
    }

    func receive(_ fd: Int32) -> String { receiveAll(fd).text }

    func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// 2,000 connections that send nothing do not stop a normal request from being answered
    /// (with the default 10 s idle time, a server they blocked would answer only once they
    /// were closed); and a silent or half-sent connection is closed by the server after the
    /// idle time (1 s here): recv sees the end, not its own 5 s timeout.
    func testIdleConnectionsNeitherBlockTheServerNorStay() throws {
        let view = try BrowserView(board: LiveBoard(model: "m"), port: 0)
        defer { view.stop() }
        var idle: [Int32] = []
        defer { idle.forEach { close($0) } }
        for _ in 0..<2000 { idle.append(loopbackConnection(view.port)) }
        XCTAssertEqual(idle.filter { $0 < 0 }.count, 0)
        let start = Date()
        let fd = loopbackConnection(view.port)
        defer { close(fd) }
        send(fd, Array("GET /state.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
        let answer = receive(fd)
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 200"), answer)
        XCTAssertLessThan(Date().timeIntervalSince(start), 5, "answered before the idle ones could be closed (seconds)")

        var limits = PageLimits()
        limits.idleSeconds = 1
        let quick = try BrowserView(board: LiveBoard(model: "m"), port: 0, limits: limits)
        defer { quick.stop() }
        let silent = loopbackConnection(quick.port), half = loopbackConnection(quick.port)
        defer { close(silent); close(half) }
        send(half, Array("GET /state.json HT".utf8))
        for fd in [silent, half] {
            var byte: UInt8 = 0
            XCTAssertEqual(recv(fd, &byte, 1, 0), 0, "closed by the server")
        }
    }

    /// A 1 MB URL is refused after the first 16 kB: the server closes the connection at once,
    /// with next to no work (CPU time of this whole process,
    /// server and the test's own sending: printed, and bounded at 0.2 s, where FlyingFox's
    /// quadratic parser took 75 s for 400 kB; CPU time, not wall time, so a busy machine
    /// does not move it). The server then still answers.
    func testAMegabyteURLIsRefusedAtOnce() throws {
        let board = LiveBoard(model: "m")
        for view in try servedPages(board: board) {
            defer { view.stop() }
            let request = Array("GET /".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
                + Array(" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            let fd = loopbackConnection(view.port)
            defer { close(fd) }
            let cpu0 = cpuSeconds()
            send(fd, request)
            let (answer, closed) = receiveAll(fd)
            let cpu = cpuSeconds() - cpu0
            print("a 1 MB URL: refused with '\(answer.prefix { $0 != "\r" })', \(Int(cpu * 1000)) ms of CPU")
            XCTAssertTrue(answer.hasPrefix("HTTP/1.1 431"), "refused: \(answer.prefix(80))")
            XCTAssertTrue(closed, "the server closed the connection (not left to time out)")
            XCTAssertLessThan(cpu, 0.2, "CPU seconds to refuse a 1 MB URL")
            let long = Array("GET /state.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: ".utf8) + [UInt8](repeating: UInt8(ascii: "b"), count: 100_000) + Array("\r\n\r\n".utf8)
            let fd2 = loopbackConnection(view.port)
            defer { close(fd2) }
            send(fd2, long)
            XCTAssertTrue(receive(fd2).hasPrefix("HTTP/1.1 431"), "a 100 kB header is refused too")
            let fd3 = loopbackConnection(view.port)
            defer { close(fd3) }
            send(fd3, Array("GET \(view.path("/state.json")) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
            XCTAssertTrue(receive(fd3).hasPrefix("HTTP/1.1 200"), "still serving")
        }
    }

    /// A WebSocket message larger than the page ever sends ("next") ends the connection
    /// instead of being buffered.
    func testAMegabyteWebSocketMessageEndsTheConnection() throws {
        let board = LiveBoard(model: "m")
        for view in try servedPages(board: board) {
            defer { view.stop() }
            let fd = loopbackConnection(view.port)
            defer { close(fd) }
            send(fd, Array("GET \(view.path("/ws")) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(BrowserViewTests.upgrade)\r\n".utf8))
            var head: [UInt8] = [], byte: UInt8 = 0
            while !head.suffix(4).elementsEqual([13, 10, 13, 10]), recv(fd, &byte, 1, 0) == 1 { head.append(byte) }
            XCTAssertTrue(String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101"))
            // One masked binary frame of 1 MB (length in 8 bytes), then the server's answer.
            let n = 1 << 20, mask: [UInt8] = [9, 8, 7, 6]
            let frame = [0x82, 0x80 | 127] + (0..<8).reversed().map { UInt8((n >> (8 * $0)) & 0xff) } + mask
                + (0..<n).map { UInt8($0 % 251) ^ mask[$0 % 4] }
            send(fd, frame)
            let t0 = Date()
            var rest: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let r = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 4096, 0) }
                // 0: closed; ECONNRESET: closed with the rest of the frame unread. Not a timeout.
                guard r > 0 else { XCTAssertTrue(r == 0 || errno == ECONNRESET, "closed by the server, not timed out (errno \(errno))"); break }
                rest += chunk[0..<r]
            }
            XCTAssertLessThan(Date().timeIntervalSince(t0), 4)
            // A close frame (0x88) with 1009, message too big, may come first.
            if let first = rest.first { XCTAssertEqual(first, 0x88, "only a close frame: \(rest.prefix(8))") }
        }
    }
}
