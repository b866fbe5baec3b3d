import CFFmpeg
import Foundation

// Video and image input on FFmpeg: files, V4L2 cameras, network streams and still images,
// decoded to RGB24 frames with presentation times.

/// What an input holds, as far as its container says before decoding.
public struct VideoInfo: Sendable {
    /// Frame size after rotation (a portrait phone video tagged "rotate=90" is taller than wide).
    public let width: Int, height: Int
    /// The stream's average frame rate; 0 if unknown.
    public let fps: Double
    /// Seconds, if the container says.
    public let duration: Double?
    /// Number of frames, if the container says (MP4/MOV do; MKV, streams and cameras don't).
    /// 1 for a still image.
    public let frameCount: Int?
    /// FFmpeg's codec name, e.g. "h264", "png".
    public let codec: String
    /// Degrees clockwise applied to every frame to honour the rotation metadata: 0, 90, 180, 270.
    public let rotation: Int
    /// Whether the reader runs in live mode (a background thread keeps only the newest frame).
    public let isLive: Bool
}

public struct ReaderOptions: Sendable {
    /// Resample to this frame rate by timestamp: output frame i has time i/targetFPS and shows the
    /// latest decoded frame with a time ≤ that (duplicates when the source is slower, drops when
    /// faster). In live mode it is a rate cap instead: at most targetFPS frames a second, each the
    /// newest one, with its own wall-clock time (never duplicated).
    public var targetFPS: Double? = nil
    /// nil: auto — true for cameras (/dev/video*) and network URLs (rtsp, rtp, udp, rtmp, srt, tcp,
    /// http(s)…), false for files and images.
    public var live: Bool? = nil
    /// Seconds to wait for a network source or camera to open and for each read.
    public var timeout: Double = 5
    /// Decoder threads.
    public var threads: Int = 2

    public init(targetFPS: Double? = nil, live: Bool? = nil, timeout: Double = 5, threads: Int = 2) {
        self.targetFPS = targetFPS; self.live = live; self.timeout = timeout; self.threads = threads
    }
}

/// Reads frames from a video file, a still image, a V4L2 camera (`/dev/videoN`) or a network URL
/// (rtsp, rtmp, http(s), udp, rtp, …) and hands them out as RGB24 `Frame`s.
///
/// Times: for files and images, seconds from the stream's time base with the first decoded
/// frame's pts taken as 0 (a stream that starts at 1.5 s still starts at 0 here); for live
/// sources, wall-clock seconds since the reader finished opening, taken when the frame was decoded.
///
/// Live mode: a background thread decodes continuously and keeps only the newest frame; `next()`
/// waits for a frame newer than the last one it returned. A file read in live mode is paced to
/// its own timestamps, as if it were a camera. Frames replaced before being read count in
/// `droppedFrames`.
///
/// Not thread-safe: call `next()` and `close()` from one thread at a time.
public final class VideoReader {
    public let info: VideoInfo
    /// Things that went wrong without stopping the reading (damaged data, early end), one line each.
    public var warnings: [String] { core.warnings }
    /// Why a live source ended (a stream that stopped sending, or that was closed), once
    /// `next()` has returned nil; nil for the natural end of a file and for `close()`.
    public private(set) var endReason: String?
    /// Live mode: frames decoded but replaced by a newer one before being read.
    /// Resampling (targetFPS): decoded frames never shown.
    public var droppedFrames: Int { core.dropped }

    private let input: String
    private let options: ReaderOptions
    private let core: DecoderCore
    private let converter: RGBConverter
    private var closed = false
    private var outIndex = 0

    // Plain reading / resampling state (not live).
    private var held: UnsafeMutablePointer<AVFrame>?      // resampling: latest frame with time ≤ T
    private var heldTime = 0.0, heldDuration = 0.0, heldShown = true
    private var heldImage: RGBImage?
    private var lookahead: UnsafeMutablePointer<AVFrame>?
    private var lookaheadValid = false
    private var sourceEnded = false

    // Live state.
    private var live: LiveSlot?
    private var liveFrame: UnsafeMutablePointer<AVFrame>?
    private var openedAt = 0.0

    public init(_ input: String, options: ReaderOptions = .init()) throws {
        _ = ffmpegSetUp
        self.input = input
        self.options = options
        let kind = InputKind(input)
        let isLive = options.live ?? kind.autoLive
        core = try DecoderCore(input: input, kind: kind, options: options, live: isLive)
        converter = RGBConverter()
        info = core.makeInfo(isLive: isLive)
        if isLive {
            openedAt = monotonicSeconds()
            let slot = LiveSlot()
            live = slot
            liveFrame = av_frame_alloc()
            let paced = !kind.realTime
            let core = self.core
            let start = openedAt
            let thread = Thread { liveDecodeLoop(core: core, slot: slot, start: start, paced: paced) }
            thread.name = "poseact.media.live"
            thread.start()
        } else {
            held = av_frame_alloc()
            lookahead = av_frame_alloc()
        }
    }

