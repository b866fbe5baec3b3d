import Basics
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import ServiceLifecycle

/// A page could not be served.
public enum PageFailure {}
public typealias PageError = OneLineError<PageFailure>

/// What a page's WebSocket sends: one update newer than the last one sent, when the page
/// asks ("next"). One update in flight per page, so a slow browser gets fewer updates,
/// never a backlog.
public protocol PageFeed: Sendable {
    /// The next update newer than `seen`, waiting for it without polling; nil once the task
    /// is cancelled (the page's connection closed) or there will be none.
    func nextUpdate(after seen: Int) async -> (sequence: Int, payload: Data)?
    /// Whether the payload is text (JSON) or binary.
    var sendsText: Bool { get }
}

/// A page on a small HTTP server (Hummingbird on SwiftNIO), for one user: the live page and
/// the studio are both served so. The caller gives the routes; the server gives what every
/// page of poseact must have:
/// - every request passes `PageAccess` first (exact Host and Origin, a token beyond
///   loopback): the page is for the person who started it, not for every web page their
///   browser opens, nor for the network;
/// - nobody can knock it over (`PageLimits`): NIO parses a request in one pass and refuses
///   one whose head is too large, a connection that sends nothing for a while is closed, a
///   request must be whole within a deadline, WebSocket messages from the page are a few
///   bytes, and the connections are capped below the descriptors the process may open;
/// - `GET /ws`, when the page has a `PageFeed`: a WebSocket on which the page sends "next"
///   and the server answers with the first update newer than the last one it sent.
public final class PageServer: @unchecked Sendable {
    /// The page's address, e.g. http://127.0.0.1:8080/ (with `?token=` beyond loopback).
    public let url: String
    public let port: Int
    public let access: PageAccess
    /// The WebSockets being fed (each closed page's feed ends with it).
    public let feeds: FeedCount
    private let group: ServiceGroup
    private let task: Task<Void, Never>
    private let loop: MultiThreadedEventLoopGroup

    /// Starts serving at once; throws one clear line when the address cannot be used.
    /// `names`: host names besides the loopback ones under which the page is reached on
    /// loopback (`--serve-name`, e.g. a name in /etc/hosts). `routes` adds the page's own
    /// routes to a router that already checks access.
    /// `tokenOnLoopback`: a page that acts for its user (the studio runs commands and serves
    /// their files) needs the token on loopback too, against the machine's other users.
    public init(host: String = "127.0.0.1", port: Int, names: [String] = [], limits: PageLimits = PageLimits(),
                tokenOnLoopback: Bool = false,
                feed: (any PageFeed)? = nil, routes: (Router<BasicRequestContext>, PageAccess) -> Void) throws {
        guard (0...65535).contains(port) else { throw PageError("--serve \(port): a port is 0 to 65535 (0: any free port)") }
        var probe = in_addr()
        guard inet_pton(AF_INET, host, &probe) == 1 else {
            throw PageError("--serve-host \(host): not an IPv4 address (127.0.0.1 for this machine only, 0.0.0.0 for every network)")
        }
        let access = PageAccess(host: host, names: names, tokenOnLoopback: tokenOnLoopback)
        let feeds = FeedCount()
        self.feeds = feeds
        self.access = access
        let maxConnections = limits.connections(descriptors: PageLimits.raiseDescriptorLimit())

        let router = Router()
        router.middlewares.add(AccessMiddleware(access: access))
        if feed != nil {
            // Reached by a /ws request that is not an upgrade (an upgrade that passes the access
            // check never gets here): one line saying what the path is for.
            router.get("/ws") { _, _ in
                Response(status: .badRequest, headers: [.contentType: "text/plain"],
                         body: .init(byteBuffer: ByteBuffer(string: "/ws is the page's WebSocket: a WebSocket upgrade is expected\n")))
            }
        }
        routes(router, access)

        // One event-loop thread, below the priority of the work the page shows: a flood of
        // requests takes what the work leaves, not the other way round. (On Linux a nice value
        // is per thread, and who = 0 is the calling thread.)
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.loop = loop
        loop.next().execute { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10) }
        var logger = Logger(label: "poseact.page")
        logger.logLevel = .critical
        // The server's start: the port it listens on, or why it could not.
        let (started, starting) = AsyncStream<Result<Int?, Error>>.makeStream()
        let upgrade = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(idleTimeout: .seconds(Int64(limits.idleSeconds)),
                         httpDecoderConfiguration: .init(maxHeaderFieldSize: limits.headBytes, maxHeaderListSize: limits.headBytes,
                                                         maxHeaderFieldCount: 100)),
            // Pings keep a quiet page's connection reading (its pongs) within the idle time.
            ws: .init(maxFrameSize: limits.webSocketFrameBytes, autoPing: .enabled(timePeriod: .seconds(max(1, limits.idleSeconds / 2)))))
        let app = Application(
            router: router,
            server: HTTPServerBuilder { responder in
                GuardedChannel(inner: HTTP1WebSocketUpgradeChannel(responder: responder, configuration: upgrade) { request, _, _ in
                    // Only /ws, only with a feed, and only for whom the page is: a refused upgrade is
                    // answered 400 by the library (a plain request to /ws gets AccessMiddleware's 403 and reason).
                    guard let feed, request.path.map({ $0 == "/ws" || $0.hasPrefix("/ws?") }) == true,
                          access.refusal(host: request.authority, origin: request.headerFields[.origin],
                                         token: PageAccess.token(inPath: request.path)) == nil else { return .dontUpgrade }
                    return .upgrade([:]) { inbound, outbound, _ in
                        try await FeedSocket(feed: feed, feeds: feeds).serve(inbound.messages(maxSize: limits.webSocketMessageBytes), outbound)
                    }
                }, readTimeout: .seconds(Int64(limits.idleSeconds)), headTimeout: .seconds(Int64(limits.headSeconds)))
            },
            configuration: .init(address: .hostname(host, port: port), serverName: nil,
                                 availableConnectionsDelegate: MaximumAvailableConnections(maxConnections, logger: logger)),
            onServerRunning: { channel in starting.yield(.success(channel.localAddress?.port)) },
            eventLoopGroupProvider: .shared(loop),
            logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        self.group = group
        task = Task {
            do { try await group.run() } catch { starting.yield(.failure(error)) }
            starting.finish()
        }
        let start = try blocking { await started.first { _ in true } }
        guard case .success(let boundPort?)? = start else {
            task.cancel()
            loop.shutdownGracefully { _ in }
            let why = if case .failure(let error)? = start { "\(error)" } else { "no answer" }
            throw PageError("--serve \(port): cannot listen on \(host):\(port) (\(why)): is the port in use? Try another, or 0 for any free port")
        }
        self.port = boundPort
        url = "http://\(host == "0.0.0.0" ? "127.0.0.1" : host):\(boundPort)/" + access.query
    }

    /// Stops the server: new connections are refused at once, open ones get a second to end.
    public func stop() {
        let group = group, task = task, loop = loop
        try? blocking {
            await group.triggerGracefulShutdown()
            let deadline = Task { try await Task.sleep(nanoseconds: 1_000_000_000); task.cancel() }
            await task.value
            deadline.cancel()
            try? await loop.shutdownGracefully()
        }
    }
}

