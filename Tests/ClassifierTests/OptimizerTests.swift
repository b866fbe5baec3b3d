import Classifier
import Tensor
import XCTest

final class OptimizerTests: XCTestCase {
    /// Two steps of Adam on w = [1, −2] with gradients [0.5, −1] then [0.25, 2], lr 0.1,
    /// β = (0.9, 0.999), ε = 1e-8, by hand:
    ///   step 1: m = 0.1g, v = 0.001g², m̂ = g, v̂ = g² → w −= 0.1·sign(g) → [0.9, −1.9]
    ///   step 2: m = [0.0700, 0.1100], v = [0.00031225, 0.004999]; m̂ = m/0.19, v̂ = v/0.001999
    ///           → Δ = 0.1·m̂/√v̂ = [0.0932180…, 0.0366104…] → w = [0.8067820, −1.9366104]
    func testAdamTwoStepsByHand() {
        let p = Parameter(name: "w", shape: [2], decays: true)
        p.value.pointer.update(from: [1, -2], count: 2)
        let adam = AdamOptimizer(parameters: [p])
        p.grad.pointer.update(from: [0.5, -1], count: 2)
        adam.step(learningRate: 0.1)
        XCTAssertEqual(p.value.array[0], 0.9, accuracy: 1e-6)
        XCTAssertEqual(p.value.array[1], -1.9, accuracy: 1e-6)
        adam.zeroGrad()
        XCTAssertEqual(p.grad.array, [0, 0])
        p.grad.pointer.update(from: [0.25, 2], count: 2)
        adam.step(learningRate: 0.1)
        XCTAssertEqual(p.value.array[0], 0.8067820, accuracy: 1e-6)
        XCTAssertEqual(p.value.array[1], -1.9366104, accuracy: 1e-6)
        XCTAssertEqual(adam.step, 2)
    }

    /// AdamW, λ = 0.5, lr 0.1, one step on w = [2] with g = [1]: decay first, w = 2·(1 − 0.05)
    /// = 1.9, then the Adam step of 0.1 → 1.8. Adam with L2 λ = 0.5: g = 1 + 0.5·2 = 2, the
    /// first Adam step is still lr·sign(g) → 1.9. A bias (`decays` false) gets no decay
    /// from either: 2 → 1.9.
    func testWeightDecayKinds() {
        func oneStep(_ decay: AdamOptimizer.WeightDecay, decays: Bool) -> Float {
            let p = Parameter(name: "p", shape: [1], decays: decays)
            p.value.pointer[0] = 2
            p.grad.pointer[0] = 1
            AdamOptimizer(parameters: [p], weightDecay: decay).step(learningRate: 0.1)
            return p.value.pointer[0]
        }
        XCTAssertEqual(oneStep(.decoupled(0.5), decays: true), 1.8, accuracy: 1e-6)
        XCTAssertEqual(oneStep(.decoupled(0.5), decays: false), 1.9, accuracy: 1e-6)
        XCTAssertEqual(oneStep(.l2(0.5), decays: true), 1.9, accuracy: 1e-6)
        XCTAssertEqual(oneStep(.none, decays: true), 1.9, accuracy: 1e-6)

        // L2 does change the second step: g1 = 1 + 1 = 2, w = 1.9; g2 = 0 + 0.5·1.9 = 0.95.
        // m = 0.9·0.2 + 0.1·0.95 = 0.275, v = 0.999·0.004 + 0.001·0.9025 = 0.0048985;
        // Δ = 0.1·(0.275/0.19)/√(0.0048985/0.001999) = 0.0924600… → w = 1.8075400.
        let p = Parameter(name: "p", shape: [1], decays: true)
        p.value.pointer[0] = 2
        let adam = AdamOptimizer(parameters: [p], weightDecay: .l2(0.5))
        p.grad.pointer[0] = 1
        adam.step(learningRate: 0.1)
        adam.zeroGrad()
        adam.step(learningRate: 0.1)
        XCTAssertEqual(p.value.pointer[0], 1.8075400, accuracy: 1e-6)
    }

    func testGradientClipping() {
        let p = Parameter(name: "p", shape: [2], decays: true)
        p.grad.pointer.update(from: [3, 4], count: 2)
        let adam = AdamOptimizer(parameters: [p])
        XCTAssertEqual(adam.clipGradientNorm(1), 5, accuracy: 1e-6)
        XCTAssertEqual(p.grad.array[0], 0.6, accuracy: 1e-6)
        XCTAssertEqual(p.grad.array[1], 0.8, accuracy: 1e-6)
        XCTAssertEqual(adam.clipGradientNorm(10), 1, accuracy: 1e-6)
        XCTAssertEqual(p.grad.array[0], 0.6, accuracy: 1e-6)
    }

    /// Warmup 10 steps to 1e-3, cosine down to 1e-5 at step 110.
    func testCosineScheduleWithWarmup() {
        let s = CosineSchedule(baseLearningRate: 1e-3, minLearningRate: 1e-5, warmupSteps: 10, totalSteps: 110)
        XCTAssertEqual(s.learningRate(step: 0), 1e-4, accuracy: 1e-9)
        XCTAssertEqual(s.learningRate(step: 4), 5e-4, accuracy: 1e-9)
        XCTAssertEqual(s.learningRate(step: 9), 1e-3, accuracy: 1e-9)
        XCTAssertEqual(s.learningRate(step: 10), 1e-3, accuracy: 1e-9)
        XCTAssertEqual(s.learningRate(step: 35), 1e-5 + 0.99e-3 * 0.5 * (1 + cos(Float.pi / 4)), accuracy: 1e-9)
        XCTAssertEqual(s.learningRate(step: 60), 5.05e-4, accuracy: 1e-9)
        XCTAssertEqual(s.learningRate(step: 110), 1e-5, accuracy: 1e-9)
        XCTAssertEqual(s.learningRate(step: 500), 1e-5, accuracy: 1e-9)
        let noWarmup = CosineSchedule(baseLearningRate: 1, warmupSteps: 0, totalSteps: 4)
        XCTAssertEqual((0...4).map { noWarmup.learningRate(step: $0) },
                       [1, 0.8535534, 0.5, 0.1464466, 0], accuracy: 1e-6)
    }
}

private func XCTAssertEqual(_ a: [Float], _ b: [Float], accuracy: Float, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(a.count, b.count, file: file, line: line)
    for (x, y) in zip(a, b) { XCTAssertEqual(x, y, accuracy: accuracy, file: file, line: line) }
}
