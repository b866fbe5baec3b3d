import Tensor

/// Fully connected layer. Shapes: inp is (B,C), weight is (O,C), bias is (O), out is (B,O).
public final class Linear: Layer {
    public let inFeatures: Int, outFeatures: Int, maxBatch: Int
    public let weight: Parameter, bias: Parameter
    public let output: FloatBuffer
    public let inputGrad: FloatBuffer

    public var inputShape: [Int] { [inFeatures] }
    public var outputShape: [Int] { [outFeatures] }
    public var parameters: [Parameter] { [weight, bias] }

    /// Weights N(0, gain²·2/C) (Kaiming/He normal over fan-in; gain 1 before a ReLU,
    /// 1/√2 for a final layer feeding a softmax), bias zero.
    public init(inFeatures: Int, outFeatures: Int, maxBatch: Int, rng: inout SplitMix64,
                gain: Double = 1, name: String = "linear") {
        precondition(inFeatures > 0 && outFeatures > 0 && maxBatch > 0)
        self.inFeatures = inFeatures; self.outFeatures = outFeatures; self.maxBatch = maxBatch
        weight = Parameter(name: "\(name).weight", shape: [outFeatures, inFeatures], decays: true)
        bias = Parameter(name: "\(name).bias", shape: [outFeatures], decays: false)
        fillGaussian(weight.value.pointer, count: weight.count,
                     std: gain * (2.0 / Double(inFeatures)).squareRoot(), rng: &rng)
        output = FloatBuffer(count: maxBatch * outFeatures)
        inputGrad = FloatBuffer(count: maxBatch * inFeatures)
    }

    // out (B,O) = inp (B,C) · weightᵀ + bias
    public func forward(_ x: UnsafePointer<Float>, batch B: Int, training: Bool) {
        precondition(B <= maxBatch)
        let C = inFeatures, O = outFeatures, out = output.pointer, b = bias.value.pointer
        BLAS.gemm(m: B, n: O, k: C, a: x, lda: C, b: weight.value.pointer, ldb: C, transposeB: true, c: out, ldc: O)
        for i in 0..<B {
            for o in 0..<O { out[i * O + o] += b[o] }
        }
    }

    // dweight (O,C) += doutᵀ · inp;  dbias (O) += Σ_b dout;  dinp (B,C) = dout · weight
    public func backward(_ dOut: UnsafePointer<Float>, input x: UnsafePointer<Float>, batch B: Int) {
        let C = inFeatures, O = outFeatures
        guard B > 0 else { return }
        BLAS.gemm(m: O, n: C, k: B, a: dOut, lda: O, transposeA: true, b: x, ldb: C, c: weight.grad.pointer, ldc: C,
                  accumulate: true)
        let db = bias.grad.pointer
        for i in 0..<B {
            for o in 0..<O { db[o] += dOut[i * O + o] }
        }
        BLAS.gemm(m: B, n: C, k: O, a: dOut, lda: O, b: weight.value.pointer, ldb: C, c: inputGrad.pointer, ldc: C)
    }
}
