import Foundation
import Keypoints
import KeypointWindows
import Tensor
import XCTest
@testable import Classifier

/// Sizes no single key's bound catches (issue 34): a model whose parameters and buffers
/// multiply into terabytes is refused before anything is built, and files whose labels
/// repeat are refused in one line instead of trapping in a dictionary.
final class ModelBoundsTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-bounds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: dir) }

    /// `model: {channels: 4096, kernel: 255}` is within each key's bound; on main `train`
    /// reached 20 GB in a minute. Now the config's problems say the size and what to lower.
    func testAHugeModelIsRefusedWithItsSize() throws {
        var config = TrainingConfig()
        config.model.channels = 4096; config.model.kernel = 255
        let problem = try XCTUnwrap(config.problems.first { $0.hasPrefix("model: ") }, "\(config.problems)")
        for words in ["billion parameters", "of activations for a batch of 32 windows of 32 frames", "at most 100.0 million parameters",
                      "lower model.channels"] {
            XCTAssertTrue(problem.contains(words), "'\(words)' not in: \(problem)")
        }
        var graph = TrainingConfig()
        graph.model.type = .stgcn; graph.model.blocks = [4096, 4096, 4096, 4096]; graph.optimizer.batchSize = 8192
        XCTAssertTrue(graph.problems.contains { $0.hasPrefix("model: ") && $0.contains("lower model.blocks") }, "\(graph.problems)")
        // The defaults and a big but sane TCN pass.
        XCTAssertEqual(TrainingConfig().problems, [])
        var big = TrainingConfig()
        big.model.channels = 512; big.optimizer.batchSize = 256
        XCTAssertEqual(big.problems, [])
    }

    /// An architecture read from a file whose frames, input channels or classes would
    /// overflow the layers' geometry or the head (Ints) is refused by its keys before its
    /// size is worked out.
    func testAFilesHugeGeometryIsRefusedBeforeItsSize() throws {
        let huge = Int.max / 2 - (Int.max / 2) % 18
        for (frames, channels, classes) in [(Int.max / 2, 36, 3), (32, huge, 3), (1 << 40, 1 << 40 - (1 << 40) % 18, 3), (32, 36, Int.max / 4)] {
            var arch = Architecture(config: TrainingConfig(), classes: classes)
            arch.frames = frames; arch.inputChannels = channels
            let problems = arch.problems(joints: 18)
            XCTAssertTrue(problems.contains { ["architecture.frames", "architecture.input_channels", "architecture.classes"].contains(where: $0.hasPrefix) },
                          "\(problems)")
        }
    }

    /// The size is known before the net is built: the parameters exactly, and the buffers
    /// within 10 % of the floats building the net allocates (the estimate leaves out a few
    /// small buffers: batch-norm statistics, masks).
    func testTheSizeIsWhatBuildingTheNetTakes() throws {
        var config = TrainingConfig()
        config.preprocessing.joints = Skeleton.visionLayout
        for (type, channels, kernel) in [(ModelType.tcn, 48, 5), (.tcn, 16, 1), (.stgcn, 0, 0), (.stgcnPlusPlus, 0, 0)] {
            config.model.type = type
            if type == .tcn { config.model.channels = channels; config.model.kernel = kernel } else { config.model.blocks = [16, 16, 32] }
            let arch = Architecture(config: config, classes: 3)
            let size = arch.size(joints: config.preprocessing.joints.count)
            let batch = 16
            let before = FloatBuffer.liveFloats
            let net = arch.net(joints: config.preprocessing.joints, maxBatch: batch, seed: 1)
            let allocated = Double(FloatBuffer.liveFloats - before)
            XCTAssertEqual(Double(net.parameterCount), size.parameters, type.rawValue)
            let estimated = 2 * size.parameters + size.fixed + Double(batch) * size.perWindow
            XCTAssertEqual(estimated / allocated, 1, accuracy: 0.1, "\(type) \(channels) \(kernel): \(estimated) estimated, \(allocated) allocated")
            withExtendedLifetime(net) {}
        }
    }

    /// A weights file whose labels repeat (on main: `evaluate` trapped, "Duplicate values")
    /// is refused by the reader in one line; so is a windows file's.
    func testFilesWithRepeatedLabelsAreRefused() throws {
        var spec = PreprocessingSpec()
        spec.features = [.position]
        var config = TrainingConfig()
        config.preprocessing = spec; config.model.channels = 8; config.model.dilations = [1]
        let weights = dir.appendingPathComponent("twice.poseact.h5").path
        try ActionClassifier(labels: ["a", "b", "a"], spec: spec, architecture: Architecture(config: config, classes: 3)).save(to: weights)
        XCTAssertThrowsError(try ActionClassifier.load(path: weights)) { error in
            XCTAssertTrue(error is ModelFileError, "\(type(of: error))")
            XCTAssertTrue("\(error)".contains("the label 'a' is given twice"), "\(error)")
            XCTAssertFalse("\(error)".contains("\n"))
        }
        let windows = dir.appendingPathComponent("twice.h5").path
        try WindowsFile(spec: spec, labels: ["a", "a"], windows: []).write(to: windows)
        XCTAssertThrowsError(try WindowsFile.read(path: windows)) { error in
            XCTAssertTrue("\(error)".contains("the label 'a' is given twice in label_names"), "\(error)")
        }
    }
}
