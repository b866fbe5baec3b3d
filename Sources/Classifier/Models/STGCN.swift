import Tensor

/// One ST-GCN block: a spatial graph convolution over the joints of each frame, then a
/// temporal convolution over the frames of each joint, with a residual (PYSKL's STGCNBlock).
///
///     g   = ReLU(BN(GraphConv(x)) [+ down(x), ST-GCN++])
///     out = ReLU(temporal(g) + residual(x))
///
/// temporal: ST-GCN's conv k = 9 → BN, or ST-GCN++'s `MultiScaleTemporalConv`; with
/// stride s it keeps every s-th frame. residual: none (the first block), x itself (same
/// channels, stride 1), else a 1×1 conv with stride s → BN. down (ST-GCN++): x itself or a
/// 1×1 conv → BN.
///
/// Shapes: inp is (B,V,T,C), out is (B,V,T',OC), T' = ⌈T/s⌉. The temporal layers see the
/// same memory as (B·V, T, ·): every joint of every window is one sequence.
public final class GraphBlock: Layer {
    public enum Residual { case none, identity, projection(ConvNorm) }

    public let joints: Int, frames: Int, inChannels: Int, outChannels: Int, stride: Int
    public let maxBatch: Int
    public let gcn: GraphConv
    public let gcnNorm: BatchNorm
    /// ST-GCN++'s residual around the graph convolution: nil (ST-GCN), identity, or a projection.
    public let gcnResidual: Residual
    public let gcnReLU: ReLU
    public let temporal: any Layer
    public let residual: Residual
    public let outReLU: ReLU
    /// BN(gcn) + down(x) (ST-GCN++), (B,V,T,OC); temporal(g) + residual(x), (B,V,T',OC).
    let gcnSum: FloatBuffer, sum: FloatBuffer
    /// dL/d(gcn output) once the down path's part is added; dL/dx, (B,V,T,C).
    let dGraph: FloatBuffer, dInput: FloatBuffer

    public var inputShape: [Int] { [joints, frames, inChannels] }
    public var outputShape: [Int] { [joints, outFrames, outChannels] }
    public var outFrames: Int { (frames - 1) / stride + 1 }
    public var parameters: [Parameter] {
        gcn.parameters + gcnNorm.parameters + Self.parameters(gcnResidual) + temporal.parameters
            + Self.parameters(residual)
    }
    public var norms: [BatchNorm] {
        var n = [gcnNorm] + Self.norms(gcnResidual)
        if let t = temporal as? ConvNorm { n.append(t.norm) }
        if let t = temporal as? MultiScaleTemporalConv { n += t.norms }
        return n + Self.norms(residual)
    }
    public var output: FloatBuffer { outReLU.output }
    public var inputGrad: FloatBuffer { dInput }

    static func parameters(_ r: Residual) -> [Parameter] { if case .projection(let p) = r { return p.parameters }; return [] }
    static func norms(_ r: Residual) -> [BatchNorm] { if case .projection(let p) = r { return [p.norm] }; return [] }

    public init(graph: SkeletonGraph, frames: Int, inChannels: Int, outChannels: Int, stride: Int, plusPlus: Bool,
                hasResidual: Bool, maxBatch: Int, rng: inout SplitMix64, name: String) {
        let V = graph.joints
        joints = V; self.frames = frames; self.inChannels = inChannels; self.outChannels = outChannels
        self.stride = stride; self.maxBatch = maxBatch
        gcn = GraphConv(graph: graph, frames: frames, inChannels: inChannels, outChannels: outChannels,
                        adjacency: plusPlus ? .learned : .importance, maxBatch: maxBatch, rng: &rng, name: "\(name).gcn")
        gcnNorm = BatchNorm(frames: V * frames, channels: outChannels, maxBatch: maxBatch, name: "\(name).gcn_bn")
        if !plusPlus { gcnResidual = .none }
        else if inChannels == outChannels { gcnResidual = .identity }
        else {
            gcnResidual = .projection(ConvNorm(frames: frames, inChannels: inChannels, outChannels: outChannels, kernel: 1,
                                               maxBatch: maxBatch * V, rng: &rng, name: "\(name).gcn_down"))
        }
        gcnReLU = ReLU(shape: [V, frames, outChannels], maxBatch: maxBatch)
        temporal = plusPlus
            ? MultiScaleTemporalConv(frames: frames, channels: outChannels, stride: stride, maxBatch: maxBatch * V,
                                     rng: &rng, name: "\(name).tcn")
            : ConvNorm(frames: frames, inChannels: outChannels, outChannels: outChannels, kernel: 9, stride: stride,
                       maxBatch: maxBatch * V, rng: &rng, name: "\(name).tcn")
        if !hasResidual { residual = .none }
        else if inChannels == outChannels && stride == 1 { residual = .identity }
        else {
            residual = .projection(ConvNorm(frames: frames, inChannels: inChannels, outChannels: outChannels, kernel: 1,
                                            stride: stride, maxBatch: maxBatch * V, rng: &rng, name: "\(name).residual"))
        }
        let outFrames = (frames - 1) / stride + 1
        outReLU = ReLU(shape: [V, outFrames, outChannels], maxBatch: maxBatch)
        gcnSum = FloatBuffer(count: plusPlus ? maxBatch * V * frames * outChannels : 1)
        sum = FloatBuffer(count: maxBatch * V * outFrames * outChannels)
        dGraph = FloatBuffer(count: maxBatch * V * frames * outChannels)
        dInput = FloatBuffer(count: maxBatch * V * frames * inChannels)
    }