/// A page's WebSocket: one update per "next" the page sends. Reading the page's messages
/// and waiting for the feed are two tasks, so that a page that closes while its update is
/// awaited ends both at once, leaving nothing behind.
struct FeedSocket {
    let feed: any PageFeed
    let feeds: FeedCount

    func serve(_ messages: WebSocketInboundMessageStream, _ outbound: WebSocketOutboundWriter) async throws {
        feeds.add(1)
        defer { feeds.add(-1) }
        let (asked, ask) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { ask.finish() }
                for try await message in messages { if case .text = message { ask.yield() } }
            }
            group.addTask {
                var seen = -1
                for await _ in asked {
                    guard let update = await feed.nextUpdate(after: seen) else { return }
                    seen = update.sequence
                    if feed.sendsText {
                        try await outbound.write(.text(String(decoding: update.payload, as: UTF8.self)))
                    } else {
                        try await outbound.writeBinaryMessage(ByteBuffer(bytes: update.payload))
                    }
                }
            }
            // Either ends the connection's feed: the page closed, or writing to it failed.
            defer { group.cancelAll() }
            try await group.next()
        }
    }
}

/// A sequence number that readers can wait on: whoever changes what a page shows calls
/// `changed()`, and each page's feed waits in `wait(after:)` for a number past the last one
/// it sent, without polling.
public final class ChangeSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var number = 0
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter = 0

    public init() {}

    public var sequence: Int { lock.withLock { number } }

    /// A new sequence number: the waiting feeds go on.
    public func changed() {
        let woken: [CheckedContinuation<Void, Never>] = lock.withLock {
            number += 1
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        for waiter in woken { waiter.resume() }
    }

    /// Returns once `sequence` is past `seen`, or the task is cancelled.
    public func wait(after seen: Int) async {
        let id = lock.withLock {
            nextWaiter += 1
            return nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                lock.lock()
                // (Checked under the lock that `onCancel` takes: a cancellation is either seen
                // here or finds the waiter registered.)
                if number > seen || Task.isCancelled { lock.unlock(); waiter.resume(); return }
                waiters[id] = waiter
                lock.unlock()
            }
        } onCancel: {
            lock.lock()
            let waiter = waiters.removeValue(forKey: id)
            lock.unlock()
            waiter?.resume()
        }
    }
}

