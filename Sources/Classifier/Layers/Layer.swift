import Tensor

/// A trainable tensor: its values, the gradient that backward passes accumulate into, and
/// its shape. Allocated once by the layer that owns it.
public final class Parameter {
    public let name: String
    public let shape: [Int]
    public let value: FloatBuffer
    public let grad: FloatBuffer
    /// Whether AdamW's decoupled weight decay applies: true for convolution and linear
    /// weights, false for biases and normalisation scales/shifts.
    public let decays: Bool

    public init(name: String, shape: [Int], decays: Bool) {
        self.name = name
        self.shape = shape
        self.decays = decays
        let count = shape.reduce(1, *)
        value = FloatBuffer(count: count)
        grad = FloatBuffer(count: count)
    }

    public var count: Int { value.count }

    /// grad = 0.
    public func zeroGrad() { grad.pointer.update(repeating: 0, count: grad.count) }
}

/// One layer of a model: a forward and a backward pass over a batch of up to `maxBatch`
/// samples, each of shape `inputShape` (without the batch dimension), channels last.
///
/// Conventions (as in llm.c):
/// - every buffer (output, input gradient, saved activations) is allocated in `init` for
///   `maxBatch` samples and reused; `forward`/`backward` never allocate;
/// - `forward` writes `output[0 ..< batch·outputCount]`;
/// - `backward` is given the gradient of the loss with respect to `output` and the same
///   input `x` that `forward` saw; it *accumulates* (+=) into every `Parameter.grad` (so the
///   optimiser zeroes them) and *overwrites* `inputGrad[0 ..< batch·inputCount]`.
public protocol Layer: AnyObject {
    /// Per-sample input and output shapes, e.g. [T, C] and [T, OC].
    var inputShape: [Int] { get }
    var outputShape: [Int] { get }
    var maxBatch: Int { get }
    var parameters: [Parameter] { get }
    var output: FloatBuffer { get }
    var inputGrad: FloatBuffer { get }

    func forward(_ x: UnsafePointer<Float>, batch: Int, training: Bool)
    func backward(_ dOut: UnsafePointer<Float>, input x: UnsafePointer<Float>, batch: Int)
}

extension Layer {
    /// Floats per sample in the input / output.
    public var inputCount: Int { inputShape.reduce(1, *) }
    public var outputCount: Int { outputShape.reduce(1, *) }
    public var parameterCount: Int { parameters.reduce(0) { $0 + $1.count } }
}

/// Fills `p` with N(0, std²) from `rng` (Kaiming/He normal when std = √(2 / fan_in)).
func fillGaussian(_ p: UnsafeMutablePointer<Float>, count: Int, std: Double, rng: inout SplitMix64) {
    for i in 0..<count { p[i] = Float(rng.gaussian() * std) }
}

/// Elements per piece of an element-wise loop split over `LayerThreads`: below this a
/// second thread costs more than it saves.
let elementsPerPiece = 16_384
