import FlyingFox
import FlyingSocks
import Foundation

public struct ViewError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// `live --serve`: a web page with the live video and its overlay, the action and its
/// confidence, the fps and the seconds per action, on a small HTTP server (FlyingFox).
///
///   GET /            the page (HTML + a little JavaScript, with the state of the moment)
///   GET /ws          a WebSocket: the page sends "next", the server answers with the first
///                    update newer than the last one it sent (state JSON + JPEG, see
///                    LiveBoard.update). One update in flight per page, so a slow browser
///                    gets fewer frames, never a backlog.
///   GET /state.json  the state alone, for scripts
///   GET /frame.jpg   the newest picture alone
///
/// Every request passes `PageAccess` first: the camera is for the person who started
/// `live`, not for every web page their browser opens, nor for the network.
public final class BrowserView: @unchecked Sendable {
    /// The page's address, e.g. http://127.0.0.1:8080/
    public let url: String
    public let port: Int
    public let access: PageAccess
    private let server: HTTPServer
    private var task: Task<Void, Never>?

    /// Starts serving at once; throws one clear line when the address cannot be used.
    public init(board: LiveBoard, host: String = "127.0.0.1", port: Int) throws {
        guard (0...65535).contains(port) else { throw ViewError("--serve \(port): a port is 0 to 65535 (0: any free port)") }
        let address: sockaddr_in
        do { address = try .inet(ip4: host, port: UInt16(port)) } catch {
            throw ViewError("--serve-host \(host): not an IPv4 address (127.0.0.1 for this machine only, 0.0.0.0 for every network)")
        }
        let server = HTTPServer(address: address, timeout: 15, logger: .disabled)
        self.server = server
        let access = PageAccess(host: host)
        self.access = access
        try blocking {
            await server.appendRoute("GET /state.json", to: access.gate { _ in
                HTTPResponse(statusCode: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                             body: board.stateJSON())
            })
            await server.appendRoute("GET /frame.jpg", to: access.gate { _ in
                guard let jpeg = board.jpeg() else {
                    return HTTPResponse(statusCode: .notFound, headers: [.contentType: "text/plain"], body: Data("no frame yet\n".utf8))
                }
                return HTTPResponse(statusCode: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-store"], body: jpeg)
            })
            let feed = WebSocketHTTPHandler.webSocket(BoardFeed(board: board))
            await server.appendRoute("GET /ws", to: access.gate { try await feed.handleRequest($0) })
            // Last: "/" matches every path FlyingFox has no other route for.
            await server.appendRoute("GET /", to: access.gate { _ in
                // The state of the moment, inline ("<" escaped: a label cannot end the script).
                let state = String(decoding: board.stateJSON(), as: UTF8.self).replacingOccurrences(of: "<", with: "\\u003c")
                let page = livePage.replacingOccurrences(of: initialState, with: state)
                    .replacingOccurrences(of: "src=\"/frame.jpg\"", with: "src=\"/frame.jpg\(access.query)\"")
                return HTTPResponse(statusCode: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                                    body: Data(page.utf8))
            })
        }
        let failure = Box<Error>()
        let settled = DispatchSemaphore(value: 0)
        task = Task {
            do { try await server.run() } catch { failure.value = error; settled.signal() }
        }
        Task {
            try? await server.waitUntilListening(timeout: 5)
            settled.signal()
        }
        settled.wait()
        let listening = try blocking { await server.listeningAddress }
        guard failure.value == nil, case .ip4(_, let bound)? = listening else {
            task?.cancel()
            let why = failure.value.map { "\($0)" } ?? "no answer"
            throw ViewError("--serve \(port): cannot listen on \(host):\(port) (\(why)): is the port in use? Try another, or 0 for any free port")
        }
        self.port = Int(bound)
        url = "http://\(host == "0.0.0.0" ? "127.0.0.1" : host):\(bound)/" + access.query
    }

    public func stop() {
        let server = server
        try? blocking { await server.stop(timeout: 1) }
        task?.cancel()
    }
}

/// Who may use the page. A request is refused (403) when
/// - it comes from another web page: its `Origin` is not this server's own (browsers send
///   `Origin` with every WebSocket and cross-site request; scripts like curl send none);
/// - on loopback, its `Host` is not a loopback name: a page whose own name resolves to
///   127.0.0.1 (DNS rebinding) is same-origin with itself, but not with 127.0.0.1;
/// - beyond loopback, it lacks the token printed with the URL (`?token=`), compared in
///   constant time.
public struct PageAccess: Sendable {
    /// nil on loopback: only this machine's users can connect.
    public let token: String?
    let loopback: Bool

    public init(host: String) {
        loopback = Self.isLoopback(host)
        var rng = SystemRandomNumberGenerator()
        token = loopback ? nil : (0..<4).map { _ in String(format: "%016llx", rng.next() as UInt64) }.joined()
    }

    /// The query that carries the token ("" on loopback), for the URL and the page's requests.
    public var query: String { token.map { "?token=\($0)" } ?? "" }

    static func isLoopback(_ name: String) -> Bool { name.hasPrefix("127.") || name == "::1" || name == "localhost" }

    /// Why a request is refused, or nil when it may go on.
    public func refusal(host: String?, origin: String?, token given: String?) -> String? {
        guard let host, !host.isEmpty else { return "no Host header" }
        if let origin, origin.lowercased() != "http://" + host.lowercased() {
            return "cross-origin request (from \(origin)) refused"
        }
        if loopback {
            var name = host.lowercased()
            if name.hasPrefix("[") { name = String(name.dropFirst().prefix { $0 != "]" }) }
            else if let colon = name.lastIndex(of: ":") { name = String(name[..<colon]) }
            guard Self.isLoopback(name) else { return "unknown host name \(host)" }
        }
        if let token {
            guard let given, Self.equalInConstantTime(Array(given.utf8), Array(token.utf8)) else { return "missing or wrong token" }
        }
        return nil
    }

    public static func equalInConstantTime(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) { difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0) }
        return difference == 0
    }

    /// `handler` behind the check.
    func gate(_ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) -> ClosureHTTPHandler {
        ClosureHTTPHandler { request in
            if let why = refusal(host: request.headers[.host], origin: request.headers[HTTPHeader("Origin")], token: request.query["token"]) {
                return HTTPResponse(statusCode: .forbidden, headers: [.contentType: "text/plain"], body: Data("\(why)\n".utf8))
            }
            return try await handler(request)
        }
    }
}

/// The page's WebSocket: one update per "next" the page sends.
struct BoardFeed: WSMessageHandler {
    let board: LiveBoard

    func makeMessages(for client: AsyncStream<WSMessage>) async throws -> AsyncStream<WSMessage> {
        let board = board
        return AsyncStream { continuation in
            let task = Task {
                var seen = -1
                for await message in client {
                    guard case .text = message else { continue }
                    // Waits for something new: a frame, a prediction or the end of the input.
                    while !Task.isCancelled {
                        if let update = board.update(after: seen) {
                            seen = update.sequence
                            continuation.yield(.data(update.payload))
                            break
                        }
                        try? await Task.sleep(nanoseconds: 10_000_000)
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

final class Box<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T?
    var value: T? {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}

/// Runs async work from synchronous code (the live loop is a plain thread) and waits for it.
func blocking<T>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Box<Result<T, Error>>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { result.value = .success(try await work()) } catch { result.value = .failure(error) }
        done.signal()
    }
    done.wait()
    return try result.value!.get()
}
