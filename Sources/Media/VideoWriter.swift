import Basics
import CFFmpeg
import Foundation
import Images

// Video and PNG output on FFmpeg, each written as an `AtomicFile`: an interrupted run never
// leaves a half-written file under the real name.

/// Encodes RGB images to a video file. .mp4, .mkv, .mov (and other containers FFmpeg knows by
/// their extension) get H.264 from libx264 (preset veryfast, crf 23, yuv420p, BT.601 limited
/// range) when this FFmpeg has it, MPEG-4 part 2 otherwise. MP4/MOV files are written with the
/// index at the front (faststart), so they play while downloading. An odd width or height is
/// padded to the next even number (4:2:0 needs it) by repeating the last column or row.
/// Dropped without `finish()`, the writer deletes its temporary file.
public final class VideoWriter {
    public let path: String
    public let width: Int, height: Int
    public let fps: Double
    /// The encoder used, e.g. "libx264" or "mpeg4".
    public private(set) var encoderName = ""

    private let file: AtomicFile
    private var fmt: UnsafeMutablePointer<AVFormatContext>?
    private var enc: UnsafeMutablePointer<AVCodecContext>?
    private var stream: UnsafeMutablePointer<AVStream>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var pkt: UnsafeMutablePointer<AVPacket>?
    private var sws: OpaquePointer?
    private let encWidth: Int, encHeight: Int   // even sizes (yuv420p needs them)
    private var nextPts: Int64 = 0
    private var done = false

    /// Refuses, before any work, a name FFmpeg cannot write a video under (`.txt`).
    public static func checkName(_ path: String) throws {
        _ = ffmpegSetUp
        let ext = (path as NSString).pathExtension
        guard let format = av_guess_format(nil, path, nil), format.pointee.video_codec != AV_CODEC_ID_NONE else {
            throw MediaError("\(path): FFmpeg knows no video file type '.\(ext)' (use .mp4, .mkv or .mov)")
        }
    }

    public init(path: String, width: Int, height: Int, fps: Double) throws {
        _ = ffmpegSetUp
        self.path = path; self.width = width; self.height = height; self.fps = fps
        file = try AtomicFile(path)
        guard width > 0, height > 0 else { throw MediaError("\(path): cannot write a \(width)×\(height) video") }
        guard fps > 0, fps.isFinite else { throw MediaError("\(path): cannot write a video at \(fps) fps") }
        encWidth = width + (width & 1); encHeight = height + (height & 1)

        let oformat = try openContainer()
        try openEncoder(for: oformat)
        try startFile(oformat)
        try makeFrame()
    }

    /// The container, chosen from the real name; its bytes go to the temporary file.
    private func openContainer() throws -> UnsafePointer<AVOutputFormat> {
        var ctx: UnsafeMutablePointer<AVFormatContext>? = nil
        if avformat_alloc_output_context2(&ctx, nil, nil, path) < 0 || ctx == nil {
            let ext = (path as NSString).pathExtension
            throw MediaError("\(path): FFmpeg knows no video file type '.\(ext)' (use .mp4, .mkv or .mov)")
        }
        fmt = ctx
        av_free(ctx!.pointee.url)
        ctx!.pointee.url = av_strdup(file.temporaryPath)   // faststart reopens the file by this name
        return ctx!.pointee.oformat!
    }

