import Foundation
import Keypoints
import ReaderFuzzing
import Tensor
import TrainingFixtures
import XCTest
@testable import Classifier

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

    /// Damaged files per test: 60 in the suite (150 took 61 s for the stores on a 2-core Zen 3;
    /// fuzz.sh's AddressSanitizer run gives the store and weights readers 100 cases each, half
    /// of them damaged this same way); POSEACT_FUZZ_ITERATIONS=2000 for a longer hunt.
    let iterations = Int(ProcessInfo.processInfo.environment["POSEACT_FUZZ_ITERATIONS"] ?? "") ?? 60

    /// `iterations` damaged copies of `good`, each given to `read`: it works, or its error is
    /// one line. Returns how many were read and refused.
    func fuzz(_ good: String, seed: UInt64, read: (String, String) throws -> Void) throws -> (read: Int, refused: Int) {
        var rng = SplitMix64(seed: seed)
        var counts = (read: 0, refused: 0)
        for i in 0..<iterations {
            let path = dir.appendingPathComponent("bad\(i)-" + URL(fileURLWithPath: good).lastPathComponent).path
            try FileManager.default.copyItem(atPath: good, toPath: path)
            defer { unlink(path) }
            let what = try HDF5Rewrite.damage(path, rng: &rng)
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

    /// A checkpoint whose stored net is not the one its stored config describes (found by
    /// the fuzzing: a precondition trapped inside `Trainer`): refused in one line.
    func testACheckpointThatDisagreesWithItselfIsRefused() throws {
        let store = dir.appendingPathComponent("slice.h5").path
        try PennSlice.store(at: store)
        let config = PennSlice.config(epochs: 1)
        let data = try TrainingData.load(path: store, config: config)
        let trainer = Trainer(config: config, data: data)
        trainer.runEpoch()
        let checkpoint = dir.appendingPathComponent("checkpoint.h5").path
        try trainer.saveCheckpoint(to: checkpoint)
        var other = config
        other.model.channels = 24
        XCTAssertThrowsError(try Trainer.resume(from: checkpoint, config: other, data: data)) { error in
            XCTAssertTrue("\(error)".contains("a damaged checkpoint"), "\(error)")
        }
        XCTAssertNoThrow(try Trainer.resume(from: checkpoint, config: config, data: data))
    }
}
