import Basics
import Evaluation
import Foundation
import KeypointWindows
import Tensor

/// The training loop: mini-batches of augmented windows through the net, softmax
/// cross-entropy, Adam/AdamW with a warm-up + cosine learning rate, validation after each
/// epoch, early stopping on the validation accuracy (ties broken by the lower loss: the
/// loss alone keeps rising on a small validation set while the accuracy still improves).
///
/// Reproducible: every epoch's shuffle, augmentation and dropout draw from generators
/// seeded by (seed, epoch), so the same seed and threads give the same model bit for bit,
/// and a run resumed from a checkpoint is the run that was not interrupted.
public final class Trainer {
    public let config: TrainingConfig
    public let data: TrainingData
    public let classifier: ActionClassifier
    public var model: any ClassifierNet { classifier.model }
    let optimizer: AdamOptimizer
    let loss: SoftmaxCrossEntropy
    let schedule: CosineSchedule
    let batchSize: Int
    let stepsPerEpoch: Int
    let trainTargets: [Int], validationTargets: [Int]
    /// Per training window, its weight in the loss.
    let windowWeights: [Float]
    /// The moving average of the weights that becomes the model (training.ema_epochs), or nil.
    public let average: WeightAverage?

    /// Epochs finished so far, their records, and the early-stopping state.
    public internal(set) var history: [EpochRecord] = []
    /// The epoch with the best validation accuracy (ties: lower loss); the last without validation.
    public internal(set) var bestEpoch = 0
    /// The epoch that is the model: the last, or `bestEpoch` (training.keep).
    public var keptEpoch: Int {
        config.training.keep == .best && !data.validation.isEmpty ? bestEpoch : epochsDone
    }
    public internal(set) var bestValidationLoss = Double.infinity
    public internal(set) var bestValidationAccuracy = -1.0
    public var epochsDone: Int { history.count }
    /// Whether early stopping has ended the run.
    public var stoppedEarly: Bool {
        config.training.patience > 0 && !data.validation.isEmpty && epochsDone - bestEpoch >= config.training.patience
    }
    public var finished: Bool { epochsDone >= config.training.epochs || stoppedEarly }

    // Batch buffers: (B,T,C) values, (B,T) mask, (B) targets; for mixup, the batch's
    // partner windows (B,T,C), (B,T) and their targets (B).
    let x: FloatBuffer, mask: FloatBuffer
    var targets: [Int]
    var batchWeights: [Float]
    let partnerX: FloatBuffer, partnerMask: FloatBuffer
    var partnerTargets: [Int]
    /// The training windows' augmentation, its tables and scratch made once.
    let augment: Bool
    var augmenter: WindowAugmenter

    /// `classifier`: the net of a checkpoint, resumed; else a new one, from `backbone`'s
    /// weights (all but the head) when there is one.
    public init(config: TrainingConfig, data: TrainingData, classifier: ActionClassifier? = nil, backbone: Backbone? = nil) {
        self.config = config
        self.data = data
        batchSize = Self.batchSize(config: config, data: data)
        let arch = Architecture(config: config, classes: data.labels.count)
        if let classifier {
            precondition(classifier.architecture == arch && classifier.model.maxBatch == batchSize)
            self.classifier = classifier
        } else {
            self.classifier = ActionClassifier(labels: data.labels, spec: data.spec, architecture: arch,
                                               model: arch.net(joints: data.spec.joints, maxBatch: batchSize, seed: config.training.seed))
            backbone?.copy(into: self.classifier.model)
        }
        let decay: AdamOptimizer.WeightDecay = config.optimizer.weightDecay == 0 ? .none
            : config.optimizer.name == .adamw ? .decoupled(Float(config.optimizer.weightDecay)) : .l2(Float(config.optimizer.weightDecay))
        optimizer = AdamOptimizer(parameters: self.classifier.model.parameters, weightDecay: decay)
        trainTargets = data.classIndex(data.train)
        validationTargets = data.classIndex(data.validation)
        // Window weights: 1, or 1/(windows of its clip) scaled to a mean of 1 (each clip
        // then counts the same, as clip-level accuracy counts them).
        var perClip: [String: Int] = [:]
        for w in data.train { perClip[w.clipID, default: 0] += 1 }
        let n = data.train.count
        windowWeights = config.training.windowWeighting == .clip
            ? data.train.map { Float(n) / Float(perClip.count * perClip[$0.clipID]!) }
            : [Float](repeating: 1, count: n)
        var weights: [Float]? = nil
        if config.training.classWeighting == .balanced {
            // w_c = W / (K · W_c), W_c the summed window weight of class c: a class with half
            // the weight counts twice as much per window.
            var sums = [Double](repeating: 0, count: data.labels.count)
            for (t, w) in zip(trainTargets, windowWeights) { sums[t] += Double(w) }
            let total = sums.reduce(0, +), k = Double(data.labels.count)
            weights = sums.map { $0 == 0 ? 0 : Float(total / (k * $0)) }
        }
        loss = SoftmaxCrossEntropy(classes: data.labels.count, maxBatch: batchSize, classWeights: weights)
        loss.smoothing = Float(config.training.labelSmoothing)
        // A last batch of one window is left out: batch norm cannot normalise a single sample.
        stepsPerEpoch = n / batchSize + (n % batchSize >= 2 ? 1 : 0)
        let total = max(1, stepsPerEpoch * config.training.epochs)
        let warmup = min(total, Int((config.optimizer.warmupEpochs * Double(stepsPerEpoch)).rounded()))
        schedule = CosineSchedule(baseLearningRate: Float(config.optimizer.learningRate),
                                  minLearningRate: Float(config.optimizer.minLearningRate), warmupSteps: warmup, totalSteps: total)
        let w = data.spec.window, c = data.spec.channels
        augment = config.augmentation != .off
        augmenter = WindowAugmenter(spec: config.augmentation, layout: data.spec.joints, features: data.spec.features)
        x = FloatBuffer(count: batchSize * w * c)
        mask = FloatBuffer(count: batchSize * w)
        targets = [Int](repeating: 0, count: batchSize)
        batchWeights = [Float](repeating: 1, count: batchSize)
        let mixing = config.augmentation.mixup > 0
        partnerX = FloatBuffer(count: mixing ? batchSize * w * c : 0)
        partnerMask = FloatBuffer(count: mixing ? batchSize * w : 0)
        partnerTargets = [Int](repeating: 0, count: mixing ? batchSize : 0)
        average = config.training.emaEpochs > 0
            ? WeightAverage(model: self.classifier.model, epochs: config.training.emaEpochs, stepsPerEpoch: stepsPerEpoch) : nil
    }

