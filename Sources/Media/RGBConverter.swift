import CFFmpeg
import Foundation
import Images

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
