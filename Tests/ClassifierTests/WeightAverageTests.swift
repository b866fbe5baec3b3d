@testable import Classifier
import Tensor
import XCTest

final class WeightAverageTests: XCTestCase {
    func constant(_ model: TCN, _ v: Float) {
        for s in model.state { s.buffer.pointer.update(repeating: v, count: s.buffer.count) }
    }

    /// average = d·average + (1 − d)·live with d = min(decay, (1 + t)/(10 + t)) at step t, over
    /// every state buffer (batch-norm statistics included); swap exchanges the two in place.
    func testTheAverageFollowsItsRuleAndSwapsInPlace() {
        let model = TCN(.init(inputChannels: 3, frames: 8, classes: 2, channels: 4, dilations: [1, 2], kernel: 3,
                              dropout: 0, pooling: .mean, inputNorm: true, maxBatch: 2))
        constant(model, 0)
        let average = WeightAverage(model: model, decay: 0.5)
        XCTAssertEqual(average.buffers.count, model.state.count)
        constant(model, 1)
        var expected: Float = 0
        for t in 0..<5 {
            average.update()
            let d = min(Float(0.5), Float(1 + t) / Float(10 + t))
            expected = d * expected + (1 - d)
        }
        for b in average.buffers { XCTAssertEqual(b.array, [Float](repeating: expected, count: b.count)) }
        XCTAssertNotEqual(expected, 1)

        average.swap()
        for s in model.state { XCTAssertEqual(s.buffer.array, [Float](repeating: expected, count: s.buffer.count)) }
        for b in average.buffers { XCTAssertEqual(b.array, [Float](repeating: 1, count: b.count)) }
        let inside = average.withAverage { model.state.map(\.buffer.array) }
        XCTAssertEqual(inside, average.buffers.map { [Float](repeating: 1, count: $0.count) }, "swapped back inside")
        average.swap()
        for s in model.state { XCTAssertEqual(s.buffer.array, [Float](repeating: 1, count: s.buffer.count)) }

        // A time constant in epochs: 1 − 1/(epochs · steps per epoch).
        XCTAssertEqual(WeightAverage(model: model, epochs: 2, stepsPerEpoch: 50).decay, 1 - 1.0 / 100)
    }
}
