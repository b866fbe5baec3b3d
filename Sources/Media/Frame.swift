import Images

/// A decoded frame: its picture and presentation time.
public struct Frame: Sendable {
    public var image: RGBImage
    /// Presentation time in seconds from the start of the input (wall-clock seconds since
    /// opening, for live sources).
    public var time: Double
    /// 0-based index of the frame as handed out (after any frame-rate resampling).
    public var index: Int
    /// `monotonicSeconds()` when the frame was decoded (for a live source: when it was captured),
    /// the start of a live run's latency.
    public var decodedAt: Double

    public init(image: RGBImage, time: Double, index: Int, decodedAt: Double = monotonicSeconds()) {
        self.image = image; self.time = time; self.index = index; self.decodedAt = decodedAt
    }
}
