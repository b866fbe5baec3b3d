import ArgumentParser
import Basics
import Foundation
import Images
import Keypoints
import Media
import Pose

/// Still images are posed one by one; anything else is a video (tracking mode).
func isStillImage(_ path: String) -> Bool {
    ["png", "jpg", "jpeg", "bmp", "webp", "tif", "tiff", "ppm", "pgm"].contains((path as NSString).pathExtension.lowercased())
}

struct PoseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pose",
        abstract: "Find people and their 33 body landmarks in images, videos, cameras or streams.",
        discussion: """
            Prints JSON Lines to stdout, one object per frame: {"input", "frame", "time", "width", \
            "height", "persons": [{"id", "box": [x, y, width, height], "prominent", "presence", \
            "landmarks": [{"name", "x", "y", "z", "visibility", "presence"} × 33]}]}. x, y are \
            pixels from the top-left corner; z is depth on the same scale (smaller is nearer); \
            visibility and presence are 0–1. Landmark names are BlazePose's (nose, left_eye_inner, …, \
            right_foot_index).

            INPUT is an image (png, jpg, …), a video file FFmpeg reads, a camera (/dev/video0) or a \
            stream URL (rtsp://, http://, udp://). Videos are tracked from frame to frame: the \
            detector runs only to find people, the landmark model follows them, and ids stay \
            stable; a hard cut (an edited video, a montage) starts the tracking afresh.
            """)

    @Argument(help: "Images, videos, cameras or stream URLs.") var inputs: [String]
    @OptionGroup var pose: PosePipelineOptions
    @Flag(help: "Smooth landmarks over time (One-Euro filter, MediaPipe's settings).") var smooth = false
    @Option(parsing: .unconditional, help: "Resample videos to this frame rate (drop or repeat frames by timestamp).") var fps: Double?
    @Option(help: "Also write the frames with wireframes: a .png for one image, a video (.mp4) for one video.")
    var overlay: String?
    @Option(parsing: .unconditional, help: "Seconds to wait for a stream or camera to answer.") var timeout: Double = 5

    func validate() throws {
        guard !inputs.isEmpty else { throw ValidationError("give an image, a video, a camera or a stream URL") }
        if overlay != nil && inputs.count != 1 { throw ValidationError("--overlay takes one input") }
        if let fps { try validateFPS(fps) }
        guard timeout > 0, timeout.isFinite else { throw ValidationError("--timeout must be a positive number of seconds (got \(timeout))") }
        if let overlay { try OutputPaths.check(overlay, flag: "--overlay", inputs: inputs.map { ("an input", $0) } + pose.inference.models.inputs) }
    }

    func run() throws {
        let pipeline = try pose.pipeline(smoothing: smooth)
        var out = StandardOutput()
        var frames = 0, withPerson = 0
        let start = Date()
        for input in inputs {
            if isStillImage(input) {
                var image = try readImage(input)
                let persons = pipeline.process(image: image)
                out.write(PoseJSON.frame(input: input, index: 0, time: 0, width: image.width, height: image.height, persons: persons))
                frames += 1; if !persons.isEmpty { withPerson += 1 }
                if let overlay {
                    image.drawWireframe(persons)
                    try writePNG(image, to: overlay)
                }
                continue
            }
            pipeline.reset()
            let reader = try VideoReader(input, options: ReaderOptions(targetFPS: fps, timeout: timeout))
            var writer: VideoWriter?
            if let overlay {
                writer = try VideoWriter(path: overlay, width: reader.info.width, height: reader.info.height,
                                         fps: fps ?? (reader.info.fps > 0 ? reader.info.fps : 30))
            }
            while let frame = try reader.next() {
                let persons = pipeline.process(frame: frame)
                out.write(PoseJSON.frame(input: input, index: frame.index, time: frame.time, width: frame.image.width,
                                         height: frame.image.height, persons: persons))
                frames += 1; if !persons.isEmpty { withPerson += 1 }
                if let writer {
                    var image = frame.image
                    image.drawWireframe(persons)
                    try writer.write(image)
                }
            }
            try writer?.finish()
            for warning in reader.warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
        }
        out.flush()
        let seconds = Date().timeIntervalSince(start)
        FileHandle.standardError.write(Data(String(format: "%d frames, a person in %d (%.1f%%), %.1f frames/s\n",
                                                   frames, withPerson, frames > 0 ? 100 * Double(withPerson) / Double(frames) : 0,
                                                   Double(frames) / max(seconds, 1e-9)).utf8))
    }
}

/// Buffered stdout (a print per frame would flush per line when piped).
struct StandardOutput {
    private var buffer = [UInt8]()
    mutating func write(_ line: String) {
        buffer.append(contentsOf: line.utf8); buffer.append(10)
        if buffer.count > 1 << 16 { flush() }
    }
    mutating func flush() {
        buffer.withUnsafeBytes { raw in var offset = 0
            while offset < raw.count { let n = Foundation.write(1, raw.baseAddress! + offset, raw.count - offset); if n <= 0 { break }; offset += n }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// The JSON of one frame, written by hand (~40 numbers a person, 60 times a second), with
/// each number rounded to what it means; only the strings go through JSONLines.
enum PoseJSON {
    static func number(_ x: Float, _ digits: Int) -> String {
        guard x.isFinite else { return "null" }
        let scale = Float([1, 10, 100, 1000, 10000][digits])
        let v = (x * scale).rounded() / scale
        return v == v.rounded() ? String(Int(v)) : String(v)
    }

    static func frame(input: String, index: Int, time: Double, width: Int, height: Int, persons: [Person]) -> String {
        var s = "{\"input\": \(JSONLines.encode(input)), \"frame\": \(index), \"time\": \(number(Float(time), 4)), \"width\": \(width), \"height\": \(height), \"persons\": ["
        for (i, p) in persons.enumerated() {
            if i > 0 { s += ", " }
            s += "{\"id\": \(p.id), \"box\": [\(number(p.box.x, 1)), \(number(p.box.y, 1)), \(number(p.box.width, 1)), \(number(p.box.height, 1))], "
            s += "\"prominent\": \(p.isProminent), \"presence\": \(number(p.presence, 4)), \"landmarks\": ["
            for (j, l) in p.landmarks.enumerated() {
                if j > 0 { s += ", " }
                s += "{\"name\": \"\(Skeleton.blazePoseNames[j])\", \"x\": \(number(l.x, 2)), \"y\": \(number(l.y, 2)), \"z\": \(number(l.z, 2)), "
                s += "\"visibility\": \(number(l.visibility, 4)), \"presence\": \(number(l.presence, 4))}"
            }
            s += "]}"
        }
        return s + "]}"
    }
}