    static func epochSeed(_ seed: UInt64, _ epoch: Int) -> UInt64 {
        var r = SplitMix64(seed: seed ^ (UInt64(epoch + 1) &* 0x9E37_79B9_7F4A_7C15))
        return r.next()
    }

    /// Trains one epoch (the next one); `progress(batchesDone, batches, meanLoss)` after
    /// each batch. Returns its record (validation included).
    @discardableResult
    public func runEpoch(progress: ((Int, Int, Double) -> Void)? = nil) -> EpochRecord {
        let epoch = epochsDone + 1
        let seed = Self.epochSeed(config.training.seed, epoch)
        var rng = SplitMix64(seed: seed)
        for (i, dropout) in model.dropouts.enumerated() { dropout.rng = SplitMix64(seed: seed &+ UInt64(i + 1)) }
        let order = Array(0..<data.train.count).shuffledDeterministically(&rng)
        let w = data.spec.window, c = data.spec.channels, wc = w * c
        var totalLoss = 0.0, correct = 0, seen = 0
        var lr: Float = 0
        let start = DispatchTime.now().uptimeNanoseconds
        for step in 0..<stepsPerEpoch {
            let b0 = step * batchSize, n = min(batchSize, order.count - b0)
            for i in 0..<n {
                // Copied into its batch row and augmented there: the stored window stays as it is.
                let window = data.train[order[b0 + i]]
                (x.pointer + i * wc).update(from: window.values, count: wc)
                (mask.pointer + i * w).update(from: window.mask, count: w)
                if augment {
                    augmenter.augment(values: UnsafeMutableBufferPointer(start: x.pointer + i * wc, count: wc),
                                      mask: UnsafeMutableBufferPointer(start: mask.pointer + i * w, count: w), depth: window.depth, rng: &rng)
                }
                targets[i] = trainTargets[order[b0 + i]]
                batchWeights[i] = windowWeights[order[b0 + i]]
            }
            let lambda = config.augmentation.mixup > 0 ? mixBatch(n, alpha: config.augmentation.mixup, rng: &rng) : 1
            let logits = model.forward(x.pointer, mask: mask.pointer, batch: n, training: true)
            let l = targets.withUnsafeBufferPointer { t in
                batchWeights.withUnsafeBufferPointer { s in
                    partnerTargets.withUnsafeBufferPointer { p in
                        loss.forward(logits, targets: t.baseAddress!, batch: n, sampleWeights: s.baseAddress!,
                                     mix: lambda < 1 ? SoftmaxCrossEntropy.Mix(partners: p.baseAddress!, lambda: lambda) : nil)
                    }
                }
            }
            // A non-finite loss would turn every weight to NaN at the next step: the epoch
            // ends here with a NaN loss, and the run stops before saving it.
            guard l.isFinite else { totalLoss = .nan; seen = max(seen, 1); break }
            totalLoss += Double(l) * Double(n)
            seen += n
            for i in 0..<n where argmax(UnsafeBufferPointer(start: logits + i * loss.classes, count: loss.classes)) == targets[i] { correct += 1 }
            optimizer.zeroGrad()
            model.backward(loss.dLogits.pointer)
            // training.freeze_epochs: the backbone's weights held, the head learns alone.
            if epoch <= config.training.freezeEpochs { optimizer.holdAll(but: Backbone.isHead) }
            if config.optimizer.gradientClip > 0 { optimizer.clipGradientNorm(Float(config.optimizer.gradientClip)) }
            lr = schedule.learningRate(step: optimizer.step)
            optimizer.step(learningRate: lr)
            average?.update()
            progress?(step + 1, stepsPerEpoch, totalLoss / Double(seen))
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        var record = EpochRecord(epoch: epoch, trainLoss: totalLoss / Double(max(seen, 1)),
                                 trainAccuracy: Double(correct) / Double(max(seen, 1)),
                                 validationLoss: nil, validationAccuracy: nil, learningRate: Double(lr), seconds: seconds)
        if !data.validation.isEmpty {
            let (vl, va) = withModelWeights { lossAndAccuracy(data.validation, targets: validationTargets) }
            record.validationLoss = vl
            record.validationAccuracy = va
            if LearningCurves.validatesBetter(accuracy: va, loss: vl, than: bestValidationAccuracy, loss: bestValidationLoss) {
                bestValidationAccuracy = va; bestValidationLoss = vl; bestEpoch = epoch
            }
        } else {
            bestEpoch = epoch   // no validation: the last epoch is the best we know
        }
        history.append(record)
        return record
    }

    /// Mixes the first n windows of the batch with a shuffled copy of themselves (mixup),
    /// λ ~ Beta(α, α): x = λ·x + (1 − λ)·x_partner, a frame real where either is, and the
    /// partners' targets in `partnerTargets`. Returns λ.
    func mixBatch(_ n: Int, alpha: Double, rng: inout SplitMix64) -> Float {
        let lambda = Float(rng.beta(alpha, alpha))
        let partners = Array(0..<n).shuffledDeterministically(&rng)
        let wc = data.spec.window * data.spec.channels, w = data.spec.window
        for (i, j) in partners.enumerated() {
            (partnerX.pointer + i * wc).update(from: x.pointer + j * wc, count: wc)
            (partnerMask.pointer + i * w).update(from: mask.pointer + j * w, count: w)
            partnerTargets[i] = targets[j]
        }
        for i in 0..<(n * wc) { x.pointer[i] = lambda * x.pointer[i] + (1 - lambda) * partnerX.pointer[i] }
        for i in 0..<(n * w) { mask.pointer[i] = max(mask.pointer[i], partnerMask.pointer[i]) }
        return lambda
    }

    /// `body` with the model holding the weights that are the model (the moving average
    /// when training.ema_epochs is on, else the live weights).
    public func withModelWeights<T>(_ body: () throws -> T) rethrows -> T {
        guard let average else { return try body() }
        return try average.withAverage(body)
    }

    /// Writes the model (the kept weights) to a weights file, with the run's record.
    public func saveModel(to path: String) throws {
        classifier.training = record()
        try withModelWeights { try classifier.save(to: path) }
    }

    /// Mean cross-entropy (unweighted) and accuracy of the model in evaluation mode.
    public func lossAndAccuracy(_ windows: [Window], targets: [Int]) -> (Double, Double) {
        let probs = classifier.probabilities(windows)
        var l = 0.0, correct = 0
        for (p, t) in zip(probs, targets) {
            l -= log(Double(max(p[t], 1e-12)))
            if argmax(p) == t { correct += 1 }
        }
        return (l / Double(max(windows.count, 1)), Double(correct) / Double(max(windows.count, 1)))
    }

    // MARK: Checkpoints

    /// The run's record for the weights file: config, data, best epoch and history.
    public func record() -> TrainingRecord {
        let kept = history.first { $0.epoch == keptEpoch }
        return TrainingRecord(config: config, data: data.summary, epochs: epochsDone, bestEpoch: bestEpoch, keptEpoch: keptEpoch,
                              history: history, parameters: model.parameterCount, validationAccuracy: kept?.validationAccuracy,
                              validationLoss: kept?.validationLoss)
    }

    /// The batch buffers' size: the config's batch, or all the training windows when they
    /// are fewer (the same steps: one batch an epoch), so that a large batch on a small
    /// dataset does not allocate for windows that do not exist.
    static func batchSize(config: TrainingConfig, data: TrainingData) -> Int {
        min(config.optimizer.batchSize, max(2, data.train.count))
    }
}
