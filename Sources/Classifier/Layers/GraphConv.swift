import MatrixProduct
import Tensor

/// Spatial graph convolution over a skeleton's joints, each frame on its own (ST-GCN's
/// unit_gcn, PYSKL's conv_pos 'post'): every joint gathers its graph neighbours through the
/// K partition matrices, then a 1×1 convolution mixes the K·C gathered channels into OC.
///
///     z[b,k,w,t,:] = Σ_v A[k,w,v] · x[b,v,t,:]          A = (K,V,V), [k][w][v]
///     out[b,w,t,:] = W · [z[b,0,w,t,:] | … | z[b,K−1,w,t,:]] + bias
///
/// `Adjacency.importance` (ST-GCN): A = M ⊙ P, M the graph's fixed matrices
/// (`SkeletonGraph`), P learnt and starting at 1, so only the skeleton's edges carry weight
/// and each learns how much. `Adjacency.learned` (ST-GCN++): A = P, starting at M, every
/// entry learnt (joints the skeleton does not link may come to read each other).
///
/// Shapes: inp is (B,V,T,C), P is (K,V,V), weight is (OC,K·C) laid out [oc][k][c], bias
/// is (OC), out is (B,V,T,OC). The mixing is one GEMM (and two in backward). The gathering:
/// with `.importance` only the skeleton's edges are non-zero (about 3V of K·V², 52 of 972
/// for Vision's 18 joints), so it runs over those alone, straight into the mixing GEMM's
/// input layout; with `.learned` every entry may be non-zero, and it is one GEMM over the
/// whole batch, the input seen joint-major (V, B·T·C).
public final class GraphConv: Layer {
    public enum Adjacency: Sendable { case importance, learned }

    public let joints: Int, frames: Int, inChannels: Int, outChannels: Int, partitions: Int
    public let adjacency: Adjacency
    public let maxBatch: Int
    /// P, (K,V,V).
    public let edges: Parameter
    public let weight: Parameter
    public let bias: Parameter
    public let output: FloatBuffer
    public let inputGrad: FloatBuffer
    /// M, the graph's matrices (K,V,V).
    let graph: [Float]
    /// A of the last forward, (K·V, V).
    let effective: FloatBuffer
    /// `.learned`: z in (K·V, B, T·C) after the gathering GEMM; reused for dz in backward.
    let gathered: FloatBuffer
    /// `.learned`: the input joint-major, (V, B, T·C); backward reuses it for dx in that layout.
    let jointMajor: FloatBuffer
    /// z rearranged to (B,V,T,K·C), the mixing GEMM's input; backward reads it for dW and
    /// then reuses it for dz in that layout.
    let mixed: FloatBuffer
    /// dA, (K·V, V).
    let dEffective: FloatBuffer
    /// `.importance`: the graph's non-zero entries, as (row k·V + w, column v).
    let edgeList: [(row: Int, v: Int)]
    /// Wᵀ (K·C × OC) forward, W (OC × K·C) backward, packed for the C kernels: room for the
    /// larger, allocated once.
    let packed: PackedWeights

    public var inputShape: [Int] { [joints, frames, inChannels] }
    public var outputShape: [Int] { [joints, frames, outChannels] }
    public var parameters: [Parameter] { [edges, weight, bias] }

    /// Weights Kaiming/He normal over fan-in K·C times `gain`; bias zero.
    public init(graph: SkeletonGraph, frames: Int, inChannels: Int, outChannels: Int, adjacency: Adjacency,
                maxBatch: Int, rng: inout SplitMix64, gain: Double = 1, name: String) {
        precondition(frames > 0 && inChannels > 0 && outChannels > 0 && maxBatch > 0)
        let K = SkeletonGraph.partitions, V = graph.joints
        joints = V; self.frames = frames; self.inChannels = inChannels; self.outChannels = outChannels
        partitions = K; self.adjacency = adjacency; self.maxBatch = maxBatch
        self.graph = graph.matrices
        edges = Parameter(name: "\(name).edges", shape: [K, V, V], decays: false)
        switch adjacency {
        case .importance: edges.value.pointer.update(repeating: 1, count: K * V * V)
        case .learned: edges.value.pointer.update(from: graph.matrices, count: K * V * V)
        }
        weight = Parameter(name: "\(name).weight", shape: [outChannels, K, inChannels], decays: true)
        bias = Parameter(name: "\(name).bias", shape: [outChannels], decays: false)
        fillGaussian(weight.value.pointer, count: weight.count, std: gain * (2.0 / Double(K * inChannels)).squareRoot(), rng: &rng)
        let plan = Buffers(joints: V, frames: frames, inChannels: inChannels, outChannels: outChannels, adjacency: adjacency)
        // (A buffer this adjacency does not use keeps one float.)
        output = FloatBuffer(count: maxBatch * plan.output)
        inputGrad = FloatBuffer(count: maxBatch * plan.inputGrad)
        effective = FloatBuffer(count: plan.effective)
        dEffective = FloatBuffer(count: plan.effective)
        gathered = FloatBuffer(count: max(1, maxBatch * plan.gathered))
        jointMajor = FloatBuffer(count: max(1, maxBatch * plan.jointMajor))
        mixed = FloatBuffer(count: maxBatch * plan.mixed)
        packed = PackedWeights(capacity: plan.packed)
        edgeList = (0..<(K * V)).flatMap { row in (0..<V).filter { graph.matrices[row * V + $0] != 0 }.map { (row, $0) } }
    }

