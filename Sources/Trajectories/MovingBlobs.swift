import Images

/// A small region that differs from the scene behind it: a candidate for a thrown object.
public struct Blob: Sendable, Equatable {
    /// The centre, weighted by how much each pixel differs from the background (pixels of the
    /// frame, continuous: pixel (i, j) covers [i, i+1)×[j, j+1)).
    public var x: Float, y: Float
    /// The bounding box's larger side, pixels of the frame.
    public var size: Float
}

/// What moves against the scene: a running background of the frame at a working
/// resolution (a 2×2 average above 720 pixels wide, so a 1280×720 frame costs what a
/// 640×360 one does), each pixel's colour difference to it, and the connected regions of
/// pixels that differ by more than the noise allows.
///
/// The background learns only where nothing moves (at `learningRate`; where something
/// moves, 20 times slower, so that what stops moving becomes background in a few seconds).
/// The threshold follows the noise: four times the median difference of the frame, and at
/// least `minimumDifference` (the sum over R, G and B).
public struct MovingBlobs {
    public private(set) var factor = 1
    public private(set) var width = 0, height = 0
    public var learningRate: Float = 0.05
    public var minimumDifference: Float = 30
    /// Frames learnt since the last reset.
    public private(set) var learnt = 0
    /// Of the working pixels, the share that differed on the last frame.
    public private(set) var movingShare: Float = 0
    /// The last frame at the working resolution, three floats a pixel.
    public private(set) var working: [Float] = []
    /// The difference a pixel needed to be moving on the last frame.
    private var threshold: Float = 30
    /// The frame before, at the working resolution (empty after a change of size).
    private var previous: [Float] = []
    private var background: [Float] = []
    private var difference: [Float] = []
    private var mask: [UInt8] = []
    private var stack: [Int32] = []
    /// The last frames at the working resolution (a byte a channel), what moved on each and
    /// its threshold, oldest first, for looking back (`changedRegion(near:radius:size:ago:)`):
    /// at most `pastFrames`, and at most 64 MB whatever the frame's size.
    private var past: [(pixels: [UInt8], moving: [UInt8], threshold: Float, time: Double)] = []
    public var pastFrames = 0

    public init() {}

    /// Takes the next frame into the working picture (nothing learnt yet).
    public mutating func load(_ image: RGBImage) {
        let f = image.width > 720 ? 2 : 1
        if f != factor || image.width / f != width || image.height / f != height {
            factor = f; width = image.width / f; height = image.height / f
            working = [Float](repeating: 0, count: width * height * 3)
            difference = [Float](repeating: 0, count: width * height)
            mask = [UInt8](repeating: 0, count: width * height)
            background = []
            previous = []
            past = []
            learnt = 0
        } else {
            swap(&previous, &working)
            if working.count != previous.count { working = [Float](repeating: 0, count: previous.count) }
        }
        let w = width, h = height, iw = image.width
        image.pixels.withUnsafeBufferPointer { src in
            working.withUnsafeMutableBufferPointer { dst in
                if f == 1 {
                    for i in 0..<(w * h * 3) { dst[i] = Float(src[i]) }
                    return
                }
                for y in 0..<h {
                    let r0 = (2 * y) * iw * 3, r1 = r0 + iw * 3
                    for x in 0..<w {
                        let a = r0 + 6 * x, b = r1 + 6 * x, d = (y * w + x) * 3
                        for c in 0..<3 {
                            dst[d + c] = (Float(src[a + c]) + Float(src[a + 3 + c]) + Float(src[b + c]) + Float(src[b + 3 + c])) * 0.25
                        }
                    }
                }
            }
        }
    }

    /// Forgets the background: the loaded frame becomes it.
    public mutating func reset() {
        background = working
        learnt = 1
        movingShare = 0
        past = []
    }

    /// Frames kept to look back on: `pastFrames`, within 64 MB.
    private var pastLimit: Int { min(pastFrames, (64 << 20) / max(1, width * height * 4)) }

    /// How many frames before the last one can be looked back on.
    public var framesToLookBack: Int { max(0, past.count - 2) }

    /// The time the frame `ago` frames before the last one was given with.
    public func pastTime(ago: Int) -> Double? { ago >= 0 && ago < past.count ? past[past.count - 1 - ago].time : nil }