    deinit { close() }

    /// The next frame, or nil at the end of the input (or after `close()`).
    public func next() throws -> Frame? {
        if closed { return nil }
        if let live { return nextLive(live) }
        if let fps = options.targetFPS, fps > 0 { return nextResampled(fps) }
        guard let f = held else { return nil }
        guard core.receive(into: f) else { return nil }
        let t = core.time(of: f)
        let image = converter.convert(f, rotation: info.rotation)
        av_frame_unref(f)
        defer { outIndex += 1 }
        return Frame(image: image, time: t, index: outIndex)
    }

    /// Stops any background decoding and frees FFmpeg's state. `next()` returns nil afterwards.
    public func close() {
        if closed { return }
        closed = true
        if let live {
            core.interrupt.abort()
            live.stopAndWait()
        }
        for p in [held, lookahead, liveFrame] {
            var f = p
            if f != nil { av_frame_free(&f) }
        }
        held = nil; lookahead = nil; liveFrame = nil
        live?.freeFrame()
        core.free()
        converter.free()
    }

    // MARK: resampling by timestamp

    private func nextResampled(_ fps: Double) -> Frame? {
        guard let held, let lookahead else { return nil }
        let T = Double(outIndex) / fps
        // Frames count as due within 1 ms of their time: MKV/WebM/FLV round timestamps to ms.
        let eps = 1e-3
        while true {
            if !lookaheadValid && !sourceEnded {
                if core.receive(into: lookahead) { lookaheadValid = true } else { sourceEnded = true }
            }
            guard lookaheadValid else { break }
            let lt = core.time(of: lookahead)
            // The first frame is always taken, whatever its time; later ones when their time has come.
            if lt <= T + eps || !hasHeld {
                if hasHeld && !heldShown { core.addDropped(1) }
                av_frame_unref(held)
                av_frame_move_ref(held, lookahead)
                hasHeld = true
                heldTime = lt
                heldDuration = core.duration(of: held)
                heldShown = false
                heldImage = nil
                lookaheadValid = false
                continue
            }
            break
        }
        guard hasHeld else { return nil }
        if sourceEnded && !lookaheadValid && T >= heldTime + heldDuration - eps {
            if !heldShown { core.addDropped(1); heldShown = true }
            return nil
        }
        if heldImage == nil { heldImage = converter.convert(held, rotation: info.rotation) }
        heldShown = true
        defer { outIndex += 1 }
        return Frame(image: heldImage!, time: T, index: outIndex)
    }
    private var hasHeld = false

    // MARK: live

    private func nextLive(_ slot: LiveSlot) -> Frame? {
        guard let frame = liveFrame else { return nil }
        if let fps = options.targetFPS, fps > 0, outIndex > 0 {
            // Rate cap: not before outIndex/fps seconds after the first frame handed out.
            let due = firstLiveTime + Double(outIndex) / fps
            let now = monotonicSeconds() - openedAt
            if due > now { Thread.sleep(forTimeInterval: due - now) }
        }
        guard let t = slot.take(into: frame) else {
            if !liveEndReported, let msg = slot.endMessage { core.warn(msg); endReason = msg }
            liveEndReported = true
            return nil
        }
        if outIndex == 0 { firstLiveTime = t }
        let image = converter.convert(frame, rotation: info.rotation)
        av_frame_unref(frame)
        defer { outIndex += 1 }
        return Frame(image: image, time: t, index: outIndex)
    }
    private var firstLiveTime = 0.0
    private var liveEndReported = false
}

/// The first frame of an image or video, as RGB.
public func readImage(_ path: String) throws -> RGBImage {
    let reader = try VideoReader(path, options: ReaderOptions(live: false, threads: 1))
    defer { reader.close() }
    guard let frame = try reader.next() else {
        let why = reader.warnings.first.map { " (\($0))" } ?? ""
        throw MediaError("\(path): no picture could be decoded from it\(why)")
    }
    return frame.image
}

// MARK: - Rotation

extension RGBImage {
    /// This image turned clockwise by a multiple of 90 degrees (negative: counter-clockwise).
    public func rotated(clockwise degrees: Int) -> RGBImage {
        let d = ((degrees % 360) + 360) % 360
        precondition(d % 90 == 0, "RGBImage.rotated: \(degrees)° is not a multiple of 90")
        if d == 0 || width == 0 || height == 0 { return self }
        let w = width, h = height
        let nw = d == 180 ? w : h, nh = d == 180 ? h : w
        let count = w * h * 3
        let out = [UInt8](unsafeUninitializedCapacity: count) { dst, n in
            pixels.withUnsafeBufferPointer { srcBuf in
                let src = srcBuf.baseAddress!, o = dst.baseAddress!
                for ny in 0..<nh {
                    let row = o + ny * nw * 3
                    // Source position of (0, ny) and the source step for +1 in nx.
                    let start: Int, step: Int
                    switch d {
                    case 90:  start = ((h - 1) * w + ny) * 3; step = -w * 3         // x = ny, y = h-1-nx
                    case 180: start = ((h - 1 - ny) * w + (w - 1)) * 3; step = -3   // x = w-1-nx, y = h-1-ny
                    default:  start = (w - 1 - ny) * 3; step = w * 3                // x = w-1-ny, y = nx
                    }
                    var s = start
                    for nx in 0..<nw {
                        row[nx * 3] = src[s]; row[nx * 3 + 1] = src[s + 1]; row[nx * 3 + 2] = src[s + 2]
                        s += step
                    }
                }
            }
            n = count
        }
        return RGBImage(width: nw, height: nh, pixels: out)
    }
}

