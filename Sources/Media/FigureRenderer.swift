import Foundation
import Images

/// A person-like figure (head, torso, arms and legs as thick strokes) in front of a wall.
public enum FigureRenderer {
    public enum Action: Sendable { case walkWave, wave, walk }

    /// The wall (shaded from the top) and the floor (the lowest fifth) the figure stands in.
    static func room(width: Int, height: Int) -> RGBImage {
        var image = RGBImage(width: width, height: height)
        image.pixels.withUnsafeMutableBufferPointer { p in
            for y in 0..<height {
                let floor = y >= height * 4 / 5
                let shade = UInt8(max(0, 214 - y / 20))
                let c: (UInt8, UInt8, UInt8) = floor ? (150, 120, 90) : (shade, shade &- 6, 196)
                for x in 0..<width { let i = (y * width + x) * 3; p[i] = c.0; p[i + 1] = c.1; p[i + 2] = c.2 }
            }
        }
        return image
    }

    /// The figure at `time` seconds: it walks left to right and/or waves its left arm.
    public static func frame(width: Int, height: Int, time: Double, action: Action = .walkWave) -> RGBImage {
        var image = room(width: width, height: height)
        let s = Float(height) / 480
        let walking = action != .wave, waving = action != .walk
        let cx = Float(width) / 2 + (walking ? Float(sin(time * 1.2)) * 90 * s : 0)
        let step = walking ? Float(sin(time * 6)) * 14 : 0, wave = waving ? Float(sin(time * 5)) * 0.9 : 2.4
        func p(_ x: Float, _ y: Float) -> (x: Float, y: Float) { (cx + x * s, y * s) }
        let skin = RGB(224, 172, 140), shirt = RGB(40, 90, 170), trousers = RGB(40, 40, 60), shoes = RGB(20, 20, 20)
        for (side, swing) in [(Float(-1), step), (Float(1), -step)] {
            let knee = p(side * 30 + swing * 0.5, 340), ankle = p(side * 34 + swing, 430)
            image.drawLine(from: p(side * 22, 250), to: knee, color: trousers, thickness: 26 * s)
            image.drawLine(from: knee, to: ankle, color: trousers, thickness: 22 * s)
            image.drawLine(from: ankle, to: (ankle.x + side * 18 * s, ankle.y + 8 * s), color: shoes, thickness: 14 * s)
        }
        image.drawLine(from: p(0, 120), to: p(0, 250), color: shirt, thickness: 70 * s)
        // Right arm hangs; left arm waves (elbow fixed, forearm swinging up).
        image.drawLine(from: p(-38, 125), to: p(-58, 195), color: shirt, thickness: 20 * s)
        image.drawLine(from: p(-58, 195), to: p(-64, 255), color: skin, thickness: 16 * s)
        let elbow = p(62, 180)
        image.drawLine(from: p(38, 125), to: elbow, color: shirt, thickness: 20 * s)
        image.drawLine(from: elbow, to: (elbow.x + 60 * s * Float(sin(Double(wave) + 0.6)), elbow.y - 60 * s * Float(cos(Double(wave) + 0.6))),
                       color: skin, thickness: 16 * s)
        image.drawLine(from: p(0, 92), to: p(0, 115), color: skin, thickness: 18 * s)
        image.fillCircle(center: p(0, 73), radius: 22 * s, color: skin)
        image.fillCircle(center: p(-8, 68), radius: 2.5 * s, color: RGB(40, 30, 30))
        image.fillCircle(center: p(8, 68), radius: 2.5 * s, color: RGB(40, 30, 30))
        return image
    }
}

