@testable import Classifier
import Tensor
import XCTest

/// Gradient checks of every layer against central finite differences (see GradientCheck).
final class LayerGradientTests: XCTestCase {
    func testConv1DGradients() {
        // Odd kernel with dilation (padding on both sides), and an even kernel (extra
        // padding on the right), with and without bias.
        for (k, d, hasBias) in [(5, 1, true), (3, 2, true), (4, 1, false)] {
            var rng = SplitMix64(seed: 11)
            let conv = Conv1D(frames: 7, inChannels: 3, outChannels: 4, kernel: k, dilation: d, bias: hasBias,
                              maxBatch: 3, rng: &rng)
            if let b = conv.bias { for i in 0..<b.count { b.value.pointer[i] = Float(i) * 0.1 - 0.2 } }
            let x = randomBuffer(2 * 7 * 3, seed: 12)
            let report = GradCheck.check(conv, x: x, batch: 2, training: true, seed: 13)
            log("Conv1D k=\(k) d=\(d) bias=\(hasBias)", report)
        }
    }

    func testBatchNormGradientsTrainingAndEval() {
        let bn = BatchNorm(frames: 6, channels: 4, maxBatch: 3)
        for c in 0..<4 {
            bn.gamma.value.pointer[c] = 0.5 + 0.3 * Float(c)
            bn.beta.value.pointer[c] = 0.1 * Float(c) - 0.1
            bn.runningMean.pointer[c] = 0.2 * Float(c)
            bn.runningVar.pointer[c] = 0.5 + Float(c)
        }
        // Not zero-mean, not unit-variance input, so the statistics matter.
        let x = randomBuffer(3 * 6 * 4, seed: 21, scale: 2)
        for i in 0..<x.count { x.pointer[i] += 0.5 }
        log("BatchNorm train", GradCheck.check(bn, x: x, batch: 3, training: true, seed: 22))
        log("BatchNorm eval", GradCheck.check(bn, x: x, batch: 3, training: false, seed: 23))
    }

    func testReLUGradients() {
        let relu = ReLU(shape: [6, 4], maxBatch: 2)
        // Inputs at least 0.1 from the kink: a ±1e-2 step never crosses it.
        let x = randomBuffer(2 * 6 * 4, seed: 31, awayFromZero: 0.1)
        log("ReLU", GradCheck.check(relu, x: x, batch: 2, training: true, seed: 32))
    }

    func testDropoutGradientsWithFixedMask() {
        let dropout = Dropout(shape: [6, 4], probability: 0.4, maxBatch: 2, seed: 41)
        let x = randomBuffer(2 * 6 * 4, seed: 42)
        dropout.forward(x.pointer, batch: 2, training: true)
        dropout.freezeMask = true
        let kept = dropout.mask.array.prefix(48).filter { $0 != 0 }.count
        XCTAssert(kept > 0 && kept < 48, "mask keeps \(kept) of 48: the check would not cover both cases")
        log("Dropout", GradCheck.check(dropout, x: x, batch: 2, training: true, seed: 43))
    }

    func testMaskedMeanPoolGradients() {
        let pool = MaskedMeanPool(frames: 6, channels: 4, maxBatch: 3)
        // Sample 0: all frames valid; sample 1: first 4; sample 2: none (pools to zeros).
        let mask = FloatBuffer([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0] as [Float])
        pool.mask.set(mask.pointer, batch: 3)
        let x = randomBuffer(3 * 6 * 4, seed: 51)
        log("MaskedMeanPool", GradCheck.check(pool, x: x, batch: 3, training: true, seed: 52))
        // The empty sample: zeros out, zero gradient.
        pool.forward(x.pointer, batch: 3, training: false)
        XCTAssertEqual(Array(pool.output.array[8..<12]), [0, 0, 0, 0])
        XCTAssertEqual(Array(pool.inputGrad.array[48..<72]), [Float](repeating: 0, count: 24))
    }

    func testMaskedMaxPoolGradients() {
        let pool = MaskedMaxPool(frames: 6, channels: 4, maxBatch: 3)
        // Sample 0: all frames valid; sample 1: first 4; sample 2: none (pools to zeros).
        let mask = FloatBuffer([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0] as [Float])
        pool.mask.set(mask.pointer, batch: 3)
        let x = randomBuffer(3 * 6 * 4, seed: 53)
        // Padded frames never win, even when larger than every valid one.
        for c in 0..<4 { x.pointer[(1 * 6 + 5) * 4 + c] = 100 }
        let winners = { pool.winner.flatMap { w in (0..<5).map { (w >> $0) & 1 == 1 } } }
        log("MaskedMaxPool", GradCheck.check(pool, x: x, batch: 3, training: true, seed: 54, kinks: winners))
        pool.forward(x.pointer, batch: 3, training: false)
        for c in 0..<4 {
            let valid = (0..<4).map { x.pointer[(1 * 6 + $0) * 4 + c] }
            XCTAssertEqual(pool.output.pointer[4 + c], valid.max()!)
        }
        XCTAssertEqual(Array(pool.output.array[8..<12]), [0, 0, 0, 0])
    }

