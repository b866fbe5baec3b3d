import ArgumentParser
import Basics
import Foundation
import MatrixProduct

struct PeakBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peak",
        abstract: "Measure this CPU's arithmetic limit: what the engine's figures are a share of.",
        discussion: """
            Runs independent multiply-adds on registers only, as the convolution kernels issue \
            them, for every kernel path this CPU runs: FP32 on each (FMA on avx512 and avx2; \
            a multiply and an add on portable), and bfloat16 dot products where the CPU has \
            a bfloat16 path (VDPBF16PS on avx512bf16, BFDOT on neonbf16). On one thread and \
            on every core. Prints one JSON line per measurement: {"arithmetic", "kernels", \
            "threads", "gflops", "cpu"}; gflops is the best of --rounds (a multiply-add counts \
            2), cpu names the processor (model name, family, model, the vector extensions it \
            lists, cores). `bench pose` gives each model's figure as a share of the FP32 peak \
            measured the same way.
            """)

    @Option(help: "Seconds per round.") var seconds = 0.3
    @Option(help: "Rounds per measurement; the best is kept.") var rounds = 3

    func validate() throws {
        guard seconds > 0, seconds <= 60 else { throw ValidationError("--seconds must be above 0 and at most 60") }
        guard rounds >= 1, rounds <= 100 else { throw ValidationError("--rounds must be 1 to 100") }
    }

    struct Measurement: Encodable {
        var arithmetic: String
        var kernels: String
        var threads: Int
        var gflops: Double
        var cpu: CPUDescription
    }

    func run() throws {
        let cpu = CPUDescription.current
        let threadCounts = cpu.cores > 1 ? [1, cpu.cores] : [1]
        for path in KernelPath.supported {
            for arithmetic in PeakArithmetic.allCases where arithmetic.runs(on: path) {
                // A bfloat16 path's FP32 arithmetic is that of the path it extends, measured on its own line.
                if path.roundsToBFloat16 && arithmetic == .fp32 { continue }
                for threads in threadCounts {
                    guard let gflops = ArithmeticPeak.gflops(arithmetic, path: path, threads: threads, seconds: seconds, rounds: rounds) else { continue }
                    print(JSONLines.encode(Measurement(arithmetic: arithmetic.rawValue, kernels: path.rawValue, threads: threads,
                                                       gflops: (gflops * 10).rounded() / 10, cpu: cpu)))
                }
            }
        }
    }
}