extension FigureRenderer {
    /// The figure doing a jumping jack, `openness` of the way through it: 0 stands with the
    /// arms down and the feet together, 1 has the arms straight up and the feet apart.
    public static func jumpingJack(width: Int, height: Int, openness: Double) -> RGBImage {
        var image = room(width: width, height: height)
        let s = Float(height) / 480, cx = Float(width) / 2
        func p(_ x: Float, _ y: Float) -> (x: Float, y: Float) { (cx + x * s, y * s) }
        let a = Float(min(max(openness, 0), 1))
        let skin = RGB(224, 172, 140), shirt = RGB(40, 90, 170), trousers = RGB(40, 40, 60), shoes = RGB(20, 20, 20)
        for side in [Float(-1), 1] {
            let hip = p(side * 22, 250), ankle = p(side * (34 + 70 * a), 430)
            let knee = ((hip.x + ankle.x) / 2, (hip.y + ankle.y) / 2)
            image.drawLine(from: hip, to: knee, color: trousers, thickness: 26 * s)
            image.drawLine(from: knee, to: ankle, color: trousers, thickness: 22 * s)
            image.drawLine(from: ankle, to: (ankle.x + side * 18 * s, ankle.y + 8 * s), color: shoes, thickness: 14 * s)
        }
        image.drawLine(from: p(0, 120), to: p(0, 250), color: shirt, thickness: 70 * s)
        // The arms swing out sideways from hanging (15°) to straight up (165°).
        let theta = (15 + 150 * a) * .pi / 180
        for side in [Float(-1), 1] {
            let shoulder = p(side * 38, 125)
            let elbow = (shoulder.x + side * 70 * s * sinf(theta), shoulder.y + 70 * s * cosf(theta))
            let hand = (shoulder.x + side * 135 * s * sinf(theta), shoulder.y + 135 * s * cosf(theta))
            image.drawLine(from: shoulder, to: elbow, color: shirt, thickness: 20 * s)
            image.drawLine(from: elbow, to: hand, color: skin, thickness: 16 * s)
        }
        image.drawLine(from: p(0, 92), to: p(0, 115), color: skin, thickness: 18 * s)
        image.fillCircle(center: p(0, 73), radius: 22 * s, color: skin)
        image.fillCircle(center: p(-8, 68), radius: 2.5 * s, color: RGB(40, 30, 30))
        image.fillCircle(center: p(8, 68), radius: 2.5 * s, color: RGB(40, 30, 30))
        return image
    }

    /// The openness of `repetitions` jumping jacks over `seconds`, tempo changing from slow
    /// to fast and back (each repetition closed → open → closed), with a second standing
    /// still before and after. Returns the openness at `time`.
    public static func jumpingJackOpenness(time: Double, repetitions: Int, seconds: Double) -> Double {
        let moving = seconds - 2
        guard time > 1, time < 1 + moving else { return 0 }
        // The phase runs 0 → repetitions at a speed proportional to 1 − cos(2πu)/2: three
        // times faster in the middle than at the ends.
        let u = (time - 1) / moving
        let phase = Double(repetitions) * (u - 0.5 * sin(2 * .pi * u) / (2 * .pi))
        return (1 - cos(2 * .pi * phase)) / 2
    }

    /// A small labeled dataset of the figure in labeled folders, as Create ML takes them:
    /// `train/` and `test/`, each with `wave/` and `walk/`, and in them clips of 2 s at 30
    /// fps (640×480 MP4) named LABEL1.mp4, LABEL2.mp4, …: four train and two test clips a
    /// label. Each clip starts at another phase of the motion, and the odd ones show the
    /// figure smaller (farther away).
    public static func writeDataset(to folder: URL) throws {
        for (label, action) in [("wave", Action.wave), ("walk", .walk)] {
            for (split, clips) in [("train", 1...4), ("test", 5...6)] {
                let labelFolder = folder.appendingPathComponent("\(split)/\(label)")
                try FileManager.default.createDirectory(at: labelFolder, withIntermediateDirectories: true)
                for n in clips {
                    let writer = try VideoWriter(path: labelFolder.appendingPathComponent("\(label)\(n).mp4").path, width: 640, height: 480, fps: 30)
                    let size = n % 2 == 0 ? 480 : 400
                    for i in 0..<60 {
                        var canvas = RGBImage(width: 640, height: 480)
                        let figure = frame(width: size * 4 / 3, height: size, time: Double(i) / 30 + Double(n) * 0.7, action: action)
                        for y in 0..<min(480, figure.height) {
                            for x in 0..<min(640, figure.width) {
                                let s = (y * figure.width + x) * 3, d = ((480 - figure.height + y) * 640 + x) * 3
                                canvas.pixels[d] = figure.pixels[s]; canvas.pixels[d + 1] = figure.pixels[s + 1]
                                canvas.pixels[d + 2] = figure.pixels[s + 2]
                            }
                        }
                        try writer.write(canvas)
                    }
                    try writer.finish()
                }
            }
        }
    }
}