// MARK: - Inputs

enum InputKind {
    case file, camera, network(scheme: String)

    init(_ input: String) {
        if input.hasPrefix("/dev/video") { self = .camera; return }
        if let r = input.range(of: "://") {
            let scheme = input[..<r.lowerBound].lowercased()
            if scheme == "file" { self = .file } else { self = .network(scheme: scheme) }
            return
        }
        self = .file
    }
    var autoLive: Bool { if case .file = self { return false } else { return true } }
    var isFile: Bool { if case .file = self { return true } else { return false } }
    /// Sources that deliver in real time by themselves (no pacing needed in live mode).
    var realTime: Bool {
        switch self {
        case .file: return false
        case .camera: return true
        case .network(let s): return !["http", "https", "ftp", "sftp", "hls"].contains(s)
        }
    }
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// The cameras this machine has, e.g. ["/dev/video0", "/dev/video1"].
/// The V4L2 devices (/dev/videoN), in number order.
public func listCameras() -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []
    return names.filter { $0.hasPrefix("video") }
        .sorted { (Int($0.dropFirst(5)) ?? Int.max, $0) < (Int($1.dropFirst(5)) ?? Int.max, $1) }
        .map { "/dev/" + $0 }
}

private func formatSeconds(_ t: Double) -> String { String(format: "%.2f s", t) }
private func formatTimeout(_ t: Double) -> String {
    t == t.rounded() ? "\(Int(t)) s" : String(format: "%.1f s", t)
}

// MARK: - Interrupt callback (deadline and abort for blocking FFmpeg calls)

final class InterruptState {
    private let lock = NSLock()
    private var deadline = Double.infinity
    private var aborted = false
    private var fired = false

    /// Blocking calls from now on give up after `seconds` (nil: no deadline).
    func arm(_ seconds: Double?) {
        lock.lock(); deadline = seconds.map { monotonicSeconds() + $0 } ?? .infinity; fired = false; lock.unlock()
    }
    func abort() { lock.lock(); aborted = true; lock.unlock() }
    var isAborted: Bool { lock.lock(); defer { lock.unlock() }; return aborted }
    /// Whether the deadline (not an abort) made the last blocking call give up.
    var timedOut: Bool { lock.lock(); defer { lock.unlock() }; return fired }
    func check() -> Int32 {
        lock.lock(); defer { lock.unlock() }
        if aborted { return 1 }
        if deadline.isFinite && monotonicSeconds() > deadline { fired = true; return 1 }
        return 0
    }
}

private let interruptCallback: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { opaque in
    guard let opaque else { return 0 }
    return Unmanaged<InterruptState>.fromOpaque(opaque).takeUnretainedValue().check()
}

// MARK: - Demuxing and decoding

/// The FFmpeg side of a reader: format and codec contexts, packet reading, decoding, timing,
/// warnings. `receive` is called from one thread at a time (the caller's or the live thread).
final class DecoderCore {
    let input: String
    let kind: InputKind
    let interrupt = InterruptState()
    private var fmt: UnsafeMutablePointer<AVFormatContext>?
    private var dec: UnsafeMutablePointer<AVCodecContext>?
    private var pkt: UnsafeMutablePointer<AVPacket>?
    private let stream: UnsafeMutablePointer<AVStream>
    private let streamIndex: Int32
    private let tbNum: Double, tbDen: Double
    private let readTimeout: Double?
    private let options: ReaderOptions
    private let live: Bool

    private var draining = false, ended = false
    private var originPts: Int64?
    private var lastPts: Int64?
    private var lastTime = 0.0
    private var frameDurationGuess: Double
    private var consecutiveErrors = 0
    private var damagedFrames = 0

    private let lock = NSLock()
    private var _warnings: [String] = []
    private var _dropped = 0
    private static let maxWarnings = 50

