import Evaluation
import Foundation
import Keypoints
import KeypointWindows
import TestData
import TrainingFixtures
import XCTest
@testable import Classifier

final class TrainingTests: XCTestCase {
    func temp(_ name: String) -> String { temporaryPath(name, prefix: "poseact-train") }

    func state(_ t: Trainer) -> [[Float]] { t.model.state.map(\.buffer.array) }

    /// Validation is chosen by clip: no clip has windows on two sides; every label is in it.
    func testSplitByClip() throws {
        let path = temp("slice.h5")
        try PennSlice.store(at: path)
        let data = try TrainingData.load(path: path, config: PennSlice.config())
        let train = Set(data.train.map(\.clipID)), val = Set(data.validation.map(\.clipID)), test = Set(data.test.map(\.clipID))
        XCTAssertTrue(train.isDisjoint(with: val) && train.isDisjoint(with: test) && val.isDisjoint(with: test))
        XCTAssertEqual(data.labels, PennSlice.labels)
        XCTAssertEqual(Set(data.validation.map(\.label)), Set(PennSlice.labels), "each label has validation clips")
        // 20 % of 12 clips per label → 2 (rounded), but a clip may give no window: at most 3.
        XCTAssertTrue((4...9).contains(val.count), "validation clips: \(val.count)")
        XCTAssertTrue((15...18).contains(test.count), "18 test clips, a short one may give no window: \(test.count)")
    }

    /// Cross-validation folds: within each label, runs of 5 neighbours in natural order (clip2
    /// before clip10) dealt out in turn, so every fold has every label and near-duplicate
    /// neighbours stay together; the k folds cover the train split once; a fold run tests on
    /// its fold and never sees the test split.
    func testCrossValidationFolds() throws {
        var labelOf: [String: String] = [:]
        for i in 1...23 { labelOf["train/a/a\(i)"] = "a" }
        for i in 1...12 { labelOf["train/b/b\(i)"] = "b" }
        let folds = TrainingData.foldGroups(labelOf: labelOf, groupOf: [:], folds: 3)
        XCTAssertEqual(folds[0], Set((1...5).map { "train/a/a\($0)" } + (16...20).map { "train/a/a\($0)" }
                                    + (1...5).map { "train/b/b\($0)" }))
        XCTAssertEqual(folds[1], Set((6...10).map { "train/a/a\($0)" } + (21...23).map { "train/a/a\($0)" }
                                    + (6...10).map { "train/b/b\($0)" }))
        XCTAssertEqual(folds.reduce(Set<String>()) { $0.union($1) }, Set(labelOf.keys))
        XCTAssertEqual(folds.map(\.count).reduce(0, +), labelOf.count, "no clip in two folds")
        // Source videos (an annotation file's ranges) move as one.
        let grouped = TrainingData.foldGroups(labelOf: ["v1#0": "a", "v1#1": "a", "v2#0": "a"],
                                              groupOf: ["v1#0": "v1", "v1#1": "v1", "v2#0": "v2"], folds: 2, chunk: 1)
        XCTAssertEqual(grouped, [["v1"], ["v2"]])

        let path = temp("slice.h5")
        try PennSlice.store(at: path)
        var config = PennSlice.config()
        config.data.folds = 3
        var held: [Set<String>] = []
        for fold in 1...3 {
            config.data.fold = fold
            let data = try TrainingData.load(path: path, config: config)
            let train = Set(data.train.map(\.clipID)), test = Set(data.test.map(\.clipID))
            XCTAssertTrue(train.isDisjoint(with: test))
            XCTAssertTrue(Set(data.train.map(\.split) + data.test.map(\.split)) == ["train"], "the test split is not read")
            held.append(test)
        }
        XCTAssertTrue(held[0].isDisjoint(with: held[1]) && held[1].isDisjoint(with: held[2]) && held[0].isDisjoint(with: held[2]))
        config.data.fold = 4
        XCTAssertEqual(config.problems, ["data.fold must be in 1…3"])
    }

