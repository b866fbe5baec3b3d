import ArgumentParser
import Media
import Pose
import Foundation
import TFLite

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Benchmarks of the hot paths, printing machine-readable JSON.",
        subcommands: [PoseModelsBench.self, PoseVideoBench.self, TrainBench.self, LiveBench.self])
}

/// Times `body` `runs` times after `warmup` untimed runs; milliseconds, sorted.
func timeRuns(_ runs: Int, warmup: Int, _ body: () -> Void) -> [Double] {
    for _ in 0..<warmup { body() }
    var times: [Double] = []
    times.reserveCapacity(runs)
    for _ in 0..<runs {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    }
    return times.sorted()
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let rank = p * Double(sorted.count - 1)
    let lo = Int(rank.rounded(.down)), hi = Int(rank.rounded(.up))
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - Double(lo))
}

func round3(_ x: Double) -> Double { (x * 1000).rounded() / 1000 }

struct PoseModelsBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pose",
        abstract: "Time one inference of each BlazePose model.",
        discussion: """
            Prints one JSON line per model: {"model", "runs", "threads", "median_ms", "p90_ms", \
            "min_ms"}. The input is fixed pseudo-random data (the time does not depend on it). \
            All outputs are computed, as LiteRT does, unless --skip-segmentation is given. \
            notebooks-free-scripts/compare-litert.sh runs this beside LiteRT on the same machine.
            """)

    @Option(parsing: .unconditional, help: "Timed runs per model.") var runs = 50
    @Option(help: "Untimed runs first.") var warmup = 5
    @Option(parsing: .unconditional, help: "Threads per inference.") var threads = 2
    @Option(help: "Folder with the .tflite files.") var models: String?
    @Flag(help: "Leave out the landmark model's segmentation output, as the pose pipeline does.")
    var skipSegmentation = false
    @Flag(help: "Also print the time per operator kind of one run (to stderr).") var profile = false
    @Option(help: "CONV_2D kernels: packed (poseact's micro-kernel) or blas (im2col + cblas_sgemm everywhere).")
    var conv: String = "packed"

    func validate() throws {
        guard runs > 0 else { throw ValidationError("--runs must be at least 1") }
        guard threads > 0 else { throw ValidationError("--threads must be at least 1") }
        guard ConvolutionKernels(rawValue: conv) != nil else { throw ValidationError("--conv takes packed or blas") }
    }

    func run() throws {
        let dir = try PoseModels.directory(models)
        for file in [PoseModels.detector, PoseModels.landmark] {
            var options = InterpreterOptions(threads: threads, convolution: ConvolutionKernels(rawValue: conv)!)
            if skipSegmentation && file == PoseModels.landmark { options.outputs = ["Identity", "Identity_1", "Identity_3", "Identity_4"] }
            let interpreter = try Interpreter(path: dir.appendingPathComponent(file).path, options: options)
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15
            let input = interpreter.input(0)
            for i in input.indices {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                input[i] = Float(state >> 40) / Float(1 << 24) * 2 - 1
            }
            let times = timeRuns(runs, warmup: warmup) { interpreter.invoke() }
            if profile {
                let parts = interpreter.profile().map { String(format: "%@ %.2f", $0.op, $0.ms) }.joined(separator: ", ")
                FileHandle.standardError.write(Data("\(file) ms by operator: \(parts)\n".utf8))
            }
            var line = JSONLine()
            line.add("model", String(file.dropLast(".tflite".count)))
            line.add("runs", runs)
            line.add("threads", threads)
            line.add("median_ms", round3(percentile(times, 0.5)))
            line.add("p90_ms", round3(percentile(times, 0.9)))
            line.add("min_ms", round3(times[0]))
            if skipSegmentation && file == PoseModels.landmark { line.add("outputs", "pose (no segmentation)") }
            if conv != "packed" { line.add("conv", conv) }
            print(line.text)
        }
    }
}

struct PoseVideoBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pose-video",
        abstract: "Time the pose pipeline on a video, decoding included.",
        discussion: """
            Decodes FILE and runs the tracking pipeline on every frame, as fast as it goes. \
            Prints one JSON object: {"file", "frames", "width", "height", "fps", "decode_ms", \
            "pipeline_ms", "detect_ms", "landmarks_ms", "detector_runs", "landmark_runs", \
            "persons_per_frame"}: fps over the whole run; *_ms are means per frame (decode, \
            pipeline) or per model run (detect, landmarks).
            """)

    @Argument(help: "A video file.") var file: String
    @OptionGroup var pose: PoseOptions
    @Option(parsing: .unconditional, help: "Stop after this many frames.") var frames: Int?
    @Option(help: "Put this many copies of each frame in a grid: that many people to track (no video here has several).")
    var copies = 1

    func validate() throws {
        guard copies >= 1, copies <= 8 else { throw ValidationError("--copies must be 1 to 8") }
    }

    func run() throws {
        let pipeline = try pose.pipeline()
        let reader = try VideoReader(file)
        var count = 0, persons = 0
        var decode = 0.0, work = 0.0
        let start = DispatchTime.now().uptimeNanoseconds
        while count < (frames ?? .max) {
            let t0 = DispatchTime.now().uptimeNanoseconds
            guard var frame = try reader.next() else { break }
            frame.image = tile(frame.image, copies: copies)
            let t1 = DispatchTime.now().uptimeNanoseconds
            persons += pipeline.process(frame: frame).count
            let t2 = DispatchTime.now().uptimeNanoseconds
            decode += Double(t1 - t0) / 1e6; work += Double(t2 - t1) / 1e6
            count += 1
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let t = pipeline.times
        var line = JSONLine()
        line.add("file", file)
        line.add("frames", count)
        let columns = Int(Double(copies).squareRoot().rounded(.up))
        line.add("width", reader.info.width * columns)
        line.add("height", reader.info.height * ((copies + columns - 1) / columns))
        line.add("fps", round3(Double(count) / max(seconds, 1e-9)))
        line.add("decode_ms", round3(decode / Double(max(count, 1))))
        line.add("pipeline_ms", round3(work / Double(max(count, 1))))
        line.add("detect_ms", round3(t.detectSeconds * 1000 / Double(max(t.detectorRuns, 1))))
        line.add("landmarks_ms", round3(t.landmarkSeconds * 1000 / Double(max(t.landmarkRuns, 1))))
        line.add("detector_runs", t.detectorRuns)
        line.add("landmark_runs", t.landmarkRuns)
        line.add("persons_per_frame", round3(Double(persons) / Double(max(count, 1))))
        print(line.text)
    }
}

/// `image` repeated in a grid of ⌈√copies⌉ columns: that many people to track (side by
/// side only, a frame would get so wide that the letterboxed detector input shrinks people
/// out of its range).
func tile(_ image: RGBImage, copies: Int) -> RGBImage {
    guard copies > 1 else { return image }
    let columns = Int(Double(copies).squareRoot().rounded(.up)), rows = (copies + columns - 1) / columns
    var out = RGBImage(width: image.width * columns, height: image.height * rows)
    let row = image.width * 3
    out.pixels.withUnsafeMutableBufferPointer { dst in
        image.pixels.withUnsafeBufferPointer { src in
            for c in 0..<copies {
                let x0 = (c % columns) * row, y0 = (c / columns) * image.height
                for y in 0..<image.height {
                    (dst.baseAddress! + (y0 + y) * row * columns + x0).update(from: src.baseAddress! + y * row, count: row)
                }
            }
        }
    }
    return out
}
