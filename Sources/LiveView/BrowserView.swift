import Basics
import Foundation
import Hummingbird
import NIOCore
import PageServing

/// The page or the window could not be shown.
public enum ViewFailure {}
public typealias ViewError = OneLineError<ViewFailure>

/// `live --serve`: a web page with the live video and its overlay, the action and its
/// confidence, the fps and the seconds per action, served by a `PageServer` (access checks
/// and limits are the server's).
///
///   GET /            the page (HTML + a little JavaScript, with the state of the moment)
///   GET /ws          a WebSocket: the page sends "next", the server answers with the first
///                    update newer than the last one it sent (state JSON + JPEG, see
///                    LiveBoard.update).
///   GET /state.json  the state alone, for scripts
///   GET /frame.jpg   the newest picture alone
public final class BrowserView: @unchecked Sendable {
    private let server: PageServer
    /// The page's address, e.g. http://127.0.0.1:8080/
    public var url: String { server.url }
    public var port: Int { server.port }
    public var access: PageAccess { server.access }
    /// The WebSockets being fed (each closed page's feed ends with it).
    public var feeds: FeedCount { server.feeds }

    /// Starts serving at once; throws one clear line when the address cannot be used.
    public init(board: LiveBoard, host: String = "127.0.0.1", port: Int, names: [String] = [], limits: PageLimits = PageLimits()) throws {
        server = try PageServer(host: host, port: port, names: names, limits: limits, feed: board) { router, access in
            router.get("/state.json") { _, _ in
                Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                         body: .init(byteBuffer: ByteBuffer(bytes: board.stateJSON())))
            }
            router.get("/frame.jpg") { _, _ in
                guard let jpeg = board.jpeg() else {
                    return Response(status: .notFound, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "no frame yet\n")))
                }
                return Response(status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(bytes: jpeg)))
            }
            router.get("/") { _, _ in
                // The state of the moment inside, and the picture's address with the token, if any.
                let page = Self.page.filled(["state": .json(board.current), "query": .text(access.query)])
                return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                                body: .init(byteBuffer: ByteBuffer(string: page)))
            }
        }
    }

    /// The page (Resources/live.html, .css, .js): the video with its overlay on the left;
    /// the action, its confidence, everyone's label and repetitions, the rates and the
    /// seconds per action on the right. It arrives with the state of the moment (`{{state}}`)
    /// and the newest frame (/frame.jpg, with `{{query}}`'s token, if any), so it shows them
    /// at once; then every update comes over the WebSocket, and the page asks for the next
    /// one when it has shown the last.
    static let page = PageTemplate(html: PackageResources.live_html, style: PackageResources.live_css,
                                   script: PackageResources.live_js)

    /// Stops the server: new connections are refused at once, open ones get a second to end.
    public func stop() { server.stop() }
}
