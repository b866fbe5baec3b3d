import Tensor

/// A temporal convolution without bias, then batch norm (ST-GCN's unit_tcn; with kernel 1,
/// its residual and down-projection paths). Shapes: inp is (N,T,C), out is (N,T',OC),
/// T' = ⌈T/stride⌉; N counts whatever shares the weights (windows × joints in an ST-GCN).
public final class ConvNorm: Layer {
    public let conv: Conv1D
    public let norm: BatchNorm

    public var inputShape: [Int] { conv.inputShape }
    public var outputShape: [Int] { conv.outputShape }
    public var maxBatch: Int { conv.maxBatch }
    public var parameters: [Parameter] { conv.parameters + norm.parameters }
    public var output: FloatBuffer { norm.output }
    public var inputGrad: FloatBuffer { conv.inputGrad }

    public init(frames: Int, inChannels: Int, outChannels: Int, kernel: Int, dilation: Int = 1, stride: Int = 1,
                maxBatch: Int, rng: inout SplitMix64, name: String) {
        conv = Conv1D(frames: frames, inChannels: inChannels, outChannels: outChannels, kernel: kernel,
                      dilation: dilation, stride: stride, bias: false, maxBatch: maxBatch, rng: &rng, name: "\(name).conv")
        norm = BatchNorm(frames: conv.outFrames, channels: outChannels, maxBatch: maxBatch, name: "\(name).bn")
    }

    // inp (N,T,C) → conv (N,T',OC) → bn (N,T',OC)
    public func forward(_ x: UnsafePointer<Float>, batch N: Int, training: Bool) {
        conv.forward(x, batch: N, training: training)
        norm.forward(conv.output.pointer, batch: N, training: training)
    }

    // dout (N,T',OC) → bn → conv → dinp (N,T,C)
    public func backward(_ dOut: UnsafePointer<Float>, input x: UnsafePointer<Float>, batch N: Int) {
        norm.backward(dOut, input: conv.output.pointer, batch: N)
        conv.backward(norm.inputGrad.pointer, input: x, batch: N)
    }
}

extension BatchNorm {
    /// The running statistics by name (`NAME.running_mean`, `NAME.running_var`), for a
    /// model's saved state.
    public var runningState: [(name: String, buffer: FloatBuffer)] {
        let name = String(gamma.name.dropLast(".gamma".count))
        return [("\(name).running_mean", runningMean), ("\(name).running_var", runningVar)]
    }
}
