import Basics
import Keypoints
import KeypointWindows
import XCTest
@testable import Classifier

/// The ONNX encoder's output, byte for byte, for fixed nets (weights set to a pattern, not
/// drawn, so no platform's random numbers enter): a change to the encoder that moves one byte
/// shows here, without the onnxruntime the parity tests need. The hashes were taken from the
/// encoder before its field numbers were named after onnx.proto, and again when the metadata
/// gained `preprocessing_steps` (the graph's bytes unchanged).
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
        let hashes = try [tcn, graph, plus, ensemble].map { SHA256.hex(digest: SHA256.hash(data: try $0.onnx())) }
        XCTAssertEqual(hashes, [
            "cf206bbfad92ca0f54506ebeaa08ecab5bcc2f0117fc86a0695f54a1472629ef",
            "a2259b5f2334415b106f15405a0b5ccc2bcdf9866c1f127dfa551b04de04da71",
            "fef62caec7d359f40c77a3a8c9c50439de85f0d922cf3a0d7ec64fd1817223ce",
            "857adaeececa5ef57011c8208fec6993225e208dcc5936a7f230102e72212ad9",
        ])
    }
}
