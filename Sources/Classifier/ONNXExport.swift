import Basics
import Foundation
import KeypointWindows
import Tensor

/// A model that ONNX export cannot write (yet), with the reason.
public struct ONNXExportError: Error, CustomStringConvertible {
    public let description: String
}

extension ActionClassifier {
    /// The model as ONNX (opset 17): inputs `windows` (batch, frames, features) and `mask`
    /// (batch, frames), output `probabilities` (batch, labels), exactly what
    /// `probabilities(values:masks:)` computes: each member's net (TCN, ST-GCN or ST-GCN++)
    /// on its channels, softmax, members averaged by weight, and with `flipAverage` the
    /// same on the mirror image, averaged. The labels and the whole preprocessing spec are
    /// in the metadata (`labels`, `preprocessing`: JSON), so an app can make the windows itself.
    public func onnx() throws -> [UInt8] {
        var g = ONNXGraph()
        let F = spec.channels, T = spec.window
        var x = "windows", mask = "mask"
        if architecture.flipAverage {
            // The mirror image is a fixed permutation of the channels with some signs turned:
            // a (F, F) matrix, found by mirroring each unit vector. The windows and their
            // mirror images go through the nets as one batch of 2·B (the weights once in the
            // file), then the two halves are averaged.
            var matrix = [Float](repeating: 0, count: F * F)
            for i in 0..<F {
                var e = [Float](repeating: 0, count: F)
                e[i] = 1
                let m = AugmentationSpec.flipped(e, layout: spec.joints, features: spec.features)
                for j in 0..<F { matrix[i * F + j] = m[j] }
            }
            let mirrored = g.node("MatMul", ["windows", g.constant("mirror", matrix, dims: [F, F])])
            x = g.node("Concat", ["windows", mirrored], ["axis": .int(0)])
            mask = g.node("Concat", ["mask", "mask"], ["axis": .int(0)])
        }
        // Every member on its channels; their probabilities averaged by weight.
        let total = members.reduce(0) { $0 + $1.weight }
        var sum: String?
        for (member, map) in zip(members, channelMaps) {
            // A channel map indexes the flattened window, frame after frame; frame 0's part
            // picks the same channels from every frame.
            let h = map.map { g.node("Gather", [x, g.ints("channels", Array($0.prefix($0.count / T)))], ["axis": .int(2)]) } ?? x
            let logits: String
            switch member.net {
            case let tcn as TCN: logits = try tcn.onnx(&g, input: h, mask: mask)
            case let stgcn as STGCN: logits = stgcn.onnx(&g, input: h, mask: mask)
            default: throw ONNXExportError(description: "ONNX export does not write a \(member.architecture.type.rawValue) net")
            }
            let p = g.node("Softmax", [logits], ["axis": .int(1)])
            let scaled = members.count > 1 ? g.node("Mul", [p, g.constant("weight", [Float(member.weight / total)], dims: [1])]) : p
            sum = sum.map { g.node("Add", [$0, scaled]) } ?? scaled
        }
        var out = sum!
        if architecture.flipAverage {
            let halves = g.node("Reshape", [out, g.ints("shape", [2, -1, labels.count])])   // (2, B, K)
            out = g.node("ReduceMean", [halves], ["axes": .ints([0]), "keepdims": .int(0)])
        }
        g.identity(out, as: "probabilities")
        let metadata = ["labels": JSONLines.encode(labels), "preprocessing": spec.json(),
                        "preprocessing_steps": JSONLines.encode(Preprocessing.steps),
                        "inputs": "windows: (batch, frames, features) as poseact's StreamingPreprocessor makes them; mask: (batch, frames), 1 for a real pose",
                        "producer": "poseact"]
        return g.model(inputs: [("windows", ["batch", T, F]), ("mask", ["batch", T])],
                           outputs: [("probabilities", ["batch", labels.count])], metadata: metadata)
    }
}

extension TCN {
    /// The net as ONNX nodes on `x` (batch, frames, channels) and `mask` (batch, frames):
    /// the logits (batch, classes), as `forward` computes them in evaluation.
    func onnx(_ g: inout ONNXGraph, input x: String, mask: String) throws -> String {
        var h = g.node("Transpose", [x], ["perm": .ints([0, 2, 1])])   // (B, C, T): ONNX's channels first
        if let inputNorm { h = inputNorm.onnx(&g, h) }
        for block in blocks {
            // The pooling below reads the mask at every frame.
            guard block.conv.stride == 1 else { throw ONNXExportError(description: "ONNX export: a strided TCN convolution") }
            var y = block.conv.onnx(&g, h)
            y = block.norm.onnx(&g, y)
            y = g.node("Relu", [y])
            if block.residual { y = g.node("Add", [h, y]) }
            h = y
        }
        // Pooling over the valid frames; a window without one pools to zeros.
        let m = g.node("Unsqueeze", [mask, g.ints("axis", [1])])                       // (B, 1, T)
        let count = g.node("ReduceSum", [m, g.ints("axes", [2])], ["keepdims": .int(0)])  // (B, 1)
        func mean() -> String {
            let sum = g.node("ReduceSum", [g.node("Mul", [h, m]), g.ints("axes", [2])], ["keepdims": .int(0)])
            let safe = g.node("Max", [count, g.constant("tiny", [1e-30], dims: [1])])
            return g.node("Div", [sum, safe])
        }
        func max() -> String {
            let zero = g.constant("zero", [0], dims: [1])
            let valid = g.node("Greater", [m, zero])
            let masked = g.node("Where", [valid, h, g.constant("lowest", [-Float.greatestFiniteMagnitude], dims: [1])])
            let top = g.node("ReduceMax", [masked], ["axes": .ints([2]), "keepdims": .int(0)])
            return g.node("Where", [g.node("Greater", [count, zero]), top, zero])
        }
        let pooled: String
        switch config.pooling {
        case .mean: pooled = mean()
        case .max: pooled = max()
        case .meanMax: pooled = g.node("Concat", [mean(), max()], ["axis": .int(1)])
        }
        return head.onnx(&g, pooled)
    }
}

