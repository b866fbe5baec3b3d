import Config
import Tensor

/// One temporal block: Conv1D → BatchNorm → ReLU → Dropout, plus the input when the
/// channel counts match (residual). Shapes: inp is (B,T,C), out is (B,T,OC).
public final class TCNBlock: Layer {
    public let conv: Conv1D
    public let norm: BatchNorm
    public let relu: ReLU
    public let dropout: Dropout
    public let residual: Bool
    public let maxBatch: Int
    /// inp + dropout output when residual (else unused, one float).
    let sum: FloatBuffer
    /// conv's input gradient + the residual's when residual (else unused, one float).
    let dInput: FloatBuffer

    public var inputShape: [Int] { conv.inputShape }
    public var outputShape: [Int] { conv.outputShape }
    public var parameters: [Parameter] { conv.parameters + norm.parameters }
    public var output: FloatBuffer { residual ? sum : dropout.output }
    public var inputGrad: FloatBuffer { residual ? dInput : conv.inputGrad }

    public init(frames: Int, inChannels: Int, outChannels: Int, kernel: Int, dilation: Int,
                dropout p: Float, maxBatch: Int, rng: inout SplitMix64, name: String) {
        self.maxBatch = maxBatch
        // No conv bias: batch norm right after removes any per-channel constant.
        conv = Conv1D(frames: frames, inChannels: inChannels, outChannels: outChannels, kernel: kernel,
                      dilation: dilation, bias: false, maxBatch: maxBatch, rng: &rng, name: "\(name).conv")
        norm = BatchNorm(frames: frames, channels: outChannels, maxBatch: maxBatch, name: "\(name).bn")
        relu = ReLU(shape: [frames, outChannels], maxBatch: maxBatch)
        dropout = Dropout(shape: [frames, outChannels], probability: p, maxBatch: maxBatch, seed: rng.next())
        residual = inChannels == outChannels
        let n = residual ? maxBatch * frames * outChannels : 1
        sum = FloatBuffer(count: n)
        dInput = FloatBuffer(count: n)
    }

    // inp (B,T,C) → conv (B,T,OC) → bn → relu → dropout → (+ inp when residual)
    public func forward(_ x: UnsafePointer<Float>, batch B: Int, training: Bool) {
        conv.forward(x, batch: B, training: training)
        norm.forward(conv.output.pointer, batch: B, training: training)
        relu.forward(norm.output.pointer, batch: B, training: training)
        dropout.forward(relu.output.pointer, batch: B, training: training)
        if residual { residualForward(sum.pointer, x, dropout.output.pointer, count: B * inputCount) }
    }

    // dout (B,T,OC) back through dropout, relu, bn, conv; dinp = conv's dinp (+ dout when residual)
    public func backward(_ dOut: UnsafePointer<Float>, input x: UnsafePointer<Float>, batch B: Int) {
        dropout.backward(dOut, input: relu.output.pointer, batch: B)
        relu.backward(dropout.inputGrad.pointer, input: norm.output.pointer, batch: B)
        norm.backward(relu.inputGrad.pointer, input: conv.output.pointer, batch: B)
        conv.backward(norm.inputGrad.pointer, input: x, batch: B)
        if residual {
            dInput.pointer.update(from: conv.inputGrad.pointer, count: B * inputCount)
            residualBackward(dOut, accumulateInto: dInput.pointer, count: B * inputCount)
        }
    }
}

/// A temporal convolutional network for clip classification:
///   [BatchNorm over the input channels] → [Conv1D(k) → BatchNorm → ReLU → Dropout
///   (+ residual)] × blocks → pooling → Linear,
/// pooling over the valid frames: the mean, the maximum, or both side by side (B, 2·C).
///
/// Shapes: input is (B,T,C) per-frame features, mask is (B,T) valid frames, logits (B,K).
/// Every buffer is allocated in `init` for `maxBatch` clips; `forward`/`backward` allocate
/// nothing. The convolutions' products run on the C kernels through `PanelGemm` (split over
/// `LayerThreads` in pieces that give the same bits every run); the head's `Linear` calls
/// `BLAS.gemm`, OpenBLAS with the thread count the process has set.
public final class TCN: ClassifierNet {
    public enum Pooling: String, Sendable, Equatable, ConfigChoice {
        case mean, max
        case meanMax = "mean_max"
    }

    public struct Config: Sendable, Equatable {
        public var inputChannels: Int
        public var frames: Int
        public var classes: Int
        /// Hidden channels of every block.
        public var channels: Int
        /// One block per entry, with that dilation.
        public var dilations: [Int]
        public var kernel: Int
        public var dropout: Float
        public var pooling: Pooling
        /// A BatchNorm over the input channels before the first block: each feature enters on
        /// the same scale (positions in torso lengths, velocities per second, confidences 0–1).
        public var inputNorm: Bool
        public var maxBatch: Int
        public var seed: UInt64