    init(input: String, kind: InputKind, options: ReaderOptions, live: Bool) throws {
        self.input = input
        self.kind = kind
        self.options = options
        self.live = live
        let timeout = max(0.1, options.timeout)

        // Checks FFmpeg would answer less clearly.
        switch kind {
        case .file:
            let path = input.hasPrefix("file://") ? String(input.dropFirst(7))
                     : input.hasPrefix("file:") ? String(input.dropFirst(5)) : input
            var isDir: ObjCBool = false
            if !FileManager.default.fileExists(atPath: path, isDirectory: &isDir) {
                throw MediaError("no such file: \(input)")
            }
            if isDir.boolValue { throw MediaError("\(input): is a folder, not a video or image file") }
        case .camera:
            if !FileManager.default.fileExists(atPath: input) {
                let cams = listCameras()
                throw MediaError("\(input): no such camera " +
                    (cams.isEmpty ? "(no cameras found)" : "(cameras here: \(cams.joined(separator: ", ")))"))
            }
        case .network: break
        }
        readTimeout = kind.isFile ? nil : timeout

        guard var ctx = avformat_alloc_context() else { throw MediaError("\(input): out of memory") }
        ctx.pointee.interrupt_callback = AVIOInterruptCB(
            callback: interruptCallback, opaque: Unmanaged.passUnretained(interrupt).toOpaque())
        var dict: OpaquePointer? = nil
        var inputFormat: UnsafePointer<AVInputFormat>? = nil
        let micros = String(Int64(timeout * 1_000_000))
        switch kind {
        case .camera:
            inputFormat = av_find_input_format("video4linux2")
            // Non-blocking reads (EAGAIN until a picture is ready), so that the read timeout and
            // close() work even when a camera stops delivering.
            ctx.pointee.flags |= AVFMT_FLAG_NONBLOCK
        case .network(let scheme):
            av_dict_set(&dict, "rw_timeout", micros, 0)
            // "timeout" means socket I/O microseconds for these; for rtmp it would mean "listen".
            if ["rtsp", "rtsps", "http", "https", "udp", "tcp", "rtp", "tls"].contains(scheme) {
                av_dict_set(&dict, "timeout", micros, 0)
            }
        case .file: break
        }
        interrupt.arm(readTimeout)
        var maybeCtx: UnsafeMutablePointer<AVFormatContext>? = ctx
        let r = avformat_open_input(&maybeCtx, input, inputFormat, &dict)
        av_dict_free(&dict)
        if r < 0 {   // avformat_open_input frees the context on failure
            throw DecoderCore.openError(input, kind, r, timedOut: interrupt.timedOut, timeout: timeout)
        }
        ctx = maybeCtx!

        func fail(_ message: String) -> MediaError {
            var c: UnsafeMutablePointer<AVFormatContext>? = ctx
            avformat_close_input(&c)
            return MediaError(message)
        }

        interrupt.arm(readTimeout)
        let si = avformat_find_stream_info(ctx, nil)
        if si < 0 {
            if interrupt.timedOut {
                throw fail("\(input): no picture arrived within \(formatTimeout(timeout)) (check the source, or raise --timeout)")
            }
            throw fail("\(input): cannot read the stream layout (\(ffErrorString(si)))")
        }

        var codec: UnsafePointer<AVCodec>? = nil
        let index = av_find_best_stream(ctx, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0)
        if index < 0 {
            if index == averrorDECODERNOTFOUND {
                throw fail("\(input): this FFmpeg has no decoder for its video")
            }
            throw fail("\(input): has no video stream (audio or data only?)")
        }
        streamIndex = index
        stream = ctx.pointee.streams[Int(index)]!
        for i in 0..<Int(ctx.pointee.nb_streams) where i != Int(index) {
            ctx.pointee.streams[i]!.pointee.discard = AVDISCARD_ALL
        }
        guard let codec else {
            throw fail("\(input): this FFmpeg has no decoder for '\(String(cString: avcodec_get_name(stream.pointee.codecpar.pointee.codec_id)))'")
        }
        let tb = stream.pointee.time_base
        tbNum = tb.den > 0 ? Double(tb.num) : 1; tbDen = tb.den > 0 ? Double(tb.den) : 1e6
        let afr = stream.pointee.avg_frame_rate
        frameDurationGuess = afr.num > 0 && afr.den > 0 ? Double(afr.den) / Double(afr.num) : 0

        guard let dc = avcodec_alloc_context3(codec) else { throw fail("\(input): out of memory") }
        var dcOpt: UnsafeMutablePointer<AVCodecContext>? = dc
        if avcodec_parameters_to_context(dc, stream.pointee.codecpar) < 0 {
            avcodec_free_context(&dcOpt)
            throw fail("\(input): cannot set up the decoder")
        }
        dc.pointee.pkt_timebase = tb
        dc.pointee.thread_count = Int32(max(1, options.threads))
        // Frame threading decodes several frames at once (fastest for files); live sources use
        // slice threading, which adds no frames of delay.
        dc.pointee.thread_type = live && !kind.isFile ? FF_THREAD_SLICE : FF_THREAD_FRAME | FF_THREAD_SLICE
        let o = avcodec_open2(dc, codec, nil)
        if o < 0 {
            avcodec_free_context(&dcOpt)
            throw fail("\(input): cannot open the \(String(cString: codec.pointee.name)) decoder (\(ffErrorString(o)))")
        }
        fmt = ctx
        dec = dc
        pkt = av_packet_alloc()
    }