    /// What the gcn's ReLU reads: BN(gcn), plus down(x) for ST-GCN++.
    var gcnPreActivation: UnsafeMutablePointer<Float> {
        if case .none = gcnResidual { return gcnNorm.output.pointer }
        return gcnSum.pointer
    }

    // inp (B,V,T,C) → gcn (B,V,T,OC) → bn [+ down(inp)] → relu → temporal (B·V,T',OC)
    // → + residual(inp) → relu
    public func forward(_ x: UnsafePointer<Float>, batch B: Int, training: Bool) {
        let V = joints, n = B * V * frames * outChannels
        gcn.forward(x, batch: B, training: training)
        gcnNorm.forward(gcn.output.pointer, batch: B, training: training)
        switch gcnResidual {
        case .none: break
        case .identity: residualForward(gcnSum.pointer, gcnNorm.output.pointer, x, count: n)
        case .projection(let p):
            p.forward(x, batch: B * V, training: training)
            residualForward(gcnSum.pointer, gcnNorm.output.pointer, p.output.pointer, count: n)
        }
        gcnReLU.forward(gcnPreActivation, batch: B, training: training)
        temporal.forward(gcnReLU.output.pointer, batch: B * V, training: training)
        let m = B * V * outFrames * outChannels
        switch residual {
        case .none: sum.pointer.update(from: temporal.output.pointer, count: m)
        case .identity: residualForward(sum.pointer, temporal.output.pointer, x, count: m)
        case .projection(let p):
            p.forward(x, batch: B * V, training: training)
            residualForward(sum.pointer, temporal.output.pointer, p.output.pointer, count: m)
        }
        outReLU.forward(sum.pointer, batch: B, training: training)
    }

    // dout (B,V,T',OC) → relu → temporal and residual → gcn relu → [down] and bn → gcn;
    // dinp = gcn's + residual's [+ down's]
    public func backward(_ dOut: UnsafePointer<Float>, input x: UnsafePointer<Float>, batch B: Int) {
        let V = joints, n = B * V * frames * inChannels
        outReLU.backward(dOut, input: sum.pointer, batch: B)
        let dSum = UnsafePointer(outReLU.inputGrad.pointer)
        temporal.backward(dSum, input: gcnReLU.output.pointer, batch: B * V)
        gcnReLU.backward(temporal.inputGrad.pointer, input: gcnPreActivation, batch: B)
        gcnNorm.backward(gcnReLU.inputGrad.pointer, input: gcn.output.pointer, batch: B)
        gcn.backward(gcnNorm.inputGrad.pointer, input: x, batch: B)
        let dx = dInput.pointer
        dx.update(from: gcn.inputGrad.pointer, count: n)
        switch gcnResidual {
        case .none: break
        case .identity: residualBackward(gcnReLU.inputGrad.pointer, accumulateInto: dx, count: n)
        case .projection(let p):
            p.backward(gcnReLU.inputGrad.pointer, input: x, batch: B * V)
            residualBackward(p.inputGrad.pointer, accumulateInto: dx, count: n)
        }
        switch residual {
        case .none: break
        case .identity: residualBackward(dSum, accumulateInto: dx, count: n)
        case .projection(let p):
            p.backward(dSum, input: x, batch: B * V)
            residualBackward(p.inputGrad.pointer, accumulateInto: dx, count: n)
        }
    }
}

