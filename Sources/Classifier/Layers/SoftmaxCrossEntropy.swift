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
///
/// With mixup (a second target y'_b and a share λ), sample b is two samples in one: its
/// loss is λ·w[y_b]·CE(y_b) + (1 − λ)·w[y'_b]·CE(y'_b), and its weight in the mean
/// λ·w[y_b] + (1 − λ)·w[y'_b] (λ = 1: no mixing).
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

    /// The second target of each sample and the share λ of the first, for mixup.
    public struct Mix {
        public let partners: UnsafePointer<Int>
        public let lambda: Float
        public init(partners: UnsafePointer<Int>, lambda: Float) { self.partners = partners; self.lambda = lambda }
    }

    // logits (B,O), targets (B), optional sample weights s (B) and mix (y', λ) → probs (B,O) =
    // softmax(logits), returns L = Σ_b s_b·(λ·w[y_b]·CE_b(y_b) + (1−λ)·w[y'_b]·CE_b(y'_b)) / W,
    // W = Σ_b s_b·(λ·w[y_b] + (1−λ)·w[y'_b]), CE_b(y) = −Σ_o q_y[o]·log p_b[o], and writes
    //   dlogits[b,o] = s_b / W · ((λ·w[y_b] + (1−λ)·w[y'_b])·p_b[o] − λ·w[y_b]·q_{y_b}[o] − (1−λ)·w[y'_b]·q_{y'_b}[o]).
    // Without mix, y' = y and λ = 1. log-softmax is taken as (z − max) − log Σ exp(z − max),
    // so large logits don't overflow.
    @discardableResult
    public func forward(_ logits: UnsafePointer<Float>, targets: UnsafePointer<Int>, batch B: Int,
                        sampleWeights: UnsafePointer<Float>? = nil, mix: Mix? = nil) -> Float {
        precondition(B <= maxBatch)
        let O = classes, p = probs.pointer, d = dLogits.pointer, w = classWeights.pointer
        let lambda = mix?.lambda ?? 1
        precondition((0...1).contains(lambda), "mixup share \(lambda) outside 0…1")
        // −Σ_o q_y[o]·log p[o] for sample b's log-probabilities.
        func crossEntropy(_ logP: (Int) -> Double, _ y: Int) -> Double {
            var l = -logP(y)
            if smoothing > 0 {
                var meanLogP = 0.0
                for o in 0..<O { meanLogP += logP(o) }
                meanLogP /= Double(O)
                l = (1 - Double(smoothing)) * l - Double(smoothing) * meanLogP
            }
            return l
        }
        var totalWeight = 0.0, loss = 0.0
        for b in 0..<B {
            let z = logits + b * O, pb = p + b * O
            let y = targets[b], y2 = mix?.partners[b] ?? y
            precondition(y >= 0 && y < O && y2 >= 0 && y2 < O, "target \(y) or \(y2) outside 0..<\(O)")
            var maxZ = z[0]
            for o in 1..<O where z[o] > maxZ { maxZ = z[o] }
            var sum: Float = 0
            for o in 0..<O { pb[o] = expf(z[o] - maxZ); sum += pb[o] }
            let inv = 1 / sum
            for o in 0..<O { pb[o] *= inv }
            let logSum = Double(logf(sum))
            let logP = { (o: Int) in Double(z[o] - maxZ) - logSum }
            let s = Double(sampleWeights?[b] ?? 1)
            let w1 = Double(lambda) * Double(w[y]), w2 = Double(1 - lambda) * Double(w[y2])
            loss += s * (w1 * crossEntropy(logP, y) + (w2 > 0 ? w2 * crossEntropy(logP, y2) : 0))
            totalWeight += s * (w1 + w2)
        }
        let scale: Float = totalWeight > 0 ? Float(1 / totalWeight) : 0
        let off = smoothing / Float(O), on = 1 - smoothing + off
        for b in 0..<B {
            let y = targets[b], y2 = mix?.partners[b] ?? y, s = (sampleWeights?[b] ?? 1) * scale
            let w1 = lambda * w[y], w2 = (1 - lambda) * w[y2]
            for o in 0..<O {
                let q = w1 * (o == y ? on : off) + w2 * (o == y2 ? on : off)
                d[b * O + o] = s * ((w1 + w2) * p[b * O + o] - q)
            }
        }
        return totalWeight > 0 ? Float(loss / totalWeight) : 0
    }

    @discardableResult
    public func forward(_ logits: UnsafePointer<Float>, targets: [Int], batch B: Int) -> Float {
        precondition(targets.count >= B)
        return targets.withUnsafeBufferPointer { forward(logits, targets: $0.baseAddress!, batch: B) }
    }
}