    static func openError(_ input: String, _ kind: InputKind, _ r: Int32, timedOut: Bool, timeout: Double) -> MediaError {
        let why = ffErrorString(r)
        if timedOut || r == averrorETIMEDOUT {
            switch kind {
            case .camera: return MediaError("\(input): the camera gave no picture within \(formatTimeout(timeout)) (is it in use, or raise --timeout)")
            default: return MediaError("\(input): no answer within \(formatTimeout(timeout)) (check the address, or raise --timeout)")
            }
        }
        switch kind {
        case .camera:
            if r == averrorEACCES { return MediaError("\(input): no permission to use the camera (\(why)): add the user to the 'video' group") }
            return MediaError("\(input): cannot open the camera (\(why))")
        case .network(let scheme):
            if r == averrorPROTOCOLNOTFOUND { return MediaError("\(input): this FFmpeg cannot read \(scheme):// addresses (\(why))") }
            if r == averrorECONNREFUSED { return MediaError("\(input): connection refused (\(why)): is the stream server running, and the port right?") }
            if r == averrorINVALIDDATA { return MediaError("\(input): not a video stream FFmpeg can read (\(why))") }
            return MediaError("\(input): cannot open (\(why))")
        case .file:
            if r == averrorINVALIDDATA || r == averrorDEMUXERNOTFOUND {
                return MediaError("\(input): not a video or image FFmpeg can read (\(why))")
            }
            if r == averrorENOENT { return MediaError("no such file: \(input)") }
            if r == averrorEACCES { return MediaError("\(input): no permission to read it (\(why))") }
            return MediaError("\(input): cannot open (\(why))")
        }
    }

    func makeInfo(isLive: Bool) -> VideoInfo {
        let par = stream.pointee.codecpar.pointee
        var rotation = 0
        var size = 0
        if let side = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 36 {
            let ccw = side.withMemoryRebound(to: Int32.self, capacity: 9) { av_display_rotation_get($0) }
            if ccw.isFinite {
                // av_display_rotation_get gives the counter-clockwise angle the matrix applies;
                // the picture must be turned by its negative ("rotate=90" → 90° clockwise).
                let cw = Int((-ccw / 90).rounded()) * 90
                rotation = ((cw % 360) + 360) % 360
            }
        }
        let w = Int(par.width), h = Int(par.height)
        let afr = stream.pointee.avg_frame_rate
        let still = isStillImage
        // Image demuxers invent 25 fps for a single picture: a still has no frame rate.
        let fps = afr.num > 0 && afr.den > 0 && !still ? Double(afr.num) / Double(afr.den) : 0
        var duration: Double? = nil
        if still {
        } else if stream.pointee.duration != Int64.min && stream.pointee.duration > 0 {
            duration = Double(stream.pointee.duration) * tbNum / tbDen
        } else if let f = fmt, f.pointee.duration != Int64.min && f.pointee.duration > 0 {
            duration = Double(f.pointee.duration) / Double(AV_TIME_BASE)
        }
        var frameCount: Int? = stream.pointee.nb_frames > 0 ? Int(stream.pointee.nb_frames) : nil
        if still { frameCount = 1 }
        let codecName = String(cString: avcodec_get_name(par.codec_id))
        return VideoInfo(width: rotation % 180 == 0 ? w : h, height: rotation % 180 == 0 ? h : w,
                         fps: fps, duration: duration, frameCount: frameCount, codec: codecName,
                         rotation: rotation, isLive: isLive)
    }

    private var isStillImage: Bool {
        guard let f = fmt, let iformat = f.pointee.iformat else { return false }
        let name = String(cString: iformat.pointee.name)
        // A single picture (png_pipe, jpeg_pipe, image2 …), not an image sequence pattern.
        return (name.hasSuffix("_pipe") || name == "image2") && !input.contains("%")
    }

    // MARK: warnings and counters (shared with the live thread)

    func warn(_ message: String) {
        lock.lock(); defer { lock.unlock() }
        if _warnings.count < DecoderCore.maxWarnings { _warnings.append(message) }
        else if _warnings.count == DecoderCore.maxWarnings {
            _warnings.append("\(input): more warnings left out")
        }
    }
    var warnings: [String] { lock.lock(); defer { lock.unlock() }; return _warnings }
    func addDropped(_ n: Int) { lock.lock(); _dropped += n; lock.unlock() }
    var dropped: Int { lock.lock(); defer { lock.unlock() }; return _dropped }

    // MARK: decoding

    /// Why reading stopped before the natural end, for live sources; nil after a clean EOF.
    private(set) var stopReason: String?