    func testLinearGradients() {
        var rng = SplitMix64(seed: 61)
        let linear = Linear(inFeatures: 5, outFeatures: 3, maxBatch: 3, rng: &rng)
        for i in 0..<3 { linear.bias.value.pointer[i] = Float(i) * 0.3 }
        let x = randomBuffer(3 * 5, seed: 62)
        log("Linear", GradCheck.check(linear, x: x, batch: 3, training: true, seed: 63))
    }

    func testTCNBlockGradientsResidual() {
        // A whole block with residual (C = OC), BN in training mode, dropout mask frozen.
        var rng = SplitMix64(seed: 71)
        let block = TCNBlock(frames: 8, inChannels: 4, outChannels: 4, kernel: 5, dilation: 2, dropout: 0.2,
                             maxBatch: 2, rng: &rng, name: "b")
        XCTAssertTrue(block.residual)
        let x = randomBuffer(2 * 8 * 4, seed: 72)
        block.forward(x.pointer, batch: 2, training: true)
        block.dropout.freezeMask = true
        let report = GradCheck.check(block, x: x, batch: 2, training: true, seed: 73,
                                     kinks: { block.norm.output.array.prefix(2 * 8 * 4).map { $0 > 0 } })
        log("TCNBlock residual", report)
    }

    func testSoftmaxCrossEntropyGradients() {
        // With and without class weights and label smoothing; dL/dlogits against finite
        // differences of the loss.
        for (weights, smoothing) in [(nil, 0), ([0.5, 2.0, 1.0, 3.0] as [Float]?, 0), (nil, 0.1), ([0.5, 2.0, 1.0, 3.0], 0.2)] as [([Float]?, Float)] {
            let B = 3, O = 4
            let ce = SoftmaxCrossEntropy(classes: O, maxBatch: 3, classWeights: weights)
            ce.smoothing = smoothing
            let logits = randomBuffer(B * O, seed: 81, scale: 2)
            let targets = [2, 0, 3]
            ce.forward(logits.pointer, targets: targets, batch: B)
            let analytic = ce.dLogits.array
            var report = GradientReport()
            for i in 0..<(B * O) {
                let numeric = GradCheck.numeric(logits.pointer, i) {
                    Double(ce.forward(logits.pointer, targets: targets, batch: B))
                }
                report.compare(Double(analytic[i]), numeric, floor: GradCheck.floor, label: "dlogits[\(i)]")
            }
            GradCheck.assertPasses(report)
            log("SoftmaxCrossEntropy weights=\(weights != nil) smoothing=\(smoothing)", report)
        }
    }

    func testSoftmaxCrossEntropyMixupGradients() {
        // Mixup: each sample has a second target and λ; with and without class weights,
        // sample weights and smoothing. dL/dlogits against finite differences of the loss.
        let B = 3, O = 4
        let targets = [2, 0, 3], partners = [1, 0, 2], sampleWeights: [Float] = [1, 0.5, 2]
        for (weights, smoothing, lambda) in [(nil, 0, 0.3), ([0.5, 2.0, 1.0, 3.0] as [Float]?, 0, 0.7), ([0.5, 2.0, 1.0, 3.0], 0.1, 0.5)] as [([Float]?, Float, Float)] {
            let ce = SoftmaxCrossEntropy(classes: O, maxBatch: B, classWeights: weights)
            ce.smoothing = smoothing
            let logits = randomBuffer(B * O, seed: 82, scale: 2)
            func loss() -> Float {
                partners.withUnsafeBufferPointer { p in
                    targets.withUnsafeBufferPointer { t in
                        sampleWeights.withUnsafeBufferPointer { s in
                            ce.forward(logits.pointer, targets: t.baseAddress!, batch: B, sampleWeights: s.baseAddress!,
                                       mix: .init(partners: p.baseAddress!, lambda: lambda))
                        }
                    }
                }
            }
            let l = loss()
            let analytic = ce.dLogits.array
            // The loss is λ·CE(y) + (1 − λ)·CE(y') per sample, here written out for sample weights
            // s and class weights w: Σ s·(λ·w[y]·CE(y) + (1−λ)·w[y']·CE(y')) / Σ s·(λ·w[y] + (1−λ)·w[y']).
            let probs = ce.probs.array, w = weights ?? [1, 1, 1, 1]
            var num = 0.0, den = 0.0
            for b in 0..<B {
                func crossEntropy(_ y: Int) -> Double {
                    let logP = (0..<O).map { log(Double(probs[b * O + $0])) }
                    return -(1 - Double(smoothing)) * logP[y] - Double(smoothing) * logP.reduce(0, +) / Double(O)
                }
                let w1 = Double(lambda * w[targets[b]]), w2 = Double((1 - lambda) * w[partners[b]])
                num += Double(sampleWeights[b]) * (w1 * crossEntropy(targets[b]) + w2 * crossEntropy(partners[b]))
                den += Double(sampleWeights[b]) * (w1 + w2)
            }
            XCTAssertEqual(Double(l), num / den, accuracy: 1e-5, "float rounding of a sum of a few logs")
            var report = GradientReport()
            for i in 0..<(B * O) {
                let numeric = GradCheck.numeric(logits.pointer, i) { Double(loss()) }
                report.compare(Double(analytic[i]), numeric, floor: GradCheck.floor, label: "dlogits[\(i)]")
            }
            GradCheck.assertPasses(report)
            log("SoftmaxCrossEntropy mixup λ=\(lambda) weights=\(weights != nil) smoothing=\(smoothing)", report)
        }
    }
}
