import Foundation
import Tensor
import XCTest

final class ThreadPoolTests: XCTestCase {
    /// Every index is visited exactly once, whatever the split, and thread ids stay in range.
    func testParallelForCoversEveryIndexOnce() {
        let pool = ThreadPool(threads: 3)
        for count in [0, 1, 2, 7, 64, 1000, 12_345] {
            for threads in [1, 2, 3, 8] {
                var hits = [Int](repeating: 0, count: count)
                var badThread = false
                hits.withUnsafeMutableBufferPointer { h in
                    pool.parallelFor(count, threads: threads) { range, thread in
                        if thread < 0 || thread >= min(threads, 3) { badThread = true }
                        for i in range { h[i] += 1 }
                    }
                }
                XCTAssertEqual(hits, [Int](repeating: 1, count: count), "count \(count) threads \(threads)")
                XCTAssertFalse(badThread)
            }
        }
    }

    /// Pieces start on multiples of `alignment` (GEMM tiles), and each thread's own pieces
    /// (the first half of them, for two threads) hold half the items within an alignment:
    /// 196 rows in tiles of 12 split 96 / 100, not 108 / 88 as whole tiles did; 36 panel
    /// pairs split 18 / 18, not 20 / 16 as 8 unequal pieces did.
    func testParallelForBalancesItemsOnAlignedBoundaries() {
        let pool = ThreadPool(threads: 2)
        for (count, alignment, firstHalf) in [(196, 12, 96), (36, 1, 18), (784, 12, 396), (49, 12, 24), (12_544, 12, 6_276)] {
            let lock = NSLock()
            var ranges: [Range<Int>] = []
            pool.parallelFor(count, threads: 2, alignment: alignment) { range, _ in
                lock.lock(); ranges.append(range); lock.unlock()
            }
            ranges.sort { $0.lowerBound < $1.lowerBound }
            XCTAssertEqual(ranges.first?.lowerBound, 0)
            XCTAssertEqual(ranges.last?.upperBound, count)
            for (a, b) in zip(ranges, ranges.dropFirst()) { XCTAssertEqual(a.upperBound, b.lowerBound, "\(count)") }
            XCTAssertTrue(ranges.allSatisfy { $0.lowerBound % alignment == 0 }, "\(count): \(ranges)")
            XCTAssertEqual(ranges.count % 2, 0, "\(count): an even number of pieces, \(ranges)")
            XCTAssertEqual(ranges.prefix(ranges.count / 2).map(\.count).reduce(0, +), firstHalf, "\(count): \(ranges)")
        }
    }

    /// Thousands of back-to-back jobs (an inference is ~150) finish, with workers going
    /// to sleep and waking between bursts.
    func testManyJobsAndSleepWake() {
        let pool = ThreadPool(threads: 2)
        var total = 0
        for burst in 0..<3 {
            for _ in 0..<2000 {
                var sums = [Int](repeating: 0, count: 2)
                sums.withUnsafeMutableBufferPointer { s in
                    pool.parallelFor(100, threads: 2) { range, thread in s[thread] += range.count }
                }
                total += sums.reduce(0, +)
            }
            if burst < 2 { usleep(20_000) }   // long enough for the worker to sleep
        }
        XCTAssertEqual(total, 3 * 2000 * 100)
    }

    /// Two callers at once (two pipelines of a parallel extraction): each gets every index
    /// exactly once; the second runs inline while the first holds the pool.
    func testConcurrentCallersEachGetTheirWork() {
        let pool = ThreadPool(threads: 2)
        let results = (0..<4).map { _ in UnsafeMutableBufferPointer<Int>.allocate(capacity: 1000) }
        defer { results.forEach { $0.deallocate() } }
        for r in results { r.initialize(repeating: 0) }
        DispatchQueue.concurrentPerform(iterations: 4) { caller in
            for _ in 0..<200 {
                pool.parallelFor(1000, threads: 2) { range, _ in for i in range { results[caller][i] += 1 } }
            }
        }
        for r in results { XCTAssertEqual(Array(r), [Int](repeating: 200, count: 1000)) }
    }

    func testChunksPartitionTheRange() {
        for count in [0, 1, 5, 100, 101] {
            for parts in 1...7 {
                let ranges = (0..<parts).map { chunk(count, parts: parts, index: $0) }
                XCTAssertEqual(ranges.map(\.count).reduce(0, +), count)
                for (a, b) in zip(ranges, ranges.dropFirst()) { XCTAssertEqual(a.upperBound, b.lowerBound) }
                XCTAssertLessThanOrEqual((ranges.map(\.count).max() ?? 0) - (ranges.map(\.count).min() ?? 0), 1)
            }
        }
    }
}

