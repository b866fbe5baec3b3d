import Foundation
import TFLite
import Tensor
import TestData
import XCTest

/// Tests of the `.tflite` reader: the two real BlazePose models, bad files, fuzzing, and
/// small hand-built flatbuffers.
final class ModelFileTests: XCTestCase {

    // MARK: - Locating the models

    static var modelsDirectory: String { TestData.modelsFolder.path }

    static let detectorName = "pose_detection.tflite"
    static let landmarkName = "pose_landmark_full.tflite"

    func modelPath(_ name: String) throws -> String { try TestData.model(name).path }

    func modelBytes(_ name: String) throws -> [UInt8] {
        let path = try modelPath(name)
        guard let data = FileManager.default.contents(atPath: path) else {
            XCTFail("cannot read \(path)")
            return []
        }
        return [UInt8](data)
    }

    // MARK: - Helpers

    func operatorCounts(_ m: ModelFile) -> [String: Int] {
        var counts: [String: Int] = [:]
        for op in m.subgraphs[0].operators { counts[m.operatorCodes[op.opcodeIndex].name, default: 0] += 1 }
        return counts
    }

    func io(_ m: ModelFile, _ list: [Int32]) -> [String] {
        list.map { i in
            let t = m.subgraphs[0].tensors[Int(i)]
            return "\(t.name) \(t.shape) \(t.type.name)"
        }
    }

    /// Elements of all tensors that have data in the file (sparse ones counted at their dense shape).
    func constantElements(_ m: ModelFile) -> (all: Int, float16: Int) {
        var all = 0, f16 = 0
        for t in m.subgraphs[0].tensors where !m.buffers[t.buffer].isEmpty {
            all += t.elementCount
            if t.type == .float16 { f16 += t.elementCount }
        }
        return (all, f16)
    }

    func assertThrows(_ body: () throws -> Void, containing keys: [String], _ context: String,
                      file: StaticString = #filePath, line: UInt = #line) {
        do {
            try body()
            XCTFail("\(context): expected an error, parsed fine", file: file, line: line)
        } catch let e as TFLiteError {
            XCTAssertFalse(e.message.contains("\n"), "\(context): multi-line message", file: file, line: line)
            XCTAssertTrue(keys.contains { e.message.contains($0) },
                          "\(context): message \"\(e.message)\" lacks any of \(keys)", file: file, line: line)
        } catch {
            XCTFail("\(context): not a TFLiteError: \(error)", file: file, line: line)
        }
    }

    // MARK: - Real models

    func testDetectorModel() throws {
        let m = try ModelFile(path: try modelPath(Self.detectorName))
        XCTAssertEqual(m.version, 3)
        XCTAssertEqual(m.subgraphs.count, 1)
        XCTAssertEqual(operatorCounts(m), [
            "DEQUANTIZE": 144, "CONV_2D": 45, "DENSIFY": 38, "DEPTHWISE_CONV_2D": 28, "ADD": 15,
            "PAD": 8, "RESHAPE": 6, "DEPTH_TO_SPACE": 3, "RESIZE_BILINEAR": 2, "CONCATENATION": 2,
        ])
        let g = m.subgraphs[0]
        XCTAssertEqual(io(m, g.inputs), ["input_1 [1, 224, 224, 3] FLOAT32"])
        XCTAssertEqual(io(m, g.outputs), ["Identity [1, 2254, 12] FLOAT32", "Identity_1 [1, 2254, 1] FLOAT32"])

        // 38 sparse tensors, DENSE, DENSE, DENSE, CSR, each the input of a DENSIFY.
        let sparse = g.tensors.enumerated().filter { $0.element.sparsity != nil }
        XCTAssertEqual(sparse.count, 38)
        let densifyInputs = Set(g.operators.filter { m.operatorCodes[$0.opcodeIndex].name == "DENSIFY" }
            .map { Int($0.inputs[0]) })
        for (i, t) in sparse {
            let s = t.sparsity!
            XCTAssertEqual(s.dimMetadata.map { $0.format }, [.dense, .dense, .dense, .sparseCSR], t.name)
            XCTAssertEqual(s.traversalOrder, [0, 1, 2, 3], t.name)
            XCTAssertEqual(t.type, .float16, t.name)
            XCTAssertTrue(densifyInputs.contains(i), "\(t.name) is not a DENSIFY input")
            // CSR: one segment boundary per element of the dense prefix, plus one.
            let prefix = s.dimMetadata[0..<3].reduce(1) { $0 * Int($1.denseSize) }
            let csr = s.dimMetadata[3]
            XCTAssertEqual(csr.segments.count, prefix + 1, t.name)
            XCTAssertEqual(Int(csr.segments.last ?? -1), csr.indices.count, t.name)
            XCTAssertEqual(m.buffers[t.buffer].count, csr.indices.count * 2, "\(t.name): one float16 per index")
        }

        // Options decoded from the BuiltinOptions union.
        var depthToSpace = 0, resize = 0
        for op in g.operators {
            switch op.options {
            case .depthToSpace(let b): depthToSpace += 1; XCTAssertEqual(b, 2)
            case .resizeBilinear(let ac, let hp): resize += 1; XCTAssertFalse(ac); XCTAssertTrue(hp)
            case .conv2D(_, let sw, let sh, let act, let dw, let dh):
                XCTAssertTrue([1, 2].contains(sw) && sw == sh && dw == 1 && dh == 1)
                XCTAssertTrue(act == .none || act == .relu6)
            case .depthwiseConv2D(_, _, _, let dm, let act, _, _):
                XCTAssertEqual(dm, 1); XCTAssertTrue(act == .none || act == .relu6)
            default: break
            }
        }
        XCTAssertEqual(depthToSpace, 3)
        XCTAssertEqual(resize, 2)

        let params = constantElements(m)
        print("detector: \(g.tensors.count) tensors, \(g.operators.count) operators, \(m.buffers.count) buffers, "
              + "constant elements \(params.all) (float16 \(params.float16))")
        XCTAssertEqual(Double(params.all) / 1e6, 2.97, accuracy: 0.005)
    }