/// A connection to the page, guarded beyond what the HTTP and WebSocket handlers do: one
/// that sends nothing for `readTimeout` is closed, from its first byte on (Hummingbird's
/// idle timeout starts only once a request head has been parsed, so a connection that
/// never finishes one would stay open for good), and any error (a request head over the
/// limit, a frame too large) closes it at once instead of leaving it to read on. A request's
/// head must also be whole within `headTimeout` of its first byte (`HeadDeadline`): one that
/// trickles in a byte at a time is never idle, and would hold its connection for good.
struct GuardedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value
    let inner: Inner
    let readTimeout: TimeAmount
    let headTimeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers([IdleStateHandler(readTimeout: readTimeout), CloseWhenIdle(),
                                                             HeadDeadline(timeout: headTimeout)])
        }.flatMap {
            inner.setup(channel: channel, logger: logger)
        }.flatMapThrowing { value in
            try channel.pipeline.syncOperations.addHandler(CloseOnError())
            return value
        }
    }

    func handle(value: Value, logger: Logger) async { await inner.handle(value: value, logger: logger) }

    final class CloseWhenIdle: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny
        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read { context.close(promise: nil) }
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Next to the socket, so it sees bytes: the first byte of a request starts the clock,
    /// the end of its head (the blank line) stops it, and a connection whose head is not
    /// whole when it runs out is closed. A body (an upload) is then watched by the idle time
    /// alone, as it may take long; the next request starts the clock again once the answer
    /// is written. After the answer that switches to WebSocket (101) there are no requests
    /// any more: the WebSocket's pings and the idle time watch the connection from there.
    final class HeadDeadline: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundIn = IOData
        let timeout: TimeAmount
        private var deadline: Scheduled<Void>?
        /// Whether the current request's head is whole (the clock stays off until an answer).
        private var headDone = false
        /// The last bytes read, for a blank line split over two reads.
        private var tail: [UInt8] = []

        init(timeout: TimeAmount) { self.timeout = timeout }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if !headDone {
                let bytes = unwrapInboundIn(data)
                if deadline == nil {
                    let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                    deadline = context.eventLoop.scheduleTask(in: timeout) { loopBound.value.close(promise: nil) }
                }
                let seen = tail + bytes.readableBytesView
                if seen.indices.dropLast(3).contains(where: { seen[$0] == 13 && seen[$0 + 1] == 10 && seen[$0 + 2] == 13 && seen[$0 + 3] == 10 }) {
                    headDone = true
                    tail = []
                    deadline?.cancel()
                    deadline = nil
                } else {
                    tail = Array(seen.suffix(3))
                }
            }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            deadline?.cancel()
            deadline = nil
            headDone = false
            tail = []
            if case .byteBuffer(let bytes) = unwrapOutboundIn(data), bytes.readableBytesView.starts(with: "HTTP/1.1 101".utf8) {
                context.write(data, promise: promise)
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                return
            }
            context.write(data, promise: promise)
        }

        func handlerRemoved(context: ChannelHandlerContext) { deadline?.cancel(); deadline = nil }
        func channelInactive(context: ChannelHandlerContext) {
            deadline?.cancel(); deadline = nil
            context.fireChannelInactive()
        }
    }

    final class CloseOnError: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny
        typealias OutboundOut = HTTPServerResponsePart

        func errorCaught(context: ChannelHandlerContext, error: Error) {
            if let parse = error as? HTTPParserError {
                // Only while HTTP is spoken (the request decoder is what fails), so NIO's
                // response encoder is next towards the socket: one status line says why.
                let status: HTTPResponseStatus = parse == .headerOverflow ? .requestHeaderFieldsTooLarge : .badRequest
                let head = HTTPResponseHead(version: .http1_1, status: status, headers: ["Content-Length": "0", "Connection": "close"])
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
            } else if !(error is NIOWebSocketUpgradeError) {
                // (A refused WebSocket upgrade is an error too, answered 400 by the library, then closed.)
                context.close(promise: nil)
            }
            context.fireErrorCaught(error)
        }
    }
}

/// What one client may ask of the page, so that nobody can knock it over.
public struct PageLimits: Sendable {
    /// A request's line and headers, in bytes (NIO's parser refuses longer ones at once).
    public var headBytes = 16 * 1024
    /// A connection that sends nothing for this long is closed (a half-sent request too).
    public var idleSeconds = 10
    /// A request's head (line and headers) must be whole within this long of its first
    /// byte, however slowly its bytes keep coming. (A body is watched by `idleSeconds`.)
    public var headSeconds = 10
    /// A WebSocket frame, and a message from the page ("next" is 4 bytes).
    public var webSocketFrameBytes = 64 * 1024
    public var webSocketMessageBytes = 1024
    /// Connections at once, at most: past it new ones wait in the listen queue.
    public var maxConnections = 4096

