import ArgumentParser
import Foundation
import TFLite

/// The main job on an embedded default: for now, the pose engine on a generated image.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the pose models on a generated image and report what they found and how fast.",
        discussion: """
            Draws a simple standing figure (640×480), letterboxes it into the detector \
            (224×224), crops the figure for the landmark model (256×256), and prints the \
            detector's best person score and box, the landmark model's pose presence, and \
            the median time of each model. Needs nothing but the two model files.
            """)

    @Option(help: "Folder with the .tflite files.") var models: String?
    @Option(help: "Threads per inference.") var threads = 2
    @Option(help: "Timed runs per model.") var runs = 20
    @Option(help: "Also write the generated image here (binary PPM).") var saveImage: String?

    func run() throws {
        let dir = try PoseModels.directory(models)
        let image = RGBImage.standingFigure(width: 640, height: 480)
        if let saveImage { try image.ppm().write(to: URL(fileURLWithPath: saveImage)) }
        print("image: generated standing figure, \(image.width)×\(image.height)")

        let detector = try Interpreter(path: dir.appendingPathComponent(PoseModels.detector).path, options: .init(threads: threads))
        let (scale, padX, padY) = image.letterbox(into: detector.input(0), size: 224)
        let detectorTimes = timeRuns(runs, warmup: 3) { detector.invoke() }
        let best = bestDetection(boxes: detector.output(named: "Identity")!, scores: detector.output(named: "Identity_1")!)
        let box = (x: (best.cx - best.w / 2) * 224, y: (best.cy - best.h / 2) * 224, w: best.w * 224, h: best.h * 224)
        print(String(format: "detector: best person score %.3f (%d anchors ≥ 0.5), box x=%.0f y=%.0f w=%.0f h=%.0f px in the image",
                     best.score, best.count, (box.x - padX) / scale, (box.y - padY) / scale, box.w / scale, box.h / scale))

        let landmark = try Interpreter(path: dir.appendingPathComponent(PoseModels.landmark).path,
                                       options: .init(threads: threads, outputs: ["Identity", "Identity_1", "Identity_3", "Identity_4"]))
        image.crop(x: 160, y: 0, side: 480, into: landmark.input(0), size: 256)
        let landmarkTimes = timeRuns(runs, warmup: 3) { landmark.invoke() }
        print(String(format: "landmarks: pose presence %.3f on the figure's crop", landmark.output(named: "Identity_1")![0]))
        print(String(format: "speed (%d threads, median of %d): detector %.2f ms, landmarks %.2f ms",
                     threads, runs, percentile(detectorTimes, 0.5), percentile(landmarkTimes, 0.5)))
    }

    /// The highest-scoring of the detector's 2254 anchors, decoded (normalised to the 224 input).
    func bestDetection(boxes: UnsafeBufferPointer<Float>, scores: UnsafeBufferPointer<Float>)
        -> (score: Float, count: Int, cx: Float, cy: Float, w: Float, h: Float) {
        // Anchors: 28×28×2 (stride 8), 14×14×2 (16), 7×7×6 (the three stride-32 layers), centres at cell middles.
        var anchors: [(Float, Float)] = []
        for (size, perCell) in [(28, 2), (14, 2), (7, 6)] {
            for row in 0..<size { for col in 0..<size { for _ in 0..<perCell {
                anchors.append(((Float(col) + 0.5) / Float(size), (Float(row) + 0.5) / Float(size)))
            } } }
        }
        var best = 0, count = 0
        for i in 0..<scores.count {
            if scores[i] > scores[best] { best = i }
            if scores[i] >= 0 { count += 1 }   // sigmoid(x) ≥ 0.5 ⇔ x ≥ 0
        }
        let r = boxes.baseAddress! + best * 12
        let score = 1 / (1 + exp(-min(max(scores[best], -100), 100)))
        return (score, count, r[0] / 224 + anchors[best].0, r[1] / 224 + anchors[best].1, r[2] / 224, r[3] / 224)
    }
}

/// An 8-bit RGB image, just enough for the demo (the media module of the pipeline replaces it).
struct RGBImage {
    let width: Int, height: Int
    var pixels: [UInt8]

