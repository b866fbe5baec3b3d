import Foundation
import Images

/// Draws a `ThrowScene` frame by frame: the still background once, then on each frame the
/// leaves, the walker, the thrower, the balls and their shadows, the camera's shake and the
/// sensor noise.
public struct ThrowSceneRenderer {
    public let scene: ThrowScene
    private let background: RGBImage
    /// Noise levels to add, by byte: a 256-entry table of a rounded normal distribution's
    /// quantiles, read by random bytes (fast, and the same on every machine).
    private let noiseTable: [Int16]

    public init(scene: ThrowScene) {
        self.scene = scene
        var image = RGBImage(width: scene.width, height: scene.height)
        let w = scene.width, h = scene.height, floor = Int(scene.floor)
        image.pixels.withUnsafeMutableBufferPointer { p in
            for y in 0..<h {
                let c = y >= floor ? scene.floorColor : scene.wall
                for x in 0..<w {
                    let light = scene.brightness * (1 - scene.lightFalloff * Double(x) / Double(w)) * (y >= floor ? 1 : 1 - 0.15 * Double(y) / Double(h))
                    let i = (y * w + x) * 3
                    for k in 0..<3 { p[i + k] = UInt8(clamping: Int((Double(c[k]) * light).rounded())) }
                }
            }
        }
        for poster in scene.posters where poster.count == 7 {
            image.fillRect((Float(poster[0]), Float(poster[1]), Float(poster[2]), Float(poster[3])),
                           color: RGB(UInt8(clamping: Int(poster[4] * scene.brightness)), UInt8(clamping: Int(poster[5] * scene.brightness)),
                                      UInt8(clamping: Int(poster[6] * scene.brightness))))
        }
        // The skirting board: a line along the wall's foot.
        image.fillRect((0, Float(scene.floor) - 6, Float(w), 6), color: RGB(90, 80, 70))
        if let b = scene.board {
            let ppm = Float(scene.pixelsPerMetre), x = Float(b.x), fl = Float(scene.floor)
            image.fillRect((x, fl - 0.03 * ppm, Float(b.length) * ppm, 0.06 * ppm), color: RGB(120, 70, 30))
            image.fillRect((x + Float(b.length) * ppm * 0.65, fl - 0.03 * ppm, 0.15 * ppm, 0.03 * ppm), color: RGB(20, 20, 20))
        }
        background = image
        var table = [Int16](repeating: 0, count: 256)
        for k in 0..<256 {
            // The inverse normal CDF at (k + 0.5)/256 (Acklam's rational approximation is
            // more than this needs: a logistic fit to the normal, σ-matched, will do).
            let p = (Double(k) + 0.5) / 256
            let z = log(p / (1 - p)) * 0.5513   // logistic with the normal's standard deviation
            table[k] = Int16((z * scene.noise).rounded())
        }
        noiseTable = table
    }

    public func frame(_ index: Int) -> RGBImage {
        let s = scene
        let t = Double(index) / s.fps
        var image = background
        let ppm = s.pixelsPerMetre
        for leaf in s.leaves {
            let dx = leaf.amplitude * sin(2 * .pi * leaf.frequency * t + leaf.phase)
            let dy = leaf.amplitude / 3 * sin(4 * .pi * leaf.frequency * t + 2 * leaf.phase)
            image.fillCircle(center: (Float(leaf.x + dx), Float(leaf.y + dy)), radius: Float(leaf.radius), color: RGB(50, 140, 50))
        }
        if let w = s.walker, t >= w.start {
            Self.walker(w, at: t, floor: s.floor - 10, pixelsPerMetre: ppm, shirt: RGB(150, 60, 60)).draw(into: &image)
        }
        if let clutter = s.clutter { Self.drawBehind(clutter, into: &image, at: t, scene: s) }
        s.figure(at: t)?.draw(into: &image)
        for (k, p) in s.throwsPlanned.enumerated() {
            guard let b = s.ball(p, index: k, at: t) else { continue }
            let r = Float(p.ballRadius * ppm)
            if s.shadow && t > s.releaseTime(p) {
                // A flat, soft shadow on the floor under the ball, darker the nearer the ball.
                let height = max(0, s.floor - b.y)
                let darkness = Float(max(0.1, 0.35 - height / (6 * ppm)))
                darken(&image, x: Float(b.x), y: Float(s.floor) + 2, rx: r * 1.6, ry: r * 0.5, by: darkness)
            }
            image.fillCircle(center: (Float(b.x), Float(b.y)), radius: r, color: RGB(p.ballColor[0], p.ballColor[1], p.ballColor[2]))
        }
        if let clutter = s.clutter { Self.drawInFront(clutter, into: &image, at: t, scene: s) }
        let (dx, dy) = s.shakeOffset(frame: index)
        if dx != 0 || dy != 0 { image = shifted(image, dx, dy) }
        if s.noise > 0 { addNoise(&image, frame: index) }
        return image
    }

