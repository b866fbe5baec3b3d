import Tensor

/// Turns a subgraph into kernels: constant folding, pruning, shape checks, memory layout.
struct Planner {
    let model: ModelFile
    let graph: SubGraph
    /// Each operator of the graph, as the engine knows it.
    let operators: [SupportedOperator]

    /// Constant tensors, decoded (float16 widened to float32, sparse ones densified).
    private(set) var floatConstants: [Int: [Float]] = [:]
    private(set) var intConstants: [Int: [Int32]] = [:]
    /// Operators that run per inference, in graph order.
    private(set) var planned: [Int] = []
    private(set) var foldedCount = 0
    private(set) var prunedCount = 0
    private(set) var wantedOutputNames: [String] = []
    /// Storage root of each activation tensor (RESHAPE outputs share their input's storage).
    private var root: [Int: Int] = [:]
    private var offsets: [Int: Int] = [:]
    /// Convolutions that read a spatial PAD's input directly (op → leading H and W padding).
    private(set) var fusedPadding: [Int: (top: Int, left: Int, input: Int)] = [:]
    /// Convolutions and resizes that perform the residual ADD after them (op → the other
    /// operand, the ADD's output and activation).
    private(set) var fusedResidual: [Int: (residual: Int, output: Int, activation: Activation)] = [:]
    private(set) var arenaSize = 0

    /// Activation memory limit: BlazePose needs ~10 MB; a corrupt shape must not ask for
    /// terabytes.
    static let maxArenaFloats = 1 << 28

    init(model: ModelFile, graph: SubGraph, wantedOutputs: [String]?) throws {
        self.model = model
        self.graph = graph
        operators = try graph.operators.enumerated().map { i, op in
            guard op.opcodeIndex >= 0, op.opcodeIndex < model.operatorCodes.count else {
                throw TFLiteError("operator \(i) has opcode index \(op.opcodeIndex) out of range")
            }
            let name = model.operatorCodes[op.opcodeIndex].name
            guard let known = SupportedOperator(rawValue: name) else {
                // TF tensor names are ';'-joined op paths: the first one is enough to find it.
                let output = op.outputs.first.flatMap { $0 >= 0 && Int($0) < graph.tensors.count ? graph.tensors[Int($0)].name : nil }
                let shortName = output.map { " writing '" + String($0.split(separator: ";").first ?? "").prefix(60) + "'" } ?? ""
                throw TFLiteError("unsupported operator \(name) (operator \(i)\(shortName)); the engine runs \(SupportedOperator.names)")
            }
            return known
        }
        try foldConstants()
        try prune(wantedOutputs)
        try fusePadding()
        try fuseResidualAdds()
        try layOutMemory()
    }

    // MARK: tensors

    func tensor(_ index: Int) -> TensorInfo { graph.tensors[index] }
    func shape(_ index: Int) -> [Int] { tensor(index).shape.map(Int.init) }
    func spec(_ index: Int) -> TensorSpec { TensorSpec(name: tensor(index).name, shape: shape(index)) }
    func offset(of index: Int) -> Int { offsets[root[index] ?? index] ?? 0 }
    func describe(_ index: Int) -> String { "tensor \(index) '\(tensor(index).name)'" }
    func describeOp(_ i: Int) -> String { "operator \(i) (\(operators[i].rawValue))" }

    func checkedIndex(_ raw: Int32, op: Int) throws -> Int {
        let i = Int(raw)
        guard i >= 0, i < graph.tensors.count else { throw TFLiteError("\(describeOp(op)) refers to tensor \(raw), out of range") }
        return i
    }

    private func bufferBytes(_ t: Int) -> ArraySlice<UInt8>? {
        let b = tensor(t).buffer
        guard b > 0, b < model.buffers.count, !model.buffers[b].isEmpty else { return nil }
        return model.bytes[model.buffers[b]]
    }

