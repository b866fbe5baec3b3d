import Classifier
import Tensor
import XCTest

/// Forward semantics that a gradient check cannot see: padding, statistics, scaling.
final class LayerTests: XCTestCase {
    /// im2col + GEMM equals a direct convolution with 'same' zero padding.
    func testConv1DMatchesDirectConvolution() {
        for (k, d) in [(5, 1), (3, 2), (4, 1), (1, 1)] {
            let B = 2, T = 9, C = 3, OC = 4
            var rng = SplitMix64(seed: 1)
            let conv = Conv1D(frames: T, inChannels: C, outChannels: OC, kernel: k, dilation: d, maxBatch: B, rng: &rng)
            for i in 0..<OC { conv.bias!.value.pointer[i] = Float(i) }
            let x = randomBuffer(B * T * C, seed: 2)
            conv.forward(x.pointer, batch: B, training: false)
            let w = conv.weight.value.pointer
            let padLeft = d * (k - 1) / 2
            var maxDiff: Float = 0
            for b in 0..<B {
                for t in 0..<T {
                    for oc in 0..<OC {
                        var s = Float(oc)
                        for j in 0..<k {
                            let src = t - padLeft + j * d
                            guard src >= 0 && src < T else { continue }
                            for c in 0..<C { s += w[(oc * k + j) * C + c] * x.pointer[(b * T + src) * C + c] }
                        }
                        maxDiff = max(maxDiff, abs(s - conv.output.pointer[(b * T + t) * OC + oc]))
                    }
                }
            }
            XCTAssertLessThan(maxDiff, 1e-5, "k=\(k) d=\(d)")
        }
    }

    /// Training output is normalised per channel; running statistics move by momentum 0.1,
    /// the variance taking the unbiased estimate; evaluation uses the running statistics.
    func testBatchNormStatistics() {
        let B = 3, T = 5, C = 2, N = B * T
        let bn = BatchNorm(frames: T, channels: C, maxBatch: B)
        let x = randomBuffer(N * C, seed: 3, scale: 3)
        for i in 0..<N { x.pointer[i * C + 1] += 4 }
        bn.forward(x.pointer, batch: B, training: true)
        for c in 0..<C {
            let xs = (0..<N).map { Double(x.pointer[$0 * C + c]) }
            let mean = xs.reduce(0, +) / Double(N)
            let sq = xs.reduce(0) { $0 + ($1 - mean) * ($1 - mean) }
            let ys = (0..<N).map { Double(bn.output.pointer[$0 * C + c]) }
            let yMean = ys.reduce(0, +) / Double(N)
            let yVar = ys.reduce(0) { $0 + ($1 - yMean) * ($1 - yMean) } / Double(N)
            XCTAssertEqual(yMean, 0, accuracy: 1e-5)
            XCTAssertEqual(yVar, sq / Double(N) / (sq / Double(N) + 1e-5), accuracy: 1e-4)
            XCTAssertEqual(Double(bn.runningMean.pointer[c]), 0.1 * mean, accuracy: 1e-5)
            XCTAssertEqual(Double(bn.runningVar.pointer[c]), 0.9 + 0.1 * sq / Double(N - 1), accuracy: 1e-5)
        }
        bn.forward(x.pointer, batch: B, training: false)
        for c in 0..<C {
            let expected = (x.pointer[c] - bn.runningMean.pointer[c]) / (bn.runningVar.pointer[c] + 1e-5).squareRoot()
            XCTAssertEqual(bn.output.pointer[c], expected, accuracy: 1e-5)
        }
    }