/// ST-GCN (Yan et al. 2018, Create ML's action classifier) and ST-GCN++ (Duan et al. 2022,
/// PYSKL) for clip classification on any joint layout:
///
///     [BatchNorm over the V·F input channels] → (B,T,V,F) as (B,V,T,F)
///     → GraphBlock × blocks → mean over the joints and the real frames → Dropout → Linear
///
/// Block i has `blocks[i]` channels; a block with more channels than the one before keeps
/// every second frame (PYSKL's rule: the channels double where the frames halve). The first
/// block has no residual. ST-GCN++ learns the whole adjacency from the skeleton's, adds a
/// residual around each graph convolution and uses the multi-scale temporal convolution.
///
/// Shapes: input is (B,T,V·F), mask (B,T), logits (B,K). The mask is taken at the kept
/// frames (frame t′ of the last block is input frame t′·S, S the product of the strides).
public final class STGCN: ClassifierNet {
    public struct Config: Sendable, Equatable {
        public var graph: SkeletonGraph
        /// Features per joint.
        public var features: Int
        public var frames: Int
        public var classes: Int
        /// Channels of each block.
        public var blocks: [Int]
        /// ST-GCN++ rather than ST-GCN.
        public var plusPlus: Bool
        /// Dropout on the pooled features.
        public var dropout: Float
        public var inputNorm: Bool
        public var maxBatch: Int
        public var seed: UInt64

        /// The model's keys have no defaults here: a net is built from a `ModelSpec`
        /// (`Architecture.net`), where each has its one default.
        public init(graph: SkeletonGraph, features: Int, frames: Int, classes: Int, blocks: [Int],
                    plusPlus: Bool, dropout: Float, inputNorm: Bool, maxBatch: Int = 32, seed: UInt64 = 1) {
            self.graph = graph; self.features = features; self.frames = frames; self.classes = classes
            self.blocks = blocks; self.plusPlus = plusPlus; self.dropout = dropout; self.inputNorm = inputNorm
            self.maxBatch = maxBatch; self.seed = seed
        }

        /// The temporal stride of each block: 2 where the channels grow, else 1.
        public var strides: [Int] { Self.strides(blocks) }
        static func strides(_ blocks: [Int]) -> [Int] { blocks.indices.map { $0 > 0 && blocks[$0] > blocks[$0 - 1] ? 2 : 1 } }
    }

    public let config: Config
    public let inputNorm: BatchNorm?
    public let blocks: [GraphBlock]
    public let dropout: Dropout
    public let head: Linear
    /// The input as (B,V,T,F), and dL/d(that).
    let joints: FloatBuffer
    /// The last forward's input, copied in (B,T,V·F).
    let input: FloatBuffer
    /// The mask at the last block's frames, (B,T′), each row scaled to sum 1/V; pooled (B,C);
    /// dL/d(last block's output), (B,V,T′,C); dL/d(input) (B,T,V·F).
    let poolWeights: FloatBuffer, pooled: FloatBuffer, dPool: FloatBuffer, dInput: FloatBuffer
    private var lastBatch = 0

    public var maxBatch: Int { config.maxBatch }
    public var dropouts: [Dropout] { [dropout] }
    public var headInput: UnsafePointer<Float> { UnsafePointer(dropout.output.pointer) }

    public init(_ config: Config) {
        precondition(!config.blocks.isEmpty && config.features > 0)
        self.config = config
        var rng = SplitMix64(seed: config.seed)
        let V = config.graph.joints, F = config.features, T = config.frames, B = config.maxBatch
        inputNorm = config.inputNorm ? BatchNorm(frames: T, channels: V * F, maxBatch: B, name: "input_bn") : nil
        var blocks: [GraphBlock] = []
        var c = F, t = T
        for (i, (o, s)) in zip(config.blocks, config.strides).enumerated() {
            blocks.append(GraphBlock(graph: config.graph, frames: t, inChannels: c, outChannels: o, stride: s,
                                     plusPlus: config.plusPlus, hasResidual: i > 0, maxBatch: B, rng: &rng, name: "block\(i)"))
            c = o; t = (t - 1) / s + 1
        }
        self.blocks = blocks
        dropout = Dropout(shape: [c], probability: config.dropout, maxBatch: B, seed: rng.next())
        // Gain 1/√2: N(0, 1/fan_in) for the logits, which no ReLU follows.
        head = Linear(inFeatures: c, outFeatures: config.classes, maxBatch: B, rng: &rng, gain: 0.5.squareRoot(), name: "head")
        joints = FloatBuffer(count: B * T * V * F)
        input = FloatBuffer(count: B * T * V * F)
        poolWeights = FloatBuffer(count: B * t)
        pooled = FloatBuffer(count: B * c)
        dPool = FloatBuffer(count: B * V * t * c)
        dInput = FloatBuffer(count: B * T * V * F)
    }

    public var parameters: [Parameter] { (inputNorm?.parameters ?? []) + blocks.flatMap(\.parameters) + head.parameters }

