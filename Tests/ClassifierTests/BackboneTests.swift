import Basics
import Foundation
import Keypoints
import KeypointWindows
import TestData
import TrainingFixtures
import XCTest
@testable import Classifier

/// `model.pretrained`: a run starts from another run's net less its head, only when the two
/// nets and their inputs are the same kind; `training.freeze_epochs` holds the backbone while
/// the head learns.
final class BackboneTests: XCTestCase {
    func temp(_ name: String) -> String { temporaryPath(name, prefix: "poseact-backbone") }

    func tensors(_ net: any ClassifierNet, head: Bool) -> [String: [Float]] {
        Dictionary(uniqueKeysWithValues: net.state.filter { Backbone.isHead($0.name) == head }.map { ($0.name, $0.buffer.array) })
    }

    func testARunStartsFromTheBackboneLessItsHead() throws {
        let store = temp("slice.h5")
        try PennSlice.store(at: store)
        let config = PennSlice.config(epochs: 2)
        let data = try TrainingData.load(path: store, config: config)
        let source = Trainer(config: config, data: data)
        for _ in 0..<2 { source.runEpoch() }
        let file = temp("backbone.poseact.h5")
        try source.classifier.save(to: file)

        var tuned = config
        tuned.model.pretrained = file
        tuned.training.seed = 7
        tuned.training.freezeEpochs = 1
        let backbone = try Backbone(path: file, spec: data.spec, architecture: Architecture(config: tuned, classes: data.labels.count))
        let run = Trainer(config: tuned, data: data, backbone: backbone)
        let saved = try ActionClassifier.load(path: file)
        XCTAssertEqual(tensors(run.model, head: false), tensors(saved.model, head: false), "the backbone, as saved")
        XCTAssertNotEqual(tensors(run.model, head: true), tensors(saved.model, head: true), "a head of its own")
        // The frozen epoch moves the head alone (batch-norm statistics still follow the data).
        let head = tensors(run.model, head: true)
        run.runEpoch()
        let parameters = Set(run.model.parameters.map(\.name))
        for (name, value) in tensors(run.model, head: false) where parameters.contains(name) {
            XCTAssertEqual(value, tensors(saved.model, head: false)[name], "\(name) held in the frozen epoch")
        }
        XCTAssertNotEqual(tensors(run.model, head: true), head, "the head learns")
        run.runEpoch()
        XCTAssertNotEqual(tensors(run.model, head: false)["block0.conv.weight"], tensors(saved.model, head: false)["block0.conv.weight"],
                          "then everything learns")

        // Another input or another net is refused in one line naming the key.
        var window = tuned
        window.preprocessing.features = [.position]
        let other = try TrainingData.load(path: store, config: window)
        XCTAssertThrowsError(try Backbone(path: file, spec: other.spec, architecture: Architecture(config: window, classes: other.labels.count))) {
            XCTAssertTrue("\($0)".contains("its preprocessing.features differs"), "\($0)")
        }
        var wide = tuned
        wide.model.channels = 32
        XCTAssertThrowsError(try Backbone(path: file, spec: data.spec, architecture: Architecture(config: wide, classes: data.labels.count))) {
            XCTAssertTrue("\($0)".contains("is not this run's"), "\($0)")
        }
    }

    /// `model.pretrained: auto`: a run whose smallest label has fewer than 10 training clips
    /// starts from the shipped backbone that fits it; otherwise, or with none that fits,
    /// random weights; the run folder's config says which.
    func testAutoStartsSmallRunsFromABackboneThatFits() throws {
        let store = temp("slice-auto.h5")
        try PennSlice.store(at: store)
        var config = PennSlice.config(epochs: 1)
        XCTAssertEqual(config.model.pretrained, "auto", "the default")
        config.data.clipsPerLabel = 5
        let data = try TrainingData.load(path: store, config: config)
        let source = Trainer(config: config, data: data)
        source.runEpoch()
        let file = temp("shipped.poseact.h5")
        try source.classifier.save(to: file)
        var wide = config
        wide.model.channels = 32
        let clips = Dictionary(grouping: data.train + data.validation, by: \.label).mapValues { Set($0.map(\.clipID)).count }
        XCTAssertLessThan(clips.values.min()!, Backbone.autoBelowClips)
        XCTAssertEqual(Backbone.auto(shipped: [file], config: config, spec: data.spec, labelClips: clips).path, file)
        let (none, why) = Backbone.auto(shipped: [file], config: wide, spec: data.spec, labelClips: clips)
        XCTAssertNil(none)
        XCTAssertTrue(why.contains("no shipped backbone has this net and input (shipped.poseact.h5)"), why)
        let (large, because) = Backbone.auto(shipped: [file], config: config, spec: data.spec, labelClips: clips.mapValues { _ in 10 })
        XCTAssertNil(large)
        XCTAssertTrue(because.contains("10 training clips, 10 or more"), because)

        let folder = temp("auto-run")
        var chosen: [String?] = []
        try TrainingRun(folder: folder, shippedBackbones: [file]).train(config: config, dataPath: store, restart: true) { event in
            if case .pretrained(let path, _) = event { chosen.append(path) }
        }
        XCTAssertEqual(chosen, [file])
        XCTAssertTrue(try String(contentsOfFile: folder + "/config.yaml", encoding: .utf8).contains("pretrained: \(file)"))
    }

    /// The backbones poseact ships: the very files backbones/SHA256SUMS names, each at most
    /// 5 MB, each a backbone of its shipped config.
    func testTheShippedBackbones() throws {
        let root = TestData.packageRoot.appendingPathComponent("backbones").path
        let sums = try String(contentsOfFile: root + "/SHA256SUMS", encoding: .utf8).split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        XCTAssertEqual(Set(sums.map { String($0[1]) }), ["penn-action.poseact.h5"])
        XCTAssertEqual(Backbone.shipped(in: [root]).map { URL(fileURLWithPath: $0).lastPathComponent }, ["penn-action.poseact.h5"])
        for line in sums {
            let name = String(line[1]), path = root + "/" + name
            XCTAssertEqual(try SHA256.hex(file: path), String(line[0]), name)
            let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            XCTAssertLessThanOrEqual(size, 5_000_000, name)
            let config = try TrainingConfig.load(path: TestData.packageRoot.appendingPathComponent("configs/" + name.replacingOccurrences(of: ".poseact.h5", with: ".yaml")).path)
            XCTAssertNoThrow(try Backbone(path: path, spec: config.preprocessing, architecture: Architecture(config: config, classes: 2)), name)
        }
    }
}