    public init() {}

    /// The connections to allow with `descriptors` open files: a quarter of them go to the
    /// video, the models and the rest of the process.
    func connections(descriptors: Int) -> Int { max(16, min(maxConnections, descriptors - max(64, descriptors / 4))) }

    /// Raises the process's open-file limit to its hard limit (a server's usual first step:
    /// the soft limit is often 1,024), and returns the limit in force.
    static func raiseDescriptorLimit() -> Int {
        let resourceNoFile = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resourceNoFile, &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = min(limit.rlim_max, 1 << 20)
            if setrlimit(resourceNoFile, &raised) == 0 { limit = raised }
        }
        return Int(min(limit.rlim_cur, 1 << 20))
    }
}

/// Who may use the page. A request is refused (403) when
/// - it comes from another web page: its `Origin` is not this server's own (browsers send
///   `Origin` with every WebSocket and cross-site request; scripts like curl send none);
/// - on loopback, its `Host` is not a loopback name (an IP literal of 127/8, [::1],
///   localhost) nor one the user declared: a page whose own name resolves to 127.0.0.1 (DNS
///   rebinding, e.g. 127.0.0.1.attacker.example) is same-origin with itself, not with us;
/// - beyond loopback, it lacks the token printed with the URL (`?token=`), compared in
///   constant time.
public struct PageAccess: Sendable {
    /// nil on loopback: only this machine's users can connect.
    public let token: String?
    let loopback: Bool
    /// Declared names (lowercased) accepted as Host on loopback.
    let names: Set<String>

    public init(host: String, names: [String] = [], tokenOnLoopback: Bool = false) {
        loopback = Self.isLoopback(host)
        self.names = Set(names.map { $0.lowercased() })
        var rng = SystemRandomNumberGenerator()
        token = loopback && !tokenOnLoopback ? nil : (0..<4).map { _ in String(format: "%016llx", rng.next() as UInt64) }.joined()
    }

    /// The query that carries the token ("" on loopback), for the URL and the page's requests.
    public var query: String { token.map { "?token=\($0)" } ?? "" }

    /// This machine by any name a resolver cannot be told to give another meaning: an address
    /// that parses as an IPv4 literal in 127/8, ::1, or localhost. (A prefix test would let
    /// in 127.0.0.1.attacker.example.)
    public static func isLoopback(_ name: String) -> Bool {
        if name == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr(), loop6 = in6_addr()
        _ = inet_pton(AF_INET6, "::1", &loop6)
        return inet_pton(AF_INET6, name, &v6) == 1 && withUnsafeBytes(of: &v6, { Array($0) }) == withUnsafeBytes(of: &loop6, { Array($0) })
    }

    /// A name `--serve-name` accepts: a DNS name (letters, digits, hyphens, dots; no port) or
    /// an IP literal.
    public static func isValidName(_ name: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, name, &v4) == 1 || inet_pton(AF_INET6, name, &v6) == 1 { return true }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return name.utf8.count <= 253 && labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                && label.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-") }
        }
    }

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
            guard Self.isLoopback(name) || names.contains(name) else { return "unknown host name \(host)" }
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

    /// The `token` query parameter of a request path, if any (Hummingbird's URI parser).
    public static func token(inPath path: String?) -> String? {
        path.flatMap { URI($0).queryParameters["token"] }.map(String.init)
    }
}

/// Every route behind `PageAccess`: a refused request gets 403 and the reason.
struct AccessMiddleware<Context: RequestContext>: RouterMiddleware {
    let access: PageAccess

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let why = access.refusal(host: request.head.authority, origin: request.headers[.origin],
                                    token: PageAccess.token(inPath: request.head.path)) {
            return Response(status: .forbidden, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "\(why)\n")))
        }
        return try await next(request, context)
    }
}

/// The page's WebSocket feeds under way.
public final class FeedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    public var value: Int { lock.lock(); defer { lock.unlock() }; return count }
    func add(_ n: Int) { lock.lock(); count += n; lock.unlock() }
}

final class Box<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T?
    var value: T? {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}

/// Runs async work from synchronous code (the live loop and the command are plain threads)
/// and waits for it: the one place where a thread blocks on the server.
public func blocking<T>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Box<Result<T, Error>>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { result.value = .success(try await work()) } catch { result.value = .failure(error) }
        done.signal()
    }
    done.wait()
    return try result.value!.get()
}
