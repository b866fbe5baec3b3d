import ArgumentParser
import Basics
import Foundation
import TFLite

struct PoseModelsBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pose",
        abstract: "Time one inference of each BlazePose model.",
        discussion: """
            Prints one JSON line per model: {"model", "runs", "threads", "median_ms", "p90_ms", \
            "min_ms", "kernels"}; "kernels" is the instruction set of the convolution kernels \
            (avx512, avx2 or portable: the fastest this CPU runs, or the one POSEACT_KERNELS names). The input is fixed pseudo-random data (the time does not depend on it). \
            All outputs are computed, as LiteRT does, unless --skip-segmentation is given. \
            notebooks-free-scripts/compare-litert.sh runs this beside LiteRT on the same machine.
            """)

    @Option(parsing: .unconditional, help: "Timed runs per model.") var runs = 50
    @Option(help: "Untimed runs first.") var warmup = 5
    @OptionGroup var inference: InferenceOptions
    @Flag(help: "Leave out the landmark model's segmentation output, as the pose pipeline does.")
    var skipSegmentation = false
    @Flag(help: "Also print the time per operator kind of one run (to stderr).") var profile = false
    @Option(help: "CONV_2D kernels: packed (poseact's micro-kernel) or blas (im2col + cblas_sgemm everywhere).")
    var conv: ConvolutionKernels = .packed

    func validate() throws {
        guard runs > 0 else { throw ValidationError("--runs must be at least 1") }
        guard warmup >= 0 else { throw ValidationError("--warmup must be 0 or more") }
    }

    /// One model's line.
    struct Timing: Encodable {
        var model: String
        var runs: Int, threads: Int
        var medianMS: Double, p90MS: Double, minMS: Double
        /// Set when not all of the model's outputs were computed.
        var outputs: String?
        /// Set when the kernels are not the default ones.
        var conv: String?
        /// The kernel path (instruction set).
        var kernels: String
    }

    func run() throws {
        let (detector, landmark) = try inference.models.paths()
        for path in [detector, landmark] {
            let isLandmark = path == landmark
            var options = InterpreterOptions(threads: inference.threads, convolution: conv)
            if skipSegmentation && isLandmark { options.outputs = ["Identity", "Identity_1", "Identity_3", "Identity_4"] }
            let interpreter = try Interpreter(path: path, options: options)
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15
            let input = interpreter.input(0)
            for i in input.indices {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                input[i] = Float(state >> 40) / Float(1 << 24) * 2 - 1
            }
            let times = timeRuns(runs, warmup: warmup) { interpreter.invoke() }
            let file = URL(fileURLWithPath: path).lastPathComponent
            if profile {
                let parts = interpreter.profile().map { String(format: "%@ %.2f", $0.op, $0.ms) }.joined(separator: ", ")
                note("\(file) ms by operator: \(parts)")
            }
            print(JSONLines.encode(Timing(
                model: String(file.dropLast(".tflite".count)), runs: runs, threads: inference.threads,
                medianMS: round3(percentile(times, 0.5)), p90MS: round3(percentile(times, 0.9)), minMS: round3(times[0]),
                outputs: skipSegmentation && isLandmark ? "pose (no segmentation)" : nil,
                conv: conv == .packed ? nil : conv.rawValue, kernels: interpreter.kernelPath.rawValue)))
        }
    }
}
