import Foundation
import TestData
import XCTest

/// `poseact export … --output M.onnx`: onnxruntime (in the venv `.ci/run` makes,
/// `POSEACT_ONNX_PYTHON`) gives poseact's probabilities on the same windows, for the slice's
/// TCN (Penn Action keypoints, the mirror-image average inside) and for an ensemble of two;
/// a net ONNX export does not write yet is refused in one line.
final class ONNXExportTests: PennSliceTestCase {
    func python() throws -> String {
        let env = ProcessInfo.processInfo.environment
        for path in [env["POSEACT_ONNX_PYTHON"], "/tmp/poseact-onnx-venv/bin/python"].compactMap({ $0 })
        where FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        throw TestData.missing("no python with onnxruntime: python3 -m venv /tmp/poseact-onnx-venv && /tmp/poseact-onnx-venv/bin/pip install onnxruntime h5py numpy")
    }

    func testOnnxruntimeGivesPoseactsProbabilities() throws {
        let py = try python()
        let run = try trainedRun()
        let dir = Self.dir.appendingPathComponent("onnx-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let windows = dir.appendingPathComponent("windows.h5").path
        XCTAssertEqual(try poseact(["windows", try store(), "--model", run, "--output", windows]).status, 0)
        for (name, sources) in [("one", [run]), ("ensemble", [run, run + "/model.poseact.h5"])] {
            let onnx = dir.appendingPathComponent("\(name).onnx").path, model = dir.appendingPathComponent("\(name).poseact.h5").path
            let exported = try poseact(["export"] + sources + ["--output", onnx])
            XCTAssertEqual(exported.status, 0, exported.stderr)
            XCTAssertEqual(try poseact(["export"] + sources + ["--output", model]).status, 0)
            let csv = dir.appendingPathComponent("\(name).csv").path
            let evaluated = try poseact(["evaluate", model, "--data", windows, "--split", "all", "--probabilities", csv])
            XCTAssertEqual(evaluated.status, 0, evaluated.stderr)
            let parity = try external(py, [TestData.packageRoot.appendingPathComponent("notebooks-free-scripts/onnx_parity.py").path,
                                           onnx, windows, csv])
            XCTAssertEqual(parity.status, 0, name)
            let result = try json(parity.stdout)
            print("ONNX parity, \(name): \(result)")
            XCTAssertGreaterThanOrEqual(result["windows"] as? Int ?? 0, 100, name)
            // The bound: float32 sums in another order differ by ~1e-7 here (measured
            // 4.8e-7 on 2,741 push-up windows); 1e-4 is what an app can rely on.
            XCTAssertLessThanOrEqual(result["max_abs_difference"] as? Double ?? 1, 1e-4, name)
            XCTAssertEqual(result["same_labels"] as? Bool, true, name)
            XCTAssertEqual(result["labels"] as? [String], Self.labels, "the labels in the model's metadata")
        }
    }
}
