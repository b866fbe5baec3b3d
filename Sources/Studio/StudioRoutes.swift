import Basics
import Foundation
import Hummingbird
import Keypoints
import NIOCore
import OutputLines
import PageServing

extension Studio {
    /// The page (Resources/studio.html, .css, .js): five views (Data, Label, Train, Evaluate,
    /// Preview) over the state, which arrives inside the page and then over the WebSocket.
    static let page = PageTemplate(html: PackageResources.studio_html, style: PackageResources.studio_css,
                                   script: PackageResources.studio_js)

    static func text(_ status: HTTPResponse.Status, _ message: String) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: message + "\n")))
    }

    static func json(_ value: some Encodable) -> Response { json(Data(JSONLines.encode(value).utf8)) }

    static func json(_ data: Data) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A page request's one-line refusal (400, the reason as text), or a bug's 500.
    static func answer(_ work: () throws -> Response) -> Response {
        do { return try work() } catch let error as CustomStringConvertible { return text(.badRequest, error.description) } catch {
            return text(.internalServerError, "\(error)")
        }
    }

    /// Every route of the studio: the page and its actions, the project's data, its files.
    func addRoutes(_ router: Router<BasicRequestContext>, access: PageAccess) {
        addPageRoutes(router, access: access)
        addDataRoutes(router)
        addFileRoutes(router)
    }

    /// The page, its state, and the actions it posts.
    private func addPageRoutes(_ router: Router<BasicRequestContext>, access: PageAccess) {
        router.get("/") { [self] _, _ in
            let page = Self.page.filled(["state": .json(state()), "query": .text(access.query)])
            return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                            body: .init(byteBuffer: ByteBuffer(string: page)))
        }
        router.get("/state.json") { [self] _, _ in Self.json(stateJSON()) }
        router.post("/api/:action") { [self] request, context in
            let action = context.parameters.get("action") ?? ""
            guard action != "upload" else { return try await upload(request, context: context) }
            // (Bodies over `bodyBytes` are refused with 413 before they are read whole.)
            let bytes = try await request.body.collect(upTo: Self.bodyBytes)
            return Self.answer {
                let body: Action
                let data = Data(buffer: bytes)
                do { body = data.isEmpty ? Action() : try JSONLines.decode(Action.self, from: data) } catch let error as DecodingError {
                    throw StudioProject.ProjectError(error.oneLine(file: "POST /api/\(action)", expected: "the JSON object the page sends", data: data))
                }
                return Self.json(try perform(action, body))
            }
        }
    }

    /// The project's clips, poses and per-video files, as JSON (labels as CSV).
    private func addDataRoutes(_ router: Router<BasicRequestContext>) {
        router.get("/data/clips") { [self] _, _ in Self.answer { Self.json(try clips()) } }
        router.get("/data/clip") { [self] request, _ in
            Self.answer { Self.json(try clip(request.uri.queryParameters["id"].map(String.init) ?? "")) }
        }
        router.get("/data/poses") { [self] request, _ in
            Self.answer { Self.json(try poses(request.uri.queryParameters["video"].map(String.init))) }
        }
        for (route, folder, ext) in [("/data/proposals", "proposals", "json"), ("/data/preview", "previews", "json"), ("/data/labels", "labels", "csv")] {
            router.get(RouterPath(stringLiteral: route)) { [self] request, _ in
                Self.answer {
                    let video = try knownVideo(request.uri.queryParameters["video"].map(String.init))
                    let file = project.path("\(folder)/\(StudioProject.safeName(video)).\(ext)")
                    guard let data = try StudioProject.smallRegularFile(file, limit: 64 << 20) else { return Self.text(.notFound, "none yet") }
                    if route == "/data/proposals" {
                        // Only the occurrences, read as annotate writes them: the page gets no other shape.
                        return Self.json(try TimelineFile.occurrences(text: String(decoding: data, as: UTF8.self), file: file))
                    }
                    return ext == "json" ? Self.json(data)
                        : Response(status: .ok, headers: [.contentType: "text/csv; charset=utf-8", .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
                }
            }
        }
    }

    struct ClipRow: Encodable { let id: String, label: String, split: String, frames: Int, source: String, start: Double }

    /// The store's clips, one row each.
    func clips() throws -> [ClipRow] {
        let store = try KeypointStore(path: project.path(StudioProject.store))
        return store.entries.map { ClipRow(id: $0.id, label: $0.label, split: $0.split ?? "", frames: $0.frames, source: $0.source, start: $0.start ?? 0) }
    }

    struct ClipBody: Encodable {
        let id: String, label: String, video: String, start: Double, times: [Double], joints: Int, keypoints: [Double], edges: [[Int]]
    }

    /// One clip's keypoints (missing: -1) and skeleton, and its video when the project has it.
    func clip(_ id: String) throws -> ClipBody {
        let store = try KeypointStore(path: project.path(StudioProject.store))
        guard store.contains(id) else { throw StudioProject.ProjectError("\(id): no such clip in keypoints.h5") }
        let clip = try store.read(id)
        let video = URL(fileURLWithPath: clip.source).standardizedFileURL.path
        return ClipBody(id: clip.id, label: clip.label, video: knownVideos().contains(video) ? video : "", start: clip.start ?? 0,
                        times: clip.times, joints: clip.jointNames.count,
                        keypoints: clip.keypoints.map { $0.isFinite ? (Double($0) * 1000).rounded() / 1000 : -1 },
                        edges: Self.edges(clip.jointNames))
    }

    /// The videos, the evaluation reports and the exports, as files.
    private func addFileRoutes(_ router: Router<BasicRequestContext>) {
        router.get("/media") { [self] request, context in
            let path: String
            do { path = try knownVideo(request.uri.queryParameters["path"].map(String.init)) } catch {
                return Self.text(.notFound, "\(error)")
            }
            return Self.serveFile(path, type: "video/" + (URL(fileURLWithPath: path).pathExtension.lowercased() == "webm" ? "webm" : "mp4"),
                                  followLinks: true, request: request)
        }
        router.get("/report/:run/:file") { [self] request, context in
            guard let run = context.parameters.get("run"), StudioProject.isName(run),
                  let file = context.parameters.get("file"), ["index.html", "evaluation-confusion.png"].contains(file) else {
                return Self.text(.notFound, "no such report file")
            }
            let path = project.path("runs/\(run)/report/\(file)")
            return Self.serveFile(path, type: file.hasSuffix(".png") ? "image/png" : "text/html; charset=utf-8", followLinks: false, request: request)
        }
        router.get("/download") { [self] request, context in
            guard let file = request.uri.queryParameters["file"].map(String.init), StudioProject.isName(file),
                  project.entries("exports", folders: false).contains(file) else { return Self.text(.notFound, "no such export") }
            var response = Self.serveFile(project.path("exports/\(file)"), type: "application/octet-stream", followLinks: false, request: request)
            response.headers[.contentDisposition] = "attachment; filename=\"\(file)\""
            return response
        }
    }

    static func edges(_ names: [String]) -> [[Int]] {
        let index = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        return Skeleton.edges.compactMap { a, b in
            guard let i = index[Skeleton.blazePoseNames[a]], let j = index[Skeleton.blazePoseNames[b]] else { return nil }
            return [i, j]
        }
    }

    /// A regular file, whole or the one byte range asked for (a video's seeking), streamed
    /// from the descriptor that was checked. `followLinks`: a dataset's videos may be links
    /// (the path is one the project knows); the studio's own files never are.
    static func serveFile(_ path: String, type: String, followLinks: Bool, request: Request) -> Response {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (followLinks ? 0 : O_NOFOLLOW))
        guard fd >= 0 else { return text(.notFound, "no such file") }
        let file = OpenFile(fd)
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return text(.notFound, "no such file") }
        let size = Int(status.st_size)
        var headers: HTTPFields = [.contentType: type, .acceptRanges: "bytes", .cacheControl: "no-store"]
        guard size > 0 else { return Response(status: .ok, headers: headers) }
        var range = 0...(size - 1), code: HTTPResponse.Status = .ok
        if let asked = request.headers[.range] {
            guard let parsed = byteRange(asked, size: size) else {
                headers[.contentRange] = "bytes */\(size)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            }
            range = parsed
            code = .partialContent
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
        }
        let span = range
        let body = ResponseBody(contentLength: span.count) { writer in
            var offset = span.lowerBound
            while offset <= span.upperBound {
                let count = min(128 << 10, span.upperBound - offset + 1)
                var buffer = ByteBufferAllocator().buffer(capacity: count)
                let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pread(file.fd, $0.baseAddress, count, off_t(offset)) }
                guard read > 0 else { break }   // (the file shrank: the answer ends short)
                offset += read
                try await writer.write(buffer)
            }
            try await writer.finish(nil)
        }
        return Response(status: code, headers: headers, body: body)
    }

    /// A descriptor closed when the last user lets it go (a response body may never be
    /// written: the page went away).
    final class OpenFile: @unchecked Sendable {
        let fd: Int32
        init(_ fd: Int32) { self.fd = fd }
        deinit { close(fd) }
    }

    /// "bytes=a-b", "bytes=a-" or "bytes=-n" (one range), within a file of `size` bytes.
    static func byteRange(_ header: String, size: Int) -> ClosedRange<Int>? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard spec.count == 2 else { return nil }
        if spec[0].isEmpty {
            guard let n = Int(spec[1]), n > 0 else { return nil }
            return max(0, size - n)...(size - 1)
        }
        guard let a = Int(spec[0]), a < size else { return nil }
        let b = spec[1].isEmpty ? size - 1 : Int(spec[1]).map { min($0, size - 1) }
        guard let b, b >= a else { return nil }
        return a...b
    }

    /// A video dropped on the page, streamed into videos/ (a new file, never through a link;
    /// whole or not at all), at most `uploadBytes`.
    func upload(_ request: Request, context: BasicRequestContext) async throws -> Response {
        guard let given = request.uri.queryParameters["name"].map(String.init), StudioProject.isVideo(given) else {
            return Self.text(.badRequest, "upload: give ?name=VIDEO with a video's extension (\(StudioProject.videoExtensions.sorted().joined(separator: ", ")))")
        }
        let name = StudioProject.safeName(given) + "." + URL(fileURLWithPath: given).pathExtension.lowercased()
        if let length = request.headers[.contentLength].flatMap(Int.init), length > uploadBytes {
            return Self.text(.contentTooLarge, "upload: \(length) bytes, more than the \(uploadBytes) a video may have here")
        }
        let file: AtomicFile
        do { file = try AtomicFile(project.path("videos/\(name)")) } catch { return Self.text(.badRequest, "\(error)") }
        var received = 0
        do {
            for try await buffer in request.body {
                received += buffer.readableBytes
                guard received <= uploadBytes else {
                    file.discard()
                    return Self.text(.contentTooLarge, "upload: more than the \(uploadBytes) bytes a video may have here")
                }
                try buffer.withUnsafeReadableBytes { try file.append($0) }
            }
            try file.commit()
        } catch {
            file.discard()
            return Self.text(.badRequest, "upload: \(error)")
        }
        signal.changed()
        struct Uploaded: Encodable { let video: String, bytes: Int }
        return Self.json(Uploaded(video: "videos/\(name)", bytes: received))
    }

    /// The landmarks `pose` found in a video (poses/NAME.jsonl), compact for drawing: per
    /// frame its time and the first person's x, y, visibility per landmark (pixels → 0–1).
    func poses(_ video: String?) throws -> Data {
        let full = try knownVideo(video)
        let file = project.path("poses/\(StudioProject.safeName(full)).jsonl")
        // (About 3.7 kB a frame: 128 MB is 19 minutes at 30 fps, parsed here whole.)
        guard let data = try StudioProject.smallRegularFile(file, limit: 128 << 20) else { return Data("null".utf8) }
        let frames = PoseLines.drawingRows(data)
        let edges = Skeleton.edges.map { [$0.0, $0.1] }
        struct Poses: Encodable { let frames: [[Double]], edges: [[Int]] }
        return Data(JSONLines.encode(Poses(frames: frames, edges: edges)).utf8)
    }
}
