import Basics
import CPUKernels
import Foundation

public enum KernelFailure {}
/// A kernel path that cannot be had: an unknown `POSEACT_KERNELS`, or one this CPU lacks.
public typealias KernelError = OneLineError<KernelFailure>

/// The instruction set the C kernels (`Sources/CPUKernels`) run on, for the pose engine's
/// convolutions and the training layers' products alike: the fastest this CPU supports, or
/// the one `POSEACT_KERNELS` names. One binary carries them all. Training's products are
/// FP32 on every path (avx512bf16's are avx512's, neonbf16's portable's).
public enum KernelPath: String, Sendable, CaseIterable, CustomStringConvertible {
    /// avx512, with the pose engine's convolutions multiplied in bfloat16 (VDPBF16PS: Zen 4
    /// and later, Cooper Lake, Sapphire Rapids): weights rounded to bfloat16 when the plan is
    /// made, activations a block of rows at a time, sums in FP32. Training's products and
    /// every other kernel are avx512's.
    case avx512bf16
    /// 16-wide vectors and 32 registers (x86-64-v4: Skylake-X, Ice Lake, Zen 4 and later).
    case avx512
    /// 8-wide vectors with fused multiply-add (Haswell, Zen 1 and later).
    case avx2
    /// portable on ARM64, with the pose engine's convolutions multiplied in bfloat16 (BFDOT,
    /// FEAT_BF16: Graviton 3 and 4, Neoverse V1, V2 and N2, Cortex-A710 and later; not the
    /// Raspberry Pi 5's Cortex-A76), as avx512bf16 does: the same packing, sums in FP32.
    case neonbf16
    /// 128-bit vectors: SSE2 on any x86-64, NEON on ARM64.
    case portable

    /// The environment variable that forces a path (for tests and comparisons).
    public static let environmentVariable = "POSEACT_KERNELS"

    public var c: pa_path {
        switch self {
        case .avx512bf16: return PA_PATH_AVX512_BF16
        case .avx512: return PA_PATH_AVX512
        case .avx2: return PA_PATH_AVX2
        case .neonbf16: return PA_PATH_NEON_BF16
        case .portable: return PA_PATH_PORTABLE
        }
    }

    public var description: String { rawValue }

    /// Whether this CPU (and its OS) can run the path.
    public var isSupported: Bool { pa_path_supported(c) != 0 }

    /// The paths this CPU runs, fastest first.
    public static var supported: [KernelPath] { allCases.filter(\.isSupported) }

    /// The fastest FP32 path this CPU runs. A bfloat16 path is faster where the CPU has it
    /// (measured on avx512bf16), but only asked for (`--bfloat16`, or POSEACT_KERNELS): it
    /// moves landmarks by a median of 1.9 px from MediaPipe's on 1080p push-up frames, where
    /// FP32 agrees to 0.01 px (docs/engine.md, bfloat16).
    public static var best: KernelPath { supported.first { !$0.roundsToBFloat16 } ?? .portable }

    /// Whether the pose engine's products round to bfloat16 on this path.
    public var roundsToBFloat16: Bool { self == .avx512bf16 || self == .neonbf16 }

    /// The bfloat16 path of this architecture, which `--bfloat16` asks for.
    public static var bfloat16: KernelPath {
        #if arch(arm64)
        return .neonbf16
        #else
        return .avx512bf16
        #endif
    }

    /// The path whose FP32 arithmetic this one runs (a bfloat16 path's other kernels).
    public var fp32Arithmetic: KernelPath {
        switch self {
        case .avx512bf16: return .avx512
        case .neonbf16: return .portable
        default: return self
        }
    }

    /// The path `POSEACT_KERNELS` names, else the best one; an unknown name, or a path this
    /// CPU lacks, is an error that says which paths there are.
    public static func chosen(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> KernelPath {
        guard let name = environment[environmentVariable], !name.isEmpty else { return best }
        guard let path = KernelPath(rawValue: name.lowercased()) else {
            throw KernelError("\(environmentVariable)=\(name) is not a kernel path: use one of \(allCases.map(\.rawValue).joined(separator: ", "))")
        }
        try path.requireSupported()
        return path
    }

    /// `--bfloat16`: the pose engine on this architecture's bfloat16 path for this process and
    /// the ones it starts (through POSEACT_KERNELS, which every plan reads). Refused on a CPU
    /// without it (AVX512_BF16, or ARM's BF16), and when POSEACT_KERNELS already names another path.
    public static func requestBFloat16(environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        try bfloat16.requireSupported()
        if let name = environment[environmentVariable], !name.isEmpty, name.lowercased() != bfloat16.rawValue {
            throw KernelError("--bfloat16 and \(environmentVariable)=\(name) disagree: give one of them")
        }
        setenv(environmentVariable, bfloat16.rawValue, 1)
    }

    public func requireSupported() throws {
        guard isSupported else {
            throw KernelError("this CPU cannot run the \(rawValue) kernels: it runs \(KernelPath.supported.map(\.rawValue).joined(separator: ", "))")
        }
    }

    /// Rows of one GEMM micro-kernel tile on this path.
    public var gemmTileRows: Int { pa_gemm_tile_rows(c) }
    /// 16-channel panels of one GEMM micro-kernel tile on this path.
    public var gemmTilePanels: Int { pa_gemm_tile_panels(c) }

    /// The path of this process's training products: `chosen()` once, the best path when
    /// `POSEACT_KERNELS` is not one this CPU runs (the commands refuse such a value before
    /// any work, through `chosen()`).
    public static let process: KernelPath = (try? chosen()) ?? best
}
