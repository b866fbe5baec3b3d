import Basics
import Config

/// What smooths a pose sequence over time before it becomes model input (the first step of
/// `Preprocessing`, in training and in `live` alike, so the weights file says which and
/// `live` follows it). The store keeps the pose model's raw keypoints: one extraction serves
/// every choice.
public enum KeypointFilter: String, ConfigChoice, Sendable {
    /// The keypoints as the pose model gave them.
    case none
    /// MediaPipe's pose smoothing (`PoseSmoother`: One-Euro on x and y in pixels, the
    /// confidence low-passed), causal: frame t sees only frames up to t, as live does.
    case oneEuro = "one_euro"
}

/// One person's keypoint rows (joints × (x, y in 0–1 of a `width` × `height` frame,
/// confidence)) smoothed frame by frame with `PoseSmoother`. A frame with no joint resets
/// it (the person was lost); a joint that is missing (not finite, or confidence 0) passes
/// through and its filters start again when it returns.
public final class KeypointRowSmoother {
    private let smoother = PoseSmoother(dimensions: 2)
    public init() {}

    public func reset() { smoother.reset() }

    /// The row at `time` seconds, smoothed.
    public func smooth(_ row: [Float], width: Int, height: Int, time: Double) -> [Float] {
        let joints = row.count / 3
        let w = Float(max(width, 1)), h = Float(max(height, 1))
        var coordinates = [Float](repeating: 0, count: joints * 2), visibility = [Float](repeating: 0, count: joints)
        var present = [Bool](repeating: false, count: joints)
        for j in 0..<joints {
            let x = row[j * 3], y = row[j * 3 + 1], c = row[j * 3 + 2]
            present[j] = x.isFinite && y.isFinite && c.isFinite && c > 0
            if present[j] { coordinates[j * 2] = x * w; coordinates[j * 2 + 1] = y * h; visibility[j] = c }
        }
        guard present.contains(true) else { smoother.reset(); return row }
        smoother.smooth(coordinates: &coordinates, visibility: &visibility, present: present, time: time)
        var out = row
        for j in 0..<joints where present[j] {
            out[j * 3] = coordinates[j * 2] / w; out[j * 3 + 1] = coordinates[j * 2 + 1] / h; out[j * 3 + 2] = visibility[j]
        }
        return out
    }

    /// A whole sequence of rows (a clip's frames with their times), smoothed from its start.
    public static func smooth(_ rows: [[Float]], times: [Double], width: Int, height: Int) -> [[Float]] {
        let s = KeypointRowSmoother()
        return zip(rows, times).map { s.smooth($0, width: width, height: height, time: $1) }
    }
}
