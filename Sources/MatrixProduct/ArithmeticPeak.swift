import CPUKernels
import Dispatch

/// The arithmetic a peak is measured in.
public enum PeakArithmetic: String, Sendable, CaseIterable {
    /// FP32 multiply-adds on a path's vectors (FMA on avx512 and avx2).
    case fp32
    /// bfloat16 pair products summed into FP32: the bfloat16 paths' products (VDPBF16PS on
    /// avx512bf16, BFDOT on neonbf16).
    case bf16

    var c: pa_peak_kind { self == .fp32 ? PA_PEAK_FP32 : PA_PEAK_BF16 }

    /// Whether `path` does this arithmetic.
    public func runs(on path: KernelPath) -> Bool { self == .fp32 || path.roundsToBFloat16 }
}

/// The measured limit of this CPU's arithmetic: independent multiply-adds on registers
/// only, as the C kernels issue them, on one thread or on several at once. What an engine
/// figure is a share of, measured rather than taken from a datasheet: the same instruction
/// does twice the work a cycle on a core with a full 512-bit datapath (Zen 5) as on one
/// that splits it in two (Zen 4), and clocks differ between machines of one kind.
public enum ArithmeticPeak {
    /// GFLOP/s (a multiply-add counts 2) of `threads` threads each running `arithmetic` on
    /// `path` for about `seconds`: the best of `rounds` (a shared machine only ever slows it).
    /// nil when the path does not do that arithmetic or the CPU cannot run the path.
    public static func gflops(_ arithmetic: PeakArithmetic, path: KernelPath, threads: Int,
                              seconds: Double = 0.2, rounds: Int = 3) -> Double? {
        guard path.isSupported, arithmetic.runs(on: path), threads >= 1 else { return nil }
        // Calibrate: rounds of the loop in a tenth of the time asked.
        var iterations = 100_000
        while true {
            let (flops, elapsed) = run(arithmetic, path: path, threads: 1, iterations: iterations)
            guard flops > 0 else { return nil }
            if elapsed >= seconds / 10 || iterations >= 1 << 40 {
                iterations = max(1, Int(Double(iterations) * seconds / max(elapsed, 1e-9)))
                break
            }
            iterations *= 4
        }
        var best = 0.0
        for _ in 0..<max(1, rounds) {
            let (flops, elapsed) = run(arithmetic, path: path, threads: threads, iterations: iterations)
            best = max(best, flops / elapsed / 1e9)
        }
        return best
    }

    /// Operations done and seconds taken by `threads` threads running the loop at once.
    private static func run(_ arithmetic: PeakArithmetic, path: KernelPath, threads: Int, iterations: Int) -> (Double, Double) {
        let start = DispatchTime.now().uptimeNanoseconds
        let perThread = UnsafeMutableBufferPointer<Double>.allocate(capacity: threads)
        defer { perThread.deallocate() }
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            perThread[t] = pa_peak_flops(path.c, arithmetic.c, iterations)
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return (perThread.reduce(0, +), elapsed)
    }
}
