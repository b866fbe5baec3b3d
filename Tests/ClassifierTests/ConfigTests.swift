import Config
import Foundation
import Keypoints
import KeypointWindows
import TestData
import XCTest
@testable import Classifier

final class ConfigTests: XCTestCase {
    static var repository: URL { TestData.packageRoot }

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
        XCTAssertEqual(keys(file).count, 61, "9 data, 13 preprocessing, 12 model, 7 optimizer, 10 training, 10 augmentation")
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
        var noTest = TrainingConfig()
        noTest.data.testSplit = nil
        XCTAssertEqual(try JSONDecoder().decode(TrainingConfig.self, from: Data(noTest.json().utf8)), noTest,
                       "no test split is written as null, not left out (which reads as the default)")
    }

    /// A weights file or checkpoint from before every key was snake_case holds augmentation's
    /// keys in camelCase: they read as the same values. Records are snake_case now.
    func testOldCamelCaseAugmentationKeysLoad() throws {
        var c = TrainingConfig()
        c.augmentation = AugmentationSpec(flip: false, rotationDegrees: 7, scale: 0.8...1.2, translation: 0.05, jitter: 0.02,
                                          timeStretch: 0.7...1.3, dropFrames: 0.1, occlude: 0.2, turnDegrees: 30, mixup: 0.4)
        let json = c.json()
        for key in ["rotation_degrees", "time_stretch", "drop_frames", "turn_degrees"] { XCTAssertTrue(json.contains("\"\(key)\""), key) }
        let old = #"{"flip":false,"rotationDegrees":7,"scale":[0.8,1.2],"translation":0.05,"jitter":0.02,"#
            + #""timeStretch":[0.7,1.3],"dropFrames":0.1,"occlude":0.2,"turnDegrees":30,"mixup":0.4}"#
        XCTAssertEqual(try JSONDecoder().decode(AugmentationSpec.self, from: Data(old.utf8)), c.augmentation)
        var object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        object["augmentation"] = try JSONSerialization.jsonObject(with: Data(old.utf8))
        XCTAssertEqual(try JSONDecoder().decode(TrainingConfig.self, from: JSONSerialization.data(withJSONObject: object)), c)
        XCTAssertEqual(try JSONDecoder().decode(TrainingConfig.self, from: Data(json.utf8)), c)
    }

    /// A section the file gives in part keeps the training defaults for the rest (not
    /// PreprocessingSpec's own, nor a record's older ones).
    func testMissingKeysTakeTheConfigDefaults() throws {
        let c = try TrainingConfig.parse("preprocessing:\n  window: 20\ntraining:\n  epochs: 3\naugmentation:\n  scale: 1.5\n")
        var expected = TrainingConfig()
        expected.preprocessing.window = 20
        expected.training.epochs = 3
        expected.augmentation.scale = 1.5...1.5
        XCTAssertEqual(c, expected)
        XCTAssertEqual(try TrainingConfig.parse("preprocessing:\n  joints: blazepose\n").preprocessing.joints, Skeleton.blazePoseNames)
        XCTAssertEqual(try TrainingConfig.parse("data:\n  test_split: null\n").data.testSplit, nil)
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
        c.preprocessing.minConfidence = 0.3
        c.optimizer.learningRate = 0.1 + 0.2
        XCTAssertEqual(try TrainingConfig.parse(c.yaml()), c)
        c.data.store = "123"
        c.data.testSplit = "null"
        XCTAssertEqual(try TrainingConfig.parse(c.yaml()), c, "names that read as a number or null stay names")
        XCTAssertFalse(c.yaml().contains("velocity_unit"), "a record-only key")
        XCTAssertTrue(c.yaml().contains("\n  min_confidence: 0.3\n  min_joint_share: 0.25\n"), c.yaml())
        XCTAssertEqual(try TrainingConfig.parse(""), TrainingConfig(), "an empty file is all defaults")
    }

    func assertError(_ yaml: String, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try TrainingConfig.parse(yaml, file: "c.yaml"), file: file, line: line) { error in
            XCTAssertEqual("\(error)", expected, file: file, line: line)
        }
    }

    func testClearErrors() {
        assertError("model:\n  chanels: 64\n",
                    "c.yaml:2: unknown key 'model.chanels' (did you mean 'channels'?); known keys here: type, channels, dilations, kernel, dropout, pooling, flip_average, input_norm, blocks, streams, stream_weights, pretrained")
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
        assertError("model: 3\n", "c.yaml:1: model must be a mapping of keys (type, channels, dilations, kernel, dropout, pooling, flip_average, input_norm, blocks, streams, stream_weights, pretrained), not '3'")
        assertError("model:\n  channels: 64\nmodel:\n  kernel: 3\n",
                    "c.yaml: not valid YAML (Parser: expected all keys to be unique but found the following duplicated key(s): 'model'.)")
        assertError("preprocessing:\n  window: \"32\"\n", "c.yaml:2: preprocessing.window must be a whole number, not '32'")
        assertError("model:\n  flip_average: \"true\"\n", "c.yaml:2: model.flip_average must be true or false, not 'true'")
        assertError("training:\n  seed: -1\n", "c.yaml:2: training.seed must be a whole number ≥ 0, not '-1'")
        assertError("data:\n  train_split: null\n", "c.yaml:2: data.train_split must be a name, not 'null'")
        assertError("optimizer:\n  weight_decay: .inf\n", "c.yaml:2: optimizer.weight_decay must be a finite number, not '.inf'")
        assertError("preprocessing:\n  window: [32]\n", "c.yaml:2: preprocessing.window must be one value, not a list")
        assertError("preprocessing:\n  features: [position, speed]\n",
                    "c.yaml:2: preprocessing.features must be one of "
                    + Feature.allCases.map(\.rawValue).joined(separator: ", ") + ", not 'speed'")
        assertError("preprocessing:\n  joints: body\n", "c.yaml:2: preprocessing.joints must be vision, blazepose, all or a list of joint names, not 'body'")
        assertError("preprocessing:\n  joints: [nose, nose]\n", "c.yaml:2: preprocessing.joints lists a joint twice")
        assertError("augmentation:\n  time_stretch: fast\n", "c.yaml:2: augmentation.time_stretch must be [low, high] with low ≤ high, not 'fast'")
        assertError("augmentation:\n  rotationDegrees: 5\n",
                    "c.yaml:2: unknown key 'augmentation.rotationDegrees' (did you mean 'rotation_degrees'?); known keys here: flip, rotation_degrees, scale, translation, "
                    + "jitter, time_stretch, drop_frames, occlude, turn_degrees, mixup")
        assertError("preprocessing:\n  velocity_unit: per_frame\n",
                    "c.yaml:2: unknown key 'preprocessing.velocity_unit'; known keys here: joints, fps, window, stride, min_pose_share, "
                    + "min_confidence, min_joint_share, normalization, features, outside_frame, centre, torso, keypoint_filter")
        assertError("- data\n", "c.yaml:1: the config must be a mapping of keys (data, preprocessing, model, optimizer, training, augmentation), not a list")
        XCTAssertThrowsError(try TrainingConfig.parse("model: [1, 2\n", file: "c.yaml")) {
            XCTAssertTrue("\($0)".hasPrefix("c.yaml: not valid YAML"), "\($0)")
        }
        XCTAssertThrowsError(try TrainingConfig.load(path: "/nonexistent/x.yaml")) {
            XCTAssertEqual("\($0)", "/nonexistent/x.yaml: no such file")
        }
    }

    /// Every bounded key refuses a value out of its bound in a line that names it: the bound
    /// is declared with the key (`ConfigKey`'s `Bound`), and `problems` only gathers them.
    func testEveryBoundedKeyNamesItself() throws {
        let cases: [(String, String)] = [
            ("data:\n  train_split: ''\n", "data.train_split must not be empty"),
            ("data:\n  validation_share: 1\n", "data.validation_share must be in [0, 1)"),
            ("data:\n  folds: 1001\n", "data.folds must be 0 (no cross-validation) or 2…1000"),
            ("data:\n  clips_per_label: -1\n", "data.clips_per_label must be 0 (all) or more"),
            ("data:\n  draw: -1\n", "data.draw must be 0 or more"),
            ("optimizer:\n  learning_rate: 0\n  min_learning_rate: 0\n", "optimizer.learning_rate must be positive"),
            ("optimizer:\n  warmup_epochs: -1\n", "optimizer.warmup_epochs must not be negative"),
            ("optimizer:\n  weight_decay: -0.1\n", "optimizer.weight_decay must not be negative"),
            ("optimizer:\n  gradient_clip: -1\n", "optimizer.gradient_clip must not be negative (0 turns it off)"),
            ("optimizer:\n  batch_size: 9000\n", "optimizer.batch_size must be in 2…8192 (batch norm needs 2; got 9000)"),
            ("training:\n  epochs: 0\n", "training.epochs must be in 1…100000 (got 0)"),
            ("training:\n  patience: -1\n", "training.patience must not be negative (0 turns early stopping off)"),
            ("training:\n  label_smoothing: 1\n", "training.label_smoothing must be in [0, 1)"),
            ("training:\n  ema_epochs: 1001\n", "training.ema_epochs must be in 0…1000 (0 turns it off)"),
            ("training:\n  threads: -1\n", "training.threads must not be negative (0: all cores)"),
            ("augmentation:\n  rotation_degrees: -1\n", "augmentation.rotation_degrees must not be negative"),
            ("augmentation:\n  scale: [0, 1]\n", "augmentation.scale must be positive"),
            ("augmentation:\n  time_stretch: 0\n", "augmentation.time_stretch must be positive"),
            ("augmentation:\n  drop_frames: 1\n", "augmentation.drop_frames must be in [0, 1)"),
            ("augmentation:\n  occlude: 1.5\n", "augmentation.occlude must be in [0, 1]"),
            ("augmentation:\n  turn_degrees: 91\n", "augmentation.turn_degrees must be in 0…90"),
            ("augmentation:\n  mixup: 101\n", "augmentation.mixup must be in 0…100 (0 turns it off)"),
        ]
        for (yaml, problem) in cases {
            XCTAssertEqual(try TrainingConfig.parse(yaml, file: "c.yaml").problems, [problem], yaml)
        }
        XCTAssertEqual(TrainingConfig().problems, [])
    }

    func testValueProblems() throws {
        var c = try TrainingConfig.parse("preprocessing:\n  window: 0\noptimizer:\n  batch_size: 1\nmodel:\n  dropout: 1.5\n")
        XCTAssertEqual(c.problems, ["preprocessing: window must be in 1…10000 frames (got 0)", "model.dropout must be in [0, 1)",
                                    "optimizer.batch_size must be in 2…8192 (batch norm needs 2; got 1)"])
        c = try TrainingConfig.parse("preprocessing:\n  min_joint_share: 1.5\n")
        XCTAssertEqual(c.problems, ["preprocessing: min_joint_share must be in 0…1 (got 1.5)"])
        // A type is one of the enum's names, refused when the file is read.
        assertError("model:\n  type: lstm\n", "c.yaml:2: model.type must be one of tcn, stgcn, stgcn++, not 'lstm'")
    }
}
