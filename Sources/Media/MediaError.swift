import Basics
import CFFmpeg

/// A media input/output failure, as one line a user can act on: which file, URL or device,
/// what is wrong, and what to do where that is useful, e.g.
/// `"no such file: clips/a.mp4"`,
/// `"clips/notes.mp4: not a video or image FFmpeg can read (Invalid data found when processing input)"`,
/// `"rtsp://10.0.0.9/cam: no answer within 5 s (check the address, or raise --timeout)"`,
/// `"/dev/video3: no such camera (cameras here: /dev/video0)"`.
public enum MediaFailure {}
public typealias MediaError = OneLineError<MediaFailure>

// MARK: - FFmpeg error codes (the C macros don't import into Swift)

/// AVERROR(EAGAIN)
let averrorEAGAIN: Int32 = -11
/// AVERROR_EOF = -MKTAG('E','O','F',' ')
let averrorEOF: Int32 = -0x2046_4F45
/// AVERROR_EXIT = -MKTAG('E','X','I','T'): what an interrupt callback makes blocking calls return.
let averrorEXIT: Int32 = -0x5449_5845
/// AVERROR_INVALIDDATA = -MKTAG('I','N','D','A')
let averrorINVALIDDATA: Int32 = -0x4144_4E49
/// AVERROR_DECODER_NOT_FOUND = -MKTAG(0xF8,'D','E','C')
let averrorDECODERNOTFOUND: Int32 = -0x4345_44F8
/// AVERROR_DEMUXER_NOT_FOUND = -MKTAG(0xF8,'D','E','M')
let averrorDEMUXERNOTFOUND: Int32 = -0x4D45_44F8
/// AVERROR_PROTOCOL_NOT_FOUND = -MKTAG(0xF8,'P','R','O')
let averrorPROTOCOLNOTFOUND: Int32 = -0x4F52_50F8
let averrorENOENT: Int32 = -2
let averrorEACCES: Int32 = -13
let averrorETIMEDOUT: Int32 = -110
let averrorECONNREFUSED: Int32 = -111

/// FFmpeg's own text for an error code, e.g. "Invalid data found when processing input".
func ffErrorString(_ code: Int32) -> String {
    var buf = [CChar](repeating: 0, count: 256)
    if av_strerror(code, &buf, buf.count) < 0 { return "error \(code)" }
    return String(cString: buf)
}

/// One-time FFmpeg set-up: no console chatter (errors reach the user as one-line
/// MediaErrors and reader warnings instead), devices and network protocols registered.
let ffmpegSetUp: Void = {
    av_log_set_level(AV_LOG_QUIET)
    avdevice_register_all()
    _ = avformat_network_init()
}()
