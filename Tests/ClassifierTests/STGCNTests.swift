import Keypoints
import Tensor
import XCTest
@testable import Classifier

/// The graph models' layers and the whole ST-GCN / ST-GCN++ against finite differences
/// (GradientCheck's method and tolerances), and the skeleton graph they convolve over.
final class STGCNTests: XCTestCase {
    /// Every joint of Vision's 18, BlazePose's 33 and Penn Action's 13 reaches the centre,
    /// and the partitions are ST-GCN's: itself, the parent, the children averaged.
    func testSkeletonGraphIsOneTreeOnEveryLayout() {
        let penn = ["head", "left_shoulder", "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist",
                    "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle"]
        for layout in [Skeleton.visionLayout, Skeleton.blazePoseNames, penn, ["a", "b", "c"]] {
            let g = SkeletonGraph(layout: layout), V = layout.count
            for j in 0..<V {
                var k = j, steps = 0
                while let p = g.parents[k] { k = p; steps += 1; XCTAssertLessThan(steps, V, "a cycle in \(layout)") }
                XCTAssertEqual(k, g.centre, "\(layout[j]) does not reach the centre")
            }
            for w in 0..<V {
                XCTAssertEqual(g.matrices[w * V + w], 1)
                let parentRow = (0..<V).map { g.matrices[(V + w) * V + $0] }
                XCTAssertEqual(parentRow.reduce(0, +), g.parents[w] == nil ? 0 : 1)
                let childRow = (0..<V).map { g.matrices[(2 * V + w) * V + $0] }
                let children = (0..<V).filter { g.parents[$0] == w }
                XCTAssertEqual(childRow.reduce(0, +), children.isEmpty ? 0 : 1, accuracy: 1e-6)
                for c in children { XCTAssertEqual(childRow[c], 1 / Float(children.count)) }
            }
        }
        let vision = SkeletonGraph(layout: Skeleton.visionLayout)
        XCTAssertEqual(Skeleton.visionLayout[vision.centre], "neck")
        XCTAssertEqual(vision.parents[Skeleton.visionLayout.firstIndex(of: "left_hip")!], vision.centre)
    }

    func testConv1DStrideGradientsAndFrames() {
        for (k, s) in [(3, 2), (1, 2), (9, 2), (5, 3)] {
            var rng = SplitMix64(seed: 111)
            let conv = Conv1D(frames: 7, inChannels: 3, outChannels: 4, kernel: k, stride: s, maxBatch: 2, rng: &rng)
            XCTAssertEqual(conv.outputShape, [(7 + s - 1) / s, 4])
            let x = randomBuffer(2 * 7 * 3, seed: 112)
            // Output frame t is the unstrided convolution's frame t·s.
            var rng2 = SplitMix64(seed: 111)
            let plain = Conv1D(frames: 7, inChannels: 3, outChannels: 4, kernel: k, maxBatch: 2, rng: &rng2)
            conv.forward(x.pointer, batch: 2, training: false)
            plain.forward(x.pointer, batch: 2, training: false)
            for b in 0..<2 {
                for t in 0..<conv.outFrames {
                    for o in 0..<4 {
                        XCTAssertEqual(conv.output.pointer[(b * conv.outFrames + t) * 4 + o], plain.output.pointer[(b * 7 + t * s) * 4 + o], accuracy: 1e-5)
                    }
                }
            }
            log("Conv1D k=\(k) stride \(s)", GradCheck.check(conv, x: x, batch: 2, training: true, seed: 113))
        }
    }

