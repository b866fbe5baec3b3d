@testable import Pose
import Tensor
import XCTest

final class WarpTests: XCTestCase {
    /// The warp's rounding of fixed-point coordinates is OpenCV's cvRound: to nearest, ties
    /// to even, on either side of zero; the same as `rounded(.toNearestOrEven)` everywhere
    /// the warp uses it (coordinates are clamped to Int32's range first).
    func testRoundHalfEvenMatchesTheStandardLibrary() {
        let ties: [(Double, Int)] = [(0.5, 0), (1.5, 2), (2.5, 2), (-0.5, 0), (-1.5, -2), (-2.5, -2), (7.49999, 7), (-7.5, -8)]
        for (x, want) in ties { XCTAssertEqual(roundHalfEven(x), want, "\(x)") }
        var rng = SplitMix64(seed: 19)   // a RandomNumberGenerator: the same draws every run
        for _ in 0..<100_000 {
            let x = Double.random(in: Double(Int32.min)...Double(Int32.max), using: &rng) / Double(1 << Int.random(in: 0...30, using: &rng))
            XCTAssertEqual(roundHalfEven(x), Int(x.rounded(.toNearestOrEven)), "\(x)")
        }
        XCTAssertEqual(roundHalfEven(Double(Int32.max)), Int(Int32.max))
        XCTAssertEqual(roundHalfEven(Double(Int32.min)), Int(Int32.min))
    }
}
