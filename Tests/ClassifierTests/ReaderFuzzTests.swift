@testable import Classifier
import Dataset
import Foundation
import Tensor
import XCTest

/// The weights-file and keypoint-store readers against files whose sizes, shapes and values
/// were changed on purpose, as the TFLite reader is fuzzed. Each damaged file is rewritten
/// through libhdf5 (so it is well-formed HDF5 with a valid checksum: what another tool, or
/// someone rewriting the file, can produce) with one dataset given another shape or values,
/// or one attribute another value. Reading it must either work, and then the model must
/// predict, or end in one line naming the problem: never a crash, a hang or a huge allocation.
final class ReaderFuzzTests: XCTestCase {
    var dir: URL!
    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-fuzz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    /// Damaged files per test: 150 in the suite (about 5 s); POSEACT_FUZZ_ITERATIONS=2000 for a longer hunt.
    let iterations = Int(ProcessInfo.processInfo.environment["POSEACT_FUZZ_ITERATIONS"] ?? "") ?? 150

    /// What can be changed: a dataset, or an attribute of a group or of a dataset.
    enum Target {
        case dataset(group: String, name: String)
        case attribute(group: String, dataset: String?, name: String)
    }

    /// Every dataset and attribute of a file; `path` is the group's, ending in "/".
    func targets(_ group: HDF5Group, _ path: String) throws -> [Target] {
        var out = try group.attributeNames().map { Target.attribute(group: path, dataset: nil, name: $0) }
        for name in try group.children() {
            switch try group.kind(of: name) {
            case .group:
                let g = try group.group(name)
                out += try targets(g, path + name + "/")
                g.close()
            default:
                out.append(.dataset(group: path, name: name))
                let d = try group.dataset(name)
                out += try d.attributeNames().map { Target.attribute(group: path, dataset: name, name: $0) }
                d.close()
            }
        }
        return out
    }

    /// One random change to the file at `path`, written back through libhdf5.
    func damage(_ path: String, rng: inout SplitMix64) throws -> String {
        let file = try HDF5File.open(path, writable: true)
        defer { try? file.close() }
        let root = try file.root()
        let all = try targets(root, "/")
        let target = all[rng.below(all.count)]
        let groupPath: String, name: String, datasetName: String?
        switch target {
        case .dataset(let g, let n): (groupPath, name, datasetName) = (g, n, nil)
        case .attribute(let g, let d, let n): (groupPath, name, datasetName) = (g, n, d)
        }
        let group = groupPath == "/" ? root : try file.group(groupPath)
        if case .dataset = target {
            try group.remove(name)
            let dims = [0, 1, 2, 3, 5, 17, 33, 200]
            let shape = (0..<(1 + rng.below(3))).map { _ in rng.pick(dims) }
            let count = shape.reduce(1, *)
            let special: [Float] = [.nan, .infinity, -.infinity, 1e38, -1e38, 0, -1]
            let values = (0..<count).map { _ in rng.below(4) == 0 ? rng.pick(special) : Float(rng.gaussian()) }
            try group.write(name, values, shape: shape).close()
            return "dataset \(groupPath)\(name) → shape \(shape)"
        }
        let owner: HDF5Object = try datasetName.map { try group.dataset($0) } ?? group
        let ints = [-1, 0, 1, 2, 7, 4096, 1 << 31, Int.max]
        let texts = ["", "{", "[]", "null", "nan", "{\"a\":1}", String(repeating: "x", count: 3000), "0", "-5", "1e309"]
        switch rng.below(3) {
        case 0: let v = rng.pick(ints); try owner.setAttribute(name, v); return "attribute \(groupPath)\(datasetName ?? "") \(name) = \(v)"
        case 1: let v = rng.pick([Double.nan, .infinity, -1, 0, 1e300]); try owner.setAttribute(name, v); return "attribute \(groupPath)\(datasetName ?? "") \(name) = \(v)"
        default:
            // A string: a whole other one, or the stored text cut or with one character changed.
            var v = rng.pick(texts)
            if case .string(let old)? = try? owner.attribute(name), !old.isEmpty, rng.below(2) == 0 {
                var chars = Array(old)
                let i = rng.below(chars.count)
                if rng.below(2) == 0 { chars = Array(chars[..<i]) } else { chars[i] = rng.pick(Array("0123456789-e.,:{}[]\"a")) }
                v = String(chars)
            }
            try owner.setAttribute(name, v)
            return "attribute \(groupPath)\(datasetName ?? "") \(name) = \(v.prefix(40))"
        }
    }

    /// `iterations` damaged copies of `good`, each given to `read`: it works, or its error is
    /// one line. Returns how many were read and refused.
    func fuzz(_ good: String, seed: UInt64, read: (String, String) throws -> Void) throws -> (read: Int, refused: Int) {
        var rng = SplitMix64(seed: seed)
        var counts = (read: 0, refused: 0)
        for i in 0..<iterations {
            let path = dir.appendingPathComponent("bad\(i)-" + URL(fileURLWithPath: good).lastPathComponent).path
            try FileManager.default.copyItem(atPath: good, toPath: path)
            defer { unlink(path) }
            let what = try damage(path, rng: &rng)
            do {
                try read(path, what)
                counts.read += 1
            } catch {
                let line = "\(error)"
                XCTAssertFalse(line.isEmpty, what)
                XCTAssertFalse(line.contains("\n"), "one line: \(line) (\(what))")
                counts.refused += 1
            }
        }
        XCTAssertGreaterThan(counts.refused, iterations / 3, "most changes break the file")
        return counts
    }

    func testDamagedWeightsFilesLoadOrGetOneLine() throws {
        let store = dir.appendingPathComponent("slice.h5").path
        try PennSlice.store(at: store)
        var config = PennSlice.config(epochs: 1)
        config.model.inputNorm = true
        let data = try TrainingData.load(path: store, config: config)
        let trainer = Trainer(config: config, data: data)
        trainer.runEpoch()
        let good = dir.appendingPathComponent("good.poseact.h5").path
        try trainer.saveModel(to: good)
        let windows = Array(data.test.prefix(3))
        let counts = try fuzz(good, seed: 41) { path, what in
            let model = try ActionClassifier.load(path: path)
            // Loaded: it still predicts, one distribution per window (NaN weights give NaN).
            if model.spec == data.spec { XCTAssertEqual(model.probabilities(windows).count, windows.count, what) }
        }
        print("weights files: \(counts.read) damaged files loaded, \(counts.refused) refused with one line")
    }

    func testDamagedStoresReadOrGetOneLine() throws {
        let good = dir.appendingPathComponent("good.h5").path
        try PennSlice.store(at: good)
        let counts = try fuzz(good, seed: 43) { path, what in
            let clips = try KeypointStore(path: path).readAll()
            // Read: each clip is consistent (frames × joints × 3 values), and trains.
            for c in clips { XCTAssertEqual(c.keypoints.count, c.frameCount * c.jointNames.count * 3, what) }
            _ = try TrainingData.load(path: path, config: PennSlice.config(epochs: 1))
        }
        print("stores: \(counts.read) damaged stores read, \(counts.refused) refused with one line")
    }
}
