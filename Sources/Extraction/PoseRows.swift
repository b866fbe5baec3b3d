import Keypoints
import Pose

extension ClipKeypoints {
    /// One frame of a store: BlazePose's 33 landmarks (pixels) as x, y normalised to the
    /// frame and visibility as confidence; NaN, NaN, 0 per joint when there is no person.
    /// Extraction and live use this one conversion.
    public static func row(_ landmarks: [Landmark]?, width: Int, height: Int) -> [Float] {
        let joints = Skeleton.blazePoseNames.count
        guard let landmarks else { return (0..<joints).flatMap { _ in [Float.nan, .nan, 0] } }
        let w = Float(max(width, 1)), h = Float(max(height, 1))
        var out: [Float] = []
        out.reserveCapacity(joints * 3)
        for l in landmarks.prefix(joints) { out.append(l.x / w); out.append(l.y / h); out.append(l.visibility) }
        return out
    }
}
