import Classifier
import Tensor
import XCTest

/// The layers' products on the engine's kernels against the definition (in Double), on one
/// thread and on two (where each must give the same bits every time).
final class PanelGemmTests: XCTestCase {
    override func tearDown() { LayerThreads.set(1) }

    private func values(_ n: Int, seed: Int) -> [Float] { (0..<n).map { Float(($0 * 37 + seed * 11) % 101 - 50) / 50 } }

    func testMultiplyMatchesTheDefinition() {
        // (m, n, k, groups): narrow and wide, partial panels and tiles, groups with overlapping rows.
        for (m, n, k, groups) in [(37, 32, 288, 1), (50, 15, 7, 1), (16, 64, 45, 5), (1, 17, 3, 1), (30, 40, 24, 3)] {
            for transposeB in [false, true] {
                for threads in [1, 2] {
                    LayerThreads.set(threads)
                    let lda = k + 2, ldb = transposeB ? k + 1 : n + 3, ldc = n + 1
                    let aStride = m * lda / 2 + 5, cStride = m * ldc + 2
                    let a = values(groups * aStride + m * lda, seed: 1), b = values(transposeB ? n * ldb : k * ldb, seed: 2)
                    let bias = values(n, seed: 3), start = values(groups * cStride + m * ldc, seed: 4)
                    for accumulate in [false, true] {
                        var c = start, again = start
                        for pass in 0..<2 {
                            var out = start
                            a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in bias.withUnsafeBufferPointer { bias in
                                out.withUnsafeMutableBufferPointer { o in
                                    PanelGemm.multiply(m: m, n: n, k: k, groups: groups, a: a.baseAddress!, lda: lda, aGroupStride: aStride,
                                                       b: b.baseAddress!, ldb: ldb, transposeB: transposeB, bias: bias.baseAddress!,
                                                       c: o.baseAddress!, ldc: ldc, cGroupStride: cStride, accumulate: accumulate)
                                }
                            } } }
                            if pass == 0 { c = out } else { again = out }
                        }
                        XCTAssertEqual(c, again, "the same bits every time")
                        var expected = start.map(Double.init)
                        for g in 0..<groups {
                            for i in 0..<m {
                                for j in 0..<n {
                                    var sum = Double(bias[j])
                                    for kk in 0..<k {
                                        let bv = transposeB ? b[j * ldb + kk] : b[kk * ldb + j]
                                        sum += Double(a[g * aStride + i * lda + kk]) * Double(bv)
                                    }
                                    let idx = g * cStride + i * ldc + j
                                    expected[idx] = accumulate ? expected[idx] + sum : sum
                                }
                            }
                        }
                        for (i, (x, y)) in zip(c, expected).enumerated() {
                            XCTAssertEqual(Double(x), y, accuracy: 1e-3, "m \(m) n \(n) k \(k) groups \(groups) [\(i)]")
                        }
                    }
                }
            }
        }
    }

    func testAccumulateTransposedMatchesTheDefinition() {
        for (m, n, rows, groups) in [(32, 288, 300, 1), (64, 15, 20, 7), (7, 45, 33, 2), (1, 16, 5, 1)] {
            for threads in [1, 2] {
                LayerThreads.set(threads)
                let lda = m + 3, ldb = n + 5, ldc = n + 2, aStride = rows * lda + 7, bStride = rows * ldb / 2 + 1
                let a = values(groups * aStride, seed: 5), b = values(groups * bStride + rows * ldb, seed: 6)
                let start = values(m * ldc, seed: 7)
                var results: [[Float]] = []
                for _ in 0..<2 {
                    var c = start
                    a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in c.withUnsafeMutableBufferPointer { c in
                        PanelGemm.accumulateTransposed(m: m, n: n, rows: rows, groups: groups, a: a.baseAddress!, lda: lda,
                                                       aGroupStride: aStride, b: b.baseAddress!, ldb: ldb, bGroupStride: bStride,
                                                       c: c.baseAddress!, ldc: ldc)
                    } } }
                    results.append(c)
                }
                XCTAssertEqual(results[0], results[1], "the same bits every time")
                for i in 0..<m {
                    for j in 0..<ldc {
                        var expected = Double(start[i * ldc + j])
                        if j < n {
                            for g in 0..<groups {
                                for r in 0..<rows { expected += Double(a[g * aStride + r * lda + i]) * Double(b[g * bStride + r * ldb + j]) }
                            }
                        }
                        XCTAssertEqual(Double(results[0][i * ldc + j]), expected, accuracy: 1e-3, "m \(m) n \(n) [\(i), \(j)]")
                    }
                }
            }
        }
    }
}
