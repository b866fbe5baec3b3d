import Keypoints
import Tensor
import XCTest
@testable import Classifier

/// The layers' loops split over two threads (`LayerThreads`, a training run's
/// `training.threads: 2`) give the one-thread results, and the same bits every time.
final class LayerThreadsTests: XCTestCase {
    override func tearDown() { LayerThreads.set(1) }

    /// Logits, input gradient and parameter gradients of one training step.
    private func step(_ net: any ClassifierNet, x: FloatBuffer, mask: FloatBuffer, targets: [Int], batch B: Int,
                      classes K: Int) -> [Float] {
        for p in net.parameters { p.zeroGrad() }
        let logits = net.forward(x.pointer, mask: mask.pointer, batch: B, training: true)
        var out = Array(UnsafeBufferPointer(start: logits, count: B * K))
        let ce = SoftmaxCrossEntropy(classes: K, maxBatch: B)
        _ = ce.forward(logits, targets: targets, batch: B)
        net.backward(ce.dLogits.pointer)
        out += net.inputGrad.array.prefix(x.count)
        for p in net.parameters { out += p.grad.array }
        return out
    }

    /// Big enough that every split loop is cut into pieces: 8 windows × 18 joints × 16 frames
    /// is 2,304 rows for the graph nets' batch norms (512 a piece), 8 samples for the graph
    /// convolution's; the TCN's 8 × 16 rows stay whole in batch norm but not in ReLU.
    func testTwoThreadsGiveOneThreadsResultsAndTheSameBitsEachTime() {
        let layout = Skeleton.visionLayout, B = 8, T = 16, V = layout.count, F = 3, K = 5
        let nets: [(String, () -> any ClassifierNet)] = [
            ("stgcn", { STGCN(.init(graph: SkeletonGraph(layout: layout), features: F, frames: T, classes: K, blocks: [16, 32],
                                    plusPlus: false, dropout: 0, inputNorm: true, maxBatch: B, seed: 301)) }),
            ("stgcn++", { STGCN(.init(graph: SkeletonGraph(layout: layout), features: F, frames: T, classes: K, blocks: [16, 32],
                                      plusPlus: true, dropout: 0, inputNorm: true, maxBatch: B, seed: 302)) }),
            ("tcn", { TCN(.init(inputChannels: V * F, frames: T, classes: K, channels: 512, dilations: [1, 2],
                                kernel: 5, dropout: 0, pooling: .mean, inputNorm: false, maxBatch: B, seed: 303)) }),
        ]
        let x = randomBuffer(B * T * V * F, seed: 304)
        var maskValues = [Float](repeating: 1, count: B * T)
        for t in 10..<T { maskValues[3 * T + t] = 0 }
        let mask = FloatBuffer(maskValues), targets = (0..<B).map { $0 % K }
        for (name, make) in nets {
            LayerThreads.set(1)
            let one = step(make(), x: x, mask: mask, targets: targets, batch: B, classes: K)
            LayerThreads.set(2)
            XCTAssertGreaterThan(LayerThreads.pieces(B * V * T, minPerPiece: BatchNorm.rowsPerPiece), 1)
            let two = step(make(), x: x, mask: mask, targets: targets, batch: B, classes: K)
            let again = step(make(), x: x, mask: mask, targets: targets, batch: B, classes: K)
            XCTAssertEqual(two, again, "\(name): two runs on two threads differ")
            // Only the order of the sums differs (per piece, then the pieces): float rounding,
            // a few ulps of the largest value in each sum.
            let scale = one.map(abs).max()!
            var worst: Float = 0
            for (a, b) in zip(one, two) { worst = max(worst, abs(a - b)) }
            print("\(name): two threads against one: largest difference \(worst), largest value \(scale)")
            XCTAssertLessThan(worst, 1e-5 * scale, "\(name): two threads differ from one by \(worst) (largest value \(scale))")
            XCTAssertEqual(one.count, two.count)
        }
    }
}
