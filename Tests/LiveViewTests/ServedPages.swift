import Foundation
import Images
import Live
import LiveView
import PageServing
import Studio

/// A page poseact serves, as the page tests reach it: the live page (`live --serve`) and
/// the studio (`poseact studio`) are served by the same `PageServer`, and the tests of
/// Host, Origin, token and limits run against each.
struct ServedPage {
    let name: String
    let port: Int
    let access: PageAccess
    let url: String
    let feeds: FeedCount
    /// How the page's own markup carries the token to its requests.
    let tokenMarker: (String) -> String
    let stop: () -> Void

    /// `path` with the page's token, if it has one (the studio has one on loopback too).
    func path(_ path: String) -> String {
        guard let token = access.token else { return path }
        return path + (path.contains("?") ? "&" : "?") + "token=" + token
    }
}

/// Both pages, started with the same settings: the live page over `board` (one with a frame,
/// when none is given), the studio over a new, empty project folder.
func servedPages(host: String = "127.0.0.1", names: [String] = [], limits: PageLimits = PageLimits(),
                 board: LiveBoard? = nil) throws -> [ServedPage] {
    let board = board ?? {
        let b = LiveBoard(model: "m")
        b.handle(.frame(RGBImage(width: 16, height: 16), time: 0.1))
        return b
    }()
    let live = try BrowserView(board: board, host: host, port: 0, names: names, limits: limits)
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-studio-\(UUID().uuidString)").path
    let studio = try Studio(project: StudioProject(folder: folder), executable: "/bin/false", recipes: nil,
                            host: host, port: 0, names: names, limits: limits)
    return [
        ServedPage(name: "live page", port: live.port, access: live.access, url: live.url, feeds: live.feeds,
                   tokenMarker: { "src=\"/frame.jpg?token=\($0)\"" }, stop: live.stop),
        ServedPage(name: "studio", port: studio.port, access: studio.access, url: studio.url, feeds: studio.feeds,
                   tokenMarker: { "\"?token=\($0)\"" }, stop: { studio.stop(); try? FileManager.default.removeItem(atPath: folder) }),
    ]
}
