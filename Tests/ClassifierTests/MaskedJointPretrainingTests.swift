import Foundation
import KeypointWindows
import Tensor
import TestData
import TrainingFixtures
import XCTest
@testable import Classifier

/// `pretrain`'s masked joints: the loss's gradient, what is hidden, and a net that learns
/// and that a run can start from.
final class MaskedJointPretrainingTests: XCTestCase {
    func temp(_ name: String) -> String { temporaryPath(name, prefix: "poseact-pretrain") }

    func pretraining(epochs: Int = 1) throws -> (MaskedJointPretraining, TrainingData, TrainingConfig) {
        let store = temp("slice.h5")
        if !FileManager.default.fileExists(atPath: store) { try PennSlice.store(at: store) }
        let config = PennSlice.config(epochs: epochs)
        let data = try TrainingData.load(path: store, config: config)
        return (MaskedJointPretraining(config: config, windows: data.train, spec: data.spec, classes: data.labels.count, maskRatio: 0.5), data, config)
    }

    /// Hidden entries are whole joints of real frames, about the ratio asked; the loss's
    /// gradient with respect to the decoder's output matches central differences.
    func testHidingAndTheLossGradient() throws {
        let (run, data, _) = try pretraining()
        let t = data.spec.window, c = data.spec.channels, f = data.spec.featuresPerJoint, n = 4
        for i in 0..<n {
            (run.x.pointer + i * t * c).update(from: data.train[i].values, count: t * c)
            (run.mask.pointer + i * t).update(from: data.train[i].mask, count: t)
        }
        run.target.pointer.update(from: run.x.pointer, count: n * t * c)
        var rng = SplitMix64(seed: 3)
        run.hide(batch: n, rng: &rng)
        var hiddenJoints = 0, realJoints = 0
        for row in 0..<(n * t) {
            for joint in 0..<(c / f) {
                let at = row * c + joint * f
                let flags = (0..<f).map { run.hidden.pointer[at + $0] }
                XCTAssertTrue(Set(flags).count == 1, "a joint is hidden whole")
                if run.mask.pointer[row] == 0 { XCTAssertEqual(flags[0], 0, "a missing frame hides nothing") }
                else { realJoints += 1 }
                if flags[0] == 1 {
                    hiddenJoints += 1
                    XCTAssertEqual((0..<f).map { run.x.pointer[at + $0] }, [Float](repeating: 0, count: f))
                }
            }
        }
        // 0.5 of ~1,000 real joints: 5 standard deviations is ±0.08.
        XCTAssertEqual(Double(hiddenJoints) / Double(realJoints), 0.5, accuracy: 0.08)

        let frames = run.net.forwardFrames(run.x.pointer, batch: n, training: false)
        run.decoder.forward(frames, batch: n * t, training: false)
        _ = run.lossAndGradient(rows: n * t)
        let analytic = Array(UnsafeBufferPointer(start: run.dPrediction.pointer, count: n * t * c))
        var report = GradientReport()
        let output = run.decoder.output.pointer
        var picker = SplitMix64(seed: 9)
        for _ in 0..<200 {
            let i = picker.below(n * t * c)
            let numeric = GradCheck.numeric(output, i) { run.lossAndGradient(rows: n * t) }
            report.compare(Double(analytic[i]), numeric, floor: GradCheck.floor, label: "prediction[\(i)]")
        }
        XCTAssertLessThan(report.maxError, GradCheck.tolerance, "\(report)")
        XCTAssertGreaterThan(report.maxErrorIfWrong, GradCheck.tolerance, "a 10 % wrong gradient must fail: \(report)")
    }

    /// Three epochs lower the loss, and a run starts from the file as from any backbone.
    func testThePretrainedNetIsABackbone() throws {
        let (run, data, config) = try pretraining(epochs: 3)
        let losses = (0..<3).map { _ in run.runEpoch() }
        XCTAssertLessThan(losses[2], losses[0], "\(losses)")
        let file = temp("pretrained.poseact.h5")
        try run.classifier(labels: data.labels, record: TrainingRecord(config: config)).save(to: file)
        var tuned = config
        tuned.model.pretrained = file
        let backbone = try Backbone(path: file, spec: data.spec, architecture: Architecture(config: tuned, classes: data.labels.count))
        let trainer = Trainer(config: tuned, data: data, backbone: backbone)
        let from = run.net.state.filter { !Backbone.isHead($0.name) }.map(\.buffer.array)
        XCTAssertEqual(trainer.model.state.filter { !Backbone.isHead($0.name) }.map(\.buffer.array), from)
    }
}