extension STGCN {
    /// The net as ONNX nodes on `x` (batch, frames, joints·features) and `mask` (batch,
    /// frames): the logits (batch, classes), as `forward` computes them in evaluation. Inside,
    /// PYSKL's layout (batch, channels, frames, joints): the temporal convolutions are
    /// (k, 1) convolutions and the graph convolution one MatMul over the joints.
    func onnx(_ g: inout ONNXGraph, input x: String, mask: String) -> String {
        let V = config.graph.joints, F = config.features
        var h: String
        if let inputNorm {
            // BatchNorm over the V·F channels, as (B, V·F, T), then to (B, F, T, V).
            let normed = inputNorm.onnx(&g, g.node("Transpose", [x], ["perm": .ints([0, 2, 1])]))
            let split = g.node("Reshape", [normed, g.ints("shape", [0, V, F, -1])])       // (B, V, F, T)
            h = g.node("Transpose", [split], ["perm": .ints([0, 2, 3, 1])])
        } else {
            let split = g.node("Reshape", [x, g.ints("shape", [0, -1, V, F])])            // (B, T, V, F)
            h = g.node("Transpose", [split], ["perm": .ints([0, 3, 1, 2])])
        }
        for block in blocks { h = block.onnx(&g, h) }
        // The mean over the joints and the real frames among those the last block kept
        // (every S-th); every kept frame alike when none is real.
        let last = blocks[blocks.count - 1], TO = last.outFrames, S = config.strides.reduce(1, *)
        let kept = g.node("Slice", [mask, g.ints("starts", [0]), g.ints("ends", [config.frames]), g.ints("axes", [1]),
                                    g.ints("steps", [S])])                                        // (B, T′)
        let total = g.node("ReduceSum", [kept, g.ints("axes", [1])], ["keepdims": .int(1)])       // (B, 1)
        let zero = g.constant("zero", [0], dims: [1])
        let scale = g.node("Mul", [g.node("Max", [total, g.constant("tiny", [1e-30], dims: [1])]),
                                   g.constant("joints", [Float(V)], dims: [1])])
        let weights = g.node("Where", [g.node("Greater", [total, zero]), g.node("Div", [kept, scale]),
                                       g.constant("uniform", [1 / (Float(TO) * Float(V))], dims: [1])])
        let overJoints = g.node("ReduceSum", [h, g.ints("axes", [3])], ["keepdims": .int(0)])      // (B, C, T′)
        let pooled = g.node("MatMul", [overJoints, g.node("Unsqueeze", [weights, g.ints("axis", [2])])])  // (B, C, 1)
        let flat = g.node("Reshape", [pooled, g.ints("shape", [0, last.outChannels])])
        return head.onnx(&g, flat)
    }
}

extension GraphBlock {
    /// The block on `x` (B, C, T, V): (B, OC, T′, V).
    func onnx(_ g: inout ONNXGraph, _ x: String) -> String {
        var y = gcnNorm.onnx(&g, gcn.onnx(&g, x))
        switch gcnResidual {
        case .none: break
        case .identity: y = g.node("Add", [y, x])
        case .projection(let p): y = g.node("Add", [y, p.onnx(&g, x, overJoints: true)])
        }
        y = g.node("Relu", [y])
        switch temporal {
        case let t as ConvNorm: y = t.onnx(&g, y, overJoints: true)
        case let t as MultiScaleTemporalConv: y = t.onnx(&g, y)
        default: preconditionFailure("a graph block's temporal layer is a ConvNorm or a MultiScaleTemporalConv")
        }
        switch residual {
        case .none: break
        case .identity: y = g.node("Add", [y, x])
        case .projection(let p): y = g.node("Add", [y, p.onnx(&g, x, overJoints: true)])
        }
        return g.node("Relu", [y])
    }
}

