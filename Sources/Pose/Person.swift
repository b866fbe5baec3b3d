
/// One landmark of a pose, in the frame's pixels.
public struct Landmark: Sendable, Equatable {
    /// Pixels from the frame's top-left corner.
    public var x: Float, y: Float
    /// Depth relative to the hips, on the same scale as x (pixels); smaller is nearer.
    public var z: Float
    /// Probability that the landmark is visible (not occluded), 0–1.
    public var visibility: Float
    /// Probability that the landmark is inside the frame, 0–1.
    public var presence: Float

    public init(x: Float, y: Float, z: Float = 0, visibility: Float = 1, presence: Float = 1) {
        self.x = x; self.y = y; self.z = z; self.visibility = visibility; self.presence = presence
    }
}

/// An axis-aligned box in pixels.
public struct Box: Sendable, Equatable {
    public var x: Float, y: Float, width: Float, height: Float
    public init(x: Float, y: Float, width: Float, height: Float) { self.x = x; self.y = y; self.width = width; self.height = height }

    public var area: Float { max(width, 0) * max(height, 0) }
    public var center: (x: Float, y: Float) { (x + width / 2, y + height / 2) }

    /// Intersection over union, 0 when disjoint.
    public func iou(_ other: Box) -> Float {
        let x0 = max(x, other.x), y0 = max(y, other.y)
        let x1 = min(x + width, other.x + other.width), y1 = min(y + height, other.y + other.height)
        let inter = max(0, x1 - x0) * max(0, y1 - y0)
        let union = area + other.area - inter
        return union > 0 ? inter / union : 0
    }

    /// The smallest box around the points.
    public static func enclosing(_ points: [(x: Float, y: Float)]) -> Box {
        guard let first = points.first else { return Box(x: 0, y: 0, width: 0, height: 0) }
        var x0 = first.x, y0 = first.y, x1 = first.x, y1 = first.y
        for p in points.dropFirst() { x0 = min(x0, p.x); y0 = min(y0, p.y); x1 = max(x1, p.x); y1 = max(y1, p.y) }
        return Box(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}

/// A person found in a frame.
public struct Person: Sendable {
    /// Stable across the frames of one input while the person stays tracked.
    public var id: Int
    /// Around the visible landmarks, in pixels.
    public var box: Box
    /// BlazePose's 33 landmarks, in `Skeleton.blazePoseNames` order.
    public var landmarks: [Landmark]
    /// The same 33 landmarks in metres, origin between the hips (x right, y down, z away).
    public var worldLandmarks: [SIMD3<Float>]
    /// The landmark model's pose presence, 0–1.
    public var presence: Float
    /// The person an action classifier should watch (largest, kept stable over time).
    public var isProminent: Bool

    public init(id: Int, box: Box, landmarks: [Landmark], worldLandmarks: [SIMD3<Float>], presence: Float, isProminent: Bool = false) {
        self.id = id; self.box = box; self.landmarks = landmarks; self.worldLandmarks = worldLandmarks
        self.presence = presence; self.isProminent = isProminent
    }
}

extension Person {
    /// The person as the mirror image of a `width`-pixel-wide frame shows them: x → width − 1 − x
    /// (landmarks put pixel centres on whole coordinates, as OpenCV's warp does), left and
    /// right swapped (world landmarks: x negated).
    public func mirrored(width: Int) -> Person {
        var p = self
        let m = PoseLandmarker.CropPose.mirrorIndex.prefix(landmarks.count)
        let w = Float(width - 1)
        p.landmarks = m.map { var l = landmarks[$0]; l.x = w - l.x; return l }
        if worldLandmarks.count == landmarks.count { p.worldLandmarks = m.map { var v = worldLandmarks[$0]; v.x = -v.x; return v } }
        p.box = Box(x: w - box.x - box.width, y: box.y, width: box.width, height: box.height)
        return p
    }
}