    /// Inverted dropout keeps about 1 − p, scales kept values by 1/(1 − p), is the identity
    /// in evaluation, and the same seed gives the same mask.
    func testDropoutScalingAndDeterminism() {
        let n = 4000
        let x = FloatBuffer([Float](repeating: 1, count: n))
        let a = Dropout(shape: [n], probability: 0.25, maxBatch: 1, seed: 9)
        let b = Dropout(shape: [n], probability: 0.25, maxBatch: 1, seed: 9)
        a.forward(x.pointer, batch: 1, training: true)
        b.forward(x.pointer, batch: 1, training: true)
        XCTAssertEqual(a.output.array, b.output.array)
        let kept = a.output.array.filter { $0 != 0 }
        XCTAssertEqual(Double(kept.count) / Double(n), 0.75, accuracy: 0.03)
        XCTAssertTrue(kept.allSatisfy { abs($0 - 1 / 0.75) < 1e-6 })
        let first = a.output.array
        a.forward(x.pointer, batch: 1, training: true)
        XCTAssertNotEqual(a.output.array, first, "a new mask every training step")
        a.forward(x.pointer, batch: 1, training: false)
        XCTAssertEqual(a.output.array, x.array)
    }

    /// Mean over valid frames only; fractional weights give a weighted mean.
    func testMaskedMeanPoolForward() {
        let pool = MaskedMeanPool(frames: 3, channels: 2, maxBatch: 2)
        let x = FloatBuffer([1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60] as [Float])
        let mask = FloatBuffer([1, 0, 1, 0, 0, 0] as [Float])
        pool.mask.set(mask.pointer, batch: 2)
        pool.forward(x.pointer, batch: 2, training: false)
        XCTAssertEqual(pool.output.array, [2, 20, 0, 0])
        pool.mask.set(nil, batch: 2)
        pool.forward(x.pointer, batch: 2, training: false)
        XCTAssertEqual(pool.output.array, [2, 20, 5, 50])
    }

    /// Huge logits don't overflow; the loss of a uniform prediction is log K; class
    /// weights give the weighted mean.
    func testSoftmaxCrossEntropyValues() {
        let ce = SoftmaxCrossEntropy(classes: 3, maxBatch: 2)
        let big = FloatBuffer([1000, 0, -1000, 0, 0, 0] as [Float])
        let loss = ce.forward(big.pointer, targets: [0, 1], batch: 2)
        XCTAssertEqual(loss, logf(3) / 2, accuracy: 1e-5)   // sample 0 is certain, sample 1 uniform
        XCTAssertTrue(ce.dLogits.array.allSatisfy { $0.isFinite })
        let wrong = ce.forward(big.pointer, targets: [2, 1], batch: 2)
        XCTAssertEqual(wrong, (2000 + logf(3)) / 2, accuracy: 1e-2)
        // Weighted: class 1 counts 3×, so the mean is (1·2000 + 3·log 3) / 4.
        ce.setClassWeights([1, 3, 1])
        XCTAssertEqual(ce.forward(big.pointer, targets: [2, 1], batch: 2), (2000 + 3 * logf(3)) / 4, accuracy: 1e-2)
    }

    /// Kaiming/He normal: weight std ≈ √(2 / fan_in), bias zero, BN gamma 1 beta 0; seeded.
    func testInitialisation() {
        var rng = SplitMix64(seed: 5)
        let conv = Conv1D(frames: 4, inChannels: 16, outChannels: 64, kernel: 5, maxBatch: 1, rng: &rng)
        let w = conv.weight.value.array.map(Double.init)
        let mean = w.reduce(0, +) / Double(w.count)
        let std = (w.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(w.count)).squareRoot()
        XCTAssertEqual(std, (2.0 / 80).squareRoot(), accuracy: 0.01)
        XCTAssertEqual(mean, 0, accuracy: 0.01)
        XCTAssertEqual(conv.bias!.value.array, [Float](repeating: 0, count: 64))
        var rng2 = SplitMix64(seed: 5)
        let again = Conv1D(frames: 4, inChannels: 16, outChannels: 64, kernel: 5, maxBatch: 1, rng: &rng2)
        XCTAssertEqual(again.weight.value.array, conv.weight.value.array)
        let bn = BatchNorm(frames: 4, channels: 3, maxBatch: 1)
        XCTAssertEqual(bn.gamma.value.array, [1, 1, 1])
        XCTAssertEqual(bn.beta.value.array, [0, 0, 0])
        XCTAssertTrue(conv.weight.decays && !conv.bias!.decays && !bn.gamma.decays && !bn.beta.decays)
    }
}
