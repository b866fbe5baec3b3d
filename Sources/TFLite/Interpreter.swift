import Foundation
import MatrixProduct
import Tensor

/// Options for loading a model into an execution plan.
public struct InterpreterOptions: Sendable {
    /// Threads an inference uses (the caller's thread included).
    public var threads: Int
    /// Names of the graph outputs to compute; nil computes all. Operators that feed only
    /// other outputs (BlazePose's segmentation mask) are left out of the plan.
    public var outputs: [String]?
    /// How CONV_2D multiplies: poseact's packed micro-kernel (default, faster on pose-model
    /// layers), or im2col + OpenBLAS `cblas_sgemm` for every layer (to compare against).
    public var convolution: ConvolutionKernels = .packed
    /// The instruction set of the convolution kernels; nil: `POSEACT_KERNELS` if set, else
    /// the fastest this CPU runs.
    public var kernels: KernelPath?

    public init(threads: Int = min(2, ProcessInfo.processInfo.activeProcessorCount), outputs: [String]? = nil,
                convolution: ConvolutionKernels = .packed, kernels: KernelPath? = nil) {
        self.threads = threads; self.outputs = outputs; self.convolution = convolution; self.kernels = kernels
    }

    /// The path these options run on, checked against the CPU.
    func kernelPath() throws -> KernelPath {
        guard let kernels else { return try KernelPath.chosen() }
        try kernels.requireSupported()
        return kernels
    }
}

/// The matrix-multiply kernels behind CONV_2D.
public enum ConvolutionKernels: String, Sendable, CaseIterable {
    /// The packed micro-kernel of the kernel path for K ≤ 4096 (all BlazePose layers), sgemm above.
    case packed
    /// im2col (or the NHWC input itself for 1×1) + OpenBLAS cblas_sgemm everywhere.
    case blas
}

/// A graph input or output: its name and NHWC shape.
public struct TensorSpec: Sendable, Equatable {
    public let name: String
    public let shape: [Int]
    public var count: Int { shape.reduce(1, *) }
}

/// A `.tflite` model planned for repeated float32 inference on the CPU.
///
/// Load: parse → fold constants (float16 DEQUANTIZE, DENSIFY) → prune operators no wanted
/// output needs → check every operator's shapes → lay out all activations in one arena,
/// reusing memory between tensors whose lifetimes do not overlap → build one kernel per
/// operator with its pointers resolved. `invoke()` then only runs the kernels: nothing is
/// allocated per inference.
public final class Interpreter: @unchecked Sendable {
    public let inputs: [TensorSpec]
    public let outputs: [TensorSpec]
    /// Outputs that `invoke()` computes (the others stay zero).
    public let computedOutputs: [String]
    public var threads: Int
    public let summary: PlanSummary
    /// The instruction set the convolutions run on.
    public let kernelPath: KernelPath

    private let pool: ThreadPool
    private let arena: FloatBuffer
    private let kernels: [any Kernel]
    private let constants: [FloatBuffer]   // constant operands the kernels point into
    private let inputOffsets: [Int]
    private let outputOffsets: [Int]

    public convenience init(path: String, options: InterpreterOptions = .init()) throws {
        _ = try options.kernelPath()   // before the model's errors, which name the file
        let model = try ModelFile(path: path)
        do {
            try self.init(model: model, options: options)
        } catch let error as TFLiteError {
            throw TFLiteError("\(path): \(error.message)")
        }
    }

    public init(model: ModelFile, options: InterpreterOptions = .init()) throws {
        kernelPath = try options.kernelPath()
        guard let graph = model.subgraphs.first else { throw TFLiteError("model has no subgraph") }
        threads = max(1, options.threads)
        pool = threads <= ThreadPool.shared.threadCount ? ThreadPool.shared : ThreadPool(threads: threads)
        BLAS.useSingleThread()

        let planner = try Planner(model: model, graph: graph, wantedOutputs: options.outputs)
        arena = FloatBuffer(count: planner.arenaSize)
        (kernels, constants) = try planner.buildKernels(arena: arena.pointer, maxThreads: pool.threadCount,
                                                           convolution: options.convolution, path: kernelPath)
        inputs = graph.inputs.map { planner.spec(Int($0)) }
        outputs = graph.outputs.map { planner.spec(Int($0)) }
        computedOutputs = planner.wantedOutputNames
        inputOffsets = graph.inputs.map { planner.offset(of: Int($0)) }
        outputOffsets = graph.outputs.map { planner.offset(of: Int($0)) }
        summary = PlanSummary(
            operators: planner.operatorCounts, plannedOperators: kernels.count,
            foldedOperators: planner.foldedCount, prunedOperators: planner.prunedCount,
            fusedOperators: planner.fusedPadding.count + planner.fusedResidual.count,
            parameters: planner.parameterCount, flops: kernels.reduce(0) { $0 + $1.flops },
            arenaBytes: planner.arenaSize * 4, weightBytes: planner.weightBytes)
    }