    /// A person walking (`w`) at `t`, their feet on `floor`.
    static func walker(_ w: ThrowScene.Walker, at t: Double, floor: Double, pixelsPerMetre ppm: Double, shirt: RGB) -> ThrowFigure {
        var f = ThrowFigure(x: Float(w.x + w.speed * (t - w.start)), floor: Float(floor), pixelsPerMetre: Float(ppm * w.scale),
                            direction: w.speed >= 0 ? 1 : -1)
        let step = Float(sin(t * 7))
        f.stride = step
        f.throwing = (-90 + 20 * step, -85 + 20 * step)
        f.other = (-90 - 20 * step, -85 - 20 * step)
        f.shirt = shirt
        return f
    }

    private func darken(_ image: inout RGBImage, x: Float, y: Float, rx: Float, ry: Float, by amount: Float) {
        let w = image.width, h = image.height
        let y0 = max(0, Int(y - ry)), y1 = min(h - 1, Int(y + ry)), x0 = max(0, Int(x - rx)), x1 = min(w - 1, Int(x + rx))
        guard y0 <= y1, x0 <= x1 else { return }
        image.pixels.withUnsafeMutableBufferPointer { p in
            for yy in y0...y1 {
                for xx in x0...x1 {
                    let u = (Float(xx) + 0.5 - x) / rx, v = (Float(yy) + 0.5 - y) / ry
                    let d = u * u + v * v
                    guard d < 1 else { continue }
                    let k = 1 - amount * (1 - d)
                    let i = (yy * w + xx) * 3
                    for c in 0..<3 { p[i + c] = UInt8(Float(p[i + c]) * k) }
                }
            }
        }
    }

    /// The picture moved by (dx, dy), the uncovered edge filled from the nearest row or column.
    private func shifted(_ image: RGBImage, _ dx: Int, _ dy: Int) -> RGBImage {
        var out = image
        let w = image.width, h = image.height
        image.pixels.withUnsafeBufferPointer { src in
            out.pixels.withUnsafeMutableBufferPointer { dst in
                for y in 0..<h {
                    let sy = min(max(y - dy, 0), h - 1)
                    for x in 0..<w {
                        let sx = min(max(x - dx, 0), w - 1)
                        let d = (y * w + x) * 3, s = (sy * w + sx) * 3
                        dst[d] = src[s]; dst[d + 1] = src[s + 1]; dst[d + 2] = src[s + 2]
                    }
                }
            }
        }
        return out
    }

    private func addNoise(_ image: inout RGBImage, frame: Int) {
        var state = scene.noiseSeed &* 0x2545_F491_4F6C_DD1D &+ UInt64(frame) &* 0x9E37_79B9_7F4A_7C15 | 1
        noiseTable.withUnsafeBufferPointer { table in
            image.pixels.withUnsafeMutableBufferPointer { p in
                var i = 0
                let n = p.count
                while i < n {
                    // xorshift64*: eight noise bytes per step.
                    state ^= state >> 12; state ^= state << 25; state ^= state >> 27
                    var r = state &* 0x2545_F491_4F6C_DD1D
                    for _ in 0..<8 where i < n {
                        let v = Int16(p[i]) + table[Int(r & 255)]
                        p[i] = UInt8(clamping: v)
                        r >>= 8
                        i += 1
                    }
                }
            }
        }
    }
}
