import Dataset
import Pose
import Foundation
import XCTest
@testable import Classifier

final class ConfigTests: XCTestCase {
    static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// configs/penn-action.yaml writes out every default: the file and the built-in
    /// defaults must not drift apart (the file says so).
    func testShippedConfigIsTheDefault() throws {
        let path = Self.repository.appendingPathComponent("configs/penn-action.yaml").path
        XCTAssertEqual(try TrainingConfig.load(path: path), TrainingConfig())
        XCTAssertEqual(TrainingConfig().problems, [])
    }

    /// Every shipped config loads with no problems; the push-up config is the default with
    /// the keys it marks CHANGED (the bone feature among them).
    func testEveryShippedConfigLoads() throws {
        let folder = Self.repository.appendingPathComponent("configs")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".yaml") }.sorted()
        XCTAssertTrue(files.contains("pushups.yaml"), "\(files)")
        for f in files {
            let c = try TrainingConfig.load(path: folder.appendingPathComponent(f).path)
            XCTAssertEqual(c.problems, [], f)
        }
        let pushups = try TrainingConfig.load(path: folder.appendingPathComponent("pushups.yaml").path)
        XCTAssertEqual(pushups.preprocessing.features, [.position, .confidence, .velocity, .bone])
        XCTAssertEqual(pushups.model.kernel, 7)
        XCTAssertEqual(pushups.model.dilations, [1, 1, 2, 2])
        XCTAssertEqual(pushups.preprocessing.outsideFrame, .missing)
        XCTAssertEqual(pushups.augmentation.turnDegrees, 45)
    }

    /// Every key the file documents is a key the parser knows, and the other way round:
    /// yaml() writes every key, and the shipped file names the same keys.
    func testShippedConfigDocumentsEveryKey() throws {
        func keys(_ text: String) -> Set<String> {
            var section = "", out = Set<String>()
            for line in text.split(separator: "\n") where !line.hasPrefix("#") && line.contains(":") {
                let t = line.trimmingCharacters(in: .whitespaces)
                guard !t.hasPrefix("#") else { continue }
                let key = String(t[..<t.firstIndex(of: ":")!])
                if line.hasPrefix(" ") { out.insert("\(section).\(key)") } else { section = key }
            }
            return out
        }
        let file = try String(contentsOfFile: Self.repository.appendingPathComponent("configs/penn-action.yaml").path, encoding: .utf8)
        XCTAssertEqual(keys(file), keys(TrainingConfig().yaml()))
        XCTAssertEqual(keys(file).count, 53, "7 data, 12 preprocessing, 8 model, 7 optimizer, 9 training, 10 augmentation")
    }

    /// A weights file or checkpoint from before a key keeps the behaviour it was trained with:
    /// no ema_epochs in its record means no average, whatever today's default.
    func testOldRecordsKeepTheirBehaviour() throws {
        XCTAssertEqual(TrainingConfig().training.emaEpochs, 5)
        var object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(TrainingConfig().json().utf8)) as? [String: Any])
        var training = try XCTUnwrap(object["training"] as? [String: Any])
        training.removeValue(forKey: "ema_epochs")
        object["training"] = training
        let old = try JSONDecoder().decode(TrainingConfig.self, from: JSONSerialization.data(withJSONObject: object))
        XCTAssertEqual(old.training.emaEpochs, 0)
        XCTAssertEqual(try JSONDecoder().decode(TrainingConfig.self, from: Data(TrainingConfig().json().utf8)), TrainingConfig())
    }

    func testYAMLRoundTrip() throws {
        var c = TrainingConfig()
        c.data.store = "some \"odd\" path.h5"
        c.data.testSplit = nil
        c.preprocessing.joints = ["nose", "left_wrist", "right_wrist"]
        c.preprocessing.features = [.position, .velocity]
        c.model.dilations = [1, 3]
        c.model.pooling = .meanMax
        c.model.flipAverage = false
        c.training.windowWeighting = .clip
        c.training.labelSmoothing = 0.1
        c.optimizer.name = .adam
        c.training.classWeighting = .balanced
        c.training.seed = 77
        c.augmentation = .standard
        c.augmentation.occlude = 0.25
        c.augmentation.turnDegrees = 30
        c.augmentation.mixup = 0.3
        c.training.emaEpochs = 2.5
        c.preprocessing.outsideFrame = .missing
        c.preprocessing.centre = .frame
        c.preprocessing.torso = .median
        c.preprocessing.features = [.position, .presence, .velocity]
        c.model.inputNorm = true
        c.data.folds = 5
        c.data.fold = 3
        XCTAssertEqual(try TrainingConfig.parse(c.yaml()), c)
        XCTAssertEqual(try TrainingConfig.parse(""), TrainingConfig(), "an empty file is all defaults")
    }

    func assertError(_ yaml: String, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try TrainingConfig.parse(yaml, file: "c.yaml"), file: file, line: line) { error in
            XCTAssertEqual("\(error)", expected, file: file, line: line)
        }
    }

    func testClearErrors() {
        assertError("model:\n  chanels: 64\n",
                    "c.yaml:2: unknown key 'model.chanels' (did you mean 'channels'?); known keys here: type, channels, dilations, kernel, dropout, pooling, flip_average, input_norm")
        assertError("modle:\n  channels: 64\n",
                    "c.yaml:1: unknown key 'modle' (did you mean 'model'?); known keys here: data, preprocessing, model, optimizer, training, augmentation")
        assertError("preprocessing:\n  window: abc\n", "c.yaml:2: preprocessing.window must be a whole number, not 'abc'")
        assertError("preprocessing:\n  window: 3.5\n", "c.yaml:2: preprocessing.window must be a whole number, not '3.5'")
        assertError("optimizer:\n  learning_rate: fast\n", "c.yaml:2: optimizer.learning_rate must be a number, not 'fast'")
        assertError("augmentation:\n  flip: maybe\n", "c.yaml:2: augmentation.flip must be true or false, not 'maybe'")
        assertError("model:\n  dilations: 4\n", "c.yaml:2: model.dilations must be a list, like [a, b], not '4'")
        assertError("optimizer:\n  name: sgd\n", "c.yaml:2: optimizer.name must be one of adamw, adam, not 'sgd'")
        assertError("preprocessing:\n  joints: [nose, tail]\n", "c.yaml:2: preprocessing.joints: unknown joint 'tail' (known: "
                    + Skeleton.allNames.joined(separator: ", ") + ")")
        assertError("augmentation:\n  scale: [1.2, 0.8]\n", "c.yaml:2: augmentation.scale must be [low, high] with low ≤ high")
        assertError("model: 3\n", "c.yaml:1: model must be a mapping of keys (type, channels, dilations, kernel, dropout, pooling, flip_average, input_norm), not '3'")
        assertError("model:\n  channels: 64\nmodel:\n  kernel: 3\n",
                    "c.yaml: not valid YAML (Parser: expected all keys to be unique but found the following duplicated key(s): 'model'.)")
        XCTAssertThrowsError(try TrainingConfig.parse("model: [1, 2\n", file: "c.yaml")) {
            XCTAssertTrue("\($0)".hasPrefix("c.yaml: not valid YAML"), "\($0)")
        }
        XCTAssertThrowsError(try TrainingConfig.load(path: "/nonexistent/x.yaml")) {
            XCTAssertEqual("\($0)", "/nonexistent/x.yaml: cannot read the config file (does it exist?)")
        }
    }

    func testValueProblems() throws {
        var c = try TrainingConfig.parse("preprocessing:\n  window: 0\noptimizer:\n  batch_size: 1\nmodel:\n  dropout: 1.5\n")
        XCTAssertEqual(c.problems, ["preprocessing: window must be in 1…10000 frames (got 0)", "model.dropout must be in [0, 1)",
                                    "optimizer.batch_size must be in 2…8192 (batch norm needs 2; got 1)"])
        c = TrainingConfig()
        c.model.type = "lstm"
        XCTAssertEqual(c.problems, ["model.type 'lstm' is not known (tcn)"])
    }
}
