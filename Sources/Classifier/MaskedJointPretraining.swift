import Foundation
import KeypointWindows
import Tensor

/// Pretraining without labels (`poseact pretrain`): in each window some joints of some frames
/// are hidden (all their features set to 0, as a joint the pose model missed), and the TCN,
/// through a per-frame linear decoder, learns to give them back. The loss is the squared
/// error over the hidden entries of real frames, each channel divided by its variance in the
/// data (so that positions, velocities and confidences count alike), averaged. What the net
/// learns is how bodies move, from any poses, labelled or not; a run then starts from it
/// (`model.pretrained`) and makes its own head.
///
/// Shapes: windows (B,T,C), C = V·F (the joints in layout order, F features each); the net's
/// frames (B,T,C′) (`TCN.forwardFrames`); the decoder (B·T, C′) → (B·T, C).
public final class MaskedJointPretraining {
    public let net: TCN
    let decoder: Linear
    let optimizer: AdamOptimizer
    let schedule: CosineSchedule
    let windows: [Window]
    let config: TrainingConfig
    let spec: PreprocessingSpec
    /// The share of a real frame's joints hidden.
    public let maskRatio: Double
    let batchSize: Int
    public let stepsPerEpoch: Int
    var augmenter: WindowAugmenter
    let augment: Bool
    /// 1 / each channel's variance over the real frames of `windows`.
    let channelWeights: [Float]
    /// The batch (B,T,C), its frame mask (B,T), the values before hiding (B,T,C), which
    /// entries are hidden (B,T,C: 1 or 0), and dL/d(prediction) (B·T, C).
    let x: FloatBuffer, mask: FloatBuffer, target: FloatBuffer, hidden: FloatBuffer, dPrediction: FloatBuffer
    public private(set) var epochsDone = 0

    public init(config: TrainingConfig, windows: [Window], spec: PreprocessingSpec, classes: Int, maskRatio: Double) {
        precondition(config.model.type == .tcn && windows.count >= 2 && (0.0..<1.0).contains(maskRatio) && maskRatio > 0)
        self.config = config; self.windows = windows; self.spec = spec; self.maskRatio = maskRatio
        batchSize = max(2, min(config.optimizer.batchSize, windows.count))
        let arch = Architecture(config: config, classes: classes)
        net = arch.net(joints: spec.joints, maxBatch: batchSize, seed: config.training.seed) as! TCN
        let t = spec.window, c = spec.channels
        var rng = SplitMix64(seed: config.training.seed &+ 0xDEC0)
        decoder = Linear(inFeatures: config.model.channels, outFeatures: c, maxBatch: batchSize * t, rng: &rng,
                         gain: 0.5.squareRoot(), name: "decoder")
        let decay: AdamOptimizer.WeightDecay = config.optimizer.weightDecay == 0 ? .none
            : config.optimizer.name == .adamw ? .decoupled(Float(config.optimizer.weightDecay)) : .l2(Float(config.optimizer.weightDecay))
        optimizer = AdamOptimizer(parameters: net.parameters.filter { !Backbone.isHead($0.name) } + decoder.parameters, weightDecay: decay)
        let n = windows.count
        stepsPerEpoch = n / batchSize + (n % batchSize >= 2 ? 1 : 0)
        let total = max(1, stepsPerEpoch * config.training.epochs)
        schedule = CosineSchedule(baseLearningRate: Float(config.optimizer.learningRate), minLearningRate: Float(config.optimizer.minLearningRate),
                                  warmupSteps: min(total, Int((config.optimizer.warmupEpochs * Double(stepsPerEpoch)).rounded())), totalSteps: total)
        augment = config.augmentation != .off
        augmenter = WindowAugmenter(spec: config.augmentation, layout: spec.joints, features: spec.features)
        x = FloatBuffer(count: batchSize * t * c); mask = FloatBuffer(count: batchSize * t)
        target = FloatBuffer(count: batchSize * t * c); hidden = FloatBuffer(count: batchSize * t * c)
        dPrediction = FloatBuffer(count: batchSize * t * c)
        channelWeights = Self.inverseVariances(windows, frames: t, channels: c)
    }

