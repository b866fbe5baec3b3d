import CFFmpeg
import Basics
import Foundation

// MARK: Interrupt callback (deadline and abort for blocking FFmpeg calls)

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

// MARK: Demuxing and decoding

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
    private static let maxWarnings = 50

    init(input: String, kind: InputKind, options: ReaderOptions, live: Bool) throws {
        self.input = input
        self.kind = kind
        self.options = options
        self.live = live
        let timeout = max(0.1, options.timeout)
        try Self.checkSource(input, kind: kind, live: live)
        readTimeout = kind.isFile ? nil : timeout
        let ctx = try Self.openFormat(input, kind: kind, timeout: timeout, readTimeout: readTimeout, interrupt: interrupt)
        let (index, stream, codec) = try Self.videoStream(ctx, input)
        streamIndex = index
        self.stream = stream
        let tb = stream.pointee.time_base
        tbNum = tb.den > 0 ? Double(tb.num) : 1; tbDen = tb.den > 0 ? Double(tb.den) : 1e6
        let afr = stream.pointee.avg_frame_rate
        frameDurationGuess = afr.num > 0 && afr.den > 0 ? Double(afr.den) / Double(afr.num) : 0
        // Frame threading decodes several frames at once (fastest for files); live sources use
        // slice threading, which adds no frames of delay.
        dec = try Self.openDecoder(codec, stream: stream, threads: max(1, options.threads),
                                   threading: live && !kind.isFile ? FF_THREAD_SLICE : FF_THREAD_FRAME | FF_THREAD_SLICE, ctx, input)
        fmt = ctx
        pkt = av_packet_alloc()
    }

    /// Checks FFmpeg would answer less clearly: the file exists and is a file (not a FIFO,
    /// except for `live`), the camera exists.
    private static func checkSource(_ input: String, kind: InputKind, live: Bool) throws {
        switch kind {
        case .file:
            let path = input.hasPrefix("file://") ? String(input.dropFirst(7))
                     : input.hasPrefix("file:") ? String(input.dropFirst(5)) : input
            var isDir: ObjCBool = false
            if !FileManager.default.fileExists(atPath: path, isDirectory: &isDir) {
                throw MediaError("no such file: \(input)")
            }
            if isDir.boolValue { throw MediaError("\(input): is a folder, not a video or image file") }
            // A FIFO, a device or a socket is a stream only `live` reads on purpose; anywhere
            // else (a FIFO named clip.mp4 in a dataset folder) FFmpeg would wait for ever.
            if !live {
                do { try InputFile.check(path, what: "video or picture") } catch let error as InputFileError { throw MediaError(error.message) }
            }
        case .camera:
            if !FileManager.default.fileExists(atPath: input) {
                let cams = listCameras()
                throw MediaError("\(input): no such camera " +
                    (cams.isEmpty ? "(no cameras found)" : "(cameras here: \(cams.joined(separator: ", ")))"))
            }
        case .network: break
        }
    }

    /// The input opened and its streams' layout read, each step within the read timeout.
    private static func openFormat(_ input: String, kind: InputKind, timeout: Double, readTimeout: Double?,
                                   interrupt: InterruptState) throws -> UnsafeMutablePointer<AVFormatContext> {
        guard let ctx = avformat_alloc_context() else { throw MediaError("\(input): out of memory") }
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
        var opened: UnsafeMutablePointer<AVFormatContext>? = ctx
        let r = avformat_open_input(&opened, input, inputFormat, &dict)
        av_dict_free(&dict)
        if r < 0 {   // avformat_open_input frees the context on failure
            throw DecoderCore.openError(input, kind, r, timedOut: interrupt.timedOut, timeout: timeout)
        }
        interrupt.arm(readTimeout)
        let si = avformat_find_stream_info(opened!, nil)
        if si < 0 {
            if interrupt.timedOut {
                throw closing(opened!, "\(input): no picture arrived within \(formatTimeout(timeout)) (check the source, or raise --timeout)")
            }
            throw closing(opened!, "\(input): cannot read the stream layout (\(ffErrorString(si)))")
        }
        return opened!
    }

    /// `message`, with the opened input closed (it is not kept when the reader is not made).
    private static func closing(_ ctx: UnsafeMutablePointer<AVFormatContext>, _ message: String) -> MediaError {
        var c: UnsafeMutablePointer<AVFormatContext>? = ctx
        avformat_close_input(&c)
        return MediaError(message)
    }

    /// The best video stream and its decoder; the other streams are discarded.
    private static func videoStream(_ ctx: UnsafeMutablePointer<AVFormatContext>, _ input: String) throws
        -> (Int32, UnsafeMutablePointer<AVStream>, UnsafePointer<AVCodec>) {
        var codec: UnsafePointer<AVCodec>? = nil
        let index = av_find_best_stream(ctx, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0)
        if index < 0 {
            if index == averrorDECODERNOTFOUND {
                throw closing(ctx, "\(input): this FFmpeg has no decoder for its video")
            }
            throw closing(ctx, "\(input): has no video stream (audio or data only?)")
        }
        let stream = ctx.pointee.streams[Int(index)]!
        for i in 0..<Int(ctx.pointee.nb_streams) where i != Int(index) {
            ctx.pointee.streams[i]!.pointee.discard = AVDISCARD_ALL
        }
        guard let codec else {
            throw closing(ctx, "\(input): this FFmpeg has no decoder for '\(String(cString: avcodec_get_name(stream.pointee.codecpar.pointee.codec_id)))'")
        }
        return (index, stream, codec)
    }

    /// The stream's decoder, opened with `threads` threads of `threading`'s kind.
    private static func openDecoder(_ codec: UnsafePointer<AVCodec>, stream: UnsafeMutablePointer<AVStream>, threads: Int, threading: Int32,
                                    _ ctx: UnsafeMutablePointer<AVFormatContext>, _ input: String) throws -> UnsafeMutablePointer<AVCodecContext> {
        guard let dc = avcodec_alloc_context3(codec) else { throw closing(ctx, "\(input): out of memory") }
        var dcOpt: UnsafeMutablePointer<AVCodecContext>? = dc
        if avcodec_parameters_to_context(dc, stream.pointee.codecpar) < 0 {
            avcodec_free_context(&dcOpt)
            throw closing(ctx, "\(input): cannot set up the decoder")
        }
        dc.pointee.pkt_timebase = stream.pointee.time_base
        dc.pointee.thread_count = Int32(threads)
        dc.pointee.thread_type = threading
        let o = avcodec_open2(dc, codec, nil)
        if o < 0 {
            avcodec_free_context(&dcOpt)
            throw closing(ctx, "\(input): cannot open the \(String(cString: codec.pointee.name)) decoder (\(ffErrorString(o)))")
        }
        return dc
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

    // MARK: decoding

    /// Why reading stopped before the natural end, for live sources; nil after a clean EOF.
    private(set) var stopReason: String?

    /// Decodes the next frame into `frame` (which must be empty) and returns its time in seconds
    /// from the first frame; nil at the end of the input.
    func receive(into frame: UnsafeMutablePointer<AVFrame>) -> Double? {
        guard let dec, let fmt, let pkt, !ended else { return nil }
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
                if frame.pointee.decode_error_flags != 0 || (frame.pointee.flags & AV_FRAME_FLAG_CORRUPT) != 0 {
                    damagedFrames += 1
                    if damagedFrames <= 3 {
                        warn("\(input): the frame at \(formatSeconds(lastTime)) is damaged (decoding errors): it may show smears or blocks")
                    }
                }
                return lastTime
            }
            if r == averrorEOF { finishReading(); return nil }
            if r != averrorEAGAIN {
                consecutiveErrors += 1
                warn("\(input): decoding error at \(formatSeconds(lastTime)) (\(ffErrorString(r))): frames after it may be missing")
                if consecutiveErrors > 100 { finishReading(); return nil }
                continue
            }
            if draining { finishReading(); return nil }
            // The decoder wants more data.
            if interrupt.isAborted { finishReading(); return nil }
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
                if consecutiveErrors > 100 { finishReading(); return nil }
            }
        }
    }

    private func finishReading() {
        if ended { return }
        ended = true
        // A file that ends well before its stated duration was probably cut short (unless
        // close() or Ctrl-C stopped the reading there).
        if kind.isFile, stopReason == nil, !interrupt.isAborted, let d = makeDurationForCheck(), frameDurationGuess > 0,
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