final class HalfFloatTests: XCTestCase {
    /// All 65,536 half-precision bit patterns widen exactly (Swift's own Float16 is the
    /// reference where the platform has it).
    func testEveryHalfWidensExactly() {
        #if arch(x86_64) || arch(arm64)
        for bits in 0...UInt16.max {
            let expected = Float(Float16(bitPattern: bits))
            let got = halfToFloat(bits)
            if expected.isNaN { XCTAssertTrue(got.isNaN, "\(bits)"); continue }
            XCTAssertEqual(got.bitPattern, expected.bitPattern, "half bits \(String(bits, radix: 16))")
        }
        #endif
        XCTAssertEqual(halfToFloat(0x3C00), 1)
        XCTAssertEqual(halfToFloat(0xC000), -2)
        XCTAssertEqual(halfToFloat(0x0001), 5.9604645e-08)
        XCTAssertEqual(halfToFloat(0x7C00), .infinity)
    }
}

final class GemmTests: XCTestCase {
    /// OpenBLAS products against a plain triple loop (sums of ≤ 37 products of values in
    /// [-1, 1]: float32 rounding stays below 1e-5).
    func testGemmMatchesNaiveProduct() {
        let m = 13, n = 11, k = 37
        var state: UInt32 = 1
        func next() -> Float { state = state &* 1_664_525 &+ 1_013_904_223; return Float(state >> 8) / Float(1 << 24) * 2 - 1 }
        let a = (0..<(m * k)).map { _ in next() }, b = (0..<(n * k)).map { _ in next() }
        var c = [Float](repeating: 0, count: m * n)
        BLAS.gemm(m: m, n: n, k: k, a: a, lda: k, b: b, ldb: k, transposeB: true, c: &c, ldc: n)
        for i in 0..<m { for j in 0..<n {
            var s: Float = 0
            for p in 0..<k { s += a[i * k + p] * b[j * k + p] }
            XCTAssertEqual(c[i * n + j], s, accuracy: 1e-5)
        } }
        // B not transposed: B[k, n].
        let bt = (0..<(k * n)).map { b[($0 % n) * k + $0 / n] }
        var c2 = [Float](repeating: 0, count: m * n)
        BLAS.gemm(m: m, n: n, k: k, a: a, lda: k, b: bt, ldb: n, c: &c2, ldc: n)
        for i in 0..<(m * n) { XCTAssertEqual(c2[i], c[i], accuracy: 1e-5) }
        // A transposed (A[k, m]) and added to what C holds: C + Aᵀᵀ · B = 2 · (A · B).
        let at = (0..<(k * m)).map { a[($0 % m) * k + $0 / m] }
        BLAS.gemm(m: m, n: n, k: k, a: at, lda: m, transposeA: true, b: bt, ldb: n, c: &c2, ldc: n, accumulate: true)
        for i in 0..<(m * n) { XCTAssertEqual(c2[i], 2 * c[i], accuracy: 2e-5) }
    }
}

/// The Beta draws behind mixup's λ (through two Gamma draws).
final class RandomDrawTests: XCTestCase {
    /// Mean and variance of 20,000 draws against the distribution's: Beta(a, b) has mean
    /// a/(a+b) and variance ab/((a+b)²(a+b+1)); Gamma(k) has mean and variance k. The
    /// tolerances are 5 standard errors (from the distributions' own moments): a correct
    /// sampler fails about once in a million seeds (the seed is fixed), a wrong shape at once.
    func testBetaAndGammaDrawsHaveTheirDistributionsMoments() {
        let n = 20_000
        for (a, b) in [(0.2, 0.2), (0.4, 0.4), (1.0, 1.0), (2.0, 5.0)] {
            var rng = SplitMix64(seed: 7)
            let xs = (0..<n).map { _ in rng.beta(a, b) }
            XCTAssertTrue(xs.allSatisfy { (0...1).contains($0) })
            let mean = xs.reduce(0, +) / Double(n)
            let variance = xs.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(n - 1)
            let m = a / (a + b), v = a * b / ((a + b) * (a + b) * (a + b + 1))
            XCTAssertEqual(mean, m, accuracy: 5 * (v / Double(n)).squareRoot(), "Beta(\(a), \(b)) mean")
            // In [0, 1] the fourth central moment is at most v, so the sample variance's
            // standard error is at most √(v/n).
            XCTAssertEqual(variance, v, accuracy: 5 * (v / Double(n)).squareRoot(), "Beta(\(a), \(b)) variance")
        }
        for k in [0.3, 1.0, 4.5] {
            var rng = SplitMix64(seed: 8)
            let xs = (0..<n).map { _ in rng.gamma(k) }
            let mean = xs.reduce(0, +) / Double(n)
            XCTAssertEqual(mean, k, accuracy: 5 * (k / Double(n)).squareRoot(), "Gamma(\(k)) mean")
        }
    }
}
