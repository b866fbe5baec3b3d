import Classifier
import Tensor
import XCTest

/// Central finite differences against the analytic gradients of a layer.
///
/// The scalar checked is L = Σ out·R for a fixed random R (so dL/dout = R), summed in
/// Double. Each input element and each parameter element is moved by ±eps (eps = 1e-2 on
/// float32) and (L₊ − L₋) / 2eps is compared with the analytic gradient by
///   err = |analytic − numeric| / max(|analytic|, |numeric|, floor).
/// Why the floor: the forward pass runs in float32, so each L carries rounding noise of
/// about √n·ulp(|out|) ≈ 1e-6 for these shapes, i.e. ~5e-5 in a difference quotient over
/// 2eps = 2e-2. Relative to a gradient of 1e-3 that is already 5 %; the floor keeps the
/// check relative for real gradients (R ~ N(0,1) makes most of them O(0.1–1)) and absolute
/// (≈ 1e-5 abs) for ones that are nearly zero.
struct GradientReport: CustomStringConvertible {
    var maxError = 0.0
    var worst = ""
    /// The same comparison with every analytic gradient scaled by 1.1: a gradient that is
    /// 10 % wrong must fail, or the check proves nothing.
    var maxErrorIfWrong = 0.0
    var checked = 0
    /// Elements skipped because the ±eps step moved a ReLU input across zero (see `check`).
    var skippedAtKinks = 0

    mutating func compare(_ analytic: Double, _ numeric: Double?, floor: Double, label: @autoclosure () -> String) {
        guard let numeric else { skippedAtKinks += 1; return }
        checked += 1
        let e = abs(analytic - numeric) / max(abs(analytic), abs(numeric), floor)
        if e > maxError { maxError = e; worst = "\(label()): analytic \(analytic) numeric \(numeric)" }
        let w = abs(1.1 * analytic - numeric) / max(abs(1.1 * analytic), abs(numeric), floor)
        maxErrorIfWrong = max(maxErrorIfWrong, w)
    }

    var description: String {
        String(format: "max rel err %.2e over %d gradients, %d skipped at ReLU kinks (×1.1 wrong: %.2e) worst: %@",
               maxError, checked, skippedAtKinks, maxErrorIfWrong, worst)
    }
}

enum GradCheck {
    static let eps: Float = 1e-2
    static let floor = 1e-3
    static let tolerance = 1e-2

    /// Numerical derivative of `loss` with respect to p[i] by central differences; nil when
    /// `kinks` (the on/off pattern of every ReLU, read after a loss evaluation) differs
    /// between the two evaluations: the step crossed a kink and the quotient is not a
    /// derivative of either side.
    static func numeric(_ p: UnsafeMutablePointer<Float>, _ i: Int, kinks: (() -> [Bool])? = nil,
                        _ loss: () -> Double) -> Double? {
        let saved = p[i]
        p[i] = saved + eps
        let plus = loss()
        let plusPattern = kinks?()
        p[i] = saved - eps
        let minus = loss()
        let minusPattern = kinks?()
        p[i] = saved
        if plusPattern != minusPattern { return nil }
        // The step actually taken: saved ± eps rounded to float32.
        return (plus - minus) / (Double(saved + eps) - Double(saved - eps))
    }

    /// Checks dL/dx and dL/dθ of `layer` at input `x` (batch B) with L = Σ out·R.
    /// For layers containing ReLUs pass `kinks` (see `numeric`); elements whose step
    /// crosses a kink are skipped and counted, and at most `maxSkipped` of them may be.
    static func check(_ layer: Layer, x: FloatBuffer, batch B: Int, training: Bool, seed: UInt64,
                      kinks: (() -> [Bool])? = nil, maxSkipped: Double = 0.1, floor: Double = floor,
                      file: StaticString = #filePath, line: UInt = #line) -> GradientReport {
        var rng = SplitMix64(seed: seed)
        let n = B * layer.outputCount
        let r = FloatBuffer((0..<n).map { _ in Float(rng.gaussian()) })
        func loss() -> Double {
            layer.forward(x.pointer, batch: B, training: training)
            var s = 0.0
            for i in 0..<n { s += Double(layer.output.pointer[i]) * Double(r.pointer[i]) }
            return s
        }
        // Analytic.
        for p in layer.parameters { p.zeroGrad() }
        _ = loss()
        layer.backward(r.pointer, input: x.pointer, batch: B)
        let dx = Array(UnsafeBufferPointer(start: layer.inputGrad.pointer, count: B * layer.inputCount))
        let dParams = layer.parameters.map { $0.grad.array }

        var report = GradientReport()
        for i in 0..<(B * layer.inputCount) {
            report.compare(Double(dx[i]), numeric(x.pointer, i, kinks: kinks, loss), floor: floor, label: "dx[\(i)]")
        }
        for (p, grad) in zip(layer.parameters, dParams) {
            for i in 0..<p.count {
                report.compare(Double(grad[i]), numeric(p.value.pointer, i, kinks: kinks, loss), floor: floor,
                               label: "\(p.name)[\(i)]")
            }
        }
        assertPasses(report, maxSkipped: maxSkipped, file: file, line: line)
        return report
    }

    static func assertPasses(_ report: GradientReport, tolerance: Double = tolerance, maxSkipped: Double = 0,
                             file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertGreaterThan(report.checked, 0, file: file, line: line)
        XCTAssertLessThanOrEqual(Double(report.skippedAtKinks), maxSkipped * Double(report.checked + report.skippedAtKinks),
                                 "too many elements skipped at ReLU kinks: \(report)", file: file, line: line)
        XCTAssertLessThan(report.maxError, tolerance, "\(report)", file: file, line: line)
        XCTAssertGreaterThan(report.maxErrorIfWrong, tolerance, "a 10 % wrong gradient would pass: \(report)",
                             file: file, line: line)
    }
}

/// A buffer of `count` values N(0, 1)·scale (+ offset away from 0 when `awayFromZero`).
func randomBuffer(_ count: Int, seed: UInt64, scale: Double = 1, awayFromZero: Double = 0) -> FloatBuffer {
    var rng = SplitMix64(seed: seed)
    return FloatBuffer((0..<count).map { _ in
        let g = rng.gaussian() * scale
        return Float(g + (g < 0 ? -awayFromZero : awayFromZero))
    })
}

/// Prints a gradient-check line for the hand-over report (visible with `swift test`).
func log(_ name: String, _ report: GradientReport) {
    print("gradcheck \(name): \(report)")
}
