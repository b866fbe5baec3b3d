import Classifier
import Foundation
import Keypoints
import KeypointWindows
import TestData

/// A small slice of Penn Action (real, hand-annotated keypoints): 3 labels, 12 training
/// and 6 test clips each, in a store built here from the shared CSV.
public enum PennSlice {
    public static let labels = ["jumping_jacks", "pullup", "squat"]

    /// Clips of the slice (read once per process).
    public static let clips: Result<[ClipKeypoints], Error> = Result {
        let csv = try TestData.shared("data/penn-action/keypoints.csv").path
        let all = try KeypointCSV.read(csv).clips
        var out: [ClipKeypoints] = []
        for label in labels {
            out += all.filter { $0.label == label && $0.split == "train" }.prefix(12)
            out += all.filter { $0.label == label && $0.split == "test" }.prefix(6)
        }
        return out
    }

    /// Writes the slice as a keypoint store at `path`.
    public static func store(at path: String, labels keep: [String] = labels) throws {
        let writer = try KeypointStoreWriter(path: path)
        for c in try clips.get() where keep.contains(c.label) { try writer.append(c) }
        try writer.finish()
    }

    /// A small, quick model for tests.
    public static func config(epochs: Int = 3) -> TrainingConfig {
        var c = TrainingConfig()
        c.model.channels = 16
        c.model.dilations = [1, 2]
        c.optimizer.batchSize = 16
        c.training.epochs = epochs
        c.training.threads = 1
        c.data.validationShare = 0.2
        c.augmentation = AugmentationSpec(flip: true, rotationDegrees: 5, scale: 0.9...1.1, jitter: 0.01)
        return c
    }
}
