import Foundation
import Images
import Live
import LiveView
import PageServing
import Media
import TestData
import XCTest

private func send(_ fd: Int32, _ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { Foundation.send(fd, $0.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
}

/// The status line of the answer to `head`, sent on a new connection.
private func status(_ port: Int, _ head: String) -> String {
    let fd = loopbackConnection(port)
    defer { close(fd) }
    send(fd, head)
    var out: [UInt8] = [], byte: UInt8 = 0
    while !out.suffix(2).elementsEqual([13, 10]), recv(fd, &byte, 1, 0) == 1 { out.append(byte) }
    return String(decoding: out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// CPU seconds of this process so far (user + system).
private func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

private let upgrade = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"

/// The page against clients that mean it harm: a rebinding DNS name, pages that go away
/// while they wait, a client that trickles its request.
final class PageHostileClientTests: XCTestCase {
    /// A name that merely begins like a loopback address (127.0.0.1.attacker.example, which a
    /// rebinding DNS server points at 127.0.0.1) is not this machine: 403 for the frame,
    /// no WebSocket. Real loopback addresses and localhost still are.
    func testRebindingNamesThatLookLikeLoopbackAreRefused() throws {
        let board = LiveBoard(model: "m")
        board.handle(.frame(RGBImage(width: 16, height: 16), time: 0.1))
        for view in try servedPages(board: board) {
            defer { view.stop() }
            let port = view.port
            for name in ["127.0.0.1.attacker.example", "127.attacker.example", "127.0.0.1.nip.io"] {
                let origin = "Origin: http://\(name):\(port)\r\n"
                let frame = status(port, "GET \(view.path("/state.json")) HTTP/1.1\r\nHost: \(name):\(port)\r\n\(origin)\r\n")
                XCTAssertTrue(frame.hasPrefix("HTTP/1.1 403"), "\(view.name), \(name): \(frame)")
                let ws = status(port, "GET \(view.path("/ws")) HTTP/1.1\r\nHost: \(name):\(port)\r\n\(origin)\(upgrade)\r\n")
                XCTAssertFalse(ws.hasPrefix("HTTP/1.1 101"), "\(view.name), \(name): \(ws)")
            }
            for name in ["127.0.0.1", "127.0.0.2", "[::1]", "localhost", "LOCALHOST"] {
                let origin = "Origin: http://\(name):\(port)\r\n"
                let frame = status(port, "GET \(view.path("/state.json")) HTTP/1.1\r\nHost: \(name):\(port)\r\n\(origin)\r\n")
                XCTAssertTrue(frame.hasPrefix("HTTP/1.1 200"), "\(view.name), \(name): \(frame)")
                let ws = status(port, "GET \(view.path("/ws")) HTTP/1.1\r\nHost: \(name):\(port)\r\n\(origin)\(upgrade)\r\n")
                XCTAssertTrue(ws.hasPrefix("HTTP/1.1 101"), "\(view.name), \(name): \(ws)")
            }
        }
    }

    /// The same in a real browser (headless chromium, told that 127.0.0.1.attacker.example is
    /// 127.0.0.1, as a rebinding DNS server would): the page under that name is refused,
    /// under localhost and under a declared name it is the live page.
    func testRebindingInARealBrowser() throws {
        let chromium = try TestData.tool(["chromium", "chromium-browser", "google-chrome"], install: "chromium")
        let view = try BrowserView(board: LiveBoard(model: "m"), port: 0, names: ["pose.lan"])
        defer { view.stop() }
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-rebind-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: profile) }
        func dom(_ name: String) throws -> String {
            try TestData.run(chromium, ["--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile)",
                                        "--host-resolver-rules=MAP 127.0.0.1.attacker.example 127.0.0.1, MAP pose.lan 127.0.0.1",
                                        "--virtual-time-budget=2000", "--dump-dom", "http://\(name):\(view.port)/"]).stdout
        }
        let rebound = try dom("127.0.0.1.attacker.example")
        XCTAssertTrue(rebound.contains("unknown host name"), rebound)
        XCTAssertFalse(rebound.contains("id=\"label\""), rebound)
        for name in ["localhost", "pose.lan"] {
            XCTAssertTrue(try dom(name).contains("id=\"label\""), "\(name): the live page")
        }
    }

    /// `--serve-name`: a name the user declares is accepted, and only that one.
    func testDeclaredNamesAreAccepted() throws {
        let view = try BrowserView(board: LiveBoard(model: "m"), port: 0, names: ["pose.lan"])
        defer { view.stop() }
        let port = view.port
        XCTAssertTrue(status(port, "GET /state.json HTTP/1.1\r\nHost: pose.lan:\(port)\r\nOrigin: http://pose.lan:\(port)\r\n\r\n")
                      .hasPrefix("HTTP/1.1 200"))
        XCTAssertTrue(status(port, "GET /state.json HTTP/1.1\r\nHost: other.lan:\(port)\r\n\r\n").hasPrefix("HTTP/1.1 403"))
        XCTAssertTrue(PageAccess.isValidName("pose.lan"))
        XCTAssertTrue(PageAccess.isValidName("192.168.1.20"))
        XCTAssertFalse(PageAccess.isValidName("pose.lan:8080"))
        XCTAssertFalse(PageAccess.isValidName("http://pose.lan"))
        XCTAssertFalse(PageAccess.isValidName(""))
    }

    /// After the input has ended no update will come: pages that asked for one and then
    /// closed leave nothing waiting behind them. 200 of them; over the next second the whole
    /// process uses under 0.05 s of CPU (a 10 ms poll per closed page used about 1 ms per page
    /// and second, so 0.2 s here), and no feed is left.
    func testClosedPagesLeaveNothingWaiting() throws {
        let board = LiveBoard(model: "m")
        board.handle(.frame(RGBImage(width: 16, height: 16), time: 0.1))
        board.finish(summary: ActionSummary(), message: "the input ended")
        for view in try servedPages(board: board) {
            defer { view.stop() }
            let mask: [UInt8] = [1, 2, 3, 4]
            let next = [0x81, 0x80 | 4] + mask + Array("next".utf8).enumerated().map { $0.element ^ mask[$0.offset % 4] }
            var sockets: [Int32] = []
            for _ in 0..<200 {
                let fd = loopbackConnection(view.port)
                send(fd, "GET \(view.path("/ws")) HTTP/1.1\r\nHost: 127.0.0.1:\(view.port)\r\n\(upgrade)\r\n")
                // The head, then the one update there is (its first bytes suffice).
                var head: [UInt8] = [], byte: UInt8 = 0
                while !head.suffix(4).elementsEqual([13, 10, 13, 10]), recv(fd, &byte, 1, 0) == 1 { head.append(byte) }
                XCTAssertTrue(String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101"))
                _ = next.withUnsafeBytes { Foundation.send(fd, $0.baseAddress, next.count, Int32(MSG_NOSIGNAL)) }
                var first = [UInt8](repeating: 0, count: 2)
                XCTAssertEqual(recv(fd, &first, 2, Int32(MSG_WAITALL)), 2, "the update")
                // Asks for the next one, which will never come, and goes.
                _ = next.withUnsafeBytes { Foundation.send(fd, $0.baseAddress, next.count, Int32(MSG_NOSIGNAL)) }
                sockets.append(fd)
            }
            usleep(200_000)
            for fd in sockets { close(fd) }
            // (A generous 10 s for the server to see 200 closes on a loaded machine.)
            let end = Date().addingTimeInterval(10)
            while view.feeds.value > 0 && Date() < end { usleep(50_000) }
            XCTAssertEqual(view.feeds.value, 0, "feeds left after their pages closed")
            let before = cpuSeconds()
            usleep(1_000_000)
            let used = cpuSeconds() - before
            XCTAssertLessThan(used, 0.05, "CPU seconds in the second after 200 pages closed")
        }
    }

    /// A client that sends its request a byte at a time, never idle long enough to be closed
    /// for idling, is closed when the request is not whole within the head deadline (2 s
    /// here; closed within 2 + 3 s of its first byte), and a normal client is served meanwhile.
    func testTricklingClientIsClosedAtTheHeadDeadline() throws {
        var limits = PageLimits()
        limits.headSeconds = 2
        let view = try BrowserView(board: LiveBoard(model: "m"), port: 0, limits: limits)
        defer { view.stop() }
        let slow = loopbackConnection(view.port)
        defer { close(slow) }
        let request = Array("GET /state.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: \(String(repeating: "a", count: 100))\r\n\r\n".utf8)
        let start = Date()
        var closedAfter: Double?, served = false
        for byte in request {
            var b = byte
            if Foundation.send(slow, &b, 1, Int32(MSG_NOSIGNAL)) != 1 { closedAfter = Date().timeIntervalSince(start); break }
            var peek: UInt8 = 0
            let r = recv(slow, &peek, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
            if r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { closedAfter = Date().timeIntervalSince(start); break }
            if !served && Date().timeIntervalSince(start) > 0.5 {
                served = true
                XCTAssertTrue(status(view.port, "GET /state.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").hasPrefix("HTTP/1.1 200"),
                              "a normal client is served while the slow one trickles")
            }
            if Date().timeIntervalSince(start) > 5 { break }
            usleep(250_000)
        }
        XCTAssertTrue(served)
        let after = try XCTUnwrap(closedAfter, "the trickling connection was still open after 5 s")
        XCTAssertLessThan(after, 5)
    }
}