    /// Same seed, same threads: the same weights, bit for bit. And a run interrupted after
    /// epoch 2 and resumed from its checkpoint ends where the uninterrupted run ends.
    func testDeterministicAndResumable() throws {
        let path = temp("slice.h5")
        try PennSlice.store(at: path)
        let config = PennSlice.config(epochs: 3)
        let data = try TrainingData.load(path: path, config: config)

        let a = Trainer(config: config, data: data)
        for _ in 0..<3 { a.runEpoch() }
        let b = Trainer(config: config, data: data)
        for _ in 0..<3 { b.runEpoch() }
        XCTAssertEqual(state(a), state(b), "same seed and threads")
        XCTAssertEqual(a.history.map(\.trainLoss), b.history.map(\.trainLoss))

        let c = Trainer(config: config, data: data)
        c.runEpoch(); c.runEpoch()
        let checkpoint = temp("checkpoint.h5")
        try c.saveCheckpoint(to: checkpoint)
        let resumed = try Trainer.resume(from: checkpoint, config: config, data: data)
        XCTAssertEqual(resumed.epochsDone, 2)
        resumed.runEpoch()
        XCTAssertEqual(state(resumed), state(a), "interrupted after epoch 2 and resumed = uninterrupted")
        XCTAssertEqual(resumed.history, a.history.enumerated().map { i, r in
            var r = r; r.seconds = resumed.history[i].seconds; return r
        })

        var other = config
        other.training.seed = 2
        let d = Trainer(config: other, data: data)
        d.runEpoch()
        XCTAssertNotEqual(state(d), Array(state(a)), "another seed, another model")
    }

    /// With mixup and a moving average of the weights: still deterministic, a resumed run
    /// ends where the uninterrupted one does (the average too), and the model that is
    /// validated and saved is the average, not the last step's weights.
    func testMixupAndWeightAverageResumeAndAreTheModel() throws {
        let path = temp("slice.h5")
        try PennSlice.store(at: path)
        var config = PennSlice.config(epochs: 3)
        config.augmentation.mixup = 0.4
        config.training.emaEpochs = 1
        let data = try TrainingData.load(path: path, config: config)

        let a = Trainer(config: config, data: data)
        for _ in 0..<3 { a.runEpoch() }
        let c = Trainer(config: config, data: data)
        c.runEpoch(); c.runEpoch()
        let checkpoint = temp("checkpoint.h5")
        try c.saveCheckpoint(to: checkpoint)
        let resumed = try Trainer.resume(from: checkpoint, config: config, data: data)
        resumed.runEpoch()
        XCTAssertEqual(state(resumed), state(a), "live weights: interrupted and resumed = uninterrupted")
        XCTAssertEqual(resumed.average!.buffers.map(\.array), a.average!.buffers.map(\.array), "the average too")
        XCTAssertEqual(resumed.history.map(\.validationAccuracy), a.history.map(\.validationAccuracy))

        // Mixup changes training (another loss than without it, same seed).
        var plain = config
        plain.augmentation.mixup = 0
        let p = Trainer(config: plain, data: data)
        p.runEpoch()
        XCTAssertNotEqual(p.history[0].trainLoss, a.history[0].trainLoss)

        // The average is not the live state, and it is what the weights file holds.
        XCTAssertNotEqual(a.average!.buffers.map(\.array), state(a))
        let file = temp("m.poseact.h5")
        try a.saveModel(to: file)
        // Loaded for batches of the trainer's size: OpenBLAS's sums depend on the GEMM's
        // shape on some CPUs (its AVX2 kernels: ~3e-8 between batches of 32 and of 64).
        let saved = try ActionClassifier.load(path: file, maxBatch: config.optimizer.batchSize)
        XCTAssertEqual(saved.model.state.map(\.buffer.array), a.average!.buffers.map(\.array))
        XCTAssertEqual(saved.probabilities(data.test), a.withModelWeights { a.classifier.probabilities(data.test) })
    }

    /// The model learns the slice: training loss falls, and the test clips are mostly right
    /// (3 very different exercises; chance is 33 %).
    func testLearnsTheSlice() throws {
        let path = temp("slice.h5")
        try PennSlice.store(at: path)
        var config = PennSlice.config(epochs: 12)
        config.model.channels = 32
        let data = try TrainingData.load(path: path, config: config)
        let t = Trainer(config: config, data: data)
        while !t.finished { t.runEpoch() }
        XCTAssertLessThan(t.history.last!.trainLoss, t.history.first!.trainLoss * 0.5)
        let report = t.classifier.evaluate(data.test, modelPath: "-", dataPath: path, split: "test")
        print("Penn slice (3 labels, 12 epochs): test clip accuracy \(report.clips.accuracy), window \(report.windows.accuracy)")
        XCTAssertGreaterThanOrEqual(report.clips.accuracy, 0.8, "18 test clips of 3 exercises")
    }