    /// Backward against the definition written out loop by loop (in Double), for the
    /// convolutions that read a zero-padded copy instead of im2col: strides 1 to 3, odd and
    /// even kernels, T a multiple of the stride or not, and more sequences than pieces.
    func testConv1DBackwardMatchesTheDefinition() {
        for (k, s, T) in [(9, 1, 12), (9, 2, 12), (9, 2, 7), (1, 2, 7), (4, 2, 8), (5, 3, 7), (2, 1, 5)] {
            let B = 5, C = 3, OC = 20
            var rng = SplitMix64(seed: 121)
            let conv = Conv1D(frames: T, inChannels: C, outChannels: OC, kernel: k, stride: s, maxBatch: B, rng: &rng)
            let TO = conv.outFrames, pad = (k - 1) / 2
            let x = randomBuffer(B * T * C, seed: 122), dOut = randomBuffer(B * TO * OC, seed: 123)
            conv.forward(x.pointer, batch: B, training: true)
            conv.weight.zeroGrad()
            conv.bias?.zeroGrad()
            conv.backward(dOut.pointer, input: x.pointer, batch: B)
            let w = conv.weight.value.pointer
            var dx = [Double](repeating: 0, count: B * T * C), dw = [Double](repeating: 0, count: OC * k * C)
            for b in 0..<B {
                for t in 0..<TO {
                    for kk in 0..<k {
                        let u = t * s - pad + kk
                        guard u >= 0 && u < T else { continue }
                        for o in 0..<OC {
                            let d = Double(dOut.pointer[(b * TO + t) * OC + o])
                            for c in 0..<C {
                                dx[(b * T + u) * C + c] += d * Double(w[(o * k + kk) * C + c])
                                dw[(o * k + kk) * C + c] += d * Double(x.pointer[(b * T + u) * C + c])
                            }
                        }
                    }
                }
            }
            for i in 0..<(B * T * C) { XCTAssertEqual(Double(conv.inputGrad.pointer[i]), dx[i], accuracy: 1e-4, "k=\(k) s=\(s) T=\(T) dx[\(i)]") }
            for i in 0..<(OC * k * C) { XCTAssertEqual(Double(conv.weight.grad.pointer[i]), dw[i], accuracy: 1e-4, "k=\(k) s=\(s) T=\(T) dW[\(i)]") }
        }
    }

    /// out[b,w,t,o] = Σ_k Σ_c W[o,k,c] · Σ_v A[k,w,v] · x[b,v,t,c] + bias[o], written out
    /// loop by loop, for both adjacencies (the edge list and the GEMM).
    func testGraphConvMatchesTheDefinition() {
        let graph = SkeletonGraph(layout: Skeleton.visionLayout)
        let B = 2, V = graph.joints, T = 3, C = 4, O = 5, K = SkeletonGraph.partitions
        for adjacency in [GraphConv.Adjacency.importance, .learned] {
            var rng = SplitMix64(seed: 171)
            let gcn = GraphConv(graph: graph, frames: T, inChannels: C, outChannels: O, adjacency: adjacency,
                                maxBatch: B, rng: &rng, name: "gcn")
            for i in 0..<gcn.edges.count { gcn.edges.value.pointer[i] = Float(rng.gaussian()) }
            for i in 0..<O { gcn.bias.value.pointer[i] = Float(i) * 0.1 }
            let x = randomBuffer(B * V * T * C, seed: 172)
            gcn.forward(x.pointer, batch: B, training: false)
            let p = gcn.edges.value.pointer, w = gcn.weight.value.pointer
            for b in 0..<B { for u in 0..<V { for t in 0..<T { for o in 0..<O {
                var sum = Double(gcn.bias.value.pointer[o])
                for k in 0..<K { for v in 0..<V {
                    let m = graph.matrices[(k * V + u) * V + v], e = p[(k * V + u) * V + v]
                    let a = Double(adjacency == .importance ? m * e : e)
                    guard a != 0 else { continue }
                    for c in 0..<C { sum += Double(w[(o * K + k) * C + c]) * a * Double(x.pointer[((b * V + v) * T + t) * C + c]) }
                } }
                XCTAssertEqual(Double(gcn.output.pointer[((b * V + u) * T + t) * O + o]), sum, accuracy: 1e-4)
            } } } }
        }
    }

    func testGraphConvGradients() {
        let graph = SkeletonGraph(layout: ["neck", "left_shoulder", "left_elbow", "right_shoulder", "left_hip"])
        for adjacency in [GraphConv.Adjacency.importance, .learned] {
            var rng = SplitMix64(seed: 121)
            let gcn = GraphConv(graph: graph, frames: 4, inChannels: 3, outChannels: 4, adjacency: adjacency,
                                maxBatch: 2, rng: &rng, name: "gcn")
            // Not the starting values, so that the importance product and the learnt
            // matrices are exercised away from 1 and from M.
            for i in 0..<gcn.edges.count { gcn.edges.value.pointer[i] += Float(i % 7) * 0.05 - 0.1 }
            for i in 0..<gcn.bias.count { gcn.bias.value.pointer[i] = 0.1 * Float(i) }
            let x = randomBuffer(2 * 5 * 4 * 3, seed: 122)
            log("GraphConv \(adjacency)", GradCheck.check(gcn, x: x, batch: 2, training: true, seed: 123))
        }
    }

