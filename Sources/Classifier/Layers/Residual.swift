import Tensor

/// Residual connection y = a + b, element-wise over n floats. Not a `Layer` (two inputs);
/// the model owns the output buffer.

// out (n) = a (n) + b (n)
@inline(__always)
func residualForward(_ out: UnsafeMutablePointer<Float>, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count n: Int) {
    LayerThreads.forEach(n, minPerPiece: elementsPerPiece) { range in for i in range { out[i] = a[i] + b[i] } }
}

// dout (n) flows unchanged to both inputs: da += dout, db += dout. Callers that own
// a fresh gradient for one branch write it first and accumulate here.
@inline(__always)
func residualBackward(_ dOut: UnsafePointer<Float>, accumulateInto d: UnsafeMutablePointer<Float>, count n: Int) {
    LayerThreads.forEach(n, minPerPiece: elementsPerPiece) { range in for i in range { d[i] += dOut[i] } }
}
