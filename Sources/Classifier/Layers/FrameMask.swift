import Tensor

/// Which frames of a window a pooling over time reads: a (B,T) weight per frame, 1 for a
/// valid frame and 0 for padding (a clip shorter than T is padded, and its padding must not
/// count). A frame is valid when its weight is > 0. All frames are valid until `set` is called.
/// Mean and max pooling share it, so both read the same frames the same way.
public final class FrameMask {
    public let frames: Int, maxBatch: Int
    /// (B,T) frame weights.
    public let weights: FloatBuffer

    public init(frames: Int, maxBatch: Int) {
        self.frames = frames; self.maxBatch = maxBatch
        weights = FloatBuffer(count: maxBatch * frames)
        weights.pointer.update(repeating: 1, count: maxBatch * frames)
    }

    /// Copies a (B,T) mask; nil means every frame is valid.
    public func set(_ m: UnsafePointer<Float>?, batch B: Int) {
        precondition(B <= maxBatch)
        if let m { weights.pointer.update(from: m, count: B * frames) }
        else { weights.pointer.update(repeating: 1, count: B * frames) }
    }

    /// Sample `b`'s valid frames in order, with their weights.
    @inline(__always)
    func forEachValidFrame(of b: Int, _ body: (_ t: Int, _ weight: Float) -> Void) {
        let w = weights.pointer + b * frames
        for t in 0..<frames where w[t] > 0 { body(t, w[t]) }
    }
}

/// A pooling over time, (B,T,C) → (B,C), that reads a `FrameMask`'s valid frames: the mean
/// and the max pools.
public protocol MaskedTimePooling: Layer {
    var frames: Int { get }
    var channels: Int { get }
    var mask: FrameMask { get }
}

extension MaskedTimePooling {
    public var inputShape: [Int] { [frames, channels] }
    public var outputShape: [Int] { [channels] }
    public var parameters: [Parameter] { [] }

    /// Sample `b`'s output row, zeroed: what a sample without a valid frame pools to.
    @inline(__always)
    func zeroedOutputRow(_ b: Int) -> UnsafeMutablePointer<Float> {
        let out = output.pointer + b * channels
        out.update(repeating: 0, count: channels)
        return out
    }
}
