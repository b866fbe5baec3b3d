import Foundation
import Tensor

/// ADD with broadcasting of the smaller operand, fused activation.
///   a (…), b (…) broadcastable to output (…); the models add same-shaped tensors
///   (residual connections), which takes the vectorised path.
final class AddKernel: Kernel {
    let name = "ADD"
    let a: UnsafePointer<Float>, b: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>
    let count: Int
    let aIndex: [Int]?, bIndex: [Int]?   // broadcast gathers, nil when shapes equal the output's
    let activation: FusedActivation
    var flops: Int { count }

    init(a: UnsafePointer<Float>, aShape: [Int], b: UnsafePointer<Float>, bShape: [Int],
         output: UnsafeMutablePointer<Float>, outShape: [Int], activation: FusedActivation) {
        self.a = a; self.b = b; self.output = output; self.activation = activation
        count = outShape.reduce(1, *)
        aIndex = aShape == outShape ? nil : broadcastIndex(from: aShape, to: outShape)
        bIndex = bShape == outShape ? nil : broadcastIndex(from: bShape, to: outShape)
    }

    func run(_ pool: ThreadPool, threads: Int) {
        pool.parallelFor(count, threads: threads, minPerThread: minimumPerThread(floatsPerItem: 1)) { range, _ in
            if self.aIndex == nil && self.bIndex == nil {
                let (lo, hi) = self.activation.bounds
                var i = range.lowerBound
                while i + 8 <= range.upperBound {
                    store8(clamp8(load8(self.a + i) + load8(self.b + i), lo: lo, hi: hi), self.output + i)
                    i += 8
                }
                while i < range.upperBound { self.output[i] = min(max(self.a[i] + self.b[i], lo), hi); i += 1 }
            } else {
                for i in range {
                    let x = self.aIndex.map { self.a[$0[i]] } ?? self.a[i]
                    let y = self.bIndex.map { self.b[$0[i]] } ?? self.b[i]
                    self.output[i] = self.activation.apply(x + y)
                }
            }
        }
    }
}

/// For each flat index of `to`, the flat index of `from` under numpy broadcasting
/// (shapes right-aligned; a dimension of 1 repeats). Shapes were checked compatible.
func broadcastIndex(from: [Int], to: [Int]) -> [Int] {
    let rank = to.count
    let f = Array(repeating: 1, count: rank - from.count) + from
    var strides = Array(repeating: 0, count: rank)
    var s = 1
    for d in stride(from: rank - 1, through: 0, by: -1) { strides[d] = f[d] == 1 ? 0 : s; s *= f[d] }
    let total = to.reduce(1, *)
    var result = [Int](repeating: 0, count: total)
    var coord = [Int](repeating: 0, count: rank)
    for i in 0..<total {
        var idx = 0
        for d in 0..<rank { idx += coord[d] * strides[d] }
        result[i] = idx
        var d = rank - 1
        while d >= 0 { coord[d] += 1; if coord[d] < to[d] { break }; coord[d] = 0; d -= 1 }
    }
    return result
}

/// LOGISTIC: output = 1 / (1 + e^-x), elementwise.
final class LogisticKernel: Kernel {
    let name = "LOGISTIC"
    let input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, count: Int
    var flops: Int { count }
    init(input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, count: Int) {
        self.input = input; self.output = output; self.count = count
    }
    func run(_ pool: ThreadPool, threads: Int) {
        pool.parallelFor(count, threads: threads, minPerThread: 8192) { range, _ in
            for i in range { self.output[i] = 1 / (1 + expf(-self.input[i])) }
        }
    }
}

/// RESHAPE when input and output cannot share storage (e.g. a graph output): a copy.
final class CopyKernel: Kernel {
    let name = "RESHAPE"
    let input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, count: Int
    var flops: Int { 0 }
    init(input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, count: Int) {
        self.input = input; self.output = output; self.count = count
    }
    func run(_ pool: ThreadPool, threads: Int) { output.update(from: input, count: count) }
}