    func testLandmarkModel() throws {
        let m = try ModelFile(path: try modelPath(Self.landmarkName))
        XCTAssertEqual(m.version, 3)
        XCTAssertEqual(operatorCounts(m), [
            "DEQUANTIZE": 192, "CONV_2D": 58, "DEPTHWISE_CONV_2D": 38, "ADD": 28, "PAD": 5,
            "RESIZE_BILINEAR": 5, "RESHAPE": 3, "MAX_POOL_2D": 2, "LOGISTIC": 1,
        ])
        let g = m.subgraphs[0]
        XCTAssertEqual(io(m, g.inputs), ["input_1 [1, 256, 256, 3] FLOAT32"])
        XCTAssertEqual(io(m, g.outputs), [
            "Identity [1, 195] FLOAT32", "Identity_1 [1, 1] FLOAT32", "Identity_2 [1, 256, 256, 1] FLOAT32",
            "Identity_3 [1, 64, 64, 39] FLOAT32", "Identity_4 [1, 117] FLOAT32",
        ])
        XCTAssertEqual(g.tensors.filter { $0.sparsity != nil }.count, 0)
        for op in g.operators {
            switch op.options {
            case .pool2D(let p, let sw, let sh, let fw, let fh, let a):
                XCTAssertEqual(p, .valid); XCTAssertEqual([sw, sh, fw, fh], [2, 2, 2, 2]); XCTAssertEqual(a, .none)
            case .resizeBilinear(let ac, let hp): XCTAssertFalse(ac); XCTAssertTrue(hp)
            default: break
            }
        }
        // Every DEQUANTIZE reads a float16 constant and writes float32.
        for op in g.operators where m.operatorCodes[op.opcodeIndex].name == "DEQUANTIZE" {
            let input = g.tensors[Int(op.inputs[0])], output = g.tensors[Int(op.outputs[0])]
            XCTAssertEqual(input.type, .float16)
            XCTAssertEqual(output.type, .float32)
            XCTAssertEqual(m.buffers[input.buffer].count, input.elementCount * 2)
            XCTAssertEqual(input.shape, output.shape)
        }
        let params = constantElements(m)
        print("landmark: \(g.tensors.count) tensors, \(g.operators.count) operators, \(m.buffers.count) buffers, "
              + "constant elements \(params.all) (float16 \(params.float16))")
        XCTAssertEqual(Double(params.all) / 1e6, 3.17, accuracy: 0.005)
    }

    func testOperatorNameTable() {
        XCTAssertEqual(OperatorCode.builtinNames.count, 206)
        let spot: [Int32: String] = [0: "ADD", 3: "CONV_2D", 5: "DEPTH_TO_SPACE", 6: "DEQUANTIZE", 14: "LOGISTIC",
                                     17: "MAX_POOL_2D", 22: "RESHAPE", 23: "RESIZE_BILINEAR", 32: "CUSTOM", 34: "PAD",
                                     124: "DENSIFY", 127: "PLACEHOLDER_FOR_GREATER_OP_CODES", 150: "GELU",
                                     161: "RIGHT_SHIFT", 162: "STABLEHLO_LOGISTIC", 203: "DILATE", 205: "REDUCE_WINDOW"]
        for (code, name) in spot { XCTAssertEqual(OperatorCode.builtinName(code), name) }
        XCTAssertNil(OperatorCode.builtinName(206))
        XCTAssertNil(OperatorCode.builtinName(-1))
        XCTAssertEqual(Set(OperatorCode.builtinNames).count, 206)
    }

    // MARK: - Bad files

    func temporaryFile(_ name: String, _ bytes: [UInt8]) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-modelfile-tests-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let url = dir.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    func testBadFiles() throws {
        assertThrows({ _ = try ModelFile(path: "/nonexistent/dir/model.tflite") },
                     containing: ["/nonexistent/dir/model.tflite: no such file"], "missing file")
        assertThrows({ _ = try ModelFile(path: NSTemporaryDirectory()) }, containing: ["a folder, not a TFLite model poseact can read"], "directory")

        let empty = try temporaryFile("empty.tflite", [])
        assertThrows({ _ = try ModelFile(path: empty) }, containing: ["\(empty) is empty"], "empty file")
        assertThrows({ _ = try ModelFile(bytes: []) }, containing: ["is empty"], "empty bytes")

        let text = try temporaryFile("text.tflite", Array("This is not a model, just some text.\n".utf8))
        assertThrows({ _ = try ModelFile(path: text) },
                     containing: ["\(text) is not a TFLite model (no TFL3 identifier)"], "text file")
        assertThrows({ _ = try ModelFile(bytes: Array("TFL".utf8)) }, containing: ["no TFL3 identifier"], "3 bytes")
        // Identifier present but nothing behind it.
        assertThrows({ _ = try ModelFile(bytes: [200, 0, 0, 0] + Array("TFL3".utf8)) },
                     containing: ["truncated", "past the end"], "identifier only")
    }