    /// The floats of each buffer the layer allocates, per window of a batch and once:
    /// `init` allocates these, `ModelSize` adds them up before a net is built.
    struct Buffers {
        /// Per window: output, input gradient, the mixed input, and for a learned adjacency
        /// the gathered input and its joint-major copy (0 otherwise).
        let output: Int, inputGrad: Int, mixed: Int, gathered: Int, jointMajor: Int
        /// Once: the effective adjacency (and as much for its gradient), the packed weights.
        let effective: Int, packed: Int
        let parameters: Int

        init(joints V: Int, frames T: Int, inChannels C: Int, outChannels OC: Int, adjacency: Adjacency) {
            let K = SkeletonGraph.partitions, learned = adjacency == .learned
            output = V * T * OC; inputGrad = V * T * C; mixed = K * V * T * C
            gathered = learned ? K * V * T * C : 0; jointMajor = learned ? V * T * C : 0
            effective = K * V * V; packed = GraphConv.packedFloats(inChannels: C, outChannels: OC)
            parameters = OC * K * C + OC + K * V * V
        }

        var perWindow: Int { output + inputGrad + mixed + gathered + jointMajor }
        var fixed: Int { 2 * effective + packed }
    }

    /// The room `packed` needs.
    static func packedFloats(inChannels C: Int, outChannels OC: Int) -> Int {
        let KC = SkeletonGraph.partitions * C
        return max(PackedWeights.floats(k: KC, n: OC), PackedWeights.floats(k: OC, n: KC))
    }

    // A = M ⊙ P or P;  z (K·V, B·T·C) = A (K·V, V) · xᵀ (V, B·T·C), xᵀ[v,b] = x[b,v];
    // mixed[b,w,t,k,:] = z[k·V+w,b,t,:];  out (B·V·T, OC) = mixed (B·V·T, K·C) · Wᵀ + bias.
    public func forward(_ x: UnsafePointer<Float>, batch B: Int, training: Bool) {
        precondition(B <= maxBatch)
        let K = partitions, V = joints, T = frames, C = inChannels, OC = outChannels
        let KV = K * V, TC = T * C, KC = K * C
        let a = effective.pointer, p = edges.value.pointer
        switch adjacency {
        case .importance: for i in 0..<(KV * V) { a[i] = graph[i] * p[i] }
        case .learned: a.update(from: p, count: KV * V)
        }
        let zm = mixed.pointer, out = output.pointer, bias = UnsafePointer(bias.value.pointer), edgeList = edgeList
        switch adjacency {
        case .importance:
            // mixed[b,w,t,k,:] = Σ over the edges (k·V + w, v) of A · x[b,v,t,:].
            LayerThreads.forEach(B, minPerPiece: 1) { samples in
                zm.advanced(by: samples.lowerBound * V * T * KC).update(repeating: 0, count: samples.count * V * T * KC)
                for b in samples {
                    for (row, v) in edgeList {
                        let k = row / V, w = row % V, weight = a[row * V + v]
                        let src = x + b * V * TC + v * TC, dst = zm + (b * V + w) * T * KC + k * C
                        for t in 0..<T {
                            let s = src + t * C, d = dst + t * KC
                            for c in 0..<C { d[c] += weight * s[c] }
                        }
                    }
                }
            }
        case .learned:
            let z = gathered.pointer, xt = jointMajor.pointer
            swapSamplesAndJoints(x, xt, rows: B, columns: V, count: TC)
            BLAS.gemm(m: KV, n: B * TC, k: V, a: a, lda: V, b: xt, ldb: B * TC, c: z, ldc: B * TC)
            rearrange(z, zm, batch: B, toMixed: true)
        }
        packed.pack(b: weight.value.pointer, ldb: KC, k: KC, n: OC, transposed: true, bias: bias)
        PanelGemm.multiply(m: B * V * T, a: zm, lda: KC, weights: packed, c: out, ldc: OC)
    }