    /// Every ReLU input of a block (its on/off pattern: GradCheck's kinks).
    static func reluInputs(_ block: GraphBlock, batch B: Int) -> [Bool] {
        var inputs = Array(UnsafeBufferPointer(start: block.gcnPreActivation, count: B * block.gcnReLU.inputCount))
        inputs += block.sum.array.prefix(B * block.outReLU.inputCount)
        if let ms = block.temporal as? MultiScaleTemporalConv {
            for (p, r) in zip(ms.projections, ms.projectionReLUs) { inputs += p.output.array.prefix(B * block.joints * r.inputCount) }
            inputs += ms.mixNorm.output.array.prefix(B * block.joints * ms.mixReLU.inputCount)
        }
        return inputs.map { $0 > 0 }
    }

    /// The blocks in evaluation mode: each batch norm is then the affine map of its running
    /// statistics, so a step of one element moves only what it feeds. In training mode two
    /// stacked batch norms over a few dozen rows (a branch's, then the mix's) put ~1e-4 of
    /// rounding noise into every difference quotient and a step crosses a ReLU kink
    /// somewhere in the batch half the time; the training-mode backward of the same
    /// layers is checked in the whole net (`testSTGCNWithLossGradients`) and in
    /// LayerGradientTests' batch norm check.
    func testMultiScaleTemporalConvGradients() {
        for s in [1, 2] {
            var rng = SplitMix64(seed: 131)
            let ms = MultiScaleTemporalConv(frames: 9, channels: 6, stride: s, maxBatch: 3, rng: &rng, name: "ms")
            XCTAssertEqual(ms.widths, [2, 1, 1, 1, 1])
            let x = randomBuffer(3 * 9 * 6, seed: 132)
            let kinks = {
                (zip(ms.projections, ms.projectionReLUs).flatMap { p, r in p.output.array.prefix(3 * r.inputCount) }
                    + ms.mixNorm.output.array.prefix(3 * ms.mixReLU.inputCount)).map { $0 > 0 }
            }
            log("MultiScaleTemporalConv stride \(s)", GradCheck.check(ms, x: x, batch: 3, training: false, seed: 133,
                                                                      kinks: kinks))
        }
    }

    func testGraphBlockGradients() {
        let graph = SkeletonGraph(layout: ["neck", "left_shoulder", "left_elbow", "right_shoulder"])
        // ST-GCN with a projected, strided residual; ST-GCN++ with the graph's down path and
        // identity residuals; ST-GCN++ with both projected.
        for (plusPlus, c, o, s) in [(false, 3, 5, 2), (true, 5, 5, 1), (true, 3, 5, 2)] {
            var rng = SplitMix64(seed: 141)
            let block = GraphBlock(graph: graph, frames: 6, inChannels: c, outChannels: o, stride: s, plusPlus: plusPlus,
                                   hasResidual: true, maxBatch: 2, rng: &rng, name: "b")
            let x = randomBuffer(2 * 4 * 6 * c, seed: 142)
            // Five ReLU stages in ST-GCN++'s block (two in ST-GCN's): a step crosses one of
            // them for up to a fifth of the elements. Through three GEMM stages the float32
            // rounding puts up to ~6e-5 of noise into a quotient (measured), against input
            // gradients down to 4e-4 here: a floor of 1e-2 keeps those from failing on noise.
            let report = GradCheck.check(block, x: x, batch: 2, training: false, seed: 143,
                                         kinks: { Self.reluInputs(block, batch: 2) }, maxSkipped: 0.25, floor: 1e-2)
            log("GraphBlock \(plusPlus ? "++" : "") \(c)→\(o) stride \(s)", report)
        }
    }

