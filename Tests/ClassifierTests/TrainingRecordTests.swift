import Basics
import Classifier
import Evaluation
import Foundation
import Keypoints
import TestData
import XCTest

/// The run's record in a weights file: typed, written with the keys it always had, and read
/// from files older poseacts wrote.
final class TrainingRecordTests: XCTestCase {
    func temp(_ name: String) -> String { temporaryPath(name, prefix: "poseact-record") }

    /// A record as the first weights files had it (issue 5): no kept_epoch, a test report
    /// without misclassified clips, no validation (null).
    static let firstRecord = """
        {"best_epoch":2,"config":\(TrainingConfig().json()),\
        "data":{"path":"data/penn.h5","test":{"clips":2,"windows":5,"windows_per_label":{"a":3,"b":2}},\
        "train":{"clips":4,"windows":9,"windows_per_label":{"a":5,"b":4}},\
        "unseen_test_labels":[],"validation":{"clips":0,"windows":0,"windows_per_label":{}}},\
        "epochs":3,"history":[{"epoch":1,"learning_rate":0.001,"seconds":1.5,"train_accuracy":0.5,"train_loss":0.69}],\
        "parameters":1234,"validation_accuracy":null,"validation_loss":null,\
        "test":{"clip_accuracy":0.5,"clips":2,"confusion":[[1,0],[1,0]],"data":"data/penn.h5","labels":["a","b"],\
        "macro_f1":0.333,"model":"runs/x/model.poseact.h5","per_class":[\
        {"f1":0.667,"label":"a","precision":0.5,"recall":1,"support":1},{"f1":0,"label":"b","precision":0,"recall":0,"support":1}],\
        "split":"test","window_accuracy":0.6,"window_confusion":[[3,0],[2,0]],"window_macro_f1":0.375,\
        "window_per_class":[{"f1":0.75,"label":"a","precision":0.6,"recall":1,"support":3},\
        {"f1":0,"label":"b","precision":0,"recall":0,"support":2}],"windows":5}}
        """

    func testTheFirstRecordsRead() throws {
        let r = TrainingRecord(json: Self.firstRecord)
        XCTAssertEqual(r.epochs, 3)
        XCTAssertEqual(r.bestEpoch, 2)
        XCTAssertNil(r.keptEpoch)
        XCTAssertNil(r.validationAccuracy)
        XCTAssertEqual(r.config, TrainingConfig())
        XCTAssertEqual(r.data?.train.windowsPerLabel, ["a": 5, "b": 4])
        XCTAssertEqual(r.history?.first?.trainLoss, 0.69)
        XCTAssertEqual(r.test?.clips.accuracy, 0.5)
        XCTAssertEqual(r.test?.windows.labels, ["a", "b"])
        XCTAssertEqual(r.test?.misclassified, [])
        XCTAssertEqual(r.test?.split, "test")
    }

    /// A key of a shape this poseact does not know is left out; the rest still reads, and a
    /// text that is no object at all is an empty record.
    func testAKeyThatDoesNotReadIsLeftOut() {
        let r = TrainingRecord(json: #"{"config":{"model":"big"},"data":[1,2],"epochs":7,"kept_epoch":"seven"}"#)
        XCTAssertNil(r.config)
        XCTAssertNil(r.data)
        XCTAssertNil(r.keptEpoch)
        XCTAssertEqual(r.epochs, 7)
        XCTAssertEqual(TrainingRecord(json: "not json"), TrainingRecord())
        XCTAssertEqual(TrainingRecord(json: "[]"), TrainingRecord())
    }

    /// Written back, a run's record has the keys it always had (the validation ones null
    /// without validation); an ensemble's, "members" alone.
    func testKeysWritten() throws {
        let run = TrainingRecord(json: Self.firstRecord)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(JSONLines.encode(run).utf8)) as? [String: Any])
        XCTAssertEqual(Set(object.keys), ["best_epoch", "config", "data", "epochs", "history", "parameters",
                                          "validation_accuracy", "validation_loss", "test"])
        XCTAssertTrue(object["validation_accuracy"] is NSNull)
        XCTAssertEqual(TrainingRecord(json: JSONLines.encode(run)), run)
        let ensemble = TrainingRecord(members: [run, run])
        XCTAssertEqual(JSONLines.encode(ensemble), #"{"members":["# + JSONLines.encode(run) + "," + JSONLines.encode(run) + "]}")
        XCTAssertEqual(JSONLines.encode(TrainingRecord()), "{}")
    }

    /// A weights file with the first record format loads, the record typed.
    func testAnOldWeightsFileLoads() throws {
        let path = temp("old.poseact.h5")
        let classifier = ActionClassifier(labels: ["a", "b"], spec: TrainingConfig().preprocessing,
                                          architecture: Architecture(config: TrainingConfig(), classes: 2))
        try classifier.save(to: path)
        let file = try HDF5File.open(path, writable: true)
        let root = try file.root()
        try root.setAttribute("training", Self.firstRecord)
        root.close(); try file.close()
        let back = try ActionClassifier.load(path: path)
        XCTAssertEqual(back.training, TrainingRecord(json: Self.firstRecord))
        XCTAssertEqual(back.training.parameters, 1234)
    }
}