    /// A weights file reads back to exactly the same tensors, labels, preprocessing and
    /// architecture, and gives the same probabilities.
    func testWeightsFileRoundTrip() throws {
        let path = temp("slice.h5")
        try PennSlice.store(at: path)
        let config = PennSlice.config(epochs: 1)
        let data = try TrainingData.load(path: path, config: config)
        let t = Trainer(config: config, data: data)
        t.runEpoch()   // batch-norm statistics move away from their initial values
        let file = temp("m.poseact.h5")
        t.classifier.training = t.record()
        try t.classifier.save(to: file)
        XCTAssertFalse(TestData.hasTemporaryFile(file))
        // Same batch size as the trainer's model: OpenBLAS may round differently for other shapes.
        let back = try ActionClassifier.load(path: file, maxBatch: config.optimizer.batchSize)
        XCTAssertEqual(back.labels, t.classifier.labels)
        XCTAssertEqual(back.spec, t.classifier.spec)
        XCTAssertEqual(back.architecture, t.classifier.architecture)
        XCTAssertEqual(back.training, t.classifier.training)
        XCTAssertEqual(back.model.state.map(\.name), t.model.state.map(\.name))
        XCTAssertEqual(back.model.state.map(\.buffer.array), state(t), "float32 stored losslessly")
        XCTAssertEqual(back.probabilities(data.test), t.classifier.probabilities(data.test))
    }

    /// The Penn slice in a store named `name`, and its data under a one-epoch config.
    func oneEpochSlice(_ name: String) throws -> (TrainingConfig, TrainingData) {
        let path = temp(name)
        try PennSlice.store(at: path)
        let config = PennSlice.config(epochs: 1)
        return (config, try TrainingData.load(path: path, config: config))
    }

    /// flip_average: a prediction is the mean of the window's and its mirror image's raw
    /// probabilities, so a window and its mirror get the same prediction (exactly: a + b
    /// and b + a are the same float); without it they differ (a random model is not
    /// symmetric).
    func testFlipAverageMakesMirrorImagesAgree() throws {
        var (config, data) = try oneEpochSlice("flip.h5")
        let windows = Array(data.test.prefix(6))
        let mirrored = windows.map { w -> Window in
            var m = w
            AugmentationSpec.flip(&m, layout: data.spec.joints, features: data.spec.features)
            return m
        }
        config.model.flipAverage = false
        let plain = ActionClassifier(labels: data.labels, spec: data.spec, architecture: Architecture(config: config, classes: 3))
        XCTAssertNotEqual(plain.probabilities(windows), plain.probabilities(mirrored))
        var both = Architecture(config: config, classes: 3)
        both.flipAverage = true
        let averaged = ActionClassifier(labels: data.labels, spec: data.spec, architecture: both)
        XCTAssertEqual(averaged.model.state.map(\.buffer.array), plain.model.state.map(\.buffer.array), "same seed, same weights")
        XCTAssertEqual(averaged.probabilities(windows), averaged.probabilities(mirrored))
        let a = plain.probabilities(windows), b = plain.probabilities(mirrored)
        for (i, p) in averaged.probabilities(windows).enumerated() {
            for c in 0..<3 { XCTAssertEqual(p[c], (a[i][c] + b[i][c]) / 2, accuracy: 1e-6) }
        }
    }

    /// An ensemble: its probabilities are the mean of its members' (flip averaging inside
    /// each); its weights file (format 2, `members`, `weights.1/`) reads back to the same nets,
    /// while a single net's file stays format 1; members that disagree are refused.
    func testEnsembleAveragesItsMembers() throws {
        var (config, data) = try oneEpochSlice("ens.h5")
        let windows = Array(data.test.prefix(5))
        let arch = Architecture(config: config, classes: 3)
        let members = (1...3).map { seed in
            ActionClassifier(labels: data.labels, spec: data.spec, architecture: arch, model: arch.net(joints: data.spec.joints, maxBatch: 64, seed: UInt64(seed)))
        }
        let ensemble = try ActionClassifier(ensemble: members)
        XCTAssertEqual(ensemble.members.count, 3)
        XCTAssertEqual(ensemble.parameterCount, 3 * members[0].model.parameterCount)
        let each = members.map { $0.probabilities(windows) }
        XCTAssertNotEqual(each[0], each[1], "different seeds, different nets")
        for (i, p) in ensemble.probabilities(windows).enumerated() {
            for c in 0..<3 { XCTAssertEqual(p[c], (each[0][i][c] + each[1][i][c] + each[2][i][c]) / 3, accuracy: 1e-6) }
        }

        let file = temp("ens.poseact.h5"), single = temp("one.poseact.h5")
        try ensemble.save(to: file)
        try members[0].save(to: single)
        let back = try ActionClassifier.load(path: file)
        XCTAssertEqual(back.members.count, 3)
        for (a, b) in zip(back.members, ensemble.members) { XCTAssertEqual(a.net.state.map(\.buffer.array), b.net.state.map(\.buffer.array)) }
        XCTAssertEqual(back.probabilities(windows), ensemble.probabilities(windows))
        XCTAssertEqual(try HDF5File.open(file).root().intAttribute("format_version"), 2)
        XCTAssertEqual(try HDF5File.open(single).root().intAttribute("format_version"), 1, "one net: readable by an older poseact")
        XCTAssertEqual(try ActionClassifier.load(path: single).members.count, 1)

        config.model.channels = 8
        let other = ActionClassifier(labels: data.labels, spec: data.spec, architecture: Architecture(config: config, classes: 3))
        var moved = data.spec
        moved.fps = 15
        XCTAssertThrowsError(try ActionClassifier(ensemble: [members[0], ActionClassifier(labels: data.labels, spec: moved, architecture: arch)])) {
            XCTAssertTrue("\($0)".contains("member 2 has other preprocessing"), "\($0)")
        }
        // Another architecture is a multi-stream ensemble: format 3, weighted.
        let mixed = try ActionClassifier(ensemble: [members[0], other], weights: [3, 1])
        let (p0, p1) = (members[0].probabilities(windows), other.probabilities(windows))
        for (i, p) in mixed.probabilities(windows).enumerated() {
            for c in 0..<3 { XCTAssertEqual(p[c], 0.75 * p0[i][c] + 0.25 * p1[i][c], accuracy: 1e-6) }
        }
        let mixedFile = temp("mixed.poseact.h5")
        try mixed.saveCheckingReadBack(to: mixedFile)
        XCTAssertEqual(try HDF5File.open(mixedFile).root().intAttribute("format_version"), 3)
        XCTAssertEqual(try ActionClassifier.load(path: mixedFile).probabilities(windows), mixed.probabilities(windows))
        let relabelled = ActionClassifier(labels: ["a", "b", "c"], spec: data.spec, architecture: arch)
        XCTAssertThrowsError(try ActionClassifier(ensemble: [members[0], relabelled])) {
            XCTAssertTrue("\($0)".contains("member 2 has other labels"), "\($0)")
        }
    }

