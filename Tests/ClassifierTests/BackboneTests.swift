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
}