    func testTruncatedModels() throws {
        for name in [Self.detectorName, Self.landmarkName] {
            let bytes = try modelBytes(name)
            // The detector carries a 22-byte empty ZIP archive (end-of-central-directory record
            // "PK\u{5}\u{6}") after the flatbuffer; cutting into it leaves the model intact.
            var modelEnd = bytes.count
            if bytes.count > 22, Array(bytes[(bytes.count - 22)..<(bytes.count - 18)]) == [0x50, 0x4B, 5, 6] {
                modelEnd -= 22
                XCTAssertNoThrow(try ModelFile(bytes: Array(bytes[0..<(bytes.count - 1)])), "\(name): cut in the ZIP trailer")
            }
            for n in [8, 9, 12, 100, 4096, bytes.count / 2, modelEnd - 100, modelEnd - 4, modelEnd - 1] {
                let path = try temporaryFile("truncated-\(n)-\(name)", Array(bytes[0..<n]))
                assertThrows({ _ = try ModelFile(path: path) }, containing: ["truncated"], "\(name) cut at \(n)")
            }
        }
    }

    // MARK: - Fuzzing


    /// Positions worth corrupting: every table start, its vtable, and every present field,
    /// found by walking the model with the public flatbuffer reader.
    func metadataPositions(_ bytes: [UInt8]) throws -> (tables: [Int], vtables: [Int], fields: [Int]) {
        let fb = FlatBuffer(bytes: bytes)
        var tables: [Int] = [], vtables: [Int] = [], fields: [Int] = []
        func visit(_ t: FlatBuffer.Table) throws {
            tables.append(t.position)
            let p = t.position
            let soff = Int32(bitPattern: UInt32(bytes[p]) | UInt32(bytes[p + 1]) << 8
                             | UInt32(bytes[p + 2]) << 16 | UInt32(bytes[p + 3]) << 24)
            vtables.append(p - Int(soff))
            for slot in 0..<t.slotCount {
                if let f = try t.fieldPosition(slot, size: 1, "field") { fields.append(f) }
            }
        }
        func each(_ t: FlatBuffer.Table, _ slot: Int, _ body: (FlatBuffer.Table) throws -> Void) throws {
            guard let v = try t.vector(slot, "v", elementSize: 4) else { return }
            fields.append(v.start - 4)
            for i in 0..<v.count { let e = try v.table(i, path: "e"); try visit(e); try body(e) }
        }
        let model = try fb.rootTable(path: "model")
        try visit(model)
        try each(model, 1) { _ in }  // operator codes
        try each(model, 4) { _ in }  // buffers
        try each(model, 2) { sg in   // subgraphs
            try each(sg, 0) { tensor in
                if let q = try tensor.table(4, "q") { try visit(q) }
                if let s = try tensor.table(6, "s") {
                    try visit(s)
                    try each(s, 2) { dm in
                        for slot in [3, 5] { if let x = try dm.table(slot, "x") { try visit(x) } }
                    }
                }
            }
            try each(sg, 3) { op in if let o = try op.table(4, "o") { try visit(o) } }
        }
        return (tables, vtables, fields)
    }