    func testBadWeightsFiles() throws {
        let text = temp("text.poseact.h5")
        try "hello".write(toFile: text, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ActionClassifier.load(path: text)) { XCTAssertTrue("\($0)".contains("not HDF5"), "\($0)") }
        XCTAssertThrowsError(try ActionClassifier.load(path: temp("missing.h5"))) { XCTAssertTrue("\($0)".contains("no such file")) }
        let store = temp("store.h5")
        try PennSlice.store(at: store)
        XCTAssertThrowsError(try ActionClassifier.load(path: store)) { XCTAssertTrue("\($0)".contains("not a poseact weights file"), "\($0)") }

        // A variance below 0 in a batch norm: every prediction would be one constant.
        let data = try TrainingData.load(path: store, config: PennSlice.config())
        let model = ActionClassifier(labels: data.labels, spec: data.spec, architecture: Architecture(config: PennSlice.config(), classes: data.labels.count))
        let edited = temp("negative-variance.poseact.h5")
        try model.save(to: edited)
        let name = try XCTUnwrap(model.model.state.map(\.name).first { $0.hasSuffix("running_var") })
        do {
            let file = try HDF5File.open(edited, writable: true)
            let group = try file.group("/weights")
            let count = try group.read(name, as: Float.self).values.count
            try group.remove(name)
            try group.write(name, [Float](repeating: -1, count: count), shape: [count]).close()
            group.close()
            try file.close()
        }
        XCTAssertThrowsError(try ActionClassifier.load(path: edited)) {
            XCTAssertEqual("\($0)", "\(edited): weights/\(name) holds the variance -1.0, below 0: a damaged weights file")
        }
    }

    /// Problems of the data are errors before any training.
    func testDataProblems() throws {
        let path = temp("slice.h5")
        try PennSlice.store(at: path, labels: ["squat"])
        XCTAssertThrowsError(try TrainingData.load(path: path, config: PennSlice.config())) {
            XCTAssertTrue("\($0)".contains("one label only ('squat')"), "\($0)")
        }
        let two = temp("two.h5")
        try PennSlice.store(at: two, labels: ["squat", "pullup"])
        var long = PennSlice.config()
        long.preprocessing.window = 2000
        XCTAssertThrowsError(try TrainingData.load(path: two, config: long)) {
            XCTAssertTrue("\($0)".contains("preprocessing.window: 2000 frames"), "\($0)")
        }
        var split = PennSlice.config()
        split.data.trainSplit = "training"
        XCTAssertThrowsError(try TrainingData.load(path: two, config: split)) {
            XCTAssertTrue("\($0)".contains("no clips of split 'training' (splits: test, train)"), "\($0)")
        }
        // Penn Action's keypoints are imported: no world landmarks, so no depth to turn by.
        var turn = PennSlice.config()
        turn.augmentation.turnDegrees = 30
        XCTAssertThrowsError(try TrainingData.load(path: two, config: turn)) {
            XCTAssertTrue("\($0)".contains("has no world landmarks, which augmentation.turn_degrees needs"), "\($0)")
        }
    }
}
