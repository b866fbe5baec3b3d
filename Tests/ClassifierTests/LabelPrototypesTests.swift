import Foundation
import KeypointWindows
import Tensor
import TestData
import TrainingFixtures
import XCTest
@testable import Classifier

/// `LabelPrototypes`: labels as directions on the net's embedding, run as a linear head
/// (what `enroll` writes and `model.prototype_head` starts from).
final class LabelPrototypesTests: XCTestCase {
    func temp(_ name: String) -> String { temporaryPath(name, prefix: "poseact-prototypes") }

    func randomEmbeddings(_ n: Int, width: Int, rng: inout SplitMix64) -> [[Float]] {
        (0..<n).map { _ in (0..<width).map { _ in Float(rng.uniform() * 2 - 1) } }
    }

    func cosine(_ a: [Float], _ b: [Float]) -> Float {
        let dot = zip(a, b).reduce(Float(0)) { $0 + $1.0 * $1.1 }
        return dot / (a.reduce(Float(0)) { $0 + $1 * $1 }.squareRoot() * b.reduce(Float(0)) { $0 + $1 * $1 }.squareRoot())
    }

    /// The head's argmax is the nearest direction from the centre, window by window, and a
    /// window at the median distance gets τ times its cosines as logits.
    func testTheHeadIsTheNearestDirection() {
        var rng = SplitMix64(seed: 52)
        let width = 12, labels = ["a", "b", "c", "d"]
        let training = randomEmbeddings(40, width: width, rng: &rng)
        let prototypes = LabelPrototypes(embeddings: training, labels: (0..<40).map { labels[$0 % 4] })
        XCTAssertEqual(prototypes.labels, labels)
        XCTAssertEqual(prototypes.windows, [10, 10, 10, 10])
        let (weight, bias) = prototypes.head()
        XCTAssertEqual(weight.count, 4 * width)
        for e in randomEmbeddings(300, width: width, rng: &rng) {
            let d = zip(e, prototypes.centre).map { $0 - $1 }
            let cosines = prototypes.sums.map { cosine(d, $0) }
            let logits = (0..<4).map { k in (0..<width).reduce(bias[k]) { $0 + weight[k * width + $1] * e[$1] } }
            XCTAssertEqual(logits.indices.max { logits[$0] < logits[$1] }, cosines.indices.max { cosines[$0] < cosines[$1] })
            // Logits are τ·|e − c|/s times the cosines; float32 sums of 12 terms: 1e-4 relative.
            let norm = d.reduce(Float(0)) { $0 + $1 * $1 }.squareRoot()
            for k in 0..<4 {
                XCTAssertEqual(logits[k], LabelPrototypes.temperature * norm / prototypes.scale * cosines[k], accuracy: 1e-4 * max(1, abs(logits[k])))
            }
        }
    }

    /// More windows of a label add to its sum; a new label is appended; `keeping` orders.
    func testWindowsAddToTheirLabel() {
        var rng = SplitMix64(seed: 7)
        var prototypes = LabelPrototypes(embeddings: randomEmbeddings(6, width: 5, rng: &rng), labels: ["x", "y", "x", "y", "x", "y"])
        let centre = prototypes.centre, before = prototypes.sums[0]
        prototypes.add(embeddings: randomEmbeddings(3, width: 5, rng: &rng), labels: ["z", "x", "z"])
        XCTAssertEqual(prototypes.centre, centre, "the centre stays where the first windows put it")
        XCTAssertEqual(prototypes.labels, ["x", "y", "z"])
        XCTAssertEqual(prototypes.windows, [4, 3, 2])
        XCTAssertNotEqual(prototypes.sums[0], before)
        let kept = prototypes.keeping(["z", "x"])
        XCTAssertEqual(kept.labels, ["z", "x"])
        XCTAssertEqual(kept.sums, [prototypes.sums[2], prototypes.sums[0]])
    }

    /// A trained net's prototypes go into its weights file and come back; a file whose
    /// prototypes do not fit its net or labels is refused in one line.
    func testPrototypesInTheWeightsFile() throws {
        let store = temp("slice.h5")
        try PennSlice.store(at: store)
        let config = PennSlice.config(epochs: 1)
        let data = try TrainingData.load(path: store, config: config)
        let trainer = Trainer(config: config, data: data)
        trainer.runEpoch()
        let classifier = trainer.classifier
        let (embeddings, labels) = classifier.embeddings(data.train)
        XCTAssertEqual(embeddings.count, data.train.count * (classifier.architecture.flipAverage ? 2 : 1))
        XCTAssertEqual(embeddings[0].count, classifier.model.head.inFeatures)
        classifier.prototypes = LabelPrototypes(embeddings: embeddings, labels: labels)
        let file = temp("with-prototypes.poseact.h5")
        try classifier.save(to: file)
        XCTAssertEqual(try ActionClassifier.load(path: file).prototypes, classifier.prototypes)

        // Enrolled with its own labels' prototypes, the model is the nearest-direction rule.
        let enrolled = classifier.enrolled(classifier.prototypes!, record: EnrolmentRecord(data: store, clips: [:], windows: [:]))
        XCTAssertEqual(enrolled.labels, classifier.prototypes!.labels)
        XCTAssertEqual(enrolled.training.enrolled?.count, 1)
        let shared = classifier.model.state.filter { !Backbone.isHead($0.name) }.map(\.buffer.array)
        XCTAssertEqual(enrolled.model.state.filter { !Backbone.isHead($0.name) }.map(\.buffer.array), shared, "the net is not changed")

        // A model without prototypes (from before poseact 0.44) enrolls only beside clips of
        // all its labels, or alone with --only.
        let saved = classifier.prototypes
        classifier.prototypes = nil
        let someLabel = Array(data.train.filter { $0.label == data.labels[0] })
        XCTAssertThrowsError(try classifier.prototypes(enrolling: someLabel, labels: [data.labels[0]], only: false, path: "m")) { error in
            XCTAssertTrue("\(error)".contains("has no prototypes of its labels"), "\(error)")
        }
        XCTAssertEqual(try classifier.prototypes(enrolling: someLabel, labels: [data.labels[0]], only: true, path: "m").labels, [data.labels[0]])
        XCTAssertEqual(try classifier.prototypes(enrolling: data.train, labels: data.labels, only: false, path: "m").labels, classifier.labels)
        // With them, the model's labels keep theirs and a new one is appended.
        classifier.prototypes = saved
        let renamed = someLabel.map { w -> Window in var w = w; w.label = "new"; return w }
        let grown = try classifier.prototypes(enrolling: renamed, labels: ["new"], only: false, path: "m")
        XCTAssertEqual(grown.labels, classifier.labels + ["new"])
        XCTAssertEqual(Array(grown.sums.prefix(classifier.labels.count)), saved!.keeping(classifier.labels).sums)

        // Prototypes of other labels than the model's, or of another width: damaged.
        let other = LabelPrototypes(embeddings: embeddings, labels: labels.map { $0 + "-other" })
        classifier.prototypes = other
        try classifier.save(to: file)
        XCTAssertThrowsError(try ActionClassifier.load(path: file)) { error in
            XCTAssertTrue("\(error)".contains("prototypes/ of the labels"), "\(error)")
        }
        classifier.prototypes = LabelPrototypes(embeddings: embeddings.map { Array($0.prefix(3)) }, labels: labels)
        try classifier.save(to: file)
        XCTAssertThrowsError(try ActionClassifier.load(path: file)) { error in
            XCTAssertTrue("\(error)".contains("centre has shape [3]"), "\(error)")
        }
    }
}