    func fuzz(_ name: String, iterations: Int, seed: UInt64) throws -> (ok: Int, rejected: Int) {
        let original = try modelBytes(name)
        let size = original.count
        let hot = try metadataPositions(original)
        var rng = SplitMix64(seed: seed)
        var work = original
        var ok = 0, rejected = 0
        var messages: [String: Int] = [:]
        var slowest = 0.0

        let specials: [UInt32] = [0, 1, 2, 3, 4, 0xFFFF, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0xFFFF_FFFC,
                                  UInt32(size), UInt32(size - 1), UInt32(size + 4), 0x1000_0000]
        for iteration in 0..<iterations {
            var saved: [(Int, UInt8)] = []
            func set(_ p: Int, _ value: UInt8) {
                guard p >= 0, p < size else { return }
                saved.append((p, work[p])); work[p] = value
            }
            func setWord(_ p: Int, _ v: UInt32) { for k in 0..<4 { set(p + k, UInt8(truncatingIfNeeded: v >> (8 * k))) } }
            func anywhere(_ region: Int) -> Int {
                switch region {
                case 0: return rng.below(min(size, 65536))                      // head: root, buffer tables
                case 1: return size - 1 - rng.below(min(size, 262_144))         // tail: subgraphs, op codes
                default: return rng.below(size)
                }
            }
            func mutate() {
                switch rng.below(8) {
                case 0:  // flip bits near a table start
                    let p = rng.pick(hot.tables) + rng.below(8)
                    if p < size { set(p, work[p] ^ UInt8(1 << rng.below(8))) }
                case 1:  // a special or random value over a field or table start
                    let p = rng.below(2) == 0 ? rng.pick(hot.fields) : rng.pick(hot.tables)
                    let v = rng.below(3) == 0 ? UInt32(truncatingIfNeeded: rng.next()) : rng.pick(specials)
                    setWord(p, v)
                case 2:  // a vtable entry (size, table size, or a field offset)
                    let p = rng.pick(hot.vtables) + 2 * rng.below(8)
                    let v: UInt16 = rng.pick([0, 1, 2, 3, 4, 0xFFFF, 0x8000, UInt16(truncatingIfNeeded: rng.next())])
                    set(p, UInt8(v & 0xFF)); set(p + 1, UInt8(v >> 8))
                case 3:  // nudge an offset field by a little
                    let p = rng.pick(hot.fields)
                    guard p + 4 <= size else { return }
                    let old = UInt32(work[p]) | UInt32(work[p + 1]) << 8 | UInt32(work[p + 2]) << 16 | UInt32(work[p + 3]) << 24
                    setWord(p, old &+ UInt32(bitPattern: Int32(rng.below(64) - 32)))
                case 4, 5:  // random bytes in the head or tail
                    let p = anywhere(rng.below(2))
                    set(p, UInt8(truncatingIfNeeded: rng.next()))
                case 6:  // a random or special word anywhere
                    let p = anywhere(rng.below(3))
                    setWord(p, rng.below(2) == 0 ? UInt32(truncatingIfNeeded: rng.next()) : rng.pick(specials))
                default:  // random byte anywhere
                    set(rng.below(size), UInt8(truncatingIfNeeded: rng.next()))
                }
            }

            var input: [UInt8]
            let truncate = iteration % 10 == 9
            if truncate {
                // Mostly cut inside the metadata at the end, sometimes anywhere.
                let n = rng.below(2) == 0 ? size - 1 - rng.below(min(size, 262_144)) : rng.below(size)
                input = Array(original[0..<n])
            } else {
                for _ in 0..<(1 + rng.below(rng.below(4) == 0 ? 8 : 2)) { mutate() }
                input = []
                swap(&input, &work)  // hand the mutated bytes over without copying
            }
            let start = Date()
            do {
                _ = try ModelFile(bytes: input)
                ok += 1
            } catch let e as TFLiteError {
                rejected += 1
                XCTAssertFalse(e.message.isEmpty)
                // Bucket messages by their first words for the report.
                if let show = Self.fuzzShow, e.message.contains(show) { print("  \(iteration): \(e.message)") }
                let key = e.message.split(separator: " ").prefix(3).joined(separator: " ")
                messages[key, default: 0] += 1
            } catch {
                XCTFail("\(name) iteration \(iteration): not a TFLiteError: \(error)")
            }
            slowest = max(slowest, Date().timeIntervalSince(start))
            if !truncate {
                swap(&input, &work)
                for (p, v) in saved.reversed() { work[p] = v }
            }
        }
        XCTAssertEqual(work, original, "mutations were not undone")
        let top = messages.sorted { $0.value > $1.value }.prefix(6).map { "\($0.value)× \($0.key)…" }
        print("fuzz \(name): \(iterations) runs, \(ok) parsed, \(rejected) rejected, slowest parse "
              + String(format: "%.1f ms", slowest * 1000) + "; top errors: \(top.joined(separator: "; "))")
        XCTAssertLessThan(slowest, 5, "a single parse took \(slowest) s")
        return (ok, rejected)
    }

    /// Runs per model; POSEACT_FUZZ_ITERATIONS and POSEACT_FUZZ_SEED override them (for long campaigns).
    static var fuzzIterations: Int {
        Int(ProcessInfo.processInfo.environment["POSEACT_FUZZ_ITERATIONS"] ?? "") ?? 6000
    }
    /// POSEACT_FUZZ_SHOW=text prints every rejection whose message contains `text`.
    static var fuzzShow: String? { ProcessInfo.processInfo.environment["POSEACT_FUZZ_SHOW"] }
    static var fuzzSeed: UInt64 {
        UInt64(ProcessInfo.processInfo.environment["POSEACT_FUZZ_SEED"] ?? "") ?? 0x5EED
    }

    func testFuzzDetector() throws {
        let r = try fuzz(Self.detectorName, iterations: Self.fuzzIterations, seed: Self.fuzzSeed &+ 1)
        XCTAssertGreaterThan(r.rejected, 0)
    }

    func testFuzzLandmark() throws {
        let r = try fuzz(Self.landmarkName, iterations: Self.fuzzIterations, seed: Self.fuzzSeed &+ 2)
        XCTAssertGreaterThan(r.rejected, 0)
    }

    // MARK: - Hand-built flatbuffers