    /// Decodes a constant tensor stored in the file (float32, float16 or int32).
    private mutating func loadConstant(_ t: Int) throws -> Bool {
        if floatConstants[t] != nil || intConstants[t] != nil { return true }
        guard let bytes = bufferBytes(t) else { return false }
        let info = tensor(t)
        switch info.type {
        case .float32:
            guard bytes.count % 4 == 0 else { throw TFLiteError("\(describe(t)): \(bytes.count) bytes is not whole float32 values") }
            floatConstants[t] = bytes.withUnsafeBytes { raw in (0..<bytes.count / 4).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) } }
        case .float16:
            guard bytes.count % 2 == 0 else { throw TFLiteError("\(describe(t)): \(bytes.count) bytes is not whole float16 values") }
            floatConstants[t] = bytes.withUnsafeBytes { raw in (0..<bytes.count / 2).map { halfToFloat(raw.loadUnaligned(fromByteOffset: $0 * 2, as: UInt16.self)) } }
        case .int32:
            guard bytes.count % 4 == 0 else { throw TFLiteError("\(describe(t)): \(bytes.count) bytes is not whole int32 values") }
            intConstants[t] = bytes.withUnsafeBytes { raw in (0..<bytes.count / 4).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Int32.self) } }
        default:
            throw TFLiteError("\(describe(t)) has type \(info.type.name); constants must be float32, float16 or int32")
        }
        if info.sparsity == nil, let values = floatConstants[t], values.count != shape(t).reduce(1, *) {
            throw TFLiteError("\(describe(t)) holds \(values.count) values but its shape \(shape(t)) needs \(shape(t).reduce(1, *))")
        }
        return true
    }

    func isConstant(_ t: Int) -> Bool { floatConstants[t] != nil || intConstants[t] != nil }

    // MARK: constant folding

    /// DEQUANTIZE (float16 → float32) and DENSIFY run once here, on constant inputs.
    private mutating func foldConstants() throws {
        for (i, op) in graph.operators.enumerated() where operators[i].isFoldedIntoConstants {
            guard op.inputs.count == 1, op.outputs.count == 1 else { throw TFLiteError("\(describeOp(i)) needs 1 input and 1 output") }
            let input = try checkedIndex(op.inputs[0], op: i), output = try checkedIndex(op.outputs[0], op: i)
            guard try loadConstant(input) || isConstant(input), let values = floatConstants[input] else {
                throw TFLiteError("\(describeOp(i)): only constant float16/float32 inputs are supported (\(describe(input)) is computed at run time)")
            }
            let outCount = shape(output).reduce(1, *)
            if operators[i] == .densify {
                guard let sparsity = tensor(input).sparsity else { throw TFLiteError("\(describeOp(i)): \(describe(input)) has no sparsity parameters") }
                let dense = try densify(values: values, shape: shape(input), sparsity: sparsity, zero: 0, what: describe(input))
                guard dense.count == outCount else { throw TFLiteError("\(describeOp(i)): densified \(dense.count) values, output needs \(outCount)") }
                floatConstants[output] = dense
            } else {
                guard values.count == outCount, tensor(input).sparsity == nil else {
                    throw TFLiteError("\(describeOp(i)): \(values.count) values in, \(outCount) out")
                }
                floatConstants[output] = values
            }
            foldedCount += 1
        }
        // Constant RESHAPEs (of weights) fold too.
        for (i, op) in graph.operators.enumerated() where operators[i] == .reshape {
            guard let first = op.inputs.first, first >= 0, op.outputs.count == 1 else { continue }
            let input = try checkedIndex(first, op: i), output = try checkedIndex(op.outputs[0], op: i)
            if try loadConstant(input), let values = floatConstants[input], values.count == shape(output).reduce(1, *) {
                floatConstants[output] = values; foldedCount += 1
            }
        }
    }

    // MARK: pruning

    private mutating func prune(_ wanted: [String]?) throws {
        let outputNames = graph.outputs.map { tensor(Int($0)).name }
        var needed = Set<Int>()
        if let wanted {
            for name in wanted where !outputNames.contains(name) {
                throw TFLiteError("the model has no output named '\(name)' (outputs: \(outputNames.joined(separator: ", ")))")
            }
            for t in graph.outputs where wanted.contains(tensor(Int(t)).name) { needed.insert(Int(t)) }
        } else {
            needed = Set(graph.outputs.map(Int.init))
        }
        wantedOutputNames = outputNames.filter { name in needed.contains { tensor($0).name == name } }
        var keep = [Bool](repeating: false, count: graph.operators.count)
        for i in stride(from: graph.operators.count - 1, through: 0, by: -1) {
            let op = graph.operators[i]
            let outs = try op.outputs.map { try checkedIndex($0, op: i) }
            guard outs.contains(where: needed.contains), !outs.allSatisfy(isConstant) else { continue }
            keep[i] = true
            for raw in op.inputs where raw >= 0 {
                let t = try checkedIndex(raw, op: i)
                if !(try loadConstant(t)) { needed.insert(t) }
            }
        }
        planned = keep.indices.filter { keep[$0] }
        prunedCount = graph.operators.count - planned.count - foldedCount
    }

    /// The operator's inputs, after padding fusion.
    func inputs(of i: Int) -> [Int32] {
        var ins = graph.operators[i].inputs
        if let fused = fusedPadding[i] { ins[0] = Int32(fused.input) }
        return ins
    }

    /// Every tensor an operator reads: its inputs and a fused ADD's other operand.
    func tensorsRead(by i: Int) -> [Int32] {
        inputs(of: i) + (fusedResidual[i].map { [Int32($0.residual)] } ?? [])
    }

    /// The tensor indices an operator writes: one with a fused ADD writes the ADD's output.
    func outputs(of i: Int) -> [Int32] {
        if let fused = fusedResidual[i] { return [Int32(fused.output)] }
        return graph.operators[i].outputs
    }

    // MARK: padding fusion

    /// A zero PAD of only H and W whose sole reader is a convolution becomes that
    /// convolution's own padding: its kernels treat taps outside the input as zeros, so the
    /// padded copy (one per stride-2 layer) is never written.
    private mutating func fusePadding() throws {
        var readers: [Int: [Int]] = [:]
        for i in planned { for raw in graph.operators[i].inputs where raw >= 0 { readers[Int(raw), default: []].append(i) } }
        let graphOutputs = Set(graph.outputs.map(Int.init))
        var removed = Set<Int>()
        for i in planned where operators[i] == .pad {
            let op = graph.operators[i]
            guard op.inputs.count == 2, op.outputs.count == 1, op.inputs[0] >= 0, op.inputs[1] >= 0 else { continue }
            let input = try checkedIndex(op.inputs[0], op: i), output = try checkedIndex(op.outputs[0], op: i)
            guard !graphOutputs.contains(output), !isConstant(input), let users = readers[output], users.count == 1,
                  let pads = intConstants[Int(op.inputs[1])], pads.count == 8, shape(input).count == 4 else { continue }
            let user = users[0]
            guard operators[user] == .conv2D || operators[user] == .depthwiseConv2D,
                  graph.operators[user].inputs.first == op.outputs[0], fusedPadding[user] == nil else { continue }
            // Only H and W padded (N and C untouched), and the convolution itself VALID.
            guard pads[0] == 0, pads[1] == 0, pads[6] == 0, pads[7] == 0, pads.allSatisfy({ $0 >= 0 }) else { continue }
            switch graph.operators[user].options {
            case .conv2D(.valid, _, _, _, _, _), .depthwiseConv2D(.valid, _, _, _, _, _, _): break
            default: continue
            }
            fusedPadding[user] = (Int(pads[2]), Int(pads[4]), input)
            removed.insert(i)
        }
        planned.removeAll { removed.contains($0) }
    }

    // MARK: residual fusion

    /// An ADD of two same-shaped activations, one of which is the output of a CONV_2D
    /// (without activation) or a RESIZE_BILINEAR read by nothing else (a residual
    /// connection: MobileNet's projection plus its shortcut; a decoder's upsampling plus
    /// its skip), becomes part of that operator: its kernels add the other operand as they
    /// store each output block and apply the ADD's activation, so the intermediate is never
    /// written and read back. The sums are the same floats as the separate ADD's.
    private mutating func fuseResidualAdds() throws {
        var readers: [Int: Int] = [:]
        var producer: [Int: Int] = [:]     // tensor → its position in `planned`
        for (step, i) in planned.enumerated() {
            for raw in inputs(of: i) where raw >= 0 { readers[Int(raw), default: 0] += 1 }
            for raw in graph.operators[i].outputs where raw >= 0 { producer[Int(raw)] = step }
        }
        let graphOutputs = Set(graph.outputs.map(Int.init))
        var removed = Set<Int>()
        for (step, i) in planned.enumerated() where operators[i] == .add {
            let op = graph.operators[i]
            guard op.inputs.count == 2, op.outputs.count == 1, op.inputs.allSatisfy({ $0 >= 0 }),
                  case let .add(activation) = op.options else { continue }
            let a = try checkedIndex(op.inputs[0], op: i), b = try checkedIndex(op.inputs[1], op: i)
            let output = try checkedIndex(op.outputs[0], op: i)
            guard a != b, !isConstant(a), !isConstant(b), shape(a) == shape(output), shape(b) == shape(output) else { continue }
            // The operand computed last is the convolution's; the other must exist by then.
            let candidates = [(a, b), (b, a)].compactMap { conv, other -> (Int, Int, Int)? in
                guard let at = producer[conv], at < step else { return nil }
                return (planned[at], other, at)
            }.sorted { $0.2 > $1.2 }
            guard let (fused, residual, at) = candidates.first, fusedResidual[fused] == nil,
                  graph.operators[fused].outputs.count == 1 else { continue }
            switch graph.operators[fused].options {
            case .conv2D(_, _, _, .none, _, _) where operators[fused] == .conv2D: break
            case .resizeBilinear where operators[fused] == .resizeBilinear: break
            default: continue
            }
            let fusedOutput = Int(graph.operators[fused].outputs[0])
            guard readers[fusedOutput] == 1, !graphOutputs.contains(fusedOutput),
                  producer[residual].map({ $0 < at }) ?? graph.inputs.contains(Int32(residual)) else { continue }
            fusedResidual[fused] = (residual, output, activation)
            removed.insert(i)
        }
        planned.removeAll { removed.contains($0) }
    }

    // MARK: memory

    /// Greedy first-fit placement of activation tensors by lifetime (defined at the
    /// operator that writes them, dead after the last operator that reads them).
    private mutating func layOutMemory() throws {
        let end = planned.count
        var lifetime: [Int: (start: Int, end: Int)] = [:]
        var order: [Int] = []
        func define(_ t: Int, at step: Int) {
            if lifetime[t] == nil { lifetime[t] = (step, step); order.append(t) }
        }
        for raw in graph.inputs { define(Int(raw), at: -1) }
        for (step, i) in planned.enumerated() {
            let op = graph.operators[i]
            for raw in tensorsRead(by: i) where raw >= 0 {
                let t = Int(raw)
                if isConstant(t) { continue }
                let r = root[t] ?? t
                guard lifetime[r] != nil else { throw TFLiteError("\(describeOp(i)) reads \(describe(t)) before anything writes it") }
                lifetime[r]!.end = max(lifetime[r]!.end, step)
            }
            for raw in outputs(of: i) {
                let t = Int(raw)
                // A RESHAPE's output is its input's storage under another shape.
                if operators[i] == .reshape, let first = op.inputs.first, first >= 0, !isConstant(Int(first)),
                   !graph.inputs.contains(raw) {
                    root[t] = root[Int(first)] ?? Int(first)
                    continue
                }
                define(t, at: step)
            }
        }
        for raw in graph.outputs {
            let r = root[Int(raw)] ?? Int(raw)
            if lifetime[r] != nil { lifetime[r]!.end = end } else if !isConstant(Int(raw)) { define(r, at: -1); lifetime[r]!.end = end }
        }
        for raw in graph.inputs { lifetime[Int(raw)]!.end = end }   // the caller writes inputs at any time

        var placed: [(offset: Int, size: Int, start: Int, end: Int)] = []
        for t in order {
            let count = shape(t).reduce(1, *)
            guard tensor(t).type == .float32 else { throw TFLiteError("\(describe(t)) has type \(tensor(t).type.name); only float32 activations are supported") }
            let size = (max(count, 1) + 15) / 16 * 16      // 64-byte aligned slots
            let life = lifetime[t]!
            let clashes = placed.filter { $0.start <= life.end && life.start <= $0.end }.sorted { $0.offset < $1.offset }
            var offset = 0
            for c in clashes {
                if offset + size <= c.offset { break }
                offset = max(offset, c.offset + c.size)
            }
            placed.append((offset, size, life.start, life.end))
            offsets[t] = offset
            arenaSize = max(arenaSize, offset + size)
            guard arenaSize <= Planner.maxArenaFloats else {
                throw TFLiteError("activations need more than \(Planner.maxArenaFloats * 4 >> 30) GiB (\(describe(t)) has shape \(shape(t))): not a model this engine runs")
            }
        }
    }

    // MARK: statistics

    var operatorCounts: [String: Int] { operators.reduce(into: [:]) { $0[$1.rawValue, default: 0] += 1 } }

    /// Constant float tensors read by operators that run (weights and biases).
    var parameterCount: Int {
        var seen = Set<Int>()
        for i in planned { for raw in graph.operators[i].inputs where raw >= 0 && floatConstants[Int(raw)] != nil { seen.insert(Int(raw)) } }
        return seen.reduce(0) { $0 + (floatConstants[$1]?.count ?? 0) }
    }
    var weightBytes: Int { parameterCount * 4 }
}
