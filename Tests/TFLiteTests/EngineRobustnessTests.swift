import Foundation
import TFLite
import Tensor
import TestData
import XCTest

/// Models damaged in the ways that reach the engine (the reader's own fuzzing is in
/// ModelFileTests): shapes, operator wiring and options changed in a real file. Each must
/// load and run, or be refused with a TFLiteError: never a crash, never a hang.
final class EngineRobustnessTests: XCTestCase {

    /// Byte positions of every int32 in tensor shapes, operator inputs/outputs and option
    /// tables' scalar fields, found by walking the real file.
    func targets(_ bytes: [UInt8]) throws -> (shapes: [Int], wiring: [Int], options: [Int]) {
        let fb = FlatBuffer(bytes: bytes)
        let model = try fb.rootTable(path: "model")
        guard let subgraphs = try model.vector(2, "subgraphs", elementSize: 4) else { return ([], [], []) }
        let graph = try subgraphs.table(0, path: "subgraph 0")
        var shapes: [Int] = [], wiring: [Int] = [], options: [Int] = []
        if let tensors = try graph.vector(0, "tensors", elementSize: 4) {
            for i in 0..<tensors.count {
                if let shape = try tensors.table(i, path: "tensor").vector(0, "shape", elementSize: 4) {
                    shapes += (0..<shape.count).map { shape.start + 4 * $0 }
                }
            }
        }
        if let ops = try graph.vector(3, "operators", elementSize: 4) {
            for i in 0..<ops.count {
                let op = try ops.table(i, path: "operator")
                for slot in [1, 2] {
                    if let v = try op.vector(slot, "io", elementSize: 4) { wiring += (0..<v.count).map { v.start + 4 * $0 } }
                }
                if let opts = try op.table(4, "options") {
                    for slot in 0..<opts.slotCount { if let p = try opts.fieldPosition(slot, size: 1, "field") { options.append(p) } }
                }
            }
        }
        return (shapes, wiring, options)
    }

    func fuzzEngine(_ file: String, iterations: Int) throws {
        let url = try TestData.model(file)
        let original = [UInt8](try Data(contentsOf: url))
        let (shapes, wiring, options) = try targets(original)
        XCTAssertFalse(shapes.isEmpty || wiring.isEmpty || options.isEmpty)
        var rng = SplitMix64(seed: 20261122)
        var loaded = 0, refused = 0, unreadable = 0
        for _ in 0..<iterations {
            var bytes = original
            func setInt32(_ p: Int, _ v: Int32) { for k in 0..<4 { bytes[p + k] = UInt8(truncatingIfNeeded: UInt32(bitPattern: v) >> (8 * k)) } }
            for _ in 0..<(1 + rng.below(3)) {
                switch rng.below(3) {
                case 0:   // a dimension changed a little, to 0 or 1, or to something large
                    let p = shapes[rng.below(shapes.count)]
                    let old = Int32(bitPattern: UInt32(bytes[p]) | UInt32(bytes[p + 1]) << 8 | UInt32(bytes[p + 2]) << 16 | UInt32(bytes[p + 3]) << 24)
                    setInt32(p, [old + 1, old - 1, 0, 1, old * 2, 100_000][rng.below(6)])
                case 1:   // an operator reads or writes another tensor
                    setInt32(wiring[rng.below(wiring.count)], Int32(rng.below(400)) - 1)
                default:  // a stride, padding, activation or block size changed
                    bytes[options[rng.below(options.count)]] = UInt8(rng.below(6))
                }
            }
            guard let model = try? ModelFile(bytes: bytes) else { unreadable += 1; continue }
            do {
                let interpreter = try Interpreter(model: model, options: .init(threads: 2))
                for i in interpreter.inputs.indices { interpreter.input(i).update(repeating: 0.5) }
                interpreter.invoke()
                loaded += 1
            } catch let error as TFLiteError {
                XCTAssertFalse(error.message.isEmpty)
                refused += 1
            }
        }
        print("engine fuzz \(file): \(loaded) ran, \(refused) refused by the engine, \(unreadable) refused by the reader")
        XCTAssertGreaterThan(refused, 0, "the corruptions should reach the engine's checks")
    }

    /// 200 per model keeps the suite quick; POSEACT_ENGINE_FUZZ_ITERATIONS runs more by hand.
    static var iterations: Int { ProcessInfo.processInfo.environment["POSEACT_ENGINE_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 200 }

    func testDamagedDetectorNeverCrashes() throws { try fuzzEngine("pose_detection.tflite", iterations: Self.iterations) }
    func testDamagedLandmarkModelNeverCrashes() throws { try fuzzEngine("pose_landmark_full.tflite", iterations: Self.iterations) }
}
