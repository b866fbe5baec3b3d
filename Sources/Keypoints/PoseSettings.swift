/// The pose pipeline's settings that change keypoints, as a record: what `extract` posed a
/// store's clips with, which a weights file keeps so that `live` poses the same way. In a
/// store they are words after the models' name in a clip's `estimator` attribute
/// ("blazepose-full mediapipe-0.10.14 (poseact) mirror-average redetect"), read and written
/// here only; a weights file holds the record itself (`DataSummary.pose`), and one written
/// before the record existed is read from its estimator words.
public struct PoseSettings: Codable, Equatable, Sendable {
    /// Each frame posed as itself and as its mirror image, the two averaged.
    public var mirrorAverage = false
    /// Drifted tracks re-detected.
    public var redetect = false
    /// Every frame mirrored before posing, the poses mirrored back (`extract --mirror`).
    public var mirrored = false

    public init(mirrorAverage: Bool = false, redetect: Bool = false, mirrored: Bool = false) {
        self.mirrorAverage = mirrorAverage; self.redetect = redetect; self.mirrored = mirrored
    }

    /// The settings an estimator's words name (unknown words, such as the models', are not settings).
    public init(estimator: String) {
        let words = Set(estimator.split(separator: " "))
        self.init(mirrorAverage: words.contains("mirror-average"), redetect: words.contains("redetect"), mirrored: words.contains("mirrored"))
    }

    /// `models`' estimator with these settings' words after it.
    public func estimator(models: String) -> String {
        models + (mirrorAverage ? " mirror-average" : "") + (redetect ? " redetect" : "") + (mirrored ? " mirrored" : "")
    }
}