    /// Decodes the next frame into `frame` (which must be empty). False at the end of the input.
    func receive(into frame: UnsafeMutablePointer<AVFrame>) -> Bool {
        guard let dec, let fmt, let pkt, !ended else { return false }
        while true {
            let r = avcodec_receive_frame(dec, frame)
            if r == 0 {
                consecutiveErrors = 0
                let pts = frame.pointee.best_effort_timestamp != Int64.min ? frame.pointee.best_effort_timestamp : frame.pointee.pts
                if originPts == nil { originPts = pts != Int64.min ? pts : 0 }
                if pts != Int64.min {
                    lastPts = pts
                    // ticks × num / den: exactly i/30 for frame i of a 30 fps stream (one rounding).
                    lastTime = Double(pts - originPts!) * tbNum / tbDen
                } else {
                    lastTime += frameDurationGuess
                }
                stamp(frame, lastTime)
                if frame.pointee.decode_error_flags != 0 || (frame.pointee.flags & AV_FRAME_FLAG_CORRUPT) != 0 {
                    damagedFrames += 1
                    if damagedFrames <= 3 {
                        warn("\(input): the frame at \(formatSeconds(lastTime)) is damaged (decoding errors): it may show smears or blocks")
                    }
                }
                return true
            }
            if r == averrorEOF { finishReading(); return false }
            if r != averrorEAGAIN {
                consecutiveErrors += 1
                warn("\(input): decoding error at \(formatSeconds(lastTime)) (\(ffErrorString(r))): frames after it may be missing")
                if consecutiveErrors > 100 { finishReading(); return false }
                continue
            }
            if draining { finishReading(); return false }
            // The decoder wants more data.
            if interrupt.isAborted { finishReading(); return false }
            interrupt.arm(readTimeout)
            var rr = av_read_frame(fmt, pkt)
            while rr == averrorEAGAIN {   // non-blocking camera: nothing yet
                if interrupt.check() != 0 { rr = averrorEXIT; break }
                usleep(1000)
                rr = av_read_frame(fmt, pkt)
            }
            if rr < 0 {
                if rr == averrorEOF {
                    // The natural end.
                } else if interrupt.isAborted {
                    // close() asked us to stop.
                } else if interrupt.timedOut || rr == averrorETIMEDOUT || rr == averrorEXIT {
                    // (EXIT without an abort is our deadline too: the demuxer keeps the error of
                    // a read the deadline interrupted and returns it after a re-arm.)
                    stopReason = "\(input): no data for \(formatTimeout(readTimeout ?? 0)) at \(formatSeconds(lastTime)): the stream stopped (check the source, or raise --timeout)"
                } else {
                    consecutiveErrors += 1
                    if consecutiveErrors <= 16 && kind.isFile && rr == averrorINVALIDDATA {
                        warn("\(input): damaged data at \(formatSeconds(lastTime)) (\(ffErrorString(rr))): skipping it")
                        continue
                    }
                    stopReason = kind.isFile
                        ? "\(input): reading stopped at \(formatSeconds(lastTime)) (\(ffErrorString(rr))): the file may be damaged or truncated"
                        : "\(input): the stream stopped at \(formatSeconds(lastTime)) (\(ffErrorString(rr)))"
                    if kind.isFile { warn(stopReason!) }
                }
                draining = true
                _ = avcodec_send_packet(dec, nil)   // flush: the decoder hands out what it holds
                continue
            }
            defer { av_packet_unref(pkt) }
            if pkt.pointee.stream_index != streamIndex { continue }
            let s = avcodec_send_packet(dec, pkt)
            if s < 0 && s != averrorEAGAIN {
                consecutiveErrors += 1
                let t = pkt.pointee.pts != Int64.min ? Double(pkt.pointee.pts - (originPts ?? 0)) * tbNum / tbDen : lastTime
                warn("\(input): decoding error at \(formatSeconds(t)) (\(ffErrorString(s))): frames after it may be missing")
                if consecutiveErrors > 100 { finishReading(); return false }
            }
        }
    }

    private func finishReading() {
        if ended { return }
        ended = true
        // A file that ends well before its stated duration was probably cut short.
        if kind.isFile, stopReason == nil, let d = makeDurationForCheck(), frameDurationGuess > 0,
           lastPts != nil, lastTime + frameDurationGuess * 3 < d {
            warn("\(input): the video ends at \(formatSeconds(lastTime)), before its stated length of \(formatSeconds(d)): the file may be truncated")
        }
    }

    private func makeDurationForCheck() -> Double? {
        if stream.pointee.duration != Int64.min && stream.pointee.duration > 0 {
            return Double(stream.pointee.duration) * tbNum / tbDen
        }
        return nil
    }

    // A frame's time travels with the AVFrame (through av_frame_move_ref and the live slot):
    // `receive` replaces its best_effort_timestamp by the bits of the time in seconds.
    private func stamp(_ frame: UnsafeMutablePointer<AVFrame>, _ t: Double) {
        frame.pointee.best_effort_timestamp = Int64(bitPattern: t.bitPattern)
    }

