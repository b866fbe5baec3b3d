import Tensor

/// A net that turns a batch of windows into class logits, trained by `Trainer` and run by
/// `ActionClassifier`: the TCN, the ST-GCN.
///
/// Shapes: input is (B,T,C) per-frame features, channels last (per frame, the joints in
/// layout order, each with its features), mask is (B,T) real frames, logits are (B,K).
public protocol ClassifierNet: AnyObject {
    /// Windows per forward pass; every buffer is allocated for this many in `init`.
    var maxBatch: Int { get }
    var parameters: [Parameter] { get }
    /// Everything that defines the net's function, by name: parameters and batch-norm
    /// running statistics (for saving, averaging and comparing).
    var state: [(name: String, buffer: FloatBuffer)] { get }
    /// input (B,T,C), mask (B,T) or nil (all real) → logits (B,K), valid until the next forward.
    @discardableResult
    func forward(_ x: UnsafePointer<Float>, mask: UnsafePointer<Float>?, batch: Int, training: Bool) -> UnsafeMutablePointer<Float>
    /// Backward from dL/dlogits (B,K) of the last forward: accumulates into every
    /// parameter's gradient and leaves dL/d(input) in `inputGrad`.
    func backward(_ dLogits: UnsafePointer<Float>)
    /// dL/d(input) (B,T,C) of the last backward.
    var inputGrad: FloatBuffer { get }
    /// Its dropout layers, whose generators the trainer reseeds every epoch.
    var dropouts: [Dropout] { get }
    /// The last layer, pooled features (B,P) → logits (B,K): what a run makes anew
    /// (`Backbone`) and what `LabelPrototypes` replaces.
    var head: Linear { get }
    /// The head's input in the last forward, (B,P): the net's embedding of each window.
    var headInput: UnsafePointer<Float> { get }
}

extension ClassifierNet {
    public var parameterCount: Int { parameters.reduce(0) { $0 + $1.count } }
}