    /// The whole net and loss, as TCNTests does for the TCN: input BatchNorm, two blocks
    /// (the second strided), masked pooling with a padded sample, dropout frozen.
    func testSTGCNWithLossGradients() {
        for plusPlus in [false, true] {
            let layout = ["neck", "left_shoulder", "left_elbow", "right_shoulder"]
            let B = 3, T = 6, V = 4, F = 2, K = 3
            let net = STGCN(.init(graph: SkeletonGraph(layout: layout), features: F, frames: T, classes: K,
                                  blocks: [5, 6], plusPlus: plusPlus, dropout: 0.2, inputNorm: true, maxBatch: B, seed: 151))
            XCTAssertEqual(net.config.strides, [1, 2])
            XCTAssertEqual(net.state.count, net.parameters.count + 2 * (1 + net.blocks.flatMap(\.norms).count))
            let x = randomBuffer(B * T * V * F, seed: 152)
            var maskValues = [Float](repeating: 1, count: B * T)
            for t in 4..<T { maskValues[2 * T + t] = 0 }
            let mask = FloatBuffer(maskValues), targets = [0, 2, 1]
            net.forward(x.pointer, mask: mask.pointer, batch: B, training: true)
            net.dropout.freezeMask = true
            func loss() -> Double {
                let logits = net.forward(x.pointer, mask: mask.pointer, batch: B, training: true)
                var total = 0.0
                for b in 0..<B {
                    let z = (0..<K).map { Double(logits[b * K + $0]) }, m = z.max()!
                    total += log(z.reduce(0) { $0 + exp($1 - m) }) + m - z[targets[b]]
                }
                return total / Double(B)
            }
            let kinks = { net.blocks.flatMap { Self.reluInputs($0, batch: B) } }
            let ce = SoftmaxCrossEntropy(classes: K, maxBatch: B)
            for p in net.parameters { p.zeroGrad() }
            let logits = net.forward(x.pointer, mask: mask.pointer, batch: B, training: true)
            XCTAssertEqual(Double(ce.forward(logits, targets: targets, batch: B)), loss(), accuracy: 1e-5)
            net.backward(ce.dLogits.pointer)
            let dx = Array(net.inputGrad.array.prefix(B * T * V * F)), grads = net.parameters.map(\.grad.array)
            var report = GradientReport()
            for i in 0..<dx.count {
                report.compare(Double(dx[i]), GradCheck.numeric(x.pointer, i, kinks: kinks, loss), floor: GradCheck.floor, label: "dx[\(i)]")
            }
            for (p, g) in zip(net.parameters, grads) {
                for i in 0..<p.count {
                    report.compare(Double(g[i]), GradCheck.numeric(p.value.pointer, i, kinks: kinks, loss),
                                   floor: GradCheck.floor, label: "\(p.name)[\(i)]")
                }
            }
            // Batch norm in training mode everywhere: a step moves a whole channel's
            // statistics, so a kink crossed anywhere in the batch skips the element (as the
            // TCN's check with its input BatchNorm, about 40 %).
            GradCheck.assertPasses(report, maxSkipped: 0.6)
            log("STGCN\(plusPlus ? "++" : "") + SoftmaxCrossEntropy", report)
        }
    }

    /// The same nets as notebooks-free-scripts/pytorch_stgcn.py builds (its parameter
    /// counts for 18 joints × 5 features, 15 classes, blocks [64, 64, 128, 128]), so the
    /// side-by-side timings compare like with like.
    func testParameterCountsMatchThePyTorchMirror() {
        for (plusPlus, count) in [(false, 471_807), (true, 216_221)] {
            let net = STGCN(.init(graph: SkeletonGraph(layout: Skeleton.visionLayout), features: 5, frames: 32, classes: 15,
                                  blocks: [64, 64, 128, 128], plusPlus: plusPlus, dropout: 0, inputNorm: false, maxBatch: 2))
            XCTAssertEqual(net.parameterCount, count, plusPlus ? "stgcn++" : "stgcn")
        }
    }

    /// Evaluation is per window: a batch of three gives the logits of three batches of one.
    func testSTGCNEvalIsIndependentOfBatch() {
        let layout = Skeleton.visionLayout, T = 8, F = 3, K = 4
        let net = STGCN(.init(graph: SkeletonGraph(layout: layout), features: F, frames: T, classes: K, blocks: [8, 16],
                              plusPlus: true, dropout: 0, inputNorm: true, maxBatch: 3, seed: 161))
        let x = randomBuffer(3 * T * layout.count * F, seed: 162)
        let all = Array(UnsafeBufferPointer(start: net.forward(x.pointer, mask: nil, batch: 3, training: false), count: 3 * K))
        for b in 0..<3 {
            let one = net.forward(x.pointer + b * T * layout.count * F, mask: nil, batch: 1, training: false)
            for k in 0..<K { XCTAssertEqual(one[k], all[b * K + k], accuracy: 1e-5) }
        }
    }
}
