import ArgumentParser
import Basics
import Foundation
import MatrixProduct
import TFLite

struct PoseModelsBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pose",
        abstract: "Time one inference of each BlazePose model.",
        discussion: """
            Prints one JSON line per model: {"model", "runs", "threads", "median_ms", "p90_ms", \
            "min_ms", "kernels", "gflops", "fp32_peak_gflops", "peak_share", "cpu"}; "kernels" \
            is the instruction set of the convolution kernels (avx512, avx2 or portable: the \
            fastest this CPU runs at FP32; avx512bf16 or neonbf16 with bfloat16 products; or \
            the one POSEACT_KERNELS names); gflops is the model's work over the median time, and \
            peak_share its share of the FP32 peak `bench peak` measures on the same path and \
            threads (measured in this run). With --profile, also "large_conv_gflops" and \
            "large_conv_peak_share": the CONV_2D kernels of at least 10 MFLOP each, their work \
            over their median time, as a share of the peak of the arithmetic they run (bf16 \
            on avx512bf16 and neonbf16). The input is fixed pseudo-random data (the time does not depend on it). \
            All outputs are computed, as LiteRT does, unless --skip-segmentation is given. \
            notebooks-free-scripts/compare-litert.sh runs this beside LiteRT on the same machine.
            """)

    @Option(parsing: .unconditional, help: "Timed runs per model.") var runs = 50
    @Option(help: "Untimed runs first.") var warmup = 5
    @OptionGroup var inference: InferenceOptions
    @Flag(help: "Leave out the landmark model's segmentation output, as the pose pipeline does.")
    var skipSegmentation = false
    @Flag(help: "Also time each kernel (the median of up to 20 runs): the time per operator kind to stderr, and the large convolutions' share of the peak.")
    var profile = false
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
        /// The model's work over the median time, and the share it is of the FP32 peak.
        var gflops: Double, fp32PeakGflops: Double?, peakShare: Double?
        /// --profile: the CONV_2D kernels of at least `largeConvolution` operations.
        var largeConvGflops: Double?, largeConvPeakShare: Double?
        var cpu: String
    }

    /// The operations from which a convolution counts as large (the landmark model's 1×1
    /// layers at 28 × 28 pixels and up, its 7 × 7 × 1152 ones).
    static let largeConvolution = 10_000_000

    func run() throws {
        let (detector, landmark) = try inference.models.paths()
        let cpu = CPUDescription.current
        var peaks: [String: Double] = [:]
        func peak(_ arithmetic: PeakArithmetic, _ path: KernelPath) -> Double? {
            // The FP32 arithmetic of a bfloat16 path is that of the path it extends.
            let measured = arithmetic == .fp32 ? path.fp32Arithmetic : path
            let key = "\(arithmetic) \(measured)"
            if let known = peaks[key] { return known }
            let value = ArithmeticPeak.gflops(arithmetic, path: measured, threads: inference.threads, seconds: 0.1)
            peaks[key] = value
            return value
        }
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
            let median = percentile(times, 0.5)
            let gflops = Double(interpreter.summary.flops) / median / 1e6
            let kernelPath = interpreter.kernelPath
            let fp32Peak = conv == .packed ? peak(.fp32, kernelPath) : nil
            var largeGflops: Double?, largeShare: Double?
            if profile {
                let profiles = (0..<min(runs, 20)).map { _ in interpreter.profileKernels() }
                let kernels = profiles[0].indices.map { i in
                    (op: profiles[0][i].op, flops: profiles[0][i].flops, ms: percentile(profiles.map { $0[i].ms }.sorted(), 0.5))
                }
                var totals: [String: Double] = [:]
                for kernel in kernels { totals[kernel.op, default: 0] += kernel.ms }
                let parts = totals.sorted { $0.value > $1.value }.map { String(format: "%@ %.2f", $0.key, $0.value) }.joined(separator: ", ")
                note("\(file) ms by operator (medians of \(profiles.count) runs): \(parts)")
                let large = kernels.filter { $0.op == "CONV_2D" && $0.flops >= Self.largeConvolution }
                let flops = large.reduce(0) { $0 + $1.flops }, ms = large.reduce(0) { $0 + $1.ms }
                if !large.isEmpty, ms > 0 {
                    largeGflops = Double(flops) / ms / 1e6
                    let arithmetic: PeakArithmetic = kernelPath.roundsToBFloat16 ? .bf16 : .fp32
                    if conv == .packed, let p = peak(arithmetic, kernelPath) {
                        largeShare = largeGflops! / p
                        note(String(format: "%@ large convolutions (%d CONV_2D of at least 10 MFLOP, %.0f %% of the model's work): %.1f GFLOP/s, %.0f %% of the measured %@ peak (%.1f GFLOP/s, %d threads, %@)",
                                    file, large.count, 100 * Double(flops) / Double(interpreter.summary.flops), largeGflops!,
                                    100 * largeShare!, arithmetic.rawValue, p, inference.threads, kernelPath.rawValue))
                    }
                }
            }
            print(JSONLines.encode(Timing(
                model: String(file.dropLast(".tflite".count)), runs: runs, threads: inference.threads,
                medianMS: round3(median), p90MS: round3(percentile(times, 0.9)), minMS: round3(times[0]),
                outputs: skipSegmentation && isLandmark ? "pose (no segmentation)" : nil,
                conv: conv == .packed ? nil : conv.rawValue, kernels: kernelPath.rawValue,
                gflops: round3(gflops), fp32PeakGflops: fp32Peak.map { ($0 * 10).rounded() / 10 },
                peakShare: fp32Peak.map { round3(gflops / $0) },
                largeConvGflops: largeGflops.map { ($0 * 10).rounded() / 10 }, largeConvPeakShare: largeShare.map(round3),
                cpu: cpu.summary)))
        }
    }
}