    /// The storage of input `index`: write the model input here before `invoke()`.
    public func input(_ index: Int = 0) -> UnsafeMutableBufferPointer<Float> {
        .init(start: arena.pointer + inputOffsets[index], count: inputs[index].count)
    }

    /// The storage of output `index`, valid until the next `invoke()`.
    public func output(_ index: Int) -> UnsafeBufferPointer<Float> {
        .init(start: arena.pointer + outputOffsets[index], count: outputs[index].count)
    }

    public func output(named name: String) -> UnsafeBufferPointer<Float>? {
        outputs.firstIndex { $0.name == name }.map { output($0) }
    }

    /// Runs the plan once on the current inputs.
    public func invoke() {
        let t = min(threads, pool.threadCount)
        withDenormalsFlushed {   // on this thread, for this call; the pool's workers always
            for kernel in kernels { kernel.run(pool, threads: t) }
        }
    }

    /// Per-operator-kind time of one invoke, in milliseconds, for profiling.
    public func profile() -> [(op: String, ms: Double)] {
        var totals: [String: Double] = [:]
        for kernel in profileKernels() { totals[kernel.op, default: 0] += kernel.ms }
        return totals.sorted { $0.value > $1.value }.map { ($0.key, $0.value) }
    }

    /// Each kernel's time in one invoke, in plan order. With POSEACT_PROFILE_KERNELS set,
    /// also one line each on stderr (shapes, milliseconds, GFLOP/s).
    public func profileKernels() -> [KernelProfile] {
        withDenormalsFlushed { profileFlushed() }
    }

    private func profileFlushed() -> [KernelProfile] {
        let t = min(threads, pool.threadCount)
        var times = [Double](repeating: 0, count: kernels.count)
        for (i, kernel) in kernels.enumerated() {
            let start = DispatchTime.now().uptimeNanoseconds
            kernel.run(pool, threads: t)
            times[i] = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        }
        let result = zip(kernels, times).map { KernelProfile(op: $0.name, detail: $0.detail, flops: $0.flops, ms: $1) }
        // Printed after the run: a write between two operators outlasts the workers' spin,
        // and the next operator would be timed with their wake-up (~20 µs) in it.
        if ProcessInfo.processInfo.environment["POSEACT_PROFILE_KERNELS"] != nil {
            let lines = result.map { String(format: "%@ %@ %.3f ms %.2f GFLOP/s\n", $0.op, $0.detail, $0.ms, $0.gflops) }
            FileHandle.standardError.write(Data(lines.joined().utf8))
        }
        return result
    }
}

/// One kernel's time in a profiled run.
public struct KernelProfile: Sendable {
    /// The operator ("CONV_2D") and its shapes.
    public let op: String, detail: String
    /// Its floating-point operations (a multiply-add counts 2).
    public let flops: Int
    public let ms: Double
    public var gflops: Double { Double(flops) / ms / 1e6 }
}

/// What a plan holds, for `poseact model inspect`.
public struct PlanSummary: Sendable {
    /// Operator counts in the file, by name.
    public let operators: [String: Int]
    /// Kernels run per inference, after folding and pruning.
    public let plannedOperators: Int
    public let foldedOperators: Int
    public let prunedOperators: Int
    /// PADs that became a convolution's padding, ADDs that became a convolution's or a
    /// resize's last step.
    public let fusedOperators: Int
    /// Elements of the constant tensors the planned operators read (weights, biases).
    public let parameters: Int
    /// Floating-point operations per inference (a multiply-add counts 2).
    public let flops: Int
    public let arenaBytes: Int
    public let weightBytes: Int
}