    /// Seconds from the first frame (files), as set by `receive`.
    func time(of frame: UnsafePointer<AVFrame>) -> Double {
        Double(bitPattern: UInt64(bitPattern: frame.pointee.best_effort_timestamp))
    }
    /// How long a frame is shown: its own duration if the container says, else 1/fps.
    func duration(of frame: UnsafePointer<AVFrame>) -> Double {
        let d = frame.pointee.pkt_duration
        if d > 0 { return Double(d) * tbNum / tbDen }
        return frameDurationGuess
    }

    func free() {
        var d = dec
        if d != nil { avcodec_free_context(&d) }
        dec = nil
        var p = pkt
        if p != nil { av_packet_free(&p) }
        pkt = nil
        var f = fmt
        if f != nil { avformat_close_input(&f) }
        fmt = nil
    }
    deinit { free() }
}

// MARK: - Conversion to RGB24

/// Converts decoded frames to RGB24 with a cached SwsContext. The colour matrix and range come
/// from the frame (BT.709 for a frame tagged so, BT.601 when untagged), as the ffmpeg command
/// line's scale filter does, so frames match PNGs made with `ffmpeg -i x.mp4 -pix_fmt rgb24`.
final class RGBConverter {
    /// SWS_BICUBIC is ffmpeg's default; with no resizing the filter is irrelevant, and these
    /// flags were chosen against ffmpeg-made PNGs (see MediaTests.testFramesMatchFFmpegPNGs).
    static let flags: Int32 = SWS_BICUBIC
    private var sws: OpaquePointer?
    private var scratch: UnsafeMutableRawPointer?
    private var scratchBytes = 0
    private var key: (w: Int32, h: Int32, fmt: Int32, cs: Int32, range: Int32, flags: Int32) = (0, 0, -1, -1, -1, 0)

    func convert(_ frame: UnsafeMutablePointer<AVFrame>, rotation: Int) -> RGBImage {
        let w = Int(frame.pointee.width), h = Int(frame.pointee.height)
        let count = w * h * 3
        let format = frame.pointee.format
        var pixels: [UInt8]
        if format == AV_PIX_FMT_RGB24.rawValue {
            // Already RGB24: copy the rows (exact, and faster than swscale).
            let stride = Int(frame.pointee.linesize.0)
            let src = frame.pointee.data.0!
            pixels = [UInt8](unsafeUninitializedCapacity: count) { buf, n in
                for y in 0..<h { memcpy(buf.baseAddress! + y * w * 3, src + y * stride, w * 3) }
                n = count
            }
        } else {
            prepare(frame)
            // swscale's SIMD YUV→RGB paths write whole blocks of pixels, past the end of a row
            // whose width is not a multiple of the block: into the next row, which with a tight
            // stride is already written. Such widths go through an aligned scratch buffer with
            // spare bytes after each row, then row copies; others are written straight into the array.
            let tight = w % 32 == 0
            let stride = tight ? w * 3 : (w * 3 + 64 + 63) & ~63
            if !tight && scratchBytes < stride * h + 64 {
                scratch?.deallocate()
                scratchBytes = stride * h + 64
                scratch = UnsafeMutableRawPointer.allocate(byteCount: scratchBytes, alignment: 64)
            }
            pixels = [UInt8](unsafeUninitializedCapacity: count + 64) { buf, n in
                let target = tight ? buf.baseAddress! : scratch!.assumingMemoryBound(to: UInt8.self)
                var dst: [UnsafeMutablePointer<UInt8>?] = [target, nil, nil, nil]
                var dstStride: [Int32] = [Int32(stride), 0, 0, 0]
                withUnsafePointer(to: &frame.pointee.data) { dataTuple in
                    dataTuple.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { src in
                        withUnsafePointer(to: &frame.pointee.linesize) { lsTuple in
                            lsTuple.withMemoryRebound(to: Int32.self, capacity: 8) { ls in
                                _ = sws_scale(sws, src, ls, 0, Int32(h), &dst, &dstStride)
                            }
                        }
                    }
                }
                if !tight {
                    for y in 0..<h { memcpy(buf.baseAddress! + y * w * 3, target + y * stride, w * 3) }
                }
                n = count
            }
        }
        let image = RGBImage(width: w, height: h, pixels: pixels)
        return rotation == 0 ? image : image.rotated(clockwise: rotation)
    }

