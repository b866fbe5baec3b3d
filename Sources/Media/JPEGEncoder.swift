import CFFmpeg
import Foundation
import Images

/// Encodes RGB images to JPEG bytes with FFmpeg's mjpeg encoder (4:2:0, full range, as
/// browsers expect), for the live page. The encoder and its scaler are kept between
/// calls and made again only when the picture size changes; one encoder per thread.
public final class JPEGEncoder {
    /// 2 (best) … 31 (smallest); 5 keeps thin wireframe lines and text sharp at ~1/10 of the RGB size.
    public let quality: Int32
    private var enc: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var pkt: UnsafeMutablePointer<AVPacket>?
    private var sws: OpaquePointer?
    private var size = (width: 0, height: 0)

    public init(quality: Int = 5) {
        _ = ffmpegSetUp
        self.quality = Int32(min(31, max(2, quality)))
    }

    deinit { release() }

    public func encode(_ image: RGBImage) throws -> Data {
        guard image.width > 0, image.height > 0 else { throw MediaError("cannot encode an empty image as JPEG") }
        if size != (image.width, image.height) { try prepare(width: image.width, height: image.height) }
        guard let enc, let frame, let pkt else { throw MediaError("JPEG encoder not ready") }
        if av_frame_make_writable(frame) < 0 { throw MediaError("JPEG encoding: out of memory") }
        image.pixels.withUnsafeBufferPointer { buf in
            var srcPlanes: [UnsafePointer<UInt8>?] = [buf.baseAddress, nil, nil, nil]
            var srcStride: [Int32] = [Int32(image.width * 3), 0, 0, 0]
            withUnsafePointer(to: &frame.pointee.data) { dataTuple in
                dataTuple.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { dst in
                    withUnsafePointer(to: &frame.pointee.linesize) { lsTuple in
                        lsTuple.withMemoryRebound(to: Int32.self, capacity: 8) { ls in
                            _ = sws_scale(sws, &srcPlanes, &srcStride, 0, Int32(image.height), dst, ls)
                        }
                    }
                }
            }
        }
        frame.pointee.quality = enc.pointee.global_quality
        let s = avcodec_send_frame(enc, frame)
        if s < 0 { throw MediaError("JPEG encoding failed (\(ffErrorString(s)))") }
        let r = avcodec_receive_packet(enc, pkt)
        if r < 0 { throw MediaError("JPEG encoding failed (\(ffErrorString(r)))") }
        defer { av_packet_unref(pkt) }
        return Data(bytes: pkt.pointee.data, count: Int(pkt.pointee.size))
    }

    private func prepare(width: Int, height: Int) throws {
        release()
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG) else { throw MediaError("this FFmpeg has no JPEG (mjpeg) encoder") }
        guard let e = avcodec_alloc_context3(codec) else { throw MediaError("JPEG encoding: out of memory") }
        enc = e
        e.pointee.width = Int32(width)
        e.pointee.height = Int32(height)
        e.pointee.pix_fmt = AV_PIX_FMT_YUVJ420P
        e.pointee.color_range = AVCOL_RANGE_JPEG
        e.pointee.time_base = AVRational(num: 1, den: 30)
        e.pointee.flags |= AV_CODEC_FLAG_QSCALE
        e.pointee.global_quality = 118 * quality   // FF_QP2LAMBDA × q
        let o = avcodec_open2(e, codec, nil)
        if o < 0 { release(); throw MediaError("cannot start the JPEG encoder for \(width)×\(height) (\(ffErrorString(o)))") }
        frame = av_frame_alloc()
        pkt = av_packet_alloc()
        guard let f = frame, pkt != nil else { release(); throw MediaError("JPEG encoding: out of memory") }
        f.pointee.format = AV_PIX_FMT_YUVJ420P.rawValue
        f.pointee.width = Int32(width)
        f.pointee.height = Int32(height)
        if av_frame_get_buffer(f, 0) < 0 { release(); throw MediaError("JPEG encoding: out of memory") }
        sws = sws_getContext(Int32(width), Int32(height), AV_PIX_FMT_RGB24, Int32(width), Int32(height), AV_PIX_FMT_YUVJ420P,
                             SWS_BILINEAR, nil, nil, nil)
        guard sws != nil else { release(); throw MediaError("JPEG encoding: no RGB to YUV converter") }
        size = (width, height)
    }

    private func release() {
        if enc != nil { avcodec_free_context(&enc) }
        if frame != nil { av_frame_free(&frame) }
        if pkt != nil { av_packet_free(&pkt) }
        if sws != nil { sws_freeContext(sws); sws = nil }
        size = (0, 0)
    }
}
