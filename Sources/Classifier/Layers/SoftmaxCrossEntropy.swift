import Foundation
import Tensor

/// Softmax + cross-entropy loss with optional class weights, fused (the gradient of the
/// pair is simply p − onehot).
///
/// Shapes: logits is (B,O), targets is (B) class indices in 0..<O, weights is (O),
/// probs and dLogits are (B,O).
///
/// With class weights w the loss is PyTorch's weighted mean,
///   L = Σ_b w[y_b]·(−log p_b[y_b]) / Σ_b w[y_b],
/// so a batch's loss stays on the same scale whatever its class mix; without weights
/// (all w = 1) it is the plain mean over the batch.
///
/// With label smoothing ε the target of sample b is q_b = (1 − ε)·onehot(y_b) + ε/O, and
/// its loss −Σ_o q_b[o]·log p_b[o] (ε = 0: the plain cross-entropy).
public final class SoftmaxCrossEntropy {
    public let classes: Int, maxBatch: Int
    /// Label smoothing ε in [0, 1).
    public var smoothing: Float = 0
    /// Per-class weights (O), all 1 by default.
    public let classWeights: FloatBuffer
    /// Softmax probabilities of the last forward, (B,O).
    public let probs: FloatBuffer
    /// dL/dlogits of the last forward, (B,O).
    public let dLogits: FloatBuffer

    public init(classes: Int, maxBatch: Int, classWeights: [Float]? = nil) {
        precondition(classes > 0 && maxBatch > 0)
        self.classes = classes; self.maxBatch = maxBatch
        self.classWeights = FloatBuffer(count: classes)
        probs = FloatBuffer(count: maxBatch * classes)
        dLogits = FloatBuffer(count: maxBatch * classes)
        setClassWeights(classWeights)
    }

    /// Sets the class weights (nil: all 1). Weights must be ≥ 0.
    public func setClassWeights(_ w: [Float]?) {
        if let w {
            precondition(w.count == classes && w.allSatisfy { $0 >= 0 })
            for o in 0..<classes { classWeights.pointer[o] = w[o] }
        } else {
            classWeights.pointer.update(repeating: 1, count: classes)
        }
    }

    // logits (B,O), targets (B), optional sample weights s (B) → probs (B,O) = softmax(logits),
    // returns L (above, with w[y_b]·s_b as sample b's weight), and writes
    // dlogits[b,o] = w[y_b]·s_b / Σ_b w[y_b]·s_b · (probs[b,o] − q_b[o]).
    // log-softmax is taken as (z − max) − log Σ exp(z − max), so large logits don't overflow.
    @discardableResult
    public func forward(_ logits: UnsafePointer<Float>, targets: UnsafePointer<Int>, batch B: Int,
                        sampleWeights: UnsafePointer<Float>? = nil) -> Float {
        precondition(B <= maxBatch)
        let O = classes, p = probs.pointer, d = dLogits.pointer, w = classWeights.pointer
        var totalWeight = 0.0, loss = 0.0
        for b in 0..<B {
            let z = logits + b * O, pb = p + b * O
            let y = targets[b]
            precondition(y >= 0 && y < O, "target \(y) outside 0..<\(O)")
            var maxZ = z[0]
            for o in 1..<O where z[o] > maxZ { maxZ = z[o] }
            var sum: Float = 0
            for o in 0..<O { pb[o] = expf(z[o] - maxZ); sum += pb[o] }
            let inv = 1 / sum
            for o in 0..<O { pb[o] *= inv }
            let logSum = Double(logf(sum))
            var sampleLoss = -(Double(z[y] - maxZ) - logSum)
            if smoothing > 0 {
                var meanLogP = 0.0
                for o in 0..<O { meanLogP += Double(z[o] - maxZ) - logSum }
                meanLogP /= Double(O)
                sampleLoss = (1 - Double(smoothing)) * sampleLoss - Double(smoothing) * meanLogP
            }
            let wb = Double(w[y]) * Double(sampleWeights?[b] ?? 1)
            loss += wb * sampleLoss
            totalWeight += wb
        }
        let scale: Float = totalWeight > 0 ? Float(1 / totalWeight) : 0
        let off = smoothing / Float(O), on = 1 - smoothing + off
        for b in 0..<B {
            let y = targets[b], wb = w[y] * (sampleWeights?[b] ?? 1) * scale
            for o in 0..<O { d[b * O + o] = wb * (p[b * O + o] - (o == y ? on : off)) }
        }
        return totalWeight > 0 ? Float(loss / totalWeight) : 0
    }

    @discardableResult
    public func forward(_ logits: UnsafePointer<Float>, targets: [Int], batch B: Int) -> Float {
        precondition(targets.count >= B)
        return targets.withUnsafeBufferPointer { forward(logits, targets: $0.baseAddress!, batch: B) }
    }
}
