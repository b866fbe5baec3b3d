import Tensor

/// ST-GCN++'s multi-scale temporal convolution (PYSKL's mstcn without its max-pool branch):
/// five branches side by side, each on a share of the channels, then a 1×1 convolution
/// that mixes them.
///
///     branch d = 1…4:  1×1 conv (C → b) → BN → ReLU → conv k = 3, dilation d, stride s (b → b) → BN
///     branch 5:        1×1 conv, stride s (C → b) → BN
///     out = BN(1×1 conv(ReLU(BN([branch 1 | … | branch 5]))))
///
/// b = C/5, the first branch taking what is left over. The four dilations see 3, 5, 7 and
/// 9 frames, so the block sees as far as ST-GCN's kernel of 9 at about a quarter of its
/// multiply-adds (≈ 2.5·C² a position against 9·C²).
///
/// Shapes: inp is (N,T,C), each branch out is (N,T',b), out is (N,T',C), T' = ⌈T/s⌉.
public final class MultiScaleTemporalConv: Layer {
    public static let dilations = [1, 2, 3, 4]
    /// The dilated branches and the 1×1 one: a block needs at least one channel for each.
    public static var branches: Int { dilations.count + 1 }
    public let frames: Int, channels: Int, stride: Int, maxBatch: Int
    /// Per dilated branch: the 1×1 projection, its ReLU, the dilated convolution.
    public let projections: [ConvNorm], projectionReLUs: [ReLU], dilated: [ConvNorm]
    /// The 1×1 strided branch.
    public let pointwise: ConvNorm
    public let mixNorm: BatchNorm
    public let mixReLU: ReLU
    public let mix: ConvNorm
    /// Channels of each branch, in order.
    let widths: [Int]
    /// The branches side by side, (N,T',C); backward splits dL/d(cat) into `branchGrad`s.
    let cat: FloatBuffer
    let branchGrads: [FloatBuffer]
    public let inputGrad: FloatBuffer

    public var inputShape: [Int] { [frames, channels] }
    public var outputShape: [Int] { [mix.conv.frames, channels] }
    public var parameters: [Parameter] {
        zip(projections, dilated).flatMap { $0.parameters + $1.parameters } + pointwise.parameters
            + mixNorm.parameters + mix.parameters
    }
    public var norms: [BatchNorm] { zip(projections, dilated).flatMap { [$0.norm, $1.norm] } + [pointwise.norm, mixNorm, mix.norm] }
    public var output: FloatBuffer { mix.output }

    public init(frames: Int, channels: Int, stride: Int, maxBatch: Int, rng: inout SplitMix64, name: String) {
        let n = Self.dilations.count + 1
        precondition(channels >= n, "a multi-scale temporal convolution needs at least \(n) channels")
        self.frames = frames; self.channels = channels; self.stride = stride; self.maxBatch = maxBatch
        let b = channels / n
        widths = [channels - (n - 1) * b] + [Int](repeating: b, count: n - 1)
        var projections: [ConvNorm] = [], relus: [ReLU] = [], dilated: [ConvNorm] = []
        for (i, d) in Self.dilations.enumerated() {
            projections.append(ConvNorm(frames: frames, inChannels: channels, outChannels: widths[i], kernel: 1,
                                        maxBatch: maxBatch, rng: &rng, name: "\(name).branch\(i).project"))
            relus.append(ReLU(shape: [frames, widths[i]], maxBatch: maxBatch))
            dilated.append(ConvNorm(frames: frames, inChannels: widths[i], outChannels: widths[i], kernel: 3, dilation: d,
                                    stride: stride, maxBatch: maxBatch, rng: &rng, name: "\(name).branch\(i).conv"))
        }
        self.projections = projections; projectionReLUs = relus; self.dilated = dilated
        pointwise = ConvNorm(frames: frames, inChannels: channels, outChannels: widths[n - 1], kernel: 1, stride: stride,
                             maxBatch: maxBatch, rng: &rng, name: "\(name).branch\(n - 1)")
        let strided = pointwise.conv.outFrames
        mixNorm = BatchNorm(frames: strided, channels: channels, maxBatch: maxBatch, name: "\(name).mix_bn")
        mixReLU = ReLU(shape: [strided, channels], maxBatch: maxBatch)
        mix = ConvNorm(frames: strided, inChannels: channels, outChannels: channels, kernel: 1, maxBatch: maxBatch,
                       rng: &rng, name: "\(name).mix")
        cat = FloatBuffer(count: maxBatch * strided * channels)
        branchGrads = widths.map { FloatBuffer(count: maxBatch * strided * $0) }
        inputGrad = FloatBuffer(count: maxBatch * frames * channels)
    }

    var branchOutputs: [FloatBuffer] { dilated.map(\.output) + [pointwise.output] }

    // inp (N,T,C) → branches (N,T',b_i) → cat (N,T',C) → bn → relu → 1×1 conv → bn
    public func forward(_ x: UnsafePointer<Float>, batch N: Int, training: Bool) {
        for i in projections.indices {
            projections[i].forward(x, batch: N, training: training)
            projectionReLUs[i].forward(projections[i].output.pointer, batch: N, training: training)
            dilated[i].forward(projectionReLUs[i].output.pointer, batch: N, training: training)
        }
        pointwise.forward(x, batch: N, training: training)
        let rows = N * mix.conv.frames, C = channels
        var offset = 0
        for (out, w) in zip(branchOutputs, widths) {
            for r in 0..<rows { (cat.pointer + r * C + offset).update(from: out.pointer + r * w, count: w) }
            offset += w
        }
        mixNorm.forward(cat.pointer, batch: N, training: training)
        mixReLU.forward(mixNorm.output.pointer, batch: N, training: training)
        mix.forward(mixReLU.output.pointer, batch: N, training: training)
    }

    // dout (N,T',C) → mix → relu → bn → dcat split per branch → each branch → dinp = Σ branch dinp
    public func backward(_ dOut: UnsafePointer<Float>, input x: UnsafePointer<Float>, batch N: Int) {
        mix.backward(dOut, input: mixReLU.output.pointer, batch: N)
        mixReLU.backward(mix.inputGrad.pointer, input: mixNorm.output.pointer, batch: N)
        mixNorm.backward(mixReLU.inputGrad.pointer, input: cat.pointer, batch: N)
        let rows = N * mix.conv.frames, C = channels, d = mixNorm.inputGrad.pointer
        var offset = 0
        for (g, w) in zip(branchGrads, widths) {
            for r in 0..<rows { (g.pointer + r * w).update(from: d + r * C + offset, count: w) }
            offset += w
        }
        let n = N * frames * channels, dx = inputGrad.pointer
        pointwise.backward(branchGrads[widths.count - 1].pointer, input: x, batch: N)
        dx.update(from: pointwise.inputGrad.pointer, count: n)
        for i in projections.indices {
            dilated[i].backward(branchGrads[i].pointer, input: projectionReLUs[i].output.pointer, batch: N)
            projectionReLUs[i].backward(dilated[i].inputGrad.pointer, input: projections[i].output.pointer, batch: N)
            projections[i].backward(projectionReLUs[i].inputGrad.pointer, input: x, batch: N)
            residualBackward(projections[i].inputGrad.pointer, accumulateInto: dx, count: n)
        }
    }
}
