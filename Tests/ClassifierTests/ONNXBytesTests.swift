import Crypto
import Keypoints
import KeypointWindows
import XCTest
@testable import Classifier

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
            "b54bfd4723fde39f2edd2454e9e5919b67ce08cbcc8d6d6607c64cc92bcc41fc",
            "8740103941ca20464ad207fc9b3301158e2f7f5d0707c609639097c302bbbf16",
            "7de9f0b7b78a57051344b6d55c9ca093ec6c9c6eb6fee2d3cb85628f40e5bd1a",
            "029e43e2b89d10da54a4de1ec49ab4d3c23bf0b4595a9f36f128d9098b9f9b7d",
        ])
    }
}
