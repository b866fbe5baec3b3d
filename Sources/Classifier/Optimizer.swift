import Foundation
import Tensor

/// Adam (Kingma & Ba, 2015) and AdamW (Loshchilov & Hutter, 2019) over a model's
/// parameters, with the moment buffers allocated once.
///
/// Per parameter element, at step t = 1, 2, …, with gradient g and learning rate lr:
///   Adam with L2 decay λ:  g ← g + λ·w
///   AdamW with decay λ:    w ← w − lr·λ·w          (decoupled: not scaled by Adam)
///   m ← β1·m + (1 − β1)·g,  v ← β2·v + (1 − β2)·g²
///   w ← w − lr · (m / (1 − β1ᵗ)) / (√(v / (1 − β2ᵗ)) + ε)
/// Weight decay (either kind) applies only to parameters with `decays` set: convolution
/// and linear weights, never biases or normalisation parameters. This matches PyTorch's
/// `torch.optim.Adam(weight_decay:)` and `torch.optim.AdamW` on such a parameter group.
public final class AdamOptimizer {
    public enum WeightDecay: Equatable, Sendable {
        case none
        /// Adam with the L2 penalty folded into the gradient.
        case l2(Float)
        /// AdamW: decoupled weight decay.
        case decoupled(Float)
    }

    public let parameters: [Parameter]
    public let beta1: Float, beta2: Float, eps: Float
    public var weightDecay: WeightDecay
    /// Steps taken so far (t of the last step).
    public internal(set) var step = 0
    let m: [FloatBuffer], v: [FloatBuffer]

    public init(parameters: [Parameter], beta1: Float = 0.9, beta2: Float = 0.999, eps: Float = 1e-8,
                weightDecay: WeightDecay = .none) {
        self.parameters = parameters
        self.beta1 = beta1; self.beta2 = beta2; self.eps = eps
        self.weightDecay = weightDecay
        m = parameters.map { FloatBuffer(count: $0.count) }
        v = parameters.map { FloatBuffer(count: $0.count) }
        held = [Bool](repeating: false, count: parameters.count)
    }

    /// Sets every parameter's gradient to zero (backward passes accumulate).
    public func zeroGrad() { for p in parameters { p.zeroGrad() } }

    /// Keeps the next `step` from moving every parameter but those `moving` names: their
    /// gradients are zeroed and they skip it (no decay, moments unchanged).
    public func holdAll(but moving: (String) -> Bool) {
        for (j, p) in parameters.enumerated() {
            held[j] = !moving(p.name)
            if held[j] { p.zeroGrad() }
        }
    }
    /// Parameters the next step leaves as they are (`holdAll(but:)`).
    private var held: [Bool]

    /// Scales all gradients so that their global L2 norm is at most `maxNorm`; returns the
    /// norm before scaling.
    @discardableResult
    public func clipGradientNorm(_ maxNorm: Float) -> Float {
        var sq = 0.0
        for p in parameters {
            let g = p.grad.pointer
            for i in 0..<p.count { sq += Double(g[i]) * Double(g[i]) }
        }
        let norm = Float(sq.squareRoot())
        if norm > maxNorm && norm > 0 {
            let s = maxNorm / norm
            for p in parameters {
                let g = p.grad.pointer
                for i in 0..<p.count { g[i] *= s }
            }
        }
        return norm
    }

    /// One update of every parameter from its accumulated gradient.
    public func step(learningRate lr: Float) {
        step += 1
        let b1 = beta1, b2 = beta2, eps = eps
        let correction1 = Float(1 - pow(Double(beta1), Double(step)))
        let correction2 = Float(1 - pow(Double(beta2), Double(step)))
        defer { for j in held.indices { held[j] = false } }
        for (j, p) in parameters.enumerated() where !held[j] {
            let w = p.value.pointer, g = p.grad.pointer, mj = m[j].pointer, vj = v[j].pointer
            var l2: Float = 0, decoupled: Float = 0
            if p.decays {
                switch weightDecay {
                case .none: break
                case .l2(let lambda): l2 = lambda
                case .decoupled(let lambda): decoupled = lambda
                }
            }
            for i in 0..<p.count {
                let grad = g[i] + l2 * w[i]
                if decoupled != 0 { w[i] -= lr * decoupled * w[i] }
                mj[i] = b1 * mj[i] + (1 - b1) * grad
                vj[i] = b2 * vj[i] + (1 - b2) * grad * grad
                let mHat = mj[i] / correction1, vHat = vj[i] / correction2
                w[i] -= lr * mHat / (vHat.squareRoot() + eps)
            }
        }
    }
}

/// Learning rate with a linear warmup then a cosine decay (SGDR without restarts).
///
/// For step s = 0, 1, … (the index of the optimiser step about to be taken):
///   s < warmup:          base · (s + 1) / warmup
///   warmup ≤ s < total:  min + (base − min) · ½ (1 + cos(π · (s − warmup) / (total − warmup)))
///   s ≥ total:           min
public struct CosineSchedule: Sendable, Equatable {
    public var baseLearningRate: Float
    public var minLearningRate: Float
    public var warmupSteps: Int
    public var totalSteps: Int

    public init(baseLearningRate: Float, minLearningRate: Float = 0, warmupSteps: Int, totalSteps: Int) {
        precondition(warmupSteps >= 0 && totalSteps >= warmupSteps)
        self.baseLearningRate = baseLearningRate
        self.minLearningRate = minLearningRate
        self.warmupSteps = warmupSteps
        self.totalSteps = totalSteps
    }

    public func learningRate(step s: Int) -> Float {
        if s < warmupSteps { return baseLearningRate * Float(s + 1) / Float(warmupSteps) }
        if s >= totalSteps { return minLearningRate }
        let progress = Double(s - warmupSteps) / Double(totalSteps - warmupSteps)
        return minLearningRate + (baseLearningRate - minLearningRate) * Float(0.5 * (1 + cos(Double.pi * progress)))
    }
}
