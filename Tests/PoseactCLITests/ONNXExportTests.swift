import Foundation
import TestData
import TrainingFixtures
import XCTest

/// `poseact export … --output M.onnx`: onnxruntime (in the venv `.ci/run` makes,
/// `POSEACT_ONNX_PYTHON`) gives poseact's probabilities on the same windows, for every net
/// type trained on the slice (Penn Action keypoints, the mirror-image average inside): the
/// TCN, an ensemble of two, an ST-GCN, an ST-GCN++, and a two-stream ensemble of ST-GCN++s.
/// The windows: every clip of the slice's three labels, train and test (over 2,000); the
/// numpy reference of the preprocessing (`preprocess_reference.py`) makes the same windows
/// from the keypoint CSV with the spec in the .onnx file's metadata.
final class ONNXExportTests: PennSliceTestCase {
    func folder() throws -> URL {
        let dir = Self.dir.appendingPathComponent("onnx-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Exports `sources` (runs or weights files) to ONNX and to a weights file, cuts the
    /// store's windows as the model does, and checks onnxruntime's probabilities against
    /// poseact's on all of them.
    func checkParity(_ name: String, _ sources: [String], in dir: URL, labels: [String] = PennSliceTestCase.labels) throws {
        let py = try python()
        let onnx = dir.appendingPathComponent("\(name).onnx").path, model = dir.appendingPathComponent("\(name).poseact.h5").path
        let exported = try poseact(["export"] + sources + ["--output", onnx])
        XCTAssertEqual(exported.status, 0, exported.stderr)
        XCTAssertEqual(try poseact(["export"] + sources + ["--output", model]).status, 0)
        let windows = dir.appendingPathComponent("\(name)-windows.h5").path
        XCTAssertEqual(try poseact(["windows", try store(everyClip: true), "--model", model, "--output", windows]).status, 0)
        let csv = dir.appendingPathComponent("\(name).csv").path
        let evaluated = try poseact(["evaluate", model, "--data", windows, "--split", "all", "--probabilities", csv])
        XCTAssertEqual(evaluated.status, 0, evaluated.stderr)
        let parity = try external(py, [TestData.packageRoot.appendingPathComponent("notebooks-free-scripts/onnx_parity.py").path,
                                       onnx, windows, csv])
        XCTAssertEqual(parity.status, 0, name)
        let result = try json(parity.stdout)
        print("ONNX parity, \(name): \(result)")
        XCTAssertGreaterThanOrEqual(result["windows"] as? Int ?? 0, 1_000, name)
        // The bound: float32 sums in another order differ by ~1e-7 here (measured
        // 4.8e-7 on 2,741 push-up windows, 3.6e-7 on 2,000 Penn Action ones with an
        // ST-GCN); 1e-4 is what an app can rely on.
        XCTAssertLessThanOrEqual(result["max_abs_difference"] as? Double ?? 1, 1e-4, name)
        XCTAssertEqual(result["same_labels"] as? Bool, true, name)
        XCTAssertEqual(result["labels"] as? [String], labels, "the labels in the model's metadata")

        // An app with the .onnx file alone: the numpy reference reads the spec from its
        // metadata and makes the windows from the keypoint CSV, those poseact cut.
        let reference = try external(py, [TestData.packageRoot.appendingPathComponent("notebooks-free-scripts/preprocess_reference.py").path,
                                          Self.dir.appendingPathComponent("labels.csv").path, onnx, "--compare", windows])
        XCTAssertEqual(reference.status, 0, reference.stdout)
        let same = try json(reference.stdout)
        print("preprocessing reference, \(name): \(same)")
        XCTAssertEqual(same["windows"] as? Int, result["windows"] as? Int, name)
        // The bound; the reference follows poseact's float32 order and gives 0 here.
        XCTAssertLessThanOrEqual(same["max_abs_difference"] as? Double ?? 1, 1e-5, name)
        XCTAssertEqual(same["mask_equal"] as? Bool, true, name)
        XCTAssertEqual(same["same_order"] as? Bool, true, name)
    }

    func testTCNAndItsEnsemble() throws {
        let run = try trainedRun(), dir = try folder()
        try checkParity("tcn", [run], in: dir)
        try checkParity("ensemble", [run, run + "/model.poseact.h5"], in: dir)
        // With a label enrolled: its last layer the prototypes', exported as any other.
        let enrolled = dir.appendingPathComponent("with-bench-press.poseact.h5").path
        let made = try poseact(["enroll", run, "--data", try oneLabelStore("bench_press", train: 5, test: 4), "--output", enrolled])
        XCTAssertEqual(made.status, 0, made.stderr)
        try checkParity("enrolled", [enrolled], in: dir, labels: Self.labels + ["bench_press"])
    }

    func testGraphNetsAndStreams() throws {
        let dir = try folder()
        // With and without the input BatchNorm: the graph's two ways into PYSKL's layout.
        func train(_ model: String, inputNorm: Bool, streams: String? = nil) throws -> String {
            let run = dir.appendingPathComponent(model + (streams == nil ? "" : "-streams")).path
            let cfg = try config("""
                model:
                  type: \(model)
                  blocks: [8, 16]
                  input_norm: \(inputNorm)
                optimizer:
                  batch_size: 16
                training:
                  epochs: 2
                  threads: 1

                """)
            let trained = try poseact(["train", "--config", cfg, "--data", try store(), "--output", run]
                                      + (streams.map { ["--streams", $0] } ?? []))
            XCTAssertEqual(trained.status, 0, trained.stderr)
            return run
        }
        try checkParity("stgcn", [try train("stgcn", inputNorm: true)], in: dir)
        let streams = try train("stgcn++", inputNorm: false, streams: "joint,bone")
        try checkParity("stgcn++", [streams + "/streams/joint"], in: dir)
        try checkParity("stgcn++-streams", [streams], in: dir)
    }
}
