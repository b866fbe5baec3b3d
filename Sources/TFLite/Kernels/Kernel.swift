import Tensor

/// One step of an execution plan: shapes checked, pointers resolved and weights prepared
/// when the model is loaded, so `run` does only arithmetic.
protocol Kernel {
    /// Operator name, for profiles and errors.
    var name: String { get }
    /// Multiply-accumulates × 2 (or element operations) per run, for FLOP counts.
    var flops: Int { get }
    func run(_ pool: ThreadPool, threads: Int)
    /// Shapes and parameters, for profiles.
    var detail: String { get }
}

extension Kernel {
    var detail: String { "" }
}

/// Items each thread must get before a loop is split: an operator's hand-off to the other
/// cores costs microseconds, so a split pays only when each thread's share is
/// `minimumWork` (multiply-adds, ~32 k: several microseconds) or more.
@inline(__always)
func minimumPerThread(workPerItem: Int, minimumWork: Int = 32_768) -> Int {
    max(1, (minimumWork + workPerItem - 1) / max(1, workPerItem))
}

/// The same for operators that only move memory (ADD, PAD, RESIZE, DEPTH_TO_SPACE), per
/// float written (~16 k floats a thread). Run on one thread, such an operator reads half
/// its input from the other core's cache, where the operator before left it, so splitting
/// pays even on small tensors (at 16 k rather than 256 k the detector at 2 threads was ~3 %
/// faster in alternating rounds).
@inline(__always)
func minimumPerThread(floatsPerItem: Int) -> Int {
    minimumPerThread(workPerItem: floatsPerItem, minimumWork: 16_384)
}

/// A 4-D NHWC shape.
struct Shape4: Equatable, CustomStringConvertible {
    var n, h, w, c: Int
    init(n: Int, h: Int, w: Int, c: Int) { self.n = n; self.h = h; self.w = w; self.c = c }
    init?(_ dims: [Int]) {
        guard dims.count == 4 else { return nil }
        n = dims[0]; h = dims[1]; w = dims[2]; c = dims[3]
    }
    var count: Int { n * h * w * c }
    var description: String { "[\(n),\(h),\(w),\(c)]" }
}

/// Fused activations (TFLite's `fused_activation_function`): the models use NONE and RELU6.
enum FusedActivation {
    case none, relu, relu6, reluN1To1

    @inline(__always) func apply(_ x: Float) -> Float {
        switch self {
        case .none: return x
        case .relu: return max(x, 0)
        case .relu6: return min(max(x, 0), 6)
        case .reluN1To1: return min(max(x, -1), 1)
        }
    }
    @inline(__always) func apply(_ x: SIMD8<Float>) -> SIMD8<Float> {
        switch self {
        case .none: return x
        case .relu: return clamp8(x, lo: 0, hi: .infinity)
        case .relu6: return clamp8(x, lo: 0, hi: 6)
        case .reluN1To1: return clamp8(x, lo: -1, hi: 1)
        }
    }
    var bounds: (lo: Float, hi: Float) {
        switch self {
        case .none: return (-.infinity, .infinity)
        case .relu: return (0, .infinity)
        case .relu6: return (0, 6)
        case .reluN1To1: return (-1, 1)
        }
    }
}

/// min(hi, max(lo, x)) lane by lane. Written as a fixed 8-lane loop, which LLVM turns into
/// one vmaxps + vminps; the generic `pointwiseMin`/`replace(with:where:)` stay out-of-line
/// calls that run lane by lane (they were two thirds of an inference's time).
@inline(__always) func clamp8(_ x: SIMD8<Float>, lo: Float, hi: Float) -> SIMD8<Float> {
    var r = x
    for i in 0..<8 { r[i] = Swift.min(Swift.max(r[i], lo), hi) }
    return r
}

@inline(__always) func load8(_ p: UnsafePointer<Float>) -> SIMD8<Float> {
    UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Float>.self)
}
@inline(__always) func store8(_ v: SIMD8<Float>, _ p: UnsafeMutablePointer<Float>) {
    UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD8<Float>.self)
}

/// out[r, c] = act(out[r, c] + bias[c] + residual[r, c]) for `rows` rows of `channels`
/// values, stride `ld` (the residual's too; nil for none).
@inline(__always)
func addBiasActivate(_ out: UnsafeMutablePointer<Float>, rows: Int, channels: Int, ld: Int,
                     bias: UnsafePointer<Float>, residual: UnsafePointer<Float>? = nil, activation: FusedActivation) {
    let (lo, hi) = activation.bounds
    for r in 0..<rows {
        let row = out + r * ld
        var c = 0
        if let residual {
            // (product + bias) + residual, in the order a separate ADD would sum them.
            let res = residual + r * ld
            while c + 8 <= channels {
                store8(clamp8(load8(row + c) + load8(bias + c) + load8(res + c), lo: lo, hi: hi), row + c)
                c += 8
            }
            while c < channels { row[c] = min(max(row[c] + bias[c] + res[c], lo), hi); c += 1 }
            continue
        }
        while c + 8 <= channels {
            store8(clamp8(load8(row + c) + load8(bias + c), lo: lo, hi: hi), row + c)
            c += 8
        }
        while c < channels { row[c] = min(max(row[c] + bias[c], lo), hi); c += 1 }
    }
}

