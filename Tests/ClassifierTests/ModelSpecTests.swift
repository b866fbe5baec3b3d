import Basics
import Foundation
import Keypoints
import TestData
import XCTest
@testable import Classifier

/// The one model description (`ModelSpec`): its defaults, each key's bound and the line it
/// gives, the weights file's architecture written from it as before, and configs that
/// inherit (`base:`).
final class ModelSpecTests: XCTestCase {
    func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-spec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return dir
    }

    /// The defaults are those a config without the key trained with before the spec (the
    /// config's, not the nets' own: TCN.Config had 64 channels and dilations [1, 2, 4],
    /// STGCN.Config input_norm true and dropout 0, which `poseact train` never used).
    func testDefaultsAreWhatTrainingUsed() {
        let m = ModelSpec()
        XCTAssertEqual(m.type, .tcn)
        XCTAssertEqual(m.channels, 128)
        XCTAssertEqual(m.dilations, [1, 2, 4, 8])
        XCTAssertEqual(m.kernel, 5)
        XCTAssertEqual(m.dropout, 0.1)
        XCTAssertEqual(m.pooling, .mean)
        XCTAssertTrue(m.flipAverage)
        XCTAssertFalse(m.inputNorm)
        XCTAssertEqual(m.blocks, [64, 64, 128, 128])
        XCTAssertEqual(m.streams, [])
        XCTAssertEqual(m.streamWeights, [])
        XCTAssertEqual(TrainingConfig().model, m)
        XCTAssertEqual(m.problems(prefix: "model."), [])
        XCTAssertEqual(ModelType.names, ["tcn", "stgcn", "stgcn++"])
    }

    /// Each bound refuses the first value outside it with the line derived from the key's
    /// name and range, and takes the values at its ends.
    func testEachBoundsLine() {
        func problems(_ change: (inout ModelSpec) -> Void) -> [String] {
            var m = ModelSpec()
            change(&m)
            return m.problems(prefix: "model.")
        }
        XCTAssertEqual(problems { $0.channels = 0 }, ["model.channels must be in 1…4096 (got 0)"])
        XCTAssertEqual(problems { $0.channels = 4097 }, ["model.channels must be in 1…4096 (got 4097)"])
        XCTAssertEqual(problems { $0.kernel = 256 }, ["model.kernel must be in 1…255 (got 256)"])
        XCTAssertEqual(problems { $0.dilations = [] }, ["model.dilations must list 1 to 64 values, each in 1…1024 (got [])"])
        XCTAssertEqual(problems { $0.dilations = [1, 1025] }, ["model.dilations must list 1 to 64 values, each in 1…1024 (got [1, 1025])"])
        XCTAssertEqual(problems { $0.dropout = 1 }, ["model.dropout must be in [0, 1)"])
        XCTAssertEqual(problems { $0.dropout = -0.1 }, ["model.dropout must be in [0, 1)"])
        XCTAssertEqual(problems { $0.blocks = [0] }, ["model.blocks must list 1 to 64 values, each in 1…4096 (got [0])"])
        XCTAssertEqual(problems { $0.blocks = Array(repeating: 8, count: 65) }.first?.hasPrefix("model.blocks must list 1 to 64 values"), true)
        XCTAssertEqual(problems { $0.streams = [.joint]; $0.streamWeights = [0] }, ["model.stream_weights must be positive"])
        XCTAssertEqual(problems { $0.streams = [.joint, .joint] }, ["model.streams lists a stream twice"])
        XCTAssertEqual(problems { $0.type = .stgcnPlusPlus; $0.blocks = [4] },
                       ["model.blocks: stgcn++ needs at least 5 channels a block (its temporal convolution has 5 branches)"])
        XCTAssertEqual(problems { $0.channels = 4096; $0.kernel = 1; $0.dropout = 0; $0.dilations = Array(repeating: 1024, count: 64) }, [])
        XCTAssertEqual(problems { $0.channels = 1; $0.kernel = 255; $0.blocks = Array(repeating: 4096, count: 64) }, [])
    }

    /// A weights file's architecture is checked for the keys its net reads: a TCN's has no
    /// blocks, and that is no problem; a bad value is named under architecture.
    func testArchitectureChecksItsNetsKeys() {
        var config = TrainingConfig()
        config.model.channels = 8; config.model.dilations = [1]
        var a = Architecture(config: config, classes: 2)
        XCTAssertEqual(a.blocks, [])
        XCTAssertEqual(a.problems(joints: config.preprocessing.joints.count), [])
        a.kernel = 0
        XCTAssertEqual(a.problems(joints: config.preprocessing.joints.count), ["architecture.kernel must be in 1…255 (got 0)"])
        a.kernel = 5; a.type = .stgcn
        XCTAssertEqual(a.problems(joints: config.preprocessing.joints.count),
                       ["architecture.blocks must list 1 to 64 values, each in 1…4096 (got [])"])
    }

    /// The architecture is written with the very keys and values it had before the spec, and
    /// one written before flip_average, input_norm, pooling and blocks existed reads with the
    /// values those files were trained with.
    func testArchitectureJSONIsTheWeightsFiles() throws {
        let config = TrainingConfig()
        let a = Architecture(config: config, classes: 2)
        let c = config.preprocessing.channels
        XCTAssertEqual(JSONLines.encode(a), #"{"blocks":[],"channels":128,"classes":2,"dilations":[1,2,4,8],"dropout":0.1,"#
                       + #""flip_average":true,"frames":32,"input_channels":\#(c),"input_norm":false,"kernel":5,"pooling":"mean","type":"tcn"}"#)
        let old = try JSONLines.decode(Architecture.self, from: #"{"channels":128,"classes":2,"dilations":[1,2,4,8],"dropout":0.1,"#
                                       + #""frames":32,"input_channels":\#(c),"kernel":5,"type":"tcn"}"#)
        XCTAssertFalse(old.flipAverage)
        XCTAssertFalse(old.inputNorm)
        XCTAssertEqual(old.pooling, .mean)
        XCTAssertEqual(old.blocks, [])
        XCTAssertThrowsError(try JSONLines.decode(Architecture.self, from: #"{"channels":128,"classes":2,"dilations":[1],"dropout":0.1,"frames":32,"kernel":5,"type":"tcn"}"#))
        XCTAssertThrowsError(try JSONLines.decode(Architecture.self, from: #"{"channels":8,"classes":2,"dilations":[1],"dropout":0.1,"frames":32,"input_channels":\#(c),"kernel":5,"type":"lstm"}"#))
    }

    /// A weights file whose architecture was written before flip_average and input_norm
    /// existed loads, predicting without the mirror image as it was trained.
    func testAnOldArchitectureWeightsFileLoads() throws {
        var config = TrainingConfig()
        config.model.channels = 8; config.model.dilations = [1, 2]
        let arch = Architecture(config: config, classes: 2)
        let path = try folder().appendingPathComponent("old.poseact.h5").path
        try ActionClassifier(labels: ["a", "b"], spec: config.preprocessing, architecture: arch).save(to: path)
        let file = try HDF5File.open(path, writable: true)
        let root = try file.root()
        try root.setAttribute("architecture", #"{"channels":8,"classes":2,"dilations":[1,2],"dropout":0.1,"frames":32,"#
                              + #""input_channels":\#(config.preprocessing.channels),"kernel":5,"type":"tcn"}"#)
        root.close(); try file.close()
        let back = try ActionClassifier.load(path: path)
        XCTAssertFalse(back.architecture.flipAverage)
        XCTAssertEqual(back.architecture.channels, 8)
        XCTAssertEqual(back.parameterCount, ActionClassifier(labels: ["a", "b"], spec: config.preprocessing, architecture: arch).parameterCount)
    }

    // MARK: base

    func write(_ text: String, _ name: String, in dir: URL) throws -> String {
        let url = dir.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// The child's keys replace the base's one by one within a section; a list is replaced
    /// whole; the base's path is relative to the child's folder; chains resolve in order.
    func testBaseMergesAndChains() throws {
        let dir = try folder()
        _ = try write("model:\n  kernel: 7\n  dilations: [1, 1, 2, 2]\ntraining:\n  epochs: 10\n", "bases/grand.yaml", in: dir)
        _ = try write("base: grand.yaml\nmodel:\n  kernel: 3\noptimizer:\n  batch_size: 16\n", "bases/parent.yaml", in: dir)
        let child = try write("base: bases/parent.yaml\nmodel:\n  dilations: [4]\n", "child.yaml", in: dir)
        let c = try TrainingConfig.load(path: child)
        var expected = TrainingConfig()
        expected.model.kernel = 3
        expected.model.dilations = [4]
        expected.training.epochs = 10
        expected.optimizer.batchSize = 16
        XCTAssertEqual(c, expected)
    }

    /// A chain that comes back to a file, a base that is not there, a base that is not a
    /// path, a base in text without a file: one line each, naming the file and line.
    func testBaseErrorsAreOneLine() throws {
        let dir = try folder()
        let a = try write("base: b.yaml\n", "a.yaml", in: dir)
        let b = try write("training:\n  epochs: 3\nbase: a.yaml\n", "b.yaml", in: dir)
        XCTAssertThrowsError(try TrainingConfig.load(path: a)) {
            XCTAssertEqual("\($0)", "\(b):3: base: 'a.yaml' makes a cycle (\(a) → \(b) → \(dir.path)/a.yaml); remove one base")
        }
        let loop = try write("base: loop.yaml\n", "loop.yaml", in: dir)
        XCTAssertThrowsError(try TrainingConfig.load(path: loop)) { XCTAssertTrue("\($0)".contains("makes a cycle"), "\($0)") }
        let missing = try write("model:\n  kernel: 3\nbase: nowhere.yaml\n", "missing.yaml", in: dir)
        XCTAssertThrowsError(try TrainingConfig.load(path: missing)) {
            XCTAssertEqual("\($0)", "\(missing):3: base: cannot read '\(dir.path)/nowhere.yaml' (the path is relative to this file's folder)")
        }
        let device = try write("base: /dev/zero\n", "device.yaml", in: dir)
        XCTAssertThrowsError(try TrainingConfig.load(path: device)) {
            XCTAssertEqual("\($0)", "\(device):1: base: cannot read '/dev/zero' (the path is relative to this file's folder)")
        }
        let list = try write("base: [a.yaml]\n", "list.yaml", in: dir)
        XCTAssertThrowsError(try TrainingConfig.load(path: list)) {
            XCTAssertEqual("\($0)", "\(list):1: base must be the path of a config file, not a list")
        }
        // A wrong value in the base is named in the base.
        let bad = try write("model:\n  kernel: seven\n", "bad.yaml", in: dir)
        let onBad = try write("base: bad.yaml\n", "on-bad.yaml", in: dir)
        XCTAssertThrowsError(try TrainingConfig.load(path: onBad)) {
            XCTAssertEqual("\($0)", "\(bad):2: model.kernel must be a whole number, not 'seven'")
        }
        XCTAssertThrowsError(try TrainingConfig.parse("base: a.yaml\n", file: "c.yaml")) {
            XCTAssertEqual("\($0)", "c.yaml:1: base: only a config file read from its path can have a base")
        }
    }

    /// The shipped configs, once they gave every key and now only how they differ from their
    /// base, resolve to the values they had: each file's values before the change (as JSON,
    /// which is YAML, read by the same strict parser). Changed on purpose since: the push-up
    /// configs' `keypoint_filter: one_euro` (issue 37).
    static let shippedBefore: [String: String] = [
        "penn-action.yaml": #"{"augmentation":{"drop_frames":0,"flip":true,"jitter":0,"mixup":0,"occlude":0,"rotation_degrees":0,"scale":[1,1],"time_stretch":[1,1],"translation":0,"turn_degrees":0},"data":{"fold":1,"folds":0,"store":null,"test_split":"test","train_split":"train","validation_group":"source","validation_share":0.1},"model":{"blocks":[64,64,128,128],"channels":128,"dilations":[1,2,4,8],"dropout":0.1,"flip_average":true,"input_norm":false,"kernel":5,"pooling":"mean","stream_weights":[],"streams":[],"type":"tcn"},"optimizer":{"batch_size":32,"gradient_clip":5,"learning_rate":0.001,"min_learning_rate":1e-05,"name":"adamw","warmup_epochs":1,"weight_decay":0.01},"preprocessing":{"centre":"window","features":["position","confidence","velocity"],"fps":30,"joints":"vision","min_confidence":0.2,"min_joint_share":0.25,"min_pose_share":0.6,"normalization":"root_torso","outside_frame":"keep","stride":8,"torso":"mean","window":32},"training":{"class_weighting":"none","ema_epochs":5,"epochs":40,"keep":"last","label_smoothing":0,"patience":0,"seed":1,"threads":0,"window_weighting":"window"}}"#,
        "pushups.yaml": #"{"augmentation":{"drop_frames":0,"flip":true,"jitter":0.02,"mixup":0,"occlude":0,"rotation_degrees":10,"scale":[0.9,1.1],"time_stretch":[0.8,1.2],"translation":0,"turn_degrees":45},"data":{"fold":1,"folds":0,"store":null,"test_split":"test","train_split":"train","validation_group":"source","validation_share":0.1},"model":{"blocks":[64,64,128,128],"channels":128,"dilations":[1,1,2,2],"dropout":0.2,"flip_average":true,"input_norm":false,"kernel":7,"pooling":"mean","stream_weights":[],"streams":[],"type":"tcn"},"optimizer":{"batch_size":32,"gradient_clip":5,"learning_rate":0.001,"min_learning_rate":1e-05,"name":"adamw","warmup_epochs":1,"weight_decay":0.01},"preprocessing":{"centre":"window","features":["position","confidence","velocity","bone"],"fps":30,"joints":"vision","min_confidence":0.2,"min_joint_share":0.25,"min_pose_share":0.6,"normalization":"root_torso","outside_frame":"missing","stride":8,"torso":"mean","keypoint_filter":"one_euro","window":32},"training":{"class_weighting":"none","ema_epochs":5,"epochs":40,"keep":"last","label_smoothing":0,"patience":0,"seed":1,"threads":1,"window_weighting":"window"}}"#,
        "pushups-stgcn.yaml": #"{"augmentation":{"drop_frames":0,"flip":true,"jitter":0.02,"mixup":0,"occlude":0,"rotation_degrees":10,"scale":[0.9,1.1],"time_stretch":[0.8,1.2],"translation":0,"turn_degrees":45},"data":{"fold":1,"folds":0,"store":null,"test_split":"test","train_split":"train","validation_group":"source","validation_share":0.1},"model":{"blocks":[32,32,64,64],"channels":128,"dilations":[1,1,2,2],"dropout":0.2,"flip_average":true,"input_norm":true,"kernel":7,"pooling":"mean","stream_weights":[],"streams":[],"type":"stgcn"},"optimizer":{"batch_size":32,"gradient_clip":5,"learning_rate":0.001,"min_learning_rate":1e-05,"name":"adamw","warmup_epochs":1,"weight_decay":0.01},"preprocessing":{"centre":"window","features":["position","confidence","velocity","bone"],"fps":30,"joints":"vision","min_confidence":0.2,"min_joint_share":0.25,"min_pose_share":0.6,"normalization":"root_torso","outside_frame":"missing","stride":8,"torso":"mean","keypoint_filter":"one_euro","window":32},"training":{"class_weighting":"none","ema_epochs":5,"epochs":40,"keep":"last","label_smoothing":0,"patience":0,"seed":1,"threads":1,"window_weighting":"window"}}"#,
        "stgcn.yaml": #"{"augmentation":{"drop_frames":0,"flip":true,"jitter":0,"mixup":0,"occlude":0,"rotation_degrees":0,"scale":[1,1],"time_stretch":[1,1],"translation":0,"turn_degrees":0},"data":{"fold":1,"folds":0,"store":null,"test_split":"test","train_split":"train","validation_group":"source","validation_share":0.1},"model":{"blocks":[32,32,64,64],"channels":128,"dilations":[1,2,4,8],"dropout":0.1,"flip_average":true,"input_norm":true,"kernel":5,"pooling":"mean","stream_weights":[],"streams":[],"type":"stgcn"},"optimizer":{"batch_size":32,"gradient_clip":5,"learning_rate":0.001,"min_learning_rate":1e-05,"name":"adamw","warmup_epochs":1,"weight_decay":0.01},"preprocessing":{"centre":"window","features":["position","confidence","velocity"],"fps":30,"joints":"vision","min_confidence":0.2,"min_joint_share":0.25,"min_pose_share":0.6,"normalization":"root_torso","outside_frame":"keep","stride":8,"torso":"mean","window":32},"training":{"class_weighting":"none","ema_epochs":5,"epochs":40,"keep":"last","label_smoothing":0,"patience":0,"seed":1,"threads":0,"window_weighting":"window"}}"#,
    ]

    func testShippedConfigsResolveUnchanged() throws {
        let configs = TestData.packageRoot.appendingPathComponent("configs")
        for (name, json) in Self.shippedBefore {
            let now = try TrainingConfig.load(path: configs.appendingPathComponent(name).path)
            XCTAssertEqual(now, try TrainingConfig.parse(json, file: name + " before"), name)
        }
        XCTAssertEqual(Self.shippedBefore.count, 4)
        for name in ["pushups.yaml", "stgcn.yaml", "pushups-stgcn.yaml"] {
            let text = try String(contentsOf: configs.appendingPathComponent(name), encoding: .utf8)
            XCTAssertTrue(text.contains("\nbase: "), "\(name) says only how it differs from its base")
        }
    }
}