    /// The regions of the loaded frame that differ from the background, with their sizes in
    /// frame pixels within `sizes`, compact (a blob fills at least a third of its box, and its
    /// box is at most 3:1, and at least `sizes`' smallest across both ways: a line of pixels
    /// along the edge of something, where the video's coding flickers, is not an object), and
    /// inside `region` (frame pixels) if given. Then learns the frame.
    /// (`time` only labels the frame kept for looking back.)
    public mutating func blobs(sizes: ClosedRange<Float>, region: (x: Float, y: Float, width: Float, height: Float)? = nil,
                               time: Double = 0) -> [Blob] {
        guard background.count == working.count, learnt > 0 else { reset(); return [] }
        let n = width * height
        threshold = max(minimumDifference, 4 * medianDifference())
        let threshold = self.threshold
        var moving = 0
        working.withUnsafeBufferPointer { cur in
            background.withUnsafeBufferPointer { bg in
                difference.withUnsafeMutableBufferPointer { diff in
                    mask.withUnsafeMutableBufferPointer { m in
                        for i in 0..<n {
                            let d = abs(cur[3 * i] - bg[3 * i]) + abs(cur[3 * i + 1] - bg[3 * i + 1]) + abs(cur[3 * i + 2] - bg[3 * i + 2])
                            diff[i] = d
                            let on: UInt8 = d > threshold ? 1 : 0
                            m[i] = on
                            moving += Int(on)
                        }
                    }
                }
            }
        }
        movingShare = Float(moving) / Float(max(1, n))
        let found = components(threshold: threshold, sizes: sizes, region: region)
        if pastLimit > 0 {
            var pixels: [UInt8] = []
            if past.count >= pastLimit { pixels = past.removeFirst().pixels; past.removeFirst(max(0, past.count - pastLimit + 1)) }
            if pixels.count != working.count { pixels = [UInt8](repeating: 0, count: working.count) }
            pixels.withUnsafeMutableBufferPointer { p in
                working.withUnsafeBufferPointer { w in for i in 0..<w.count { p[i] = UInt8(w[i] + 0.5) } }
            }
            past.append((pixels, mask, threshold, time))
        }
        learn()
        return found
    }

    /// Where a known object should be but no blob was found (it passes in front of something
    /// that moves, and its pixels joined that thing's region): the compact region near
    /// `centre` (frame pixels) that changed since the frame before and differs from the
    /// background, about `size` across, and whole within `radius` of the centre. A large
    /// moving thing changes only at its edges from one frame to the next, and an edge runs
    /// out of the search window; the object changes where it is now and where it was, so it
    /// must have moved more than its size since (the caller's to check). Call after `blobs`.
    public func changedRegion(near centre: (x: Float, y: Float), radius: Float, size: Float) -> Blob? {
        guard previous.count == working.count else { return nil }
        let frame = working, before = previous
        return Self.changedRegion(near: centre, radius: radius, size: size, width: width, height: height, factor: factor,
                                  threshold: threshold, frame: { frame[$0] }, before: { before[$0] }, moving: { mask[$0] != 0 })
    }

    /// The same in the frame `ago` frames before the last one (1: the one before it), from the
    /// frames kept (`pastFrames`): where an object was before it was first seen on its own.
    public func changedRegion(near centre: (x: Float, y: Float), radius: Float, size: Float, ago: Int) -> Blob? {
        guard ago >= 1, ago <= framesToLookBack else { return nil }
        let now = past[past.count - 1 - ago], before = past[past.count - 2 - ago]
        return Self.changedRegion(near: centre, radius: radius, size: size, width: width, height: height, factor: factor,
                                  threshold: now.threshold, frame: { Float(now.pixels[$0]) }, before: { Float(before.pixels[$0]) },
                                  moving: { now.moving[$0] != 0 })
    }

    /// `frame` and `before` give a channel of a working pixel (index 3 × pixel + channel),
    /// `moving` whether a pixel differed from the background.
    private static func changedRegion(near centre: (x: Float, y: Float), radius: Float, size: Float, width: Int, height: Int,
                                      factor: Int, threshold: Float, frame: (Int) -> Float, before: (Int) -> Float,
                                      moving: (Int) -> Bool) -> Blob? {
        let f = Float(factor)
        let r = Int(((radius + size) / f).rounded(.up))
        let cx = Int(centre.x / f), cy = Int(centre.y / f)
        let x0 = max(0, cx - r), x1 = min(width - 1, cx + r), y0 = max(0, cy - r), y1 = min(height - 1, cy + r)
        guard x0 <= x1, y0 <= y1 else { return nil }
        let ww = x1 - x0 + 1, wh = y1 - y0 + 1
        var on = [UInt8](repeating: 0, count: ww * wh)
        var change = [Float](repeating: 0, count: ww * wh)
        for y in y0...y1 {
            for x in x0...x1 {
                let i = y * width + x
                let d = abs(frame(3 * i) - before(3 * i)) + abs(frame(3 * i + 1) - before(3 * i + 1)) + abs(frame(3 * i + 2) - before(3 * i + 2))
                let k = (y - y0) * ww + (x - x0)
                change[k] = d
                if d > threshold && moving(i) { on[k] = 1 }
            }
        }
        var best: (blob: Blob, distance: Float)?
        var queue: [Int] = []
        for start in 0..<(ww * wh) where on[start] == 1 {
            on[start] = 2
            queue = [start]
            var count = 0, minX = ww, maxX = -1, minY = wh, maxY = -1, touches = false
            var sw: Float = 0, sx: Float = 0, sy: Float = 0
            while let k = queue.popLast() {
                let x = k % ww, y = k / ww
                count += 1
                minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
                if x == 0 || y == 0 || x == ww - 1 || y == wh - 1 { touches = true }
                let weight = change[k] - threshold / 2
                sw += weight; sx += weight * (Float(x + x0) + 0.5); sy += weight * (Float(y + y0) + 0.5)
                for dy in -1...1 where y + dy >= 0 && y + dy < wh {
                    for dx in -1...1 where x + dx >= 0 && x + dx < ww {
                        let j = (y + dy) * ww + x + dx
                        if on[j] == 1 { on[j] = 2; queue.append(j) }
                    }
                }
            }
            let bw = maxX - minX + 1, bh = maxY - minY + 1
            let side = Float(max(bw, bh)) * f
            guard !touches, sw > 0, side >= 0.6 * size, side <= 1.6 * size, count * 3 >= bw * bh, max(bw, bh) <= 3 * min(bw, bh) else { continue }
            let blob = Blob(x: sx / sw * f, y: sy / sw * f, size: side)
            let distance = ((blob.x - centre.x) * (blob.x - centre.x) + (blob.y - centre.y) * (blob.y - centre.y)).squareRoot()
            guard distance <= radius, distance < best?.distance ?? .infinity else { continue }
            best = (blob, distance)
        }
        return best?.blob
    }