    public var state: [(name: String, buffer: FloatBuffer)] {
        parameters.map { ($0.name, $0.value) } + (inputNorm?.runningState ?? []) + blocks.flatMap { $0.norms.flatMap(\.runningState) }
    }

    /// (B,T,V,F) ↔ (B,V,T,F), `toJoints` choosing the direction.
    func permute(_ from: UnsafePointer<Float>, _ to: UnsafeMutablePointer<Float>, batch B: Int, toJoints: Bool) {
        let V = config.graph.joints, F = config.features, T = config.frames
        for b in 0..<B {
            for t in 0..<T {
                for v in 0..<V {
                    let tv = ((b * T + t) * V + v) * F, vt = ((b * V + v) * T + t) * F
                    if toJoints { (to + vt).update(from: from + tv, count: F) } else { (to + tv).update(from: from + vt, count: F) }
                }
            }
        }
    }

    // input (B,T,V·F) → [bn] → (B,V,T,F) → blocks → (B,V,T′,C) → weighted mean over (v,t′) → dropout → head
    @discardableResult
    public func forward(_ x: UnsafePointer<Float>, mask: UnsafePointer<Float>?, batch B: Int,
                        training: Bool) -> UnsafeMutablePointer<Float> {
        precondition(B > 0 && B <= config.maxBatch)
        lastBatch = B
        let V = config.graph.joints, T = config.frames, n = B * T * V * config.features
        input.pointer.update(from: x, count: n)
        var h = UnsafePointer(input.pointer)
        if let inputNorm {
            inputNorm.forward(h, batch: B, training: training)
            h = UnsafePointer(inputNorm.output.pointer)
        }
        permute(h, joints.pointer, batch: B, toJoints: true)
        h = UnsafePointer(joints.pointer)
        for block in blocks {
            block.forward(h, batch: B, training: training)
            h = UnsafePointer(block.output.pointer)
        }
        // Weights: the mask at frames 0, S, 2S, … (all frames when none of those is real),
        // normalised so that Σ over (v, t′) is 1.
        let last = blocks[blocks.count - 1], TO = last.outFrames, C = last.outChannels
        let S = config.strides.reduce(1, *), w = poolWeights.pointer
        for b in 0..<B {
            var total: Float = 0
            for t in 0..<TO {
                w[b * TO + t] = mask.map { $0[b * T + t * S] } ?? 1
                total += w[b * TO + t]
            }
            if total <= 0 { for t in 0..<TO { w[b * TO + t] = 1 }; total = Float(TO) }
            for t in 0..<TO { w[b * TO + t] /= total * Float(V) }
            let out = pooled.pointer + b * C
            out.update(repeating: 0, count: C)
            for v in 0..<V {
                for t in 0..<TO {
                    let weight = w[b * TO + t], row = h + ((b * V + v) * TO + t) * C
                    guard weight != 0 else { continue }
                    for c in 0..<C { out[c] += weight * row[c] }
                }
            }
        }
        dropout.forward(pooled.pointer, batch: B, training: training)
        head.forward(dropout.output.pointer, batch: B, training: training)
        return head.output.pointer
    }

    public func backward(_ dLogits: UnsafePointer<Float>) {
        let B = lastBatch, V = config.graph.joints
        head.backward(dLogits, input: dropout.output.pointer, batch: B)
        dropout.backward(head.inputGrad.pointer, input: pooled.pointer, batch: B)
        let last = blocks[blocks.count - 1], TO = last.outFrames, C = last.outChannels, w = poolWeights.pointer
        // dh[b,v,t′,c] = w[b,t′] · dpooled[b,c]
        for b in 0..<B {
            let d = dropout.inputGrad.pointer + b * C
            for v in 0..<V {
                for t in 0..<TO {
                    let weight = w[b * TO + t], row = dPool.pointer + ((b * V + v) * TO + t) * C
                    for c in 0..<C { row[c] = weight * d[c] }
                }
            }
        }
        var dOut = UnsafePointer(dPool.pointer)
        for i in stride(from: blocks.count - 1, through: 0, by: -1) {
            let x = i == 0 ? UnsafePointer(joints.pointer) : UnsafePointer(blocks[i - 1].output.pointer)
            blocks[i].backward(dOut, input: x, batch: B)
            dOut = UnsafePointer(blocks[i].inputGrad.pointer)
        }
        permute(dOut, dInput.pointer, batch: B, toJoints: false)
        inputNorm?.backward(dInput.pointer, input: input.pointer, batch: B)
    }

    public var inputGrad: FloatBuffer { inputNorm?.inputGrad ?? dInput }
}
