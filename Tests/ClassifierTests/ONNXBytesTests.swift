@testable import Classifier
import Crypto
import Keypoints
import XCTest

/// The ONNX encoder's output, byte for byte, for fixed nets (weights set to a pattern, not
/// drawn, so no platform's random numbers enter): a change to the encoder that moves one byte
/// shows here, without the onnxruntime the parity tests need. The hashes were taken from the
/// encoder before its field numbers were named after onnx.proto.
final class ONNXBytesTests: XCTestCase {
    func classifier(_ edit: (inout ModelSpec) -> Void, spec: PreprocessingSpec) -> ActionClassifier {
        var config = TrainingConfig()
        config.model.channels = 8
        config.model.dilations = [1, 2]
        config.model.blocks = [8, 16]
        edit(&config.model)
        let classifier = ActionClassifier(labels: ["a", "b", "c"], spec: spec, architecture: Architecture(config: config, classes: 3))
        for (k, (_, buffer)) in classifier.model.state.enumerated() {
            for i in 0..<buffer.count { buffer.pointer[i] = Float((k * 31 + i) % 17) / 16 - 0.5 }
        }
        return classifier
    }

    func testExportedBytesAreUnchanged() throws {
        let spec = PreprocessingSpec(window: 16)
        let tcn = classifier({ _ in }, spec: spec)
        let graph = classifier({ $0.type = .stgcn; $0.inputNorm = true }, spec: spec)
        let plus = classifier({ $0.type = .stgcnPlusPlus; $0.flipAverage = false; $0.pooling = .max }, spec: spec)
        let ensemble = try ActionClassifier(ensemble: [tcn, graph], weights: [2, 1])
        let hashes = try [tcn, graph, plus, ensemble].map { SHA256.hash(data: try $0.onnx()).map { String(format: "%02x", $0) }.joined() }
        XCTAssertEqual(hashes, [
            "af4a6afc417c60dd9151704dd5b50bef62f1bbb1a7e95d2a4a9f0abb2bca41a0",
            "e22e91126e1730bdc9f7c470de7f25616ccdfdbda20166dfd336665e70858c13",
            "96fe59b856900ab8180bf5f11d16860075eed92dc1980e860552854bd777a447",
            "74bf9d129d176e036750a99f50fb55baf1d09a24f36533488e62dee2cf27b70c",
        ])
    }
}