    private func prepare(_ frame: UnsafeMutablePointer<AVFrame>) {
        let f = frame.pointee
        let flags = RGBConverter.flags
        let k = (f.width, f.height, f.format, Int32(f.colorspace.rawValue), Int32(f.color_range.rawValue), flags)
        if sws != nil && k == key { return }
        key = k
        sws = sws_getCachedContext(sws, f.width, f.height, AVPixelFormat(f.format),
                                   f.width, f.height, AV_PIX_FMT_RGB24, flags, nil, nil, nil)
        let pixFmt = AVPixelFormat(f.format)
        let jpegFormats: Set<Int32> = [AV_PIX_FMT_YUVJ420P.rawValue, AV_PIX_FMT_YUVJ422P.rawValue,
                                       AV_PIX_FMT_YUVJ444P.rawValue, AV_PIX_FMT_YUVJ440P.rawValue,
                                       AV_PIX_FMT_YUVJ411P.rawValue]
        let isYUV: Bool = {
            guard let desc = av_pix_fmt_desc_get(pixFmt) else { return false }
            return (desc.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB)) == 0 && desc.pointee.nb_components >= 3
        }()
        guard isYUV else { return }
        let srcFull: Int32 = (f.color_range == AVCOL_RANGE_JPEG || jpegFormats.contains(f.format)) ? 1 : 0
        let cs: Int32
        switch f.colorspace {
        case AVCOL_SPC_BT709: cs = SWS_CS_ITU709
        case AVCOL_SPC_FCC: cs = SWS_CS_FCC
        case AVCOL_SPC_SMPTE240M: cs = SWS_CS_SMPTE240M
        case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: cs = SWS_CS_BT2020
        default: cs = SWS_CS_DEFAULT
        }
        let table = sws_getCoefficients(cs)
        _ = sws_setColorspaceDetails(sws, table, srcFull, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16)
    }

    func free() {
        if sws != nil { sws_freeContext(sws); sws = nil }
        scratch?.deallocate(); scratch = nil; scratchBytes = 0
    }
    deinit { free() }
}

// MARK: - Live decoding

/// The one-frame hand-over between the live thread and `next()`.
final class LiveSlot {
    let cond = NSCondition()
    private var frame: UnsafeMutablePointer<AVFrame>? = av_frame_alloc()
    private var hasFrame = false
    private var time = 0.0
    private var ended = false
    private var stopRequested = false
    private var threadDone = false
    private(set) var endMessage: String?
    var core: DecoderCore?

    /// Live thread: hands over a new frame (moving its reference), replacing an unread one.
    func put(_ f: UnsafeMutablePointer<AVFrame>, time t: Double, core: DecoderCore) {
        cond.lock()
        if let frame {
            if hasFrame { core.addDropped(1); av_frame_unref(frame) }
            av_frame_move_ref(frame, f)
            hasFrame = true
            time = t
            cond.broadcast()
        } else {
            av_frame_unref(f)
        }
        cond.unlock()
    }
    var shouldStop: Bool { cond.lock(); defer { cond.unlock() }; return stopRequested }
    func end(_ message: String?) {
        cond.lock(); ended = true; endMessage = message; cond.broadcast(); cond.unlock()
    }
    func threadFinished() { cond.lock(); threadDone = true; cond.broadcast(); cond.unlock() }

    /// Consumer: waits for an unread frame and moves it into `into`; nil when the source ended.
    func take(into dst: UnsafeMutablePointer<AVFrame>) -> Double? {
        cond.lock(); defer { cond.unlock() }
        while !hasFrame && !ended && !stopRequested { cond.wait() }
        guard hasFrame, let frame else { return nil }
        av_frame_move_ref(dst, frame)
        hasFrame = false
        return time
    }

    func stopAndWait() {
        cond.lock()
        stopRequested = true
        cond.broadcast()
        while !threadDone { cond.wait() }
        cond.unlock()
    }
    func freeFrame() {
        cond.lock()
        if frame != nil { av_frame_free(&frame) }
        hasFrame = false
        cond.unlock()
    }
}

private func liveDecodeLoop(core: DecoderCore, slot: LiveSlot, start: Double, paced: Bool) {
    defer { slot.threadFinished() }
    guard let work = av_frame_alloc() else { slot.end("\(core.input): out of memory"); return }
    defer { var w: UnsafeMutablePointer<AVFrame>? = work; av_frame_free(&w) }
    var paceOrigin: Double? = nil   // wall time minus media time of the first frame
    while !slot.shouldStop {
        guard core.receive(into: work) else {
            let msg: String?
            if slot.shouldStop { msg = nil }
            else if let reason = core.stopReason { msg = core.kind.isFile ? nil : reason }
            else if core.kind.isFile { msg = nil }
            else { msg = "\(core.input): the stream stopped at \(String(format: "%.1f s", monotonicSeconds() - start)) (End of file)" }
            slot.end(msg)
            return
        }
        if paced {
            // A file (or a downloaded video) played as if live: frames at their own pace.
            let media = core.time(of: work)
            let now = monotonicSeconds()
            if paceOrigin == nil { paceOrigin = now - media }
            var wait = paceOrigin! + media - now
            if wait > 2 || wait < -2 { paceOrigin = now - media; wait = 0 }   // a jump in the timestamps
            while wait > 0 && !slot.shouldStop {
                Thread.sleep(forTimeInterval: min(wait, 0.05))
                wait = paceOrigin! + media - monotonicSeconds()
            }
        }
        slot.put(work, time: monotonicSeconds() - start, core: core)   // leaves `work` empty
    }
    slot.end(nil)
}
