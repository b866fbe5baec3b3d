import Foundation

/// What a net of an architecture takes before it is built: its parameters, and the floats
/// of the buffers its layers allocate per window of a batch (outputs, gradients, im2col
/// columns, batch-norm statistics). Every net allocates all of it in `init` for its
/// `maxBatch`, so a model spec within each key's bound (`ModelSpec.table`: 4096 channels, kernel 255) could
/// still ask for terabytes; `Architecture.sizeProblem` refuses it first. The layers declare
/// their buffers, and their `init`s allocate what they declare (`Conv1D.Buffers`,
/// `GraphConv.Buffers`, `BatchNorm.floatsPerWindow`); the nets' own buffers are added here.
/// `ModelBoundsTests` checks the parameters exactly and the buffers against what building a
/// net allocates.
struct ModelSize {
    /// Parameters (each is allocated twice: value and gradient).
    var parameters = 0.0
    /// Floats allocated per window of the batch.
    var perWindow = 0.0
    /// Floats allocated once, whatever the batch: each product's packed weights
    /// (`Conv1D.packedFloats`, `GraphConv.packedFloats`).
    var fixed = 0.0

    static func + (a: ModelSize, b: ModelSize) -> ModelSize {
        ModelSize(parameters: a.parameters + b.parameters, perWindow: a.perWindow + b.perWindow, fixed: a.fixed + b.fixed)
    }

    /// A convolution's parameters and `Conv1D.Buffers`. (Its geometry fits an Int: each
    /// key's bound keeps frames, channels and kernel small; their products over a batch are
    /// what can grow, and those are Doubles here.)
    static func conv(_ n: Double, frames t: Int, _ ic: Int, _ oc: Int, kernel k: Int, dilation d: Int = 1, stride s: Int = 1,
                     bias: Bool = false) -> ModelSize {
        let b = Conv1D.Buffers(frames: t, inChannels: ic, outChannels: oc, kernel: k, dilation: d, stride: s)
        return ModelSize(parameters: Double(oc) * Double(k) * Double(ic) + (bias ? Double(oc) : 0), perWindow: n * Double(b.perWindow),
                         fixed: Double(b.fixed))
    }

    static func batchNorm(_ n: Double, frames t: Int, _ c: Int) -> ModelSize {
        ModelSize(parameters: 2 * Double(c), perWindow: n * Double(BatchNorm.floatsPerWindow(frames: t, channels: c)))
    }

    static func convNorm(_ n: Double, frames t: Int, _ ic: Int, _ oc: Int, kernel k: Int, dilation d: Int = 1, stride s: Int = 1) -> ModelSize {
        conv(n, frames: t, ic, oc, kernel: k, dilation: d, stride: s) + batchNorm(n, frames: (t - 1) / s + 1, oc)
    }

    /// ReLU's output and gradient, or Dropout's (`buffers` 3: and its mask).
    static func elementwise(_ n: Double, frames t: Int, _ c: Int, buffers: Double = 2) -> ModelSize {
        ModelSize(perWindow: buffers * n * Double(t) * Double(c))
    }

    static func linear(_ inputs: Int, _ outputs: Int) -> ModelSize {
        ModelSize(parameters: Double(inputs * outputs + outputs), perWindow: Double(inputs + outputs))
    }

    /// A TCN (`TCN.init`).
    static func tcn(inputChannels c0: Int, frames t: Int, classes: Int, channels c: Int, dilations: [Int], kernel k: Int,
                    pooling: TCN.Pooling, inputNorm: Bool) -> ModelSize {
        var size = ModelSize(perWindow: Double(t * c0))   // the input's copy
        if inputNorm { size = size + batchNorm(1, frames: t, c0) }
        var ic = c0
        for d in dilations {
            size = size + conv(1, frames: t, ic, c, kernel: k, dilation: d) + batchNorm(1, frames: t, c) + elementwise(1, frames: t, c)
                + elementwise(1, frames: t, c, buffers: 3) + elementwise(1, frames: t, c, buffers: ic == c ? 2 : 0)
            ic = c
        }
        let p = pooling == .meanMax ? 2 * c : c
        // Both poolings' gradients and masks, dPool; pooled, dMean, dMax.
        size = size + ModelSize(perWindow: Double(3 * t * c + 2 * t + p + 4 * c)) + linear(p, classes)
        return size
    }