extension GraphConv {
    /// The graph convolution on `x` (B, C, T, V): z = x · Aᵀ for the K partitions at once
    /// (a (V, K·V) matrix), regrouped to (B, K·C, T, V), then the 1×1 convolution whose
    /// weight is already [oc][k][c].
    func onnx(_ g: inout ONNXGraph, _ x: String) -> String {
        let K = partitions, V = joints, C = inChannels, OC = outChannels
        let p = edges.value.pointer
        var gather = [Float](repeating: 0, count: V * K * V)   // [v][k·V + w] = A[k][w][v]
        for row in 0..<(K * V) {
            for v in 0..<V {
                let a = adjacency == .importance ? graph[row * V + v] * p[row * V + v] : p[row * V + v]
                gather[v * K * V + row] = a
            }
        }
        let z = g.node("MatMul", [x, g.constant("adjacency", gather, dims: [V, K * V])])   // (B, C, T, K·V)
        let parts = g.node("Reshape", [z, g.ints("shape", [0, C, -1, K, V])])
        let grouped = g.node("Transpose", [parts], ["perm": .ints([0, 3, 1, 2, 4])])      // (B, K, C, T, V)
        let mixedIn = g.node("Reshape", [grouped, g.ints("shape", [0, K * C, -1, V])])
        return g.node("Conv", [mixedIn, g.constant("gcn", weight.value.values, dims: [OC, K * C, 1, 1]),
                               g.constant("gcn_bias", bias.value.values, dims: [OC])], ["kernel_shape": .ints([1, 1])])
    }
}

extension MultiScaleTemporalConv {
    /// The five branches on `x` (N, C, T, V), side by side, then the mixing: (N, C, T′, V).
    func onnx(_ g: inout ONNXGraph, _ x: String) -> String {
        var branches: [String] = []
        for i in projections.indices {
            let projected = g.node("Relu", [projections[i].onnx(&g, x, overJoints: true)])
            branches.append(dilated[i].onnx(&g, projected, overJoints: true))
        }
        branches.append(pointwise.onnx(&g, x, overJoints: true))
        let cat = g.node("Concat", branches, ["axis": .int(1)])
        return mix.onnx(&g, g.node("Relu", [mixNorm.onnx(&g, cat)]), overJoints: true)
    }
}

extension ConvNorm {
    func onnx(_ g: inout ONNXGraph, _ x: String, overJoints: Bool = false) -> String {
        norm.onnx(&g, conv.onnx(&g, x, overJoints: overJoints))
    }
}

extension Conv1D {
    /// The convolution on `x` (N, C, T), or with `overJoints` on (N, C, T, V) as a (k, 1)
    /// convolution, each joint its own sequence: same padding, dilation and stride
    /// (frame t reads t·s − padLeft + k·d; the right padding makes ⌈T/s⌉ frames).
    func onnx(_ g: inout ONNXGraph, _ x: String, overJoints: Bool = false) -> String {
        let OC = outChannels, C = inChannels, K = kernel
        // poseact keeps the filter as [oc][k][c]; ONNX's Conv wants [oc][c][k].
        var w = [Float](repeating: 0, count: OC * C * K)
        let src = weight.value.pointer
        for o in 0..<OC { for k in 0..<K { for c in 0..<C { w[(o * C + c) * K + k] = src[(o * K + k) * C + c] } } }
        let padRight = dilation * (K - 1) - padLeft
        var inputs = [x, g.constant("conv", w, dims: overJoints ? [OC, C, K, 1] : [OC, C, K])]
        if let bias { inputs.append(g.constant("conv_bias", bias.value.values, dims: [OC])) }
        let attributes: [String: ONNXGraph.Attribute] = overJoints
            ? ["dilations": .ints([dilation, 1]), "kernel_shape": .ints([K, 1]), "pads": .ints([padLeft, 0, padRight, 0]),
               "strides": .ints([stride, 1])]
            : ["dilations": .ints([dilation]), "kernel_shape": .ints([K]), "pads": .ints([padLeft, padRight]),
               "strides": .ints([stride])]
        return g.node("Conv", inputs, attributes)
    }
}

extension Linear {
    /// `x` (B, in) → (B, out).
    func onnx(_ g: inout ONNXGraph, _ x: String) -> String {
        g.node("Gemm", [x, g.constant("linear", weight.value.values, dims: [outFeatures, inFeatures]),
                        g.constant("linear_bias", bias.value.values, dims: [outFeatures])], ["transB": .int(1)])
    }
}

extension BatchNorm {
    /// Evaluation-mode batch norm over axis 1 of `x` (running statistics).
    func onnx(_ g: inout ONNXGraph, _ x: String) -> String {
        g.node("BatchNormalization", [x, g.constant("bn_scale", gamma.value.values, dims: [channels]),
                                      g.constant("bn_bias", beta.value.values, dims: [channels]),
                                      g.constant("bn_mean", runningMean.values, dims: [channels]),
                                      g.constant("bn_var", runningVar.values, dims: [channels])],
               ["epsilon": .float(eps)])
    }
}

private extension FloatBuffer {
    var values: [Float] { Array(UnsafeBufferPointer(start: pointer, count: count)) }
}