    // dW (OC, K·C) += doutᵀ · mixed;  dbias += Σ dout;  dmixed = dout · W (into `mixed`);
    // dA (K·V, V) = dz · xᵀᵀ;  dP += M ⊙ dA or dA;  dxᵀ (V, B·T·C) = Aᵀ · dz, dz = dmixed as (K·V, B·T·C).
    public func backward(_ dOut: UnsafePointer<Float>, input x: UnsafePointer<Float>, batch B: Int) {
        let K = partitions, V = joints, T = frames, C = inChannels, OC = outChannels
        let KV = K * V, TC = T * C, KC = K * C, rows = B * V * T
        guard B > 0 else { return }
        let zm = mixed.pointer
        PanelGemm.accumulateTransposed(m: OC, n: KC, rows: rows, a: dOut, lda: OC, b: zm, ldb: KC, c: weight.grad.pointer, ldc: KC)
        let db = bias.grad.pointer
        for r in 0..<rows {
            let d = dOut + r * OC
            for c in 0..<OC { db[c] += d[c] }
        }
        packed.pack(b: weight.value.pointer, ldb: KC, k: OC, n: KC, transposed: false)
        PanelGemm.multiply(m: rows, a: dOut, lda: OC, weights: packed, c: zm, ldc: KC)
        let dA = dEffective.pointer, dP = edges.grad.pointer, dx = inputGrad.pointer, a = effective.pointer
        switch adjacency {
        case .importance:
            // dA[row, v] = Σ_b,t dmixed[b,w,t,k,:] · x[b,v,t,:];  dx[b,v,t,:] += A · dmixed[b,w,t,k,:]
            // Each piece of the samples sums its own dA, then the pieces add up in order.
            let edgeList = edgeList, E = edgeList.count, pieces = LayerThreads.pieces(B, minPerPiece: 1)
            let partial = UnsafeMutablePointer<Float>.allocate(capacity: pieces * E)
            defer { partial.deallocate() }
            LayerThreads.run(B, pieces: pieces) { samples, p in
                dx.advanced(by: samples.lowerBound * V * TC).update(repeating: 0, count: samples.count * V * TC)
                // Per channel first (the loop vectorises), then over the channels.
                withUnsafeTemporaryAllocation(of: Float.self, capacity: C) { perChannel in
                    let acc = perChannel.baseAddress!
                    for (e, (row, v)) in edgeList.enumerated() {
                        let k = row / V, w = row % V, weight = a[row * V + v]
                        acc.update(repeating: 0, count: C)
                        for b in samples {
                            let xs = x + b * V * TC + v * TC, ds = zm + (b * V + w) * T * KC + k * C, dxs = dx + b * V * TC + v * TC
                            for t in 0..<T {
                                let xr = xs + t * C, dr = ds + t * KC, dxr = dxs + t * C
                                for c in 0..<C {
                                    acc[c] += dr[c] * xr[c]
                                    dxr[c] += weight * dr[c]
                                }
                            }
                        }
                        var sum: Float = 0
                        for c in 0..<C { sum += acc[c] }
                        partial[p * E + e] = sum
                    }
                }
            }
            for (e, (row, v)) in edgeList.enumerated() {
                var sum = partial[e]
                for p in 1..<max(1, pieces) { sum += partial[p * E + e] }
                dP[row * V + v] += graph[row * V + v] * sum
            }
        case .learned:
            let dz = gathered.pointer, xt = jointMajor.pointer
            rearrange(zm, dz, batch: B, toMixed: false)
            BLAS.gemm(m: KV, n: V, k: B * TC, a: dz, lda: B * TC, b: xt, ldb: B * TC, transposeB: true, c: dA, ldc: V)
            for i in 0..<(KV * V) { dP[i] += dA[i] }
            BLAS.gemm(m: V, n: B * TC, k: KV, a: a, lda: V, transposeA: true, b: dz, ldb: B * TC, c: xt, ldc: B * TC)
            swapSamplesAndJoints(xt, dx, rows: V, columns: B, count: TC)
        }
    }

    /// (R, C, n) → (C, R, n): the samples-major layout to the joint-major one (R = B, C = V)
    /// or back (R = V, C = B).
    func swapSamplesAndJoints(_ from: UnsafePointer<Float>, _ to: UnsafeMutablePointer<Float>, rows R: Int, columns C: Int, count n: Int) {
        LayerThreads.forEach(R, minPerPiece: 1) { rows in
            for r in rows {
                for c in 0..<C { (to + (c * R + r) * n).update(from: from + (r * C + c) * n, count: n) }
            }
        }
    }

    /// (K, V, B, T, C) ↔ (B, V, T, K, C): the gathering GEMM's layout and the mixing GEMM's,
    /// `toMixed` choosing the direction.
    func rearrange(_ from: UnsafePointer<Float>, _ to: UnsafeMutablePointer<Float>, batch B: Int, toMixed: Bool) {
        let K = partitions, V = joints, T = frames, C = inChannels, KC = K * C
        LayerThreads.forEach(B, minPerPiece: 1) { samples in
            for b in samples {
                for k in 0..<K {
                    for w in 0..<V {
                        let gathered = ((k * V + w) * B + b) * T * C, mixed = (b * V + w) * T * KC + k * C
                        for t in 0..<T {
                            if toMixed { (to + mixed + t * KC).update(from: from + gathered + t * C, count: C) }
                            else { (to + gathered + t * C).update(from: from + mixed + t * KC, count: C) }
                        }
                    }
                }
            }
        }
    }
}
