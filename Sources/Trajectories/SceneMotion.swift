/// The camera's own motion: the translation that best aligns a frame with the one before it,
/// found coarse to fine (Vision's translational image registration does the same job).
/// Gray pyramids of each frame, halved three times; a search of ±4 pixels on the coarsest
/// level (±32 at a 640-pixel-wide level 0), then ±1 on each finer one, by the mean absolute
/// difference over the overlap, with a parabola through the last level's minimum for the
/// fraction of a pixel. A shift is reported only when it aligns the frames clearly better
/// than none does.
public struct SceneMotion {
    private var previous: [GrayLevel] = []

    public init() {}

    /// The shift (pixels of the picture given, x and y) from the last picture to this one; nil
    /// for the first picture or one of another size.
    public mutating func shift(width: Int, height: Int, rgb: [Float]) -> (x: Float, y: Float)? {
        var levels = [GrayLevel(width: width, height: height, rgb: rgb)]
        while levels.count < 4, levels.last!.width >= 32, levels.last!.height >= 32 { levels.append(levels.last!.halved()) }
        defer { previous = levels }
        guard previous.count == levels.count, previous[0].width == width, previous[0].height == height else { return nil }
        var dx = 0, dy = 0
        var fraction: (x: Float, y: Float) = (0, 0)
        for k in stride(from: levels.count - 1, through: 0, by: -1) {
            dx *= 2; dy *= 2
            let radius = k == levels.count - 1 ? 4 : 1
            var best = Float.infinity, bx = dx, by = dy
            var costs: [Int: Float] = [:]
            for oy in (dy - radius)...(dy + radius) {
                for ox in (dx - radius)...(dx + radius) {
                    let c = levels[k].meanDifference(to: previous[k], dx: ox, dy: oy)
                    costs[(oy + 1000) * 4096 + ox + 1000] = c
                    if c < best { best = c; bx = ox; by = oy }
                }
            }
            dx = bx; dy = by
            if k == 0 {
                func cost(_ x: Int, _ y: Int) -> Float? { costs[(y + 1000) * 4096 + x + 1000] }
                func vertex(_ a: Float?, _ b: Float, _ c: Float?) -> Float {
                    guard let a, let c else { return 0 }
                    let d = a - 2 * b + c
                    return d > 1e-6 ? max(-0.5, min(0.5, (a - c) / (2 * d))) : 0
                }
                fraction = (vertex(cost(dx - 1, dy), best, cost(dx + 1, dy)), vertex(cost(dx, dy - 1), best, cost(dx, dy + 1)))
            }
        }
        // On a plain wall under sensor noise every shift matches about as well: a shift counts
        // only when it matches clearly better than none.
        let still = levels[0].meanDifference(to: previous[0], dx: 0, dy: 0)
        let best = levels[0].meanDifference(to: previous[0], dx: dx, dy: dy)
        guard still > best * 1.15 + 0.2 else { return (0, 0) }
        if dx * dx + dy * dy >= 9, levels[0].standsStill(against: previous[0], dx: dx, dy: dy, gain: still / max(best, 1e-6)) { return (0, 0) }
        return (Float(dx) + fraction.x, Float(dy) + fraction.y)
    }

    public mutating func reset() { previous = [] }
}

/// One level of a gray pyramid.
struct GrayLevel {
    let width: Int, height: Int
    var gray: [Float]

    init(width: Int, height: Int, gray: [Float]) { self.width = width; self.height = height; self.gray = gray }

    init(width: Int, height: Int, rgb: [Float]) {
        var g = [Float](repeating: 0, count: width * height)
        rgb.withUnsafeBufferPointer { s in
            for i in 0..<(width * height) { g[i] = 0.299 * s[3 * i] + 0.587 * s[3 * i + 1] + 0.114 * s[3 * i + 2] }
        }
        self.init(width: width, height: height, gray: g)
    }

    func halved() -> GrayLevel {
        let w = width / 2, h = height / 2
        var g = [Float](repeating: 0, count: w * h)
        gray.withUnsafeBufferPointer { s in
            for y in 0..<h {
                for x in 0..<w {
                    let a = 2 * y * width + 2 * x
                    g[y * w + x] = (s[a] + s[a + 1] + s[a + width] + s[a + width + 1]) * 0.25
                }
            }
        }
        return GrayLevel(width: w, height: h, gray: g)
    }

    /// Whether a large shift is something big passing close to the camera rather than the
    /// camera. Of the picture's 4 × 3 tiles, at least three match the frame before clearly
    /// better unshifted, and at least half as many as match it better shifted; or one does,
    /// and the shift aligns the whole picture less than 1.8 times better than none does
    /// (`gain`). When the camera moves, every tile with something on it moves with it, and
    /// aligning takes most of the difference away; people walking past close to the camera
    /// in front of a plain wall are most of what changes, and aligning with them leaves the
    /// still things' edges. The rendered scenes' large shifts: while the camera shook, a gain
    /// of 2.8 on median (5 % under 1.5); from walkers, 1.4 (95 % under 1.8), often with
    /// only one or two still tiles. Only large shifts are checked: on a shake's first frames
    /// the shift is a pixel or two, and a tile's plain wall cannot tell.
    func standsStill(against other: GrayLevel, dx: Int, dy: Int, gain: Float) -> Bool {
        var still = 0, moved = 0
        for ty in 0..<3 {
            for tx in 0..<4 {
                let xs = (tx * width / 4)..<((tx + 1) * width / 4), ys = (ty * height / 3)..<((ty + 1) * height / 3)
                let c0 = meanDifference(to: other, dx: 0, dy: 0, within: (xs, ys))
                let cs = meanDifference(to: other, dx: dx, dy: dy, within: (xs, ys))
                if c0 * 1.15 + 0.2 < cs { still += 1 } else if cs * 1.15 + 0.2 < c0 { moved += 1 }
            }
        }
        return (still >= 3 && 2 * still >= moved) || (still >= 1 && gain < 1.8)
    }

    /// Mean |this(x, y) − other(x − dx, y − dy)| over the pixels both cover (within the given
    /// columns and rows, if any), every second row and column at the finer levels (where the
    /// cost is in the pixel count, not the search).
    func meanDifference(to other: GrayLevel, dx: Int, dy: Int, within: (x: Range<Int>, y: Range<Int>)? = nil) -> Float {
        var x0 = max(0, dx), x1 = min(width, width + dx), y0 = max(0, dy), y1 = min(height, height + dy)
        if let r = within { x0 = max(x0, r.x.lowerBound); x1 = min(x1, r.x.upperBound); y0 = max(y0, r.y.lowerBound); y1 = min(y1, r.y.upperBound) }
        guard x1 - x0 >= 8, y1 - y0 >= 8 else { return .infinity }
        let step = width > 200 ? 2 : 1
        var sum: Float = 0, count = 0
        gray.withUnsafeBufferPointer { a in
            other.gray.withUnsafeBufferPointer { b in
                var y = y0
                while y < y1 {
                    let ra = y * width, rb = (y - dy) * width - dx
                    var x = x0
                    while x < x1 { sum += abs(a[ra + x] - b[rb + x]); x += step }
                    count += (x1 - x0 + step - 1) / step
                    y += step
                }
            }
        }
        return sum / Float(max(1, count))
    }
}