    /// An ST-GCN or ST-GCN++ (`STGCN.init`, `GraphBlock.init`).
    static func stgcn(joints v: Int, features f: Int, frames: Int, classes: Int, blocks: [Int], strides: [Int],
                      plusPlus: Bool, inputNorm: Bool) -> ModelSize {
        let V = Double(v)
        var size = ModelSize(perWindow: 3 * Double(frames * v * f))   // joints, input, dInput
        if inputNorm { size = size + batchNorm(1, frames: frames, v * f) }
        var ic = f, t = frames
        for (i, (oc, s)) in zip(blocks, strides).enumerated() {
            let to = (t - 1) / s + 1, vt = V * Double(t)
            let graph = GraphConv.Buffers(joints: v, frames: t, inChannels: ic, outChannels: oc, adjacency: plusPlus ? .learned : .importance)
            size = size + ModelSize(parameters: Double(graph.parameters), perWindow: Double(graph.perWindow), fixed: Double(graph.fixed))
            size = size + batchNorm(V, frames: t, oc) + elementwise(V, frames: t, oc)
            if plusPlus && ic != oc { size = size + convNorm(V, frames: t, ic, oc, kernel: 1) }
            size = size + (plusPlus ? multiScale(V, frames: t, oc, stride: s) : convNorm(V, frames: t, oc, oc, kernel: 9, stride: s))
            if i > 0 && !(ic == oc && s == 1) { size = size + convNorm(V, frames: t, ic, oc, kernel: 1, stride: s) }
            // gcnSum (ST-GCN++), sum, dGraph, dInput, the last ReLU.
            size = size + ModelSize(perWindow: (plusPlus ? vt * Double(oc) : 0) + V * Double(to * oc) + vt * Double(oc + ic))
                + elementwise(V, frames: to, oc)
            ic = oc; t = to
        }
        // poolWeights, pooled, dPool; dropout; head.
        size = size + ModelSize(perWindow: Double(t + ic) + V * Double(t * ic)) + elementwise(1, frames: 1, ic, buffers: 3)
            + linear(ic, classes)
        return size
    }

    /// `MultiScaleTemporalConv.init` over `n` sequences.
    static func multiScale(_ n: Double, frames t: Int, _ c: Int, stride s: Int) -> ModelSize {
        let branches = MultiScaleTemporalConv.branches, b = c / branches
        let widths = [c - (branches - 1) * b] + [Int](repeating: b, count: branches - 1)
        let to = (t - 1) / s + 1
        var size = ModelSize()
        for (w, d) in zip(widths.dropLast(), MultiScaleTemporalConv.dilations) {
            size = size + convNorm(n, frames: t, c, w, kernel: 1) + elementwise(n, frames: t, w)
                + convNorm(n, frames: t, w, w, kernel: 3, dilation: d, stride: s)
        }
        size = size + convNorm(n, frames: t, c, widths[branches - 1], kernel: 1, stride: s)
            + batchNorm(n, frames: to, c) + elementwise(n, frames: to, c) + convNorm(n, frames: to, c, c, kernel: 1)
        // cat, the branches' gradients, the input's gradient.
        return size + ModelSize(perWindow: n * Double(2 * to * c + t * c))
    }
}

extension Architecture {
    /// Bounds on what training or loading a net may take, far above any model that trains
    /// well here (the default TCN has 0.3 million parameters and 1.5 MB of buffers a
    /// window; the default ST-GCN 3 million) and low enough that a spec asking for more
    /// than this machine's memory is refused with a line rather than swapping or killed:
    /// 100 million parameters (with their gradients, Adam's two moments and the averaged
    /// copy, 2 GB), 8 GB of buffers for a batch.
    public static let maxParameters = 100_000_000
    public static let maxBatchBytes = 8_000_000_000

    /// The net's size before it is built (`ModelSize`), for `joints` joints.
    func size(joints: Int) -> ModelSize {
        let m = model
        if m.isGraph {
            return ModelSize.stgcn(joints: joints, features: inputChannels / max(joints, 1), frames: frames, classes: classes,
                                   blocks: m.blocks, strides: STGCN.Config.strides(m.blocks), plusPlus: m.type == .stgcnPlusPlus,
                                   inputNorm: m.inputNorm)
        }
        return ModelSize.tcn(inputChannels: inputChannels, frames: frames, classes: classes, channels: m.channels,
                             dilations: m.dilations, kernel: m.kernel, pooling: m.pooling, inputNorm: m.inputNorm)
    }

    /// Why a net of this architecture, on `joints` joints with batches of `batch` windows,
    /// is too big to build, as one line naming what to lower (`lower`); nil when it is not.
    public func sizeProblem(joints: Int, batch: Int, lower: String) -> String? {
        let size = size(joints: joints)
        let bytes = (size.perWindow * Double(batch) + size.fixed) * 4
        guard size.parameters > Double(Self.maxParameters) || bytes > Double(Self.maxBatchBytes) else { return nil }
        return "model: \(Self.count(size.parameters)) parameters / \(Self.bytes(bytes)) of activations for a batch of \(batch) windows "
            + "of \(frames) frames; at most \(Self.count(Double(Self.maxParameters))) parameters and \(Self.bytes(Double(Self.maxBatchBytes))): "
            + "lower \(lower)"
    }

    static func count(_ n: Double) -> String {
        n >= 1e9 ? String(format: "%.1f billion", n / 1e9) : n >= 1e6 ? String(format: "%.1f million", n / 1e6) : String(format: "%.0f", n)
    }

    static func bytes(_ n: Double) -> String {
        n >= 1e12 ? String(format: "%.1f TB", n / 1e12) : n >= 1e9 ? String(format: "%.1f GB", n / 1e9) : String(format: "%.0f MB", n / 1e6)
    }
}