    /// The encoder: H.264 (libx264) if the container takes it and FFmpeg has it, else
    /// MPEG-4; opened, and its stream added.
    private func openEncoder(for oformat: UnsafePointer<AVOutputFormat>) throws {
        var codec: UnsafePointer<AVCodec>? = nil
        if avformat_query_codec(oformat, AV_CODEC_ID_H264, FF_COMPLIANCE_NORMAL) == 1 {
            codec = avcodec_find_encoder_by_name("libx264")
        }
        if codec == nil, avformat_query_codec(oformat, AV_CODEC_ID_MPEG4, FF_COMPLIANCE_NORMAL) == 1 {
            codec = avcodec_find_encoder(AV_CODEC_ID_MPEG4)
        }
        if codec == nil { codec = avcodec_find_encoder(oformat.pointee.video_codec) }
        guard let codec else {
            cleanUp(removeTemporary: false)
            throw MediaError("\(path): this FFmpeg has no video encoder for the \(String(cString: oformat.pointee.name)) format")
        }
        encoderName = String(cString: codec.pointee.name)
        guard let e = avcodec_alloc_context3(codec) else { cleanUp(removeTemporary: false); throw MediaError("\(path): out of memory") }
        enc = e
        let rate = av_d2q(fps, 65535)
        e.pointee.width = Int32(encWidth)
        e.pointee.height = Int32(encHeight)
        e.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        e.pointee.time_base = av_inv_q(rate)
        e.pointee.framerate = rate
        e.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
        e.pointee.color_range = AVCOL_RANGE_MPEG
        e.pointee.colorspace = AVCOL_SPC_SMPTE170M
        e.pointee.gop_size = Int32(max(1, min(300, (fps * 2).rounded())))
        if encoderName == "libx264" {
            av_opt_set(e.pointee.priv_data, "preset", "veryfast", 0)
            av_opt_set(e.pointee.priv_data, "crf", "23", 0)
        } else {
            e.pointee.flags |= AV_CODEC_FLAG_QSCALE
            e.pointee.global_quality = 118 * 3   // FF_QP2LAMBDA × q3: good quality for MPEG-4
        }
        if (oformat.pointee.flags & AVFMT_GLOBALHEADER) != 0 { e.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        let o = avcodec_open2(e, codec, nil)
        if o < 0 {
            cleanUp(removeTemporary: false)
            throw MediaError("\(path): cannot start the \(encoderName) encoder for \(width)×\(height) at \(fps) fps (\(ffErrorString(o)))")
        }
        guard let st = avformat_new_stream(fmt, nil) else { cleanUp(removeTemporary: false); throw MediaError("\(path): out of memory") }
        stream = st
        avcodec_parameters_from_context(st.pointee.codecpar, e)
        st.pointee.time_base = e.pointee.time_base
        st.pointee.avg_frame_rate = rate
    }

    /// The temporary file opened and the container's header written (MP4 and MOV with
    /// their index at the front).
    private func startFile(_ oformat: UnsafePointer<AVOutputFormat>) throws {
        if (oformat.pointee.flags & AVFMT_NOFILE) == 0 {
            let r = avio_open(&fmt!.pointee.pb, file.temporaryPath, AVIO_FLAG_WRITE)
            if r < 0 {
                cleanUp(removeTemporary: false)
                let dir = (path as NSString).deletingLastPathComponent
                let hint = r == averrorENOENT ? ": does the folder \(dir.isEmpty ? "." : dir) exist?" : ""
                throw MediaError("\(path): cannot write (\(ffErrorString(r)))\(hint)")
            }
        }
        var opts: OpaquePointer? = nil
        let formatName = String(cString: oformat.pointee.name)
        if formatName.contains("mp4") || formatName.contains("mov") { av_dict_set(&opts, "movflags", "+faststart", 0) }
        let h = avformat_write_header(fmt, &opts)
        av_dict_free(&opts)
        if h < 0 {
            cleanUp(removeTemporary: true)
            throw MediaError("\(path): cannot start the file (\(ffErrorString(h)))")
        }
    }

    /// The frame each picture is converted into, the packet, and the RGB → BT.601 limited
    /// range conversion (matching the tags the encoder writes).
    private func makeFrame() throws {
        frame = av_frame_alloc()
        frame!.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        frame!.pointee.width = Int32(encWidth)
        frame!.pointee.height = Int32(encHeight)
        frame!.pointee.color_range = AVCOL_RANGE_MPEG
        frame!.pointee.colorspace = AVCOL_SPC_SMPTE170M
        if av_frame_get_buffer(frame, 0) < 0 { cleanUp(removeTemporary: true); throw MediaError("\(path): out of memory") }
        pkt = av_packet_alloc()
        sws = sws_getContext(Int32(encWidth), Int32(encHeight), AV_PIX_FMT_RGB24,
                             Int32(encWidth), Int32(encHeight), AV_PIX_FMT_YUV420P,
                             SWS_BICUBIC | SWS_ACCURATE_RND, nil, nil, nil)
        let coeffs = sws_getCoefficients(SWS_CS_ITU601)
        _ = sws_setColorspaceDetails(sws, coeffs, 1, coeffs, 0, 0, 1 << 16, 1 << 16)
    }

    deinit {
        if !done { cleanUp(removeTemporary: true) }
    }

    /// Adds one frame; the image must be width × height.
    public func write(_ image: RGBImage) throws {
        guard !done, let enc, let frame else { throw MediaError("\(path): the video is already finished") }
        guard image.width == width, image.height == height else {
            throw MediaError("\(path): frame of \(image.width)×\(image.height) for a \(width)×\(height) video")
        }
        if av_frame_make_writable(frame) < 0 { throw MediaError("\(path): out of memory") }
        let padded = encWidth != width || encHeight != height
        let src: [UInt8] = padded ? padToEven(image) : image.pixels
        src.withUnsafeBufferPointer { buf in
            var srcPlanes: [UnsafePointer<UInt8>?] = [buf.baseAddress, nil, nil, nil]
            var srcStride: [Int32] = [Int32(encWidth * 3), 0, 0, 0]
            withUnsafePointer(to: &frame.pointee.data) { dataTuple in
                dataTuple.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { dst in
                    withUnsafePointer(to: &frame.pointee.linesize) { lsTuple in
                        lsTuple.withMemoryRebound(to: Int32.self, capacity: 8) { ls in
                            _ = sws_scale(sws, &srcPlanes, &srcStride, 0, Int32(encHeight), dst, ls)
                        }
                    }
                }
            }
        }
        frame.pointee.pts = nextPts
        nextPts += 1
        let r = avcodec_send_frame(enc, frame)
        if r < 0 { throw MediaError("\(path): encoding failed (\(ffErrorString(r)))") }
        try drain()
    }

    /// Flushes the encoder, completes the file and gives it its real name.
    public func finish() throws {
        guard !done, let enc, let fmt else { return }
        let r = avcodec_send_frame(enc, nil)
        if r < 0 && r != averrorEOF { cleanUp(removeTemporary: true); throw MediaError("\(path): encoding failed (\(ffErrorString(r)))") }
        do { try drain() } catch { cleanUp(removeTemporary: true); throw error }
        let t = av_write_trailer(fmt)
        if t < 0 { cleanUp(removeTemporary: true); throw MediaError("\(path): cannot complete the file (\(ffErrorString(t)))") }
        cleanUp(removeTemporary: false)
        done = true
        try file.commit()
    }

    private func drain() throws {
        guard let enc, let fmt, let pkt, let stream else { return }
        while true {
            let r = avcodec_receive_packet(enc, pkt)
            if r == averrorEAGAIN || r == averrorEOF { return }
            if r < 0 { throw MediaError("\(path): encoding failed (\(ffErrorString(r)))") }
            av_packet_rescale_ts(pkt, enc.pointee.time_base, stream.pointee.time_base)
            pkt.pointee.stream_index = stream.pointee.index
            let w = av_interleaved_write_frame(fmt, pkt)   // takes the packet's reference
            if w < 0 { throw MediaError("\(path): cannot write (\(ffErrorString(w))): is the disk full?") }
        }
    }

    private func padToEven(_ image: RGBImage) -> [UInt8] {
        let w = width, h = height, W = encWidth, H = encHeight
        var out = [UInt8](repeating: 0, count: W * H * 3)
        image.pixels.withUnsafeBufferPointer { s in
            out.withUnsafeMutableBufferPointer { d in
                for y in 0..<H {
                    let sy = min(y, h - 1)
                    memcpy(d.baseAddress! + y * W * 3, s.baseAddress! + sy * w * 3, w * 3)
                    if W > w {   // repeat the last column
                        let p = d.baseAddress! + y * W * 3 + w * 3
                        p[0] = p[-3]; p[1] = p[-2]; p[2] = p[-1]
                    }
                }
            }
        }
        return out
    }

    private func cleanUp(removeTemporary: Bool) {
        if let fmt, fmt.pointee.pb != nil, (fmt.pointee.oformat.pointee.flags & AVFMT_NOFILE) == 0 {
            avio_closep(&fmt.pointee.pb)
        }
        if fmt != nil { avformat_free_context(fmt); fmt = nil }
        if enc != nil { avcodec_free_context(&enc) }
        if frame != nil { av_frame_free(&frame) }
        if pkt != nil { av_packet_free(&pkt) }
        if sws != nil { sws_freeContext(sws); sws = nil }
        if removeTemporary { file.discard() }
    }
}
