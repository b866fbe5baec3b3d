import CFFmpeg
import Foundation
import Images

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
    /// Whether the reader runs in live mode (`LiveCapture`: a background thread keeps only the newest frame).
    public let isLive: Bool
}

public struct ReaderOptions: Sendable {
    /// Resample to this frame rate by timestamp: output frame i has time i/targetFPS and shows the
    /// latest decoded frame with a time ≤ that (duplicates when the source is slower, skips when
    /// faster). In live mode it is a rate cap instead: at most targetFPS frames a second (the
    /// first of each 1/targetFPS slot), each with its own wall-clock time (never duplicated).
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
/// Live mode reads through `LiveCapture`: a background thread decodes continuously and keeps
/// only the newest frame; `next()` waits for a frame newer than the last one it returned. A file
/// read in live mode is paced to its own timestamps, as if it were a camera.
///
/// Not thread-safe: call `next()` and `close()` from one thread at a time.
public final class VideoReader {
    public let info: VideoInfo
    /// Things that went wrong without stopping the reading (damaged data, early end), one line each.
    public var warnings: [String] { core.warnings }
    /// Why a live source ended (a stream that stopped sending, or that was closed), once
    /// `next()` has returned nil; nil for the natural end of a file and for `close()`.
    public private(set) var endReason: String?
    /// Live mode: frames the consumer was too slow for (replaced by a newer one before being read).
    public var droppedFrames: Int { live?.dropped ?? 0 }
    /// Frames left out on purpose by `targetFPS`: decoded but never shown when resampling, or
    /// above the rate cap in live mode.
    public var skippedFrames: Int { live?.skipped ?? resampledAway }
    /// Seconds spent turning decoded frames into RGB images, on the thread that calls `next()`.
    public private(set) var conversionSeconds = 0.0
    /// Live mode: seconds the capture thread spent receiving and decoding frames (for a
    /// file, its decoding; a camera's or a stream's includes the wait for its next frame).
    public var captureSeconds: Double { live?.receiveSeconds ?? 0 }

    private let options: ReaderOptions
    private let core: DecoderCore
    private let converter = RGBConverter()
    private var closed = false
    private var outIndex = 0

    // Resampling by timestamp (files): the latest frame with a time ≤ T, and the one after it.
    private var held: UnsafeMutablePointer<AVFrame>?
    private var hasHeld = false
    private var heldTime = 0.0, heldDuration = 0.0, heldShown = true
    private var heldImage: RGBImage?
    private var lookahead: UnsafeMutablePointer<AVFrame>?
    private var lookaheadTime: Double?
    private var sourceEnded = false
    private var resampledAway = 0

    // Live mode.
    private var live: LiveCapture?
    private var liveFrame: UnsafeMutablePointer<AVFrame>?

    public init(_ input: String, options: ReaderOptions = .init()) throws {
        _ = ffmpegSetUp
        self.options = options
        let kind = InputKind(input)
        let isLive = options.live ?? kind.autoLive
        core = try DecoderCore(input: input, kind: kind, options: options, live: isLive)
        info = core.makeInfo(isLive: isLive)
        if isLive {
            liveFrame = av_frame_alloc()
            live = LiveCapture(core: core, start: monotonicSeconds(), paced: !kind.realTime, rateCap: options.targetFPS)
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
        guard let f = held, let t = core.receive(into: f) else { return nil }
        let image = convert(f)
        av_frame_unref(f)
        defer { outIndex += 1 }
        return Frame(image: image, time: t, index: outIndex)
    }

    /// Live mode: blocks until the input's last frame has been decoded (or the source stopped),
    /// so that a consumer can see what the one-frame mailbox kept. Returns at once otherwise.
    public func waitForEndOfInput() { live?.waitForEndOfInput() }

    /// Ends the reading from another thread (Ctrl-C): a waiting or later `next()` returns nil.
    /// `close()` still frees the reader, from the reading thread.
    public func interrupt() {
        if let live { live.requestStop(interrupting: core.interrupt) } else { core.interrupt.abort() }
    }

    /// Stops any background decoding and frees FFmpeg's state. `next()` returns nil afterwards.
    public func close() {
        if closed { return }
        closed = true
        live?.stop(interrupting: core.interrupt)
        for p in [held, lookahead, liveFrame] {
            var f = p
            if f != nil { av_frame_free(&f) }
        }
        held = nil; lookahead = nil; liveFrame = nil
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
            if lookaheadTime == nil && !sourceEnded {
                lookaheadTime = core.receive(into: lookahead)
                sourceEnded = lookaheadTime == nil
            }
            guard let lt = lookaheadTime else { break }
            // The first frame is always taken, whatever its time; later ones when their time has come.
            guard lt <= T + eps || !hasHeld else { break }
            if hasHeld && !heldShown { resampledAway += 1 }
            av_frame_unref(held)
            av_frame_move_ref(held, lookahead)
            hasHeld = true
            heldTime = lt
            heldDuration = core.duration(of: held)
            heldShown = false
            heldImage = nil
            lookaheadTime = nil
        }
        guard hasHeld else { return nil }
        if sourceEnded && lookaheadTime == nil && T >= heldTime + heldDuration - eps {
            if !heldShown { resampledAway += 1; heldShown = true }
            return nil
        }
        if heldImage == nil { heldImage = convert(held) }
        heldShown = true
        defer { outIndex += 1 }
        return Frame(image: heldImage!, time: T, index: outIndex)
    }

    // MARK: live

    private func nextLive(_ live: LiveCapture) -> Frame? {
        guard let frame = liveFrame else { return nil }
        let (time, reason) = live.take(into: frame)
        guard let time else {
            if endReason == nil, let reason { core.warn(reason); endReason = reason }
            return nil
        }
        let image = convert(frame)
        av_frame_unref(frame)
        defer { outIndex += 1 }
        return Frame(image: image, time: time, index: outIndex, decodedAt: live.start + time)
    }

    private func convert(_ frame: UnsafeMutablePointer<AVFrame>) -> RGBImage {
        let start = monotonicSeconds()
        defer { conversionSeconds += monotonicSeconds() - start }
        return converter.convert(frame, rotation: info.rotation)
    }
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