        /// The model's keys have no defaults here: a net is built from a `ModelSpec`
        /// (`Architecture.net`), where each has its one default.
        public init(inputChannels: Int, frames: Int, classes: Int, channels: Int,
                    dilations: [Int], kernel: Int, dropout: Float, pooling: Pooling,
                    inputNorm: Bool, maxBatch: Int = 32, seed: UInt64 = 1) {
            self.inputChannels = inputChannels; self.frames = frames; self.classes = classes
            self.channels = channels; self.dilations = dilations; self.kernel = kernel
            self.dropout = dropout; self.pooling = pooling; self.inputNorm = inputNorm
            self.maxBatch = maxBatch; self.seed = seed
        }
    }

    public let config: Config
    /// The input BatchNorm (`config.inputNorm`), (B,T,C) → (B,T,C).
    public let inputNorm: BatchNorm?
    public let blocks: [TCNBlock]
    public let pool: MaskedMeanPool
    public let maxPool: MaskedMaxPool
    public let head: Linear
    /// The pooled features the head reads, (B, P): mean, max, or [mean | max] (P = 2·C).
    let pooled: FloatBuffer
    /// dL/d(pooled features) split per pooling, (B,C) each, and their sum over (B,T,C).
    let dMean: FloatBuffer, dMax: FloatBuffer, dPool: FloatBuffer
    /// The last forward's input, copied in (B,T,C): backward needs it, the caller may reuse
    /// its own buffer meanwhile.
    let input: FloatBuffer
    private var lastBatch = 0

    public init(_ config: Config) {
        precondition(!config.dilations.isEmpty)
        self.config = config
        var rng = SplitMix64(seed: config.seed)
        inputNorm = config.inputNorm
            ? BatchNorm(frames: config.frames, channels: config.inputChannels, maxBatch: config.maxBatch, name: "input_bn") : nil
        var blocks: [TCNBlock] = []
        var c = config.inputChannels
        for (i, d) in config.dilations.enumerated() {
            blocks.append(TCNBlock(frames: config.frames, inChannels: c, outChannels: config.channels,
                                   kernel: config.kernel, dilation: d, dropout: config.dropout,
                                   maxBatch: config.maxBatch, rng: &rng, name: "block\(i)"))
            c = config.channels
        }
        self.blocks = blocks
        pool = MaskedMeanPool(frames: config.frames, channels: c, maxBatch: config.maxBatch)
        maxPool = MaskedMaxPool(frames: config.frames, channels: c, maxBatch: config.maxBatch)
        let p = config.pooling == .meanMax ? 2 * c : c
        pooled = FloatBuffer(count: config.maxBatch * p)
        dMean = FloatBuffer(count: config.maxBatch * c)
        dMax = FloatBuffer(count: config.maxBatch * c)
        dPool = FloatBuffer(count: config.maxBatch * config.frames * c)
        // Gain 1/√2: N(0, 1/fan_in) for the logits, which no ReLU follows.
        head = Linear(inFeatures: p, outFeatures: config.classes, maxBatch: config.maxBatch, rng: &rng,
                      gain: 0.5.squareRoot(), name: "head")
        input = FloatBuffer(count: config.maxBatch * config.frames * config.inputChannels)
    }

    public var maxBatch: Int { config.maxBatch }
    public var dropouts: [Dropout] { blocks.map(\.dropout) }
    public var headInput: UnsafePointer<Float> { UnsafePointer(pooled.pointer) }
    public var parameters: [Parameter] { (inputNorm?.parameters ?? []) + blocks.flatMap(\.parameters) + head.parameters }

    /// Everything that defines the model's function: parameters and batch-norm running
    /// statistics, by name (for saving and comparing).
    public var state: [(name: String, buffer: FloatBuffer)] {
        parameters.map { ($0.name, $0.value) }
            + (inputNorm.map { [("input_bn.running_mean", $0.runningMean), ("input_bn.running_var", $0.runningVar)] } ?? [])
            + blocks.enumerated().flatMap { i, b in
                [("block\(i).bn.running_mean", b.norm.runningMean), ("block\(i).bn.running_var", b.norm.runningVar)]
            }
    }