    /// A minimal front-to-back flatbuffer writer for tests: parents are written before their
    /// children and their offset fields patched afterwards (uoffsets point forward).
    final class Writer {
        var bytes: [UInt8] = []
        enum Field {
            case u8(UInt8), i8(Int8), u32(UInt32), i32(Int32), u64(UInt64)
            case offset  // placeholder, patched later with `link`
        }
        func pad(_ alignment: Int) { while bytes.count % alignment != 0 { bytes.append(0) } }
        func put32(_ v: UInt32) { for k in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * k))) } }
        func put16(_ v: UInt16) { bytes.append(UInt8(v & 0xFF)); bytes.append(UInt8(v >> 8)) }
        func patch32(_ p: Int, _ v: UInt32) { for k in 0..<4 { bytes[p + k] = UInt8(truncatingIfNeeded: v >> (8 * k)) } }

        /// Header: root offset (patched by `setRoot`) and identifier.
        init(identifier: String = "TFL3") { put32(0); bytes += Array(identifier.utf8) }
        func setRoot(_ table: Int) { patch32(0, UInt32(table)) }

        /// Writes a vtable then the table; returns the table position and each slot's field position.
        @discardableResult
        func table(_ fields: [Int: Field]) -> (pos: Int, at: [Int: Int]) {
            let slots = (fields.keys.max() ?? -1) + 1
            var layout: [(Int, Field, Int)] = []  // slot, field, offset in table
            var offset = 4
            for slot in fields.keys.sorted() {
                let f = fields[slot]!
                let size: Int
                switch f { case .u8, .i8: size = 1; case .u32, .i32, .offset: size = 4; case .u64: size = 8 }
                while offset % size != 0 { offset += 1 }
                layout.append((slot, f, offset)); offset += size
            }
            let tableSize = (offset + 3) / 4 * 4
            pad(4)
            let vtable = bytes.count
            put16(UInt16(4 + 2 * slots)); put16(UInt16(tableSize))
            var entry = [Int](repeating: 0, count: slots)
            for (slot, _, off) in layout { entry[slot] = off }
            for e in entry { put16(UInt16(e)) }
            pad(8)
            let pos = bytes.count
            put32(UInt32(bitPattern: Int32(pos - vtable)))
            bytes += [UInt8](repeating: 0, count: tableSize - 4)
            var at: [Int: Int] = [:]
            for (slot, f, off) in layout {
                let p = pos + off
                at[slot] = p
                switch f {
                case .u8(let v): bytes[p] = v
                case .i8(let v): bytes[p] = UInt8(bitPattern: v)
                case .u32(let v): patch32(p, v)
                case .i32(let v): patch32(p, UInt32(bitPattern: v))
                case .u64(let v): patch32(p, UInt32(truncatingIfNeeded: v)); patch32(p + 4, UInt32(v >> 32))
                case .offset: break
                }
            }
            return (pos, at)
        }
        /// A vector of 4-byte words; returns the position of its length word.
        @discardableResult
        func vector32(_ values: [UInt32]) -> Int {
            pad(4); let p = bytes.count
            put32(UInt32(values.count)); for v in values { put32(v) }
            return p
        }
        func vectorBytes(_ values: [UInt8], align: Int = 4) -> Int {
            pad(4)
            while (bytes.count + 4) % align != 0 { bytes.append(0) }
            let p = bytes.count
            put32(UInt32(values.count)); bytes += values; bytes.append(0)
            return p
        }
        func string(_ s: String) -> Int { vectorBytes(Array(s.utf8)) }
        /// Points the offset field at `field` to `target`.
        func link(_ field: Int, _ target: Int) { patch32(field, UInt32(target - field)) }
        /// Fills a vector of offsets (written with placeholder words) element `i` -> target.
        func linkElement(_ vector: Int, _ i: Int, _ target: Int) { link(vector + 4 + 4 * i, target) }
    }

    struct TinyTensor {
        var name: String
        var shape: [Int32]
        var type: Int8 = 0
        var buffer: UInt32 = 0
    }
    struct TinyOp {
        var opcode: UInt32
        var inputs: [Int32]
        var outputs: [Int32]
        var optionsType: UInt8 = 0
        var options: [Int: Writer.Field] = [:]
        var writeOptionsTable = true  // false: union type set, value absent
    }

    /// A whole model: opcodes (deprecated code, builtin code, custom name), buffers (data), one subgraph.
    func tinyModel(opcodes: [(Int8, Int32, String?)], buffers: [[UInt8]], tensors: [TinyTensor],
                   inputs: [Int32], outputs: [Int32], ops: [TinyOp], bufferOverride: [Int: (UInt64, UInt64)] = [:]) -> [UInt8] {
        let w = Writer()
        let model = w.table([0: .u32(3), 1: .offset, 2: .offset, 3: .offset, 4: .offset])
        w.setRoot(model.pos)
        w.link(model.at[3]!, w.string("tiny"))
        // operator codes
        let ocv = w.vector32([UInt32](repeating: 0, count: opcodes.count))
        w.link(model.at[1]!, ocv)
        for (i, (dep, code, custom)) in opcodes.enumerated() {
            var f: [Int: Writer.Field] = [0: .i8(dep), 3: .i32(code)]
            if custom != nil { f[1] = .offset }
            let t = w.table(f)
            w.linkElement(ocv, i, t.pos)
            if let c = custom { w.link(t.at[1]!, w.string(c)) }
        }
        // buffers
        let bv = w.vector32([UInt32](repeating: 0, count: buffers.count))
        w.link(model.at[4]!, bv)
        for (i, data) in buffers.enumerated() {
            if let (off, size) = bufferOverride[i] {
                let t = w.table([1: .u64(off), 2: .u64(size)])
                w.linkElement(bv, i, t.pos)
            } else if data.isEmpty {
                w.linkElement(bv, i, w.table([:]).pos)
            } else {
                let t = w.table([0: .offset])
                w.linkElement(bv, i, t.pos)
                w.link(t.at[0]!, w.vectorBytes(data, align: 16))
            }
        }
        // subgraph
        let sv = w.vector32([0])
        w.link(model.at[2]!, sv)
        let sg = w.table([0: .offset, 1: .offset, 2: .offset, 3: .offset, 4: .offset])
        w.linkElement(sv, 0, sg.pos)
        w.link(sg.at[4]!, w.string("main"))
        w.link(sg.at[1]!, w.vector32(inputs.map { UInt32(bitPattern: $0) }))
        w.link(sg.at[2]!, w.vector32(outputs.map { UInt32(bitPattern: $0) }))
        let tv = w.vector32([UInt32](repeating: 0, count: tensors.count))
        w.link(sg.at[0]!, tv)
        for (i, t) in tensors.enumerated() {
            let tt = w.table([0: .offset, 1: .i8(t.type), 2: .u32(t.buffer), 3: .offset])
            w.linkElement(tv, i, tt.pos)
            w.link(tt.at[0]!, w.vector32(t.shape.map { UInt32(bitPattern: $0) }))
            w.link(tt.at[3]!, w.string(t.name))
        }
        let ov = w.vector32([UInt32](repeating: 0, count: ops.count))
        w.link(sg.at[3]!, ov)
        for (i, op) in ops.enumerated() {
            var f: [Int: Writer.Field] = [0: .u32(op.opcode), 1: .offset, 2: .offset]
            if op.optionsType != 0 { f[3] = .u8(op.optionsType) }
            if op.optionsType != 0 && op.writeOptionsTable { f[4] = .offset }
            let ot = w.table(f)
            w.linkElement(ov, i, ot.pos)
            w.link(ot.at[1]!, w.vector32(op.inputs.map { UInt32(bitPattern: $0) }))
            w.link(ot.at[2]!, w.vector32(op.outputs.map { UInt32(bitPattern: $0) }))
            if let field = ot.at[4] { w.link(field, w.table(op.options).pos) }
        }
        return w.bytes
    }

    /// A one-convolution model; `mutate` edits the pieces before they are written.
    func convModel(_ mutate: (inout [TinyTensor], inout [TinyOp], inout [[UInt8]]) -> Void = { _, _, _ in }) -> [UInt8] {
        var tensors = [
            TinyTensor(name: "in", shape: [1, 4, 4, 2]),
            TinyTensor(name: "w", shape: [3, 1, 1, 2], buffer: 1),
            TinyTensor(name: "out", shape: [1, 4, 4, 3]),
        ]
        var ops = [TinyOp(opcode: 0, inputs: [0, 1, -1], outputs: [2], optionsType: 1,
                          options: [0: .i8(1), 1: .i32(1), 2: .i32(1), 3: .i8(3)])]
        var buffers: [[UInt8]] = [[], [UInt8](repeating: 0, count: 24)]
        mutate(&tensors, &ops, &buffers)
        return tinyModel(opcodes: [(3, 3, nil)], buffers: buffers, tensors: tensors, inputs: [0], outputs: [2], ops: ops)
    }

    func testTinyModel() throws {
        let m = try ModelFile(bytes: convModel())
        XCTAssertEqual(m.version, 3)
        XCTAssertEqual(m.description, "tiny")
        XCTAssertEqual(m.operatorCodes.map { $0.name }, ["CONV_2D"])
        XCTAssertEqual(m.operatorCodes[0].version, 1, "absent version defaults to 1")
        let g = m.subgraphs[0]
        XCTAssertEqual(g.name, "main")
        XCTAssertEqual(g.tensors.map { $0.name }, ["in", "w", "out"])
        XCTAssertEqual(g.tensors[1].shape, [3, 1, 1, 2])
        XCTAssertEqual(m.buffers[1].count, 24)
        XCTAssertEqual(Array(m.bytes[m.buffers[1]]), [UInt8](repeating: 0, count: 24))
        XCTAssertTrue(m.buffers[0].isEmpty)
        XCTAssertEqual(g.operators[0].inputs, [0, 1, -1])
        guard case let .conv2D(padding, sw, sh, act, dw, dh) = g.operators[0].options else {
            return XCTFail("options: \(g.operators[0].options)")
        }
        XCTAssertEqual(padding, .valid)
        XCTAssertEqual([sw, sh, dw, dh], [1, 1, 1, 1], "absent dilations default to 1")
        XCTAssertEqual(act, .relu6)
        XCTAssertFalse(g.tensors[0].isVariable)
        XCTAssertFalse(g.tensors[0].hasQuantization)
        XCTAssertNil(g.tensors[0].sparsity)
    }

    func testOperatorCodes() throws {
        let tensors = [TinyTensor(name: "x", shape: [1])]
        let ops = (0..<4).map { TinyOp(opcode: UInt32($0), inputs: [0], outputs: [0]) }
        let bytes = tinyModel(opcodes: [(127, 150, nil), (5, 0, nil), (32, 32, "MyOp"), (127, 300, nil)],
                              buffers: [[]], tensors: tensors, inputs: [0], outputs: [0], ops: ops)
        let m = try ModelFile(bytes: bytes)
        XCTAssertEqual(m.operatorCodes.map { $0.builtinCode }, [150, 5, 32, 300])
        XCTAssertEqual(m.operatorCodes.map { $0.name }, ["GELU", "DEPTH_TO_SPACE", "CUSTOM(MyOp)", "BUILTIN_300"])
        XCTAssertEqual(m.operatorCodes[2].customCode, "MyOp")
    }

    func testOptionsDefaults() throws {
        let tensors = [TinyTensor(name: "x", shape: [1, 2, 2, 4])]
        let ops = [
            TinyOp(opcode: 0, inputs: [0, 0], outputs: [0], optionsType: 11, writeOptionsTable: false),  // ADD, no table
            TinyOp(opcode: 1, inputs: [0], outputs: [0], optionsType: 15, options: [3: .u8(1)]),         // RESIZE_BILINEAR
            TinyOp(opcode: 2, inputs: [0], outputs: [0], optionsType: 94, options: [0: .i32(2)]),        // DEPTH_TO_SPACE
            TinyOp(opcode: 3, inputs: [0], outputs: [0], optionsType: 22),                               // PAD: empty table
            TinyOp(opcode: 3, inputs: [0], outputs: [0]),                                                // no options
        ]
        let m = try ModelFile(bytes: tinyModel(opcodes: [(0, 0, nil), (23, 23, nil), (5, 5, nil), (34, 34, nil)],
                                               buffers: [[]], tensors: tensors, inputs: [0], outputs: [0], ops: ops))
        let o = m.subgraphs[0].operators.map { "\($0.options)" }
        XCTAssertEqual(o, ["add(activation: TFLite.Activation.none)",
                           "resizeBilinear(alignCorners: false, halfPixelCenters: true)",
                           "depthToSpace(blockSize: 2)", "other(unionType: 22)", "none"])
        // A CONV_2D union without its table gets the schema defaults, and stride 0 is refused.
        let conv = [TinyOp(opcode: 0, inputs: [0], outputs: [0], optionsType: 1, writeOptionsTable: false)]
        assertThrows({ _ = try ModelFile(bytes: self.tinyModel(opcodes: [(3, 3, nil)], buffers: [[]], tensors: tensors,
                                                               inputs: [0], outputs: [0], ops: conv)) },
                     containing: ["subgraph 0 operator 0 builtin_options has stride_w 0"], "conv without options")
    }

    func testLargeModelBufferOffsets() throws {
        let tensors = [TinyTensor(name: "c", shape: [2], type: 0, buffer: 1)]
        func build(_ off: UInt64, _ size: UInt64) -> [UInt8] {
            tinyModel(opcodes: [], buffers: [[], []], tensors: tensors, inputs: [], outputs: [0], ops: [],
                      bufferOverride: [1: (off, size)])
        }
        let ok = build(16, 8)
        XCTAssertEqual(try ModelFile(bytes: ok).buffers[1], 16..<24)
        assertThrows({ _ = try ModelFile(bytes: build(UInt64(ok.count) - 4, 8)) }, containing: ["buffer 1"], "offset near end")
        assertThrows({ _ = try ModelFile(bytes: build(8, UInt64.max - 4)) }, containing: ["buffer 1"], "huge size")
        assertThrows({ _ = try ModelFile(bytes: build(16, 12)) }, containing: ["tensor 0 (c)", "12 bytes"], "size mismatch")
    }

    func testValidationErrors() throws {
        assertThrows({ _ = try ModelFile(bytes: self.convModel { _, ops, _ in ops[0].inputs = [0, 7] }) },
                     containing: ["subgraph 0 operator 0 input 1 is tensor 7, out of range"], "input index")
        assertThrows({ _ = try ModelFile(bytes: self.convModel { _, ops, _ in ops[0].outputs = [-1] }) },
                     containing: ["operator 0 output 0 is tensor -1"], "absent output")
        assertThrows({ _ = try ModelFile(bytes: self.convModel { _, ops, _ in ops[0].opcode = 1 }) },
                     containing: ["opcode index 1 is out of range"], "opcode index")
        assertThrows({ _ = try ModelFile(bytes: self.convModel { t, _, _ in t[1].buffer = 9 }) },
                     containing: ["tensor 1 (w) buffer index 9 is out of range"], "buffer index")
        assertThrows({ _ = try ModelFile(bytes: self.convModel { t, _, _ in t[1].shape = [3, 1, 1, 3] }) },
                     containing: ["subgraph 0 tensor 1 (w) has 24 bytes of data but shape [3, 1, 1, 3] of FLOAT32 needs 36"],
                     "buffer size")
        assertThrows({ _ = try ModelFile(bytes: self.convModel { t, _, _ in t[0].shape = [1, -4, 4, 2] }) },
                     containing: ["tensor 0 (in) has a negative dimension"], "negative dimension")
        assertThrows({ _ = try ModelFile(bytes: self.convModel { t, _, _ in t[2].shape = [65536, 65536, 2] }) },
                     containing: ["more than 2^31 elements"], "huge shape")
        assertThrows({ _ = try ModelFile(bytes: self.convModel { t, _, _ in t[2].type = 42 }) },
                     containing: ["tensor 2 (out) has unknown type 42"], "tensor type")
        assertThrows({ _ = try ModelFile(bytes: self.convModel { _, ops, _ in ops[0].options[0] = .i8(7) }) },
                     containing: ["operator 0 builtin_options has unknown padding 7"], "padding")
        assertThrows({ _ = try ModelFile(bytes: self.convModel { _, ops, _ in ops[0].options[1] = .i32(0) }) },
                     containing: ["stride_w 0"], "stride")
    }

    func testVtableDefaultsAndBounds() throws {
        let w = Writer()
        let t = w.table([0: .i32(-5), 2: .u8(9)])
        w.setRoot(t.pos)
        let fb = FlatBuffer(bytes: w.bytes)
        let root = try fb.rootTable(path: "root")
        XCTAssertEqual(root.slotCount, 3)
        XCTAssertEqual(try root.int32(0, "a"), -5)
        XCTAssertEqual(try root.int32(1, "b", default: 77), 77, "slot present in vtable but zero -> default")
        XCTAssertEqual(try root.uint8(2, "c"), 9)
        XCTAssertEqual(try root.int32(9, "far", default: 11), 11, "slot beyond vtable -> default")
        XCTAssertNil(try root.string(5, "s"))
        XCTAssertNil(try root.vector(6, "v", elementSize: 4))

        // A field whose vtable offset points past the end of its table.
        var bad = w.bytes
        let soff = Int(Int32(bitPattern: UInt32(bad[t.pos]) | UInt32(bad[t.pos + 1]) << 8 | UInt32(bad[t.pos + 2]) << 16 | UInt32(bad[t.pos + 3]) << 24))
        let vt = t.pos - soff
        bad[vt + 4] = 200  // slot 0 offset
        XCTAssertThrowsError(try FlatBuffer(bytes: bad).rootTable(path: "root").int32(0, "a")) { e in
            XCTAssertTrue("\(e)".contains("root a (field 0) lies outside its table"), "\(e)")
        }
        // A vector whose length runs past the end of the buffer.
        let w2 = Writer()
        let t2 = w2.table([0: .offset])
        w2.setRoot(t2.pos)
        let v = w2.vector32([1, 2, 3])
        w2.link(t2.at[0]!, v)
        XCTAssertEqual(try FlatBuffer(bytes: w2.bytes).rootTable(path: "r").vector(0, "v", elementSize: 4)?.int32s(), [1, 2, 3])
        var long = w2.bytes
        long[v] = 0xFF; long[v + 1] = 0xFF; long[v + 2] = 0xFF; long[v + 3] = 0x3F
        XCTAssertThrowsError(try FlatBuffer(bytes: long).rootTable(path: "r").vector(0, "v", elementSize: 4)) { e in
            XCTAssertTrue("\(e)".contains("r v (1073741823 elements of 4 bytes) runs past the end"), "\(e)")
        }
    }

    /// Many offsets to one tensor with a big sparsity vector: the work budget stops the
    /// amplification instead of decoding gigabytes.
    func testSharedTablesHitWorkLimit() throws {
        let w = Writer()
        let model = w.table([0: .u32(3), 1: .offset, 2: .offset, 4: .offset])
        w.setRoot(model.pos)
        w.link(model.at[1]!, w.vector32([]))
        let bv = w.vector32([0]); w.link(model.at[4]!, bv); w.linkElement(bv, 0, w.table([:]).pos)
        let sv = w.vector32([0]); w.link(model.at[2]!, sv)
        let sg = w.table([0: .offset]); w.linkElement(sv, 0, sg.pos)
        let copies = 100_000
        let tv = w.vector32([UInt32](repeating: 0, count: copies)); w.link(sg.at[0]!, tv)
        let tensor = w.table([0: .offset, 1: .i8(1), 6: .offset])
        for i in 0..<copies { w.linkElement(tv, i, tensor.pos) }
        w.link(tensor.at[0]!, w.vector32([1, 1, 1, 100_000]))
        let sp = w.table([0: .offset, 2: .offset]); w.link(tensor.at[6]!, sp.pos)
        w.link(sp.at[0]!, w.vector32([0, 1, 2, 3]))
        let dims = w.vector32([0, 0, 0, 0]); w.link(sp.at[2]!, dims)
        let dense = w.table([0: .i8(0), 1: .i32(1)])
        for k in 0..<3 { w.linkElement(dims, k, dense.pos) }
        let csr = w.table([0: .i8(1), 2: .u8(3), 3: .offset, 4: .u8(3), 5: .offset])
        w.linkElement(dims, 3, csr.pos)
        let seg = w.table([0: .offset]); w.link(csr.at[3]!, seg.pos); w.link(seg.at[0]!, w.vectorBytes([0, 255]))
        let idx = w.table([0: .offset]); w.link(csr.at[5]!, idx.pos)
        w.link(idx.at[0]!, w.vectorBytes([UInt8](repeating: 7, count: 200_000)))
        let start = Date()
        assertThrows({ _ = try ModelFile(bytes: w.bytes) }, containing: ["work limit"], "shared tensor table")
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)
    }
}
