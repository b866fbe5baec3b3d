import Basics

/// Smooths one person's 33 landmarks from frame to frame the way MediaPipe's pose tracking
/// does: `PoseSmoother` (Basics) on x, y and z in pixels and on the visibility; presence
/// passes through (MediaPipe does not smooth it). A caller may give its own object scale
/// (MediaPipe's task graph uses the tracking ROI's `(width + height) / 2`).
public final class LandmarkSmoother {
    private let smoother: PoseSmoother

    public init(minCutoff: Double = 0.05, beta: Double = 80, derivativeCutoff: Double = 1,
                visibilityAlpha: Float = 0.1, minAllowedObjectScale: Float = 1e-6) {
        smoother = PoseSmoother(dimensions: 3, minCutoff: minCutoff, beta: beta, derivativeCutoff: derivativeCutoff,
                                visibilityAlpha: visibilityAlpha, minAllowedObjectScale: minAllowedObjectScale)
    }

    /// Forgets the past: the next frame passes through as a first one.
    public func reset() { smoother.reset() }

    /// MediaPipe's object scale of all the landmarks (visible or not), in pixels.
    public static func objectScale(of landmarks: [Landmark]) -> Float {
        PoseSmoother.objectScale(landmarks.flatMap { [$0.x, $0.y, $0.z] }, dimensions: 3)
    }

    /// Smooths one frame's landmarks taken at `time` seconds.
    public func smooth(_ landmarks: [Landmark], time: Double, objectScale: Float? = nil) -> [Landmark] {
        if landmarks.isEmpty { reset(); return landmarks }
        var coordinates = landmarks.flatMap { [$0.x, $0.y, $0.z] }
        var visibility = landmarks.map(\.visibility)
        smoother.smooth(coordinates: &coordinates, visibility: &visibility, time: time, objectScale: objectScale)
        var out = landmarks
        for i in out.indices {
            out[i].x = coordinates[i * 3]; out[i].y = coordinates[i * 3 + 1]; out[i].z = coordinates[i * 3 + 2]
            out[i].visibility = visibility[i]
        }
        return out
    }
}
