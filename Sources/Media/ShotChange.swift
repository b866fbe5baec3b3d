import Images

/// Finds hard cuts in a video: the frames where the picture changes all at once (an edited
/// video, a montage of clips, a stream that switches camera).
///
/// Each frame is reduced to a 32×18 grid of mean luma (each cell the mean of 4×4 point
/// samples, 128×72 samples a frame whatever its size, so the cost does not grow with the
/// resolution); a frame is a cut when the mean absolute difference of its grid from the
/// previous frame's is at least `threshold` grey levels (of 255).
///
/// The threshold, 30, is from the shared push-up videos: the 15 cuts of the three montages
/// score 45–116; inside the 222 clips no frame scores above 26 except one jump cut in a
/// clip (correct96, frame 13: 38), which is a cut as well. Motion of a person, even close
/// to the camera, moves a few cells, not the whole grid.
public struct ShotChangeDetector: Sendable {
    public static let gridWidth = 32, gridHeight = 18
    public var threshold: Float
    private var previous: [Float]?

    public init(threshold: Float = 30) {
        self.threshold = threshold
    }

    /// Forgets the previous frame (a new input).
    public mutating func reset() { previous = nil }

    /// The difference of `image` from the previous frame (mean absolute grey levels over the
    /// grid); 0 for the first frame.
    public mutating func score(_ image: RGBImage) -> Float {
        let grid = Self.grid(image)
        defer { previous = grid }
        guard let previous, previous.count == grid.count else { return 0 }
        var sum: Float = 0
        for i in grid.indices { sum += abs(grid[i] - previous[i]) }
        return sum / Float(grid.count)
    }

    /// Whether `image` starts a new shot (its score reaches the threshold).
    public mutating func isCut(_ image: RGBImage) -> Bool { score(image) >= threshold }

    /// The 32×18 grid of mean luma (BT.601 weights, 0–255), row by row.
    public static func grid(_ image: RGBImage) -> [Float] {
        let samplesX = gridWidth * 4, samplesY = gridHeight * 4
        let w = image.width, h = image.height
        var cells = [Float](repeating: 0, count: gridWidth * gridHeight)
        guard w > 0, h > 0 else { return cells }
        image.pixels.withUnsafeBufferPointer { px in
            for sy in 0..<samplesY {
                let y = min(h - 1, (2 * sy + 1) * h / (2 * samplesY))
                let row = y * w * 3, cellRow = (sy / 4) * gridWidth
                for sx in 0..<samplesX {
                    let x = min(w - 1, (2 * sx + 1) * w / (2 * samplesX))
                    let i = row + x * 3
                    let luma = (Int(px[i]) * 77 + Int(px[i + 1]) * 150 + Int(px[i + 2]) * 29) >> 8
                    cells[cellRow + sx / 4] += Float(luma)
                }
            }
        }
        for i in cells.indices { cells[i] /= 16 }
        return cells
    }
}