    static func inverseVariances(_ windows: [Window], frames t: Int, channels c: Int) -> [Float] {
        var sum = [Double](repeating: 0, count: c), square = [Double](repeating: 0, count: c), count = 0.0
        for w in windows {
            for f in 0..<t where w.mask[f] > 0 {
                for j in 0..<c { let v = Double(w.values[f * c + j]); sum[j] += v; square[j] += v * v }
                count += 1
            }
        }
        return (0..<c).map { j in
            let mean = sum[j] / max(count, 1), variance = square[j] / max(count, 1) - mean * mean
            // A channel that never varies (a constant feature) has nothing to learn.
            return variance > 1e-8 ? Float(1 / variance) : 0
        }
    }

    /// One epoch over the windows in a seeded order; the mean loss of its batches.
    public func runEpoch(progress: ((Int, Int, Double) -> Void)? = nil) -> Double {
        let epoch = epochsDone + 1
        let seed = Trainer.epochSeed(config.training.seed, epoch)
        var rng = SplitMix64(seed: seed)
        for (i, dropout) in net.dropouts.enumerated() { dropout.rng = SplitMix64(seed: seed &+ UInt64(i + 1)) }
        let order = Array(0..<windows.count).shuffledDeterministically(&rng)
        let t = spec.window, c = spec.channels, tc = t * c
        var total = 0.0, batches = 0
        for step in 0..<stepsPerEpoch {
            let b0 = step * batchSize, n = min(batchSize, order.count - b0)
            for i in 0..<n {
                let window = windows[order[b0 + i]]
                (x.pointer + i * tc).update(from: window.values, count: tc)
                (mask.pointer + i * t).update(from: window.mask, count: t)
                if augment {
                    augmenter.augment(values: UnsafeMutableBufferPointer(start: x.pointer + i * tc, count: tc),
                                      mask: UnsafeMutableBufferPointer(start: mask.pointer + i * t, count: t), depth: window.depth, rng: &rng)
                }
            }
            target.pointer.update(from: x.pointer, count: n * tc)
            hide(batch: n, rng: &rng)
            let frames = net.forwardFrames(x.pointer, batch: n, training: true)
            decoder.forward(frames, batch: n * t, training: true)
            let loss = lossAndGradient(rows: n * t)
            guard loss.isFinite else { return .nan }
            optimizer.zeroGrad()
            decoder.backward(dPrediction.pointer, input: frames, batch: n * t)
            net.backwardFrames(decoder.inputGrad.pointer)
            if config.optimizer.gradientClip > 0 { optimizer.clipGradientNorm(Float(config.optimizer.gradientClip)) }
            optimizer.step(learningRate: schedule.learningRate(step: optimizer.step))
            total += loss; batches += 1
            progress?(step + 1, stepsPerEpoch, total / Double(batches))
        }
        epochsDone = epoch
        return total / Double(max(batches, 1))
    }

    /// Hides each joint of each real frame with probability `maskRatio`: its F features set to
    /// 0 in `x`, marked in `hidden`.
    func hide(batch n: Int, rng: inout SplitMix64) {
        let t = spec.window, v = spec.joints.count, f = spec.featuresPerJoint, c = v * f
        hidden.pointer.update(repeating: 0, count: n * t * c)
        for row in 0..<(n * t) where mask.pointer[row] > 0 {
            for joint in 0..<v where rng.uniform() < maskRatio {
                let at = row * c + joint * f
                (x.pointer + at).update(repeating: 0, count: f)
                (hidden.pointer + at).update(repeating: 1, count: f)
            }
        }
    }

    // L = Σ hidden·w_c·(p − y)² / Σ hidden;  dL/dp = 2·hidden·w_c·(p − y) / Σ hidden
    func lossAndGradient(rows: Int) -> Double {
        let c = spec.channels, p = decoder.output.pointer
        // Summed in Double: tens of thousands of terms.
        var count = 0.0
        for i in 0..<(rows * c) { count += Double(hidden.pointer[i]) }
        guard count > 0 else { dPrediction.pointer.update(repeating: 0, count: rows * c); return 0 }
        var loss = 0.0
        let scale = Float(2 / count)
        for r in 0..<rows {
            for j in 0..<c {
                let i = r * c + j, d = (p[i] - target.pointer[i]) * hidden.pointer[i]
                loss += Double(channelWeights[j] * d * d)
                dPrediction.pointer[i] = scale * channelWeights[j] * d
            }
        }
        return loss / count
    }

    /// The pretrained net as a weights file's classifier: its head untrained (a run that
    /// starts from it makes its own), `labels` only naming the head's outputs.
    public func classifier(labels: [String], record: TrainingRecord) -> ActionClassifier {
        ActionClassifier(labels: labels, spec: spec, architecture: Architecture(config: config, classes: labels.count),
                         training: record, model: net)
    }
}