    /// input (B,T,C), mask (B,T) or nil (all valid) → logits (B,K), valid until the next forward.
    @discardableResult
    public func forward(_ x: UnsafePointer<Float>, mask: UnsafePointer<Float>?, batch B: Int,
                        training: Bool) -> UnsafeMutablePointer<Float> {
        let h = forwardFrames(x, batch: B, training: training)
        let C = config.channels
        switch config.pooling {
        case .mean:
            pool.mask.set(mask, batch: B)
            pool.forward(h, batch: B, training: training)
            pooled.pointer.update(from: pool.output.pointer, count: B * C)
        case .max:
            maxPool.mask.set(mask, batch: B)
            maxPool.forward(h, batch: B, training: training)
            pooled.pointer.update(from: maxPool.output.pointer, count: B * C)
        case .meanMax:
            pool.mask.set(mask, batch: B)
            pool.forward(h, batch: B, training: training)
            maxPool.mask.set(mask, batch: B)
            maxPool.forward(h, batch: B, training: training)
            for b in 0..<B {
                (pooled.pointer + b * 2 * C).update(from: pool.output.pointer + b * C, count: C)
                (pooled.pointer + b * 2 * C + C).update(from: maxPool.output.pointer + b * C, count: C)
            }
        }
        head.forward(pooled.pointer, batch: B, training: training)
        return head.output.pointer
    }

    /// input (B,T,C) → [input bn] → blocks → the last block's output (B,T,C′), one vector a
    /// frame, valid until the next forward: what the pooling reads.
    func forwardFrames(_ x: UnsafePointer<Float>, batch B: Int, training: Bool) -> UnsafePointer<Float> {
        precondition(B > 0 && B <= config.maxBatch)
        lastBatch = B
        input.pointer.update(from: x, count: B * config.frames * config.inputChannels)
        var h = UnsafePointer(input.pointer)
        if let inputNorm {
            inputNorm.forward(h, batch: B, training: training)
            h = UnsafePointer(inputNorm.output.pointer)
        }
        for block in blocks {
            block.forward(h, batch: B, training: training)
            h = UnsafePointer(block.output.pointer)
        }
        return h
    }

    /// Backward from dL/d(the last block's output) (B,T,C′) of the last `forwardFrames`:
    /// accumulates into the blocks' and the input bn's gradients, leaves dL/d(input) in
    /// `inputGrad`.
    func backwardFrames(_ dFrames: UnsafePointer<Float>) {
        let B = lastBatch
        var dOut = dFrames
        let first = inputNorm.map { UnsafePointer($0.output.pointer) } ?? UnsafePointer(input.pointer)
        for i in stride(from: blocks.count - 1, through: 0, by: -1) {
            let x = i == 0 ? first : UnsafePointer(blocks[i - 1].output.pointer)
            blocks[i].backward(dOut, input: x, batch: B)
            dOut = UnsafePointer(blocks[i].inputGrad.pointer)
        }
        // (B,T,C) dL/d(normalised input) → dL/d(input)
        inputNorm?.backward(dOut, input: input.pointer, batch: B)
    }

    /// Backward from dL/dlogits (B,K) of the last forward: accumulates into every
    /// parameter's gradient. The gradient with respect to the input is left in
    /// `inputGrad`.
    public func backward(_ dLogits: UnsafePointer<Float>) {
        let B = lastBatch
        head.backward(dLogits, input: pooled.pointer, batch: B)
        let last = blocks[blocks.count - 1], C = config.channels, n = B * config.frames * C
        switch config.pooling {
        case .mean:
            pool.backward(head.inputGrad.pointer, input: last.output.pointer, batch: B)
            dPool.pointer.update(from: pool.inputGrad.pointer, count: n)
        case .max:
            maxPool.backward(head.inputGrad.pointer, input: last.output.pointer, batch: B)
            dPool.pointer.update(from: maxPool.inputGrad.pointer, count: n)
        case .meanMax:
            // d[mean | max] (B, 2C) → dmean, dmax (B, C) → dinp = dinp_mean + dinp_max
            for b in 0..<B {
                (dMean.pointer + b * C).update(from: head.inputGrad.pointer + b * 2 * C, count: C)
                (dMax.pointer + b * C).update(from: head.inputGrad.pointer + b * 2 * C + C, count: C)
            }
            pool.backward(dMean.pointer, input: last.output.pointer, batch: B)
            maxPool.backward(dMax.pointer, input: last.output.pointer, batch: B)
            for i in 0..<n { dPool.pointer[i] = pool.inputGrad.pointer[i] + maxPool.inputGrad.pointer[i] }
        }
        backwardFrames(dPool.pointer)
    }

    /// dL/d(input) (B,T,C) of the last backward.
    public var inputGrad: FloatBuffer { inputNorm?.inputGrad ?? blocks[0].inputGrad }
}