    /// The median colour difference over every 7th working pixel (a frame of moving objects
    /// is mostly still background, so this is the noise).
    private mutating func medianDifference() -> Float {
        var sample: [Float] = []
        sample.reserveCapacity(width * height / 7 + 1)
        working.withUnsafeBufferPointer { cur in
            background.withUnsafeBufferPointer { bg in
                var i = 0
                while i < width * height {
                    sample.append(abs(cur[3 * i] - bg[3 * i]) + abs(cur[3 * i + 1] - bg[3 * i + 1]) + abs(cur[3 * i + 2] - bg[3 * i + 2]))
                    i += 7
                }
            }
        }
        guard !sample.isEmpty else { return 0 }
        let k = sample.count / 2
        // Quickselect would do; a partial sort of a small sample is fast enough here.
        sample.withUnsafeMutableBufferPointer { s in
            var lo = 0, hi = s.count - 1
            while lo < hi {
                let pivot = s[(lo + hi) / 2]
                var i = lo, j = hi
                while i <= j {
                    while s[i] < pivot { i += 1 }
                    while s[j] > pivot { j -= 1 }
                    if i <= j { s.swapAt(i, j); i += 1; j -= 1 }
                }
                if k <= j { hi = j } else if k >= i { lo = i } else { break }
            }
        }
        return sample[k]
    }

    private mutating func learn() {
        let fast = learningRate, slow = learningRate / 20
        let n = width * height
        working.withUnsafeBufferPointer { cur in
            background.withUnsafeMutableBufferPointer { bg in
                mask.withUnsafeBufferPointer { m in
                    for i in 0..<n {
                        let a = m[i] == 0 ? fast : slow
                        for c in 0..<3 { bg[3 * i + c] += a * (cur[3 * i + c] - bg[3 * i + c]) }
                    }
                }
            }
        }
        learnt += 1
    }

    /// 8-connected regions of the mask (each visited once: a visited pixel is marked 2, still
    /// moving for the background's learning).
    private mutating func components(threshold: Float, sizes: ClosedRange<Float>,
                                     region: (x: Float, y: Float, width: Float, height: Float)?) -> [Blob] {
        var found: [Blob] = []
        let w = width, h = height, f = Float(factor)
        let maxSide = Int((sizes.upperBound / f).rounded(.up)) + 1
        mask.withUnsafeMutableBufferPointer { m in
            difference.withUnsafeBufferPointer { diff in
                for start in 0..<(w * h) where m[start] == 1 {
                    m[start] = 2
                    stack.removeAll(keepingCapacity: true)
                    stack.append(Int32(start))
                    var count = 0, minX = w, maxX = -1, minY = h, maxY = -1
                    var sw: Float = 0, sx: Float = 0, sy: Float = 0
                    while let top = stack.popLast() {
                        let i = Int(top), x = i % w, y = i / w
                        count += 1
                        minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
                        let weight = diff[i] - threshold / 2
                        sw += weight; sx += weight * (Float(x) + 0.5); sy += weight * (Float(y) + 0.5)
                        for dy in -1...1 {
                            let yy = y + dy
                            guard yy >= 0, yy < h else { continue }
                            for dx in -1...1 {
                                let xx = x + dx
                                guard xx >= 0, xx < w else { continue }
                                let j = yy * w + xx
                                if m[j] == 1 { m[j] = 2; stack.append(Int32(j)) }
                            }
                        }
                    }
                    let bw = maxX - minX + 1, bh = maxY - minY + 1
                    guard max(bw, bh) <= maxSide, sw > 0 else { continue }
                    let side = Float(max(bw, bh)) * f
                    guard sizes.contains(side), Float(min(bw, bh)) * f >= sizes.lowerBound, count * 3 >= bw * bh,
                          max(bw, bh) <= 3 * min(bw, bh) else { continue }
                    let blob = Blob(x: sx / sw * f, y: sy / sw * f, size: side)
                    if let r = region, !(blob.x >= r.x && blob.x < r.x + r.width && blob.y >= r.y && blob.y < r.y + r.height) { continue }
                    found.append(blob)
                }
            }
        }
        return found
    }
}
