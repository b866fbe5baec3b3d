import Tensor

/// An exponential moving average of a model's state (parameters and batch-norm running
/// statistics), updated after every optimiser step:
///
///     average = d·average + (1 − d)·live,   d = min(decay, (1 + t) / (10 + t))
///
/// at step t (the ramp keeps the first steps' random weights from lingering, as in
/// TensorFlow's ExponentialMovingAverage with num_updates). The averaged weights
/// sit in a flatter part of the loss than the last step's, which holds up better on
/// clips unlike the training ones. `swap()` exchanges the average and the live state in
/// place, so the model evaluates or saves the average and training goes on from the live
/// weights after a second swap.
public final class WeightAverage {
    public let decay: Float
    /// The averaged copy of each state buffer, in the net's `state` order.
    public let buffers: [FloatBuffer]
    let state: [(name: String, buffer: FloatBuffer)]
    /// Updates so far.
    public var steps = 0

    /// An average over about `epochs` epochs of `stepsPerEpoch` steps each (a time constant
    /// in epochs, so the same setting means the same on a small and a large dataset).
    public convenience init(model: any ClassifierNet, epochs: Double, stepsPerEpoch: Int) {
        self.init(model: model, decay: Float(1 - 1 / max(1, epochs * Double(stepsPerEpoch))))
    }

    public init(model: any ClassifierNet, decay: Float) {
        precondition((0..<1).contains(decay))
        self.decay = decay
        state = model.state
        buffers = state.map { s in
            let b = FloatBuffer(count: s.buffer.count)
            b.pointer.update(from: s.buffer.pointer, count: s.buffer.count)
            return b
        }
    }

    /// One step: the average moves towards the live state.
    public func update() {
        let t = Float(steps)
        let d = min(decay, (1 + t) / (10 + t))
        for (avg, s) in zip(buffers, state) {
            let a = avg.pointer, x = s.buffer.pointer
            for i in 0..<avg.count { a[i] = d * a[i] + (1 - d) * x[i] }
        }
        steps += 1
    }

    /// Exchanges the averaged and the live state (a second call undoes the first).
    public func swap() {
        for (avg, s) in zip(buffers, state) {
            let a = avg.pointer, x = s.buffer.pointer
            for i in 0..<avg.count { let v = a[i]; a[i] = x[i]; x[i] = v }
        }
    }

    /// `body` with the model holding the averaged state; the live state is back afterwards.
    public func withAverage<T>(_ body: () throws -> T) rethrows -> T {
        swap()
        defer { swap() }
        return try body()
    }
}