    /// A person-like figure: head, torso, arms and legs as thick strokes on a light wall and floor.
    static func standingFigure(width: Int, height: Int) -> RGBImage {
        var image = RGBImage(width: width, height: height, pixels: [UInt8](repeating: 0, count: width * height * 3))
        for y in 0..<height { for x in 0..<width {
            let wall: (Float, Float, Float) = y < height * 4 / 5 ? (214, 208, 196) : (150, 120, 90)
            image.set(x, y, (wall.0 - Float(y) * 0.05, wall.1 - Float(y) * 0.05, wall.2))
        } }
        let s = Float(height) / 480, cx = Float(width) / 2
        func p(_ x: Float, _ y: Float) -> (Float, Float) { (cx + x * s, y * s) }
        let skin: (Float, Float, Float) = (224, 172, 140), shirt: (Float, Float, Float) = (40, 90, 170)
        let trousers: (Float, Float, Float) = (40, 40, 60)
        image.stroke(p(-22, 250), p(-30, 340), width: 26 * s, trousers); image.stroke(p(-30, 340), p(-34, 430), width: 22 * s, trousers)
        image.stroke(p(22, 250), p(30, 340), width: 26 * s, trousers); image.stroke(p(30, 340), p(34, 430), width: 22 * s, trousers)
        image.stroke(p(-34, 430), p(-52, 438), width: 14 * s, (20, 20, 20)); image.stroke(p(34, 430), p(52, 438), width: 14 * s, (20, 20, 20))
        image.stroke(p(0, 120), p(0, 250), width: 70 * s, shirt)
        image.stroke(p(-38, 125), p(-58, 195), width: 20 * s, shirt); image.stroke(p(-58, 195), p(-64, 255), width: 16 * s, skin)
        image.stroke(p(38, 125), p(58, 195), width: 20 * s, shirt); image.stroke(p(58, 195), p(64, 255), width: 16 * s, skin)
        image.stroke(p(0, 92), p(0, 115), width: 18 * s, skin)
        image.stroke(p(0, 72), p(0, 74), width: 44 * s, skin)
        image.stroke(p(-8, 68), p(-7, 68), width: 5 * s, (40, 30, 30)); image.stroke(p(8, 68), p(9, 68), width: 5 * s, (40, 30, 30))
        return image
    }

    mutating func set(_ x: Int, _ y: Int, _ c: (Float, Float, Float)) {
        let i = (y * width + x) * 3
        pixels[i] = UInt8(max(0, min(255, c.0))); pixels[i + 1] = UInt8(max(0, min(255, c.1))); pixels[i + 2] = UInt8(max(0, min(255, c.2)))
    }

    /// A line segment `width` thick with round ends.
    mutating func stroke(_ a: (Float, Float), _ b: (Float, Float), width w: Float, _ color: (Float, Float, Float)) {
        let r = w / 2
        let x0 = max(0, Int(min(a.0, b.0) - r)), x1 = min(width - 1, Int(max(a.0, b.0) + r) + 1)
        let y0 = max(0, Int(min(a.1, b.1) - r)), y1 = min(height - 1, Int(max(a.1, b.1) + r) + 1)
        let dx = b.0 - a.0, dy = b.1 - a.1, len2 = max(dx * dx + dy * dy, 1e-6)
        guard x0 <= x1, y0 <= y1 else { return }
        for y in y0...y1 { for x in x0...x1 {
            let t = max(0, min(1, ((Float(x) - a.0) * dx + (Float(y) - a.1) * dy) / len2))
            let ex = Float(x) - (a.0 + t * dx), ey = Float(y) - (a.1 + t * dy)
            if ex * ex + ey * ey <= r * r { set(x, y, color) }
        } }
    }

    func sample(_ x: Float, _ y: Float, _ c: Int) -> Float {
        let xi = min(max(Int(x.rounded(.down)), 0), width - 1), yi = min(max(Int(y.rounded(.down)), 0), height - 1)
        let xj = min(xi + 1, width - 1), yj = min(yi + 1, height - 1)
        let fx = x - Float(xi), fy = y - Float(yi)
        func v(_ x: Int, _ y: Int) -> Float { Float(pixels[(y * width + x) * 3 + c]) }
        return (v(xi, yi) * (1 - fx) + v(xj, yi) * fx) * (1 - fy) + (v(xi, yj) * (1 - fx) + v(xj, yj) * fx) * fy
    }

    /// Letterboxes into a size×size detector input (px/127.5 − 1, padding −1).
    func letterbox(into out: UnsafeMutableBufferPointer<Float>, size: Int) -> (scale: Float, padX: Float, padY: Float) {
        let scale = Float(size) / Float(max(width, height))
        let padX = (Float(size) - Float(width) * scale) / 2, padY = (Float(size) - Float(height) * scale) / 2
        for y in 0..<size { for x in 0..<size {
            let sx = (Float(x) + 0.5 - padX) / scale - 0.5, sy = (Float(y) + 0.5 - padY) / scale - 0.5
            let inside = sx >= -0.5 && sy >= -0.5 && sx <= Float(width) - 0.5 && sy <= Float(height) - 0.5
            for c in 0..<3 { out[(y * size + x) * 3 + c] = inside ? sample(sx, sy, c) / 127.5 - 1 : -1 }
        } }
        return (scale, padX, padY)
    }

    /// Crops a side×side square at (x, y) into a size×size landmark input (px/255).
    func crop(x: Int, y: Int, side: Int, into out: UnsafeMutableBufferPointer<Float>, size: Int) {
        let scale = Float(side) / Float(size)
        for oy in 0..<size { for ox in 0..<size {
            let sx = Float(x) + (Float(ox) + 0.5) * scale - 0.5, sy = Float(y) + (Float(oy) + 0.5) * scale - 0.5
            for c in 0..<3 { out[(oy * size + ox) * 3 + c] = sample(sx, sy, c) / 255 }
        } }
    }

    func ppm() -> Data { Data("P6\n\(width) \(height)\n255\n".utf8) + Data(pixels) }
}
