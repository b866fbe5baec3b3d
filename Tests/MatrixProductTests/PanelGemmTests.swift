import MatrixProduct
import Tensor
import XCTest

/// The training layers' products on the C kernels against the definition (in Double), on
/// every kernel path this CPU runs (AVX-512, AVX2, portable: what `POSEACT_KERNELS` chooses
/// for training too), on one thread and on two (where each must give the same bits every time).
final class PanelGemmTests: XCTestCase {
    override func tearDown() { LayerThreads.set(1) }

    private func values(_ n: Int, seed: Int) -> [Float] { (0..<n).map { Float(($0 * 37 + seed * 11) % 101 - 50) / 50 } }

    func testMultiplyMatchesTheDefinition() {
        // (m, n, k, groups): narrow and wide, partial panels and tiles, groups with overlapping rows.
        for (m, n, k, groups) in [(37, 32, 288, 1), (50, 15, 7, 1), (16, 64, 45, 5), (1, 17, 3, 1), (30, 40, 24, 3)] {
            for transposeB in [false, true] {
                for (path, threads) in KernelPath.supported.flatMap({ p in [1, 2].map { (p, $0) } }) {
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
                                    let packed = PackedWeights(capacity: PackedWeights.floats(k: k, n: n))
                                    packed.pack(b: b.baseAddress!, ldb: ldb, k: k, n: n, transposed: transposeB, bias: bias.baseAddress!)
                                    PanelGemm.multiply(m: m, groups: groups, a: a.baseAddress!, lda: lda, aGroupStride: aStride,
                                                       weights: packed, c: o.baseAddress!, ldc: ldc, cGroupStride: cStride,
                                                       accumulate: accumulate, path: path)
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
                            XCTAssertEqual(Double(x), y, accuracy: 1e-3, "\(path): m \(m) n \(n) k \(k) groups \(groups) [\(i)]")
                        }
                    }
                }
            }
        }
    }

    func testAccumulateTransposedMatchesTheDefinition() {
        for (m, n, rows, groups) in [(32, 288, 300, 1), (64, 15, 20, 7), (7, 45, 33, 2), (1, 16, 5, 1)] {
            for (path, threads) in KernelPath.supported.flatMap({ p in [1, 2].map { (p, $0) } }) {
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
                                                       c: c.baseAddress!, ldc: ldc, path: path)
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
                        XCTAssertEqual(Double(results[0][i * ldc + j]), expected, accuracy: 1e-3, "\(path): m \(m) n \(n) [\(i), \(j)]")
                    }
                }
            }
        }
    }

    /// A packing reused for a smaller product packs only what that one needs, and a product
    /// beyond the room it was made for is a programming error caught before a byte is written.
    func testOnePackingServesEveryProductOfItsLayer() {
        let packed = PackedWeights(capacity: PackedWeights.floats(k: 40, n: 33))
        XCTAssertEqual(PackedWeights.floats(k: 40, n: 33), 48 * 41)
        let b = values(40 * 33, seed: 8), a = values(5 * 7, seed: 9)
        var out = [Float](repeating: 0, count: 5 * 3)
        b.withUnsafeBufferPointer { b in a.withUnsafeBufferPointer { a in out.withUnsafeMutableBufferPointer { o in
            packed.pack(b: b.baseAddress!, ldb: 40, k: 40, n: 33, transposed: true)
            packed.pack(b: b.baseAddress!, ldb: 3, k: 7, n: 3, transposed: false)
            XCTAssertEqual([packed.k, packed.n, packed.panels], [7, 3, 1])
            PanelGemm.multiply(m: 5, a: a.baseAddress!, lda: 7, weights: packed, c: o.baseAddress!, ldc: 3)
        } } }
        for i in 0..<5 {
            for j in 0..<3 {
                let expected = (0..<7).reduce(0.0) { $0 + Double(a[i * 7 + $1]) * Double(b[$1 * 3 + j]) }
                XCTAssertEqual(Double(out[i * 3 + j]), expected, accuracy: 1e-4)
            }
        }
    }
}
