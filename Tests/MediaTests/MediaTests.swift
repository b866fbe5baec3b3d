import Foundation
import Images
import Media
import TestData
import XCTest

// MARK: - Shared data

private func sharedFile(_ relative: String) throws -> String { try TestData.shared(relative).path }

private func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) * 1e-9 }

/// Max and mean absolute difference of two equal-size images, per channel value.
private func difference(_ a: RGBImage, _ b: RGBImage) -> (max: Int, mean: Double) {
    precondition(a.width == b.width && a.height == b.height)
    var mx = 0, sum = 0
    a.pixels.withUnsafeBufferPointer { pa in
        b.pixels.withUnsafeBufferPointer { pb in
            for i in 0..<pa.count {
                let d = abs(Int(pa[i]) - Int(pb[i]))
                sum += d
                if d > mx { mx = d }
            }
        }
    }
    return (mx, Double(sum) / Double(max(1, a.pixels.count)))
}

/// Frame `index` (0-based, as decoded) of a video.
private func frame(_ index: Int, of path: String) throws -> Frame {
    let reader = try VideoReader(path)
    defer { reader.close() }
    var f: Frame?
    for _ in 0...index { f = try reader.next() }
    return try XCTUnwrap(f, "\(path) has fewer than \(index + 1) frames")
}

/// A test picture: gradients plus a square that moves with `t`.
private func testPicture(width: Int, height: Int, t: Int) -> RGBImage {
    var px = [UInt8](repeating: 0, count: width * height * 3)
    for y in 0..<height {
        for x in 0..<width {
            let i = (y * width + x) * 3
            px[i] = UInt8(x * 255 / max(1, width - 1))
            px[i + 1] = UInt8(y * 255 / max(1, height - 1))
            px[i + 2] = 128
            let sx = (t * 2) % max(1, width - 16)
            if x >= sx && x < sx + 16 && y >= height / 4 && y < height / 4 + 16 {
                px[i] = 250; px[i + 1] = 250; px[i + 2] = 20
            }
        }
    }
    return RGBImage(width: width, height: height, pixels: px)
}

// MARK: - A minimal PNG encoder (stored deflate blocks), to make the pixel formats FFmpeg's
// PNG decoder hands out: gray, gray+alpha, RGBA, palette, 16-bit.

private func crc32(_ bytes: [UInt8]) -> UInt32 {
    var c: UInt32 = 0xFFFF_FFFF
    for b in bytes {
        c ^= UInt32(b)
        for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    }
    return ~c
}

private func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }

/// PNG bytes: `rows` are the raw scanlines (without the filter byte).
private func makePNG(width: Int, height: Int, bitDepth: UInt8, colorType: UInt8, rows: [[UInt8]],
                     palette: [UInt8]? = nil) -> Data {
    func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(UInt32(data.count)) + body + be32(crc32(body))
    }
    var raw: [UInt8] = []
    for r in rows { raw.append(0); raw += r }
    var z: [UInt8] = [0x78, 0x01]
    var pos = 0
    repeat {
        let n = min(65535, raw.count - pos)
        let final: UInt8 = pos + n == raw.count ? 1 : 0
        z += [final, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
        z += raw[pos..<(pos + n)]
        pos += n
    } while pos < raw.count
    var a: UInt32 = 1, b: UInt32 = 0
    for x in raw { a = (a + UInt32(x)) % 65521; b = (b + a) % 65521 }
    z += be32(b << 16 | a)
    var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    png += chunk("IHDR", be32(UInt32(width)) + be32(UInt32(height)) + [bitDepth, colorType, 0, 0, 0])
    if let palette { png += chunk("PLTE", palette) }
    png += chunk("IDAT", z)
    png += chunk("IEND", [])
    return Data(png)
}

final class MediaTests: XCTestCase {
    private var tempDir: URL!

    override func setUpWithError() throws {
        tempDir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-media-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: tempDir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: tempDir)
    }

    private func temp(_ name: String) -> String { tempDir.appendingPathComponent(name).path }

    // MARK: images

    func testReadImageGivesTheRightSize() throws {
        let sizes: [(String, Int, Int)] = [
            ("pose.decoded.png", 1000, 667), ("pose.jpg", 1000, 667), ("three_people.decoded.png", 1049, 861),
            ("pushup_correct39_f40.png", 640, 360), ("pushup_correct121_f70.png", 1920, 1080),
            ("pushup_wrong106_f60.png", 854, 480), ("pushup_wrong64_f40.png", 320, 240),
            ("no_person.png", 640, 120), ("partial_person.png", 214, 360),
        ]
        for (name, w, h) in sizes {
            let image = try readImage(try sharedFile("fixtures/blazepose/images/\(name)"))
            XCTAssertEqual(image.width, w, name)
            XCTAssertEqual(image.height, h, name)
            XCTAssertEqual(image.pixels.count, w * h * 3, name)
        }
        let info = try VideoReader(try sharedFile("fixtures/blazepose/images/pose.decoded.png")).info
        XCTAssertEqual(info.frameCount, 1)
        XCTAssertEqual(info.fps, 0, "a still has no frame rate")
        XCTAssertEqual(info.codec, "png")
    }

    func testPNGWrittenAndReadBackIsIdentical() throws {
        // A generated picture with an odd size, and a real one.
        var images = [testPicture(width: 37, height: 23, t: 3)]
        images.append(try readImage(try sharedFile("fixtures/blazepose/images/pose.decoded.png")))
        for (n, image) in images.enumerated() {
            let path = temp("round\(n).png")
            try writePNG(image, to: path)
            XCTAssertFalse(TestData.hasTemporaryFile(path))
            let back = try readImage(path)
            XCTAssertEqual(back, image, "PNG round trip \(n) changed pixels")
        }
        XCTAssertThrowsError(try writePNG(images[0], to: temp("no/such/folder/x.png"))) { error in
            XCTAssertTrue("\(error)".contains("x.png"), "\(error)")
        }
    }

    /// JPEG (the live page's frames): decoded back by FFmpeg, the real picture is within a
    /// few grey levels on average (quality 5, 4:2:0 chroma: the mean error of such JPEGs is
    /// ~1–3 levels; 4 is the bound), at under a fifth of the RGB bytes; odd sizes work, and
    /// one encoder serves pictures of different sizes in turn.
    func testJPEGEncodesWhatFFmpegDecodes() throws {
        let encoder = JPEGEncoder()
        let real = try readImage(try sharedFile("fixtures/blazepose/images/pose.decoded.png"))
        for (n, image) in [real, testPicture(width: 37, height: 23, t: 3), real].enumerated() {
            let jpeg = try encoder.encode(image)
            let path = temp("frame\(n).jpg")
            try jpeg.write(to: URL(fileURLWithPath: path))
            let back = try readImage(path)
            XCTAssertEqual(back.width, image.width)
            XCTAssertEqual(back.height, image.height)
            var error = 0
            for i in 0..<image.pixels.count { error += abs(Int(back.pixels[i]) - Int(image.pixels[i])) }
            let mean = Double(error) / Double(image.pixels.count)
            if image.width > 100 {
                XCTAssertLessThan(mean, 4, "mean error \(mean) levels")
                XCTAssertLessThan(jpeg.count, image.pixels.count / 5)
            } else {
                XCTAssertLessThan(mean, 12, "a 37×23 picture is mostly block edges: mean error \(mean)")
            }
        }
    }

    /// Gray, gray+alpha, RGBA, palette and 16-bit PNGs all come out as the RGB they show
    /// (alpha is dropped, not blended).
    func testPNGPixelFormatsBecomeRGB() throws {
        let w = 5, h = 3
        var expected: [UInt8] = []
        var gray: [[UInt8]] = [], grayAlpha: [[UInt8]] = [], rgba: [[UInt8]] = [], indexed: [[UInt8]] = []
        var gray16: [[UInt8]] = [], rgb48: [[UInt8]] = []
        let palette: [UInt8] = [255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30]
        var expectedGray: [UInt8] = [], expectedPalette: [UInt8] = []
        for y in 0..<h {
            var g: [UInt8] = [], ga: [UInt8] = [], c: [UInt8] = [], ix: [UInt8] = [], g16: [UInt8] = [], c48: [UInt8] = []
            for x in 0..<w {
                let v = UInt8(x * 50 + y * 7)
                let (r, gg, b) = (UInt8(x * 60), UInt8(y * 100), UInt8(255 - x * 40))
                g.append(v); ga += [v, UInt8(x * 60)]
                c += [r, gg, b, UInt8(y * 120)]
                let k = (x + y) % 4
                ix.append(UInt8(k))
                g16 += [v, 0x80]
                c48 += [r, 0x7F, gg, 0x7F, b, 0x7F]
                expected += [r, gg, b]
                expectedGray += [v, v, v]
                expectedPalette += palette[(k * 3)..<(k * 3 + 3)]
            }
            gray.append(g); grayAlpha.append(ga); rgba.append(c); indexed.append(ix); gray16.append(g16); rgb48.append(c48)
        }
        let cases: [(String, Data, [UInt8])] = [
            ("gray8", makePNG(width: w, height: h, bitDepth: 8, colorType: 0, rows: gray), expectedGray),
            ("gray+alpha", makePNG(width: w, height: h, bitDepth: 8, colorType: 4, rows: grayAlpha), expectedGray),
            ("rgba", makePNG(width: w, height: h, bitDepth: 8, colorType: 6, rows: rgba), expected),
            ("palette", makePNG(width: w, height: h, bitDepth: 8, colorType: 3, rows: indexed, palette: palette), expectedPalette),
            ("gray16", makePNG(width: w, height: h, bitDepth: 16, colorType: 0, rows: gray16), expectedGray),
            ("rgb48", makePNG(width: w, height: h, bitDepth: 16, colorType: 2, rows: rgb48), expected),
        ]
        for (name, data, want) in cases {
            let path = temp("\(name).png")
            try data.write(to: URL(fileURLWithPath: path))
            let image = try readImage(path)
            XCTAssertEqual([image.width, image.height], [w, h], name)
            let d = difference(image, RGBImage(width: w, height: h, pixels: want))
            XCTAssertLessThanOrEqual(d.max, 1, "\(name): \(image.pixels) vs \(want)")
        }
    }

    // MARK: pixels vs the ffmpeg command line

    /// The pose fixtures were computed from PNGs that the ffmpeg CLI made (`-pix_fmt rgb24`).
    /// With SWS_BICUBIC (the CLI's default flags), the frame's own colour matrix and range (BT.709
    /// for the clips tagged so, BT.601 for untagged ones, as the CLI's scale filter does) and an
    /// aligned scratch row for widths that are not a multiple of 32, our frames are identical to
    /// them: the bound asserted is 0. SWS_ACCURATE_RND (max 6–48) or SWS_FULL_CHR_H_INT (max 4 on
    /// 854×480) move away from what the CLI does.
    func testFramesMatchFFmpegPNGs() throws {
        let cases: [(String, Int, String)] = [
            ("data/pushups/test/correct/correct39.mp4", 40, "pushup_correct39_f40"),     // 640×360 yuv420p, untagged
            ("data/pushups/test/correct/correct121.mp4", 70, "pushup_correct121_f70"),   // 1920×1080 yuv420p, BT.709
            ("data/pushups/test/wrong/wrong106.mp4", 60, "pushup_wrong106_f60"),         // 854×480 yuv420p, BT.709
            ("data/pushups/test/wrong/wrong64.mp4", 40, "pushup_wrong64_f40"),           // 320×240 yuv420p, untagged
        ]
        for (video, index, png) in cases {
            let ref = try readImage(try sharedFile("fixtures/blazepose/images/\(png).png"))
            let f = try frame(index, of: try sharedFile(video))
            XCTAssertEqual(f.index, index)
            XCTAssertEqual(f.image.width, ref.width, png)
            XCTAssertEqual(f.image.height, ref.height, png)
            guard f.image.width == ref.width, f.image.height == ref.height else { continue }
            let d = difference(f.image, ref)
            print("\(png): max abs difference \(d.max), mean \(String(format: "%.4f", d.mean))")
            XCTAssertEqual(d.max, 0, "\(png): frame \(index) of \(video) differs from the ffmpeg CLI's PNG")
        }
    }

    /// None of the fixture PNGs comes from a 4:4:4 clip; wrong13 (yuv444p, 640×360) is the second
    /// segment of montage_01 (yuv420p, re-encoded, starting at frame 117), so its frames must look
    /// the same up to the montage's chroma subsampling and lossy encoding.
    func testYUV444ClipLooksLikeItsMontageCopy() throws {
        let clip = try sharedFile("data/pushups/test/wrong/wrong13.mp4")
        let montage = try sharedFile("data/pushups/montage/montage_01.mp4")
        let reader = try VideoReader(clip)
        XCTAssertEqual(reader.info.width, 640)
        XCTAssertEqual(reader.info.height, 360)
        let own = try XCTUnwrap(try reader.next())
        let copy = try frame(117, of: montage)
        let d = difference(own.image, copy.image)
        print("wrong13 (yuv444p) frame 0 vs montage_01 frame 117: max \(d.max), mean \(String(format: "%.3f", d.mean))")
        XCTAssertLessThan(d.mean, 4, "a 4:4:4 frame decoded wrongly (mean difference \(d.mean))")
        XCTAssertEqual(reader.warnings, [])
    }

    // MARK: rotation

    func testRotatingAnImage() {
        // 3×2:  a b c
        //       d e f     (each pixel's R is its letter index, G = 100 + R, B = 200 + R)
        var px: [UInt8] = []
        for k in 0..<6 { px += [UInt8(k), UInt8(100 + k), UInt8(200 + k)] }
        let image = RGBImage(width: 3, height: 2, pixels: px)
        func reds(_ i: RGBImage) -> [UInt8] { stride(from: 0, to: i.pixels.count, by: 3).map { i.pixels[$0] } }
        let r90 = image.rotated(clockwise: 90)      // d a / e b / f c
        XCTAssertEqual([r90.width, r90.height], [2, 3])
        XCTAssertEqual(reds(r90), [3, 0, 4, 1, 5, 2])
        let r180 = image.rotated(clockwise: 180)    // f e d / c b a
        XCTAssertEqual([r180.width, r180.height], [3, 2])
        XCTAssertEqual(reds(r180), [5, 4, 3, 2, 1, 0])
        let r270 = image.rotated(clockwise: 270)    // c f / b e / a d
        XCTAssertEqual([r270.width, r270.height], [2, 3])
        XCTAssertEqual(reds(r270), [2, 5, 1, 4, 0, 3])
        XCTAssertEqual(image.rotated(clockwise: -90), r270)
        XCTAssertEqual(r90.rotated(clockwise: 270), image)
        XCTAssertEqual(r90.pixels[1], 103, "G travels with its pixel")
        XCTAssertEqual(image.rotated(clockwise: 360), image)
    }

    /// Writes a landscape MP4, then sets its track matrix (tkhd) the way phones tag portrait
    /// videos, and checks that the reader turns the frames upright.
    func testRotationMetadataIsHonoured() throws {
        let w = 64, h = 32
        // Left half red, right half blue, a green block in the top-left corner.
        var px = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h { for x in 0..<w {
            let i = (y * w + x) * 3
            if x < 12 && y < 12 { px[i + 1] = 255 } else if x < w / 2 { px[i] = 255 } else { px[i + 2] = 255 }
        } }
        let picture = RGBImage(width: w, height: h, pixels: px)
        let plain = temp("plain.mp4")
        let writer = try VideoWriter(path: plain, width: w, height: h, fps: 10)
        for _ in 0..<3 { try writer.write(picture) }
        try writer.finish()
        let original = try Data(contentsOf: URL(fileURLWithPath: plain))
        guard let tkhd = original.range(of: Data("tkhd".utf8)) else { throw XCTSkip("no tkhd box in the written MP4") }
        let boxStart = tkhd.lowerBound - 4
        let matrixAt = boxStart + (original[tkhd.upperBound] == 1 ? 60 : 48)

        // (a b u / c d v / x y w), 16.16 except u, v, w (2.30); "rotate=90" is a=0 b=1 c=-1 d=0.
        let one: Int32 = 0x10000
        let matrices: [(Int, [Int32])] = [
            (90, [0, one, 0, -one, 0, 0, Int32(h) << 16, 0, 0x4000_0000]),
            (180, [-one, 0, 0, 0, -one, 0, Int32(w) << 16, Int32(h) << 16, 0x4000_0000]),
            (270, [0, -one, 0, one, 0, 0, 0, Int32(w) << 16, 0x4000_0000]),
        ]
        for (degrees, m) in matrices {
            var data = original
            for (k, v) in m.enumerated() {
                let u = UInt32(bitPattern: v)
                for b in 0..<4 { data[matrixAt + k * 4 + b] = UInt8((u >> (24 - 8 * b)) & 0xFF) }
            }
            let path = temp("rot\(degrees).mp4")
            try data.write(to: URL(fileURLWithPath: path))
            let reader = try VideoReader(path)
            XCTAssertEqual(reader.info.rotation, degrees)
            let (ew, eh) = degrees == 180 ? (w, h) : (h, w)
            XCTAssertEqual([reader.info.width, reader.info.height], [ew, eh], "\(degrees)°")
            let f = try XCTUnwrap(try reader.next())
            XCTAssertEqual([f.image.width, f.image.height], [ew, eh])
            // Where the green corner block went: top-right (90), bottom-right (180), bottom-left (270).
            let (gx, gy) = degrees == 90 ? (ew - 4, 4) : degrees == 180 ? (ew - 4, eh - 4) : (4, eh - 4)
            let g = f.image.pixel(gx, gy)
            XCTAssertTrue(g.g > 180 && g.r < 80 && g.b < 80, "\(degrees)°: green block not at (\(gx), \(gy)): \(g)")
            let expected = picture.rotated(clockwise: degrees)
            XCTAssertLessThan(difference(f.image, expected).mean, 6, "\(degrees)°")
        }
    }

    // MARK: the push-up set

    /// The README's table of the test split: resolution × frame rate × label counts, frame totals,
    /// duration range, codec; and the montages' facts.
    func testPushupTestSetMatchesTheREADME() throws {
        let root = try sharedFile("data/pushups/test")
        var counts: [String: Int] = [:]
        var frames: [String: Int] = [:]
        var durations: [Double] = []
        for label in ["correct", "wrong"] {
            let dir = root + "/" + label
            let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".mp4") }.sorted()
            XCTAssertEqual(files.count, label == "correct" ? 24 : 21)
            for file in files {
                let reader = try VideoReader(dir + "/" + file)
                let i = reader.info
                XCTAssertEqual(i.codec, "h264", file)
                XCTAssertEqual(i.rotation, 0, file)
                XCTAssertFalse(i.isLive)
                let n = try XCTUnwrap(i.frameCount, file)
                let d = try XCTUnwrap(i.duration, file)
                // Constant frame rate from 0: frames = duration × fps.
                XCTAssertEqual(Double(n), d * i.fps, accuracy: 1.01, file)
                counts["\(label) \(i.width)x\(i.height) \(String(format: "%.2f", i.fps))", default: 0] += 1
                frames[label, default: 0] += n
                durations.append(d)
                reader.close()
            }
        }
        let expected: [String: Int] = [
            "correct 320x240 25.00": 5, "wrong 320x240 25.00": 6,
            "correct 640x360 25.00": 8, "wrong 640x360 25.00": 3,
            "wrong 640x360 29.97": 6,
            "wrong 854x480 30.00": 2,
            "correct 1280x720 21.43": 1,
            "correct 1920x1080 29.97": 9, "wrong 1920x1080 29.97": 2,
            "correct 1920x1080 55.00": 1, "wrong 1920x1080 55.00": 2,
        ]
        XCTAssertEqual(counts, expected)
        XCTAssertEqual(frames["correct"], 3281)
        XCTAssertEqual(frames["wrong"], 3943)
        XCTAssertEqual(durations.min() ?? 0, 2.4, accuracy: 0.05)
        XCTAssertEqual(durations.max() ?? 0, 15.9, accuracy: 0.05)

        for (name, n) in [("montage_01.mp4", 657), ("montage_02.mp4", 645), ("montage_03.mp4", 810)] {
            let info = try VideoReader(try sharedFile("data/pushups/montage/\(name)")).info
            XCTAssertEqual(info.frameCount, n, name)
            XCTAssertEqual(info.fps, 30, name)
            XCTAssertEqual([info.width, info.height], [640, 360], name)
            XCTAssertEqual(info.duration ?? 0, Double(n) / 30, accuracy: 1e-6, name)
        }
    }

    func testMontageDecodesAllFramesAtTheirTimes() throws {
        let reader = try VideoReader(try sharedFile("data/pushups/montage/montage_01.mp4"))
        var n = 0
        while let f = try reader.next() {
            XCTAssertEqual(f.index, n)
            if f.time != Double(n) / 30 { XCTFail("frame \(n) at \(f.time), not \(n)/30"); break }
            XCTAssertEqual(f.image.width, 640)
            XCTAssertEqual(f.image.height, 360)
            n += 1
        }
        XCTAssertEqual(n, 657)
        XCTAssertNil(try reader.next(), "nil again after the end")
        XCTAssertEqual(reader.warnings, [])
        XCTAssertEqual(reader.droppedFrames, 0)
    }

    func testTargetFPSResamplesByTimestamp() throws {
        let path = try sharedFile("data/pushups/montage/montage_01.mp4")
        // Reference: every frame's picture, to check which source frame each output shows.
        let all = try VideoReader(path)
        var source: [RGBImage] = []
        while let f = try all.next() { source.append(f.image) }
        XCTAssertEqual(source.count, 657)

        // 15 fps: output i shows source frame 2i; 329 frames (i/15 < 21.9 s), every other one dropped.
        let half = try VideoReader(path, options: ReaderOptions(targetFPS: 15))
        var n = 0
        while let f = try half.next() {
            XCTAssertEqual(f.time, Double(n) / 15, accuracy: 1e-9)
            XCTAssertEqual(f.index, n)
            if f.image != source[2 * n] { XCTFail("15 fps frame \(n) is not source frame \(2 * n)"); break }
            n += 1
        }
        XCTAssertEqual(n, 329)
        XCTAssertEqual(half.skippedFrames, 328)

        // 60 fps: output i shows source frame i/2 (each shown twice), 1314 frames, none dropped.
        let double = try VideoReader(path, options: ReaderOptions(targetFPS: 60))
        n = 0
        while let f = try double.next() {
            XCTAssertEqual(f.time, Double(n) / 60, accuracy: 1e-9)
            if n % 50 == 0 || n > 1300, f.image != source[n / 2] { XCTFail("60 fps frame \(n) is not source frame \(n / 2)"); break }
            n += 1
        }
        XCTAssertEqual(n, 1314)
        XCTAssertEqual(double.skippedFrames, 0)
    }

    // MARK: damaged input and errors

    func testTruncatedFileGivesTheFramesBeforeTheCut() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: try sharedFile("data/pushups/montage/montage_01.mp4")))
        let cut = temp("cut.mp4")
        try data.prefix(data.count * 6 / 10).write(to: URL(fileURLWithPath: cut))
        let reader = try VideoReader(cut)
        XCTAssertEqual(reader.info.frameCount, 657, "the index (moov, at the front) is intact")
        var n = 0, last = -1.0
        while let f = try reader.next() {
            XCTAssertGreaterThan(f.time, last)
            last = f.time
            n += 1
        }
        XCTAssertGreaterThan(n, 300)
        XCTAssertLessThan(n, 657)
        XCTAssertNil(try reader.next())
        print("truncated: \(n) frames, warnings: \(reader.warnings)")
        XCTAssertTrue(reader.warnings.contains { $0.contains("truncated") }, "\(reader.warnings)")
    }

    func testCorruptedBytesBecomeWarnings() throws {
        var data = try Data(contentsOf: URL(fileURLWithPath: try sharedFile("data/pushups/montage/montage_01.mp4")))
        var seed: UInt64 = 42
        for start in [400_000, 900_000, 1_300_000] where start + 3000 < data.count {
            for i in start..<(start + 3000) {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                data[i] = UInt8(truncatingIfNeeded: seed >> 33)
            }
        }
        let path = temp("damaged.mp4")
        try data.write(to: URL(fileURLWithPath: path))
        let reader = try VideoReader(path)
        var n = 0
        while try reader.next() != nil { n += 1 }
        print("damaged: \(n) frames, warnings: \(reader.warnings)")
        XCTAssertGreaterThan(n, 600)
        XCTAssertFalse(reader.warnings.isEmpty)
        XCTAssertTrue(reader.warnings.allSatisfy { $0.hasPrefix(path) && !$0.contains("\n") })
    }

    func testTextFileNamedMP4IsRefused() throws {
        let path = temp("notes.mp4")
        try "these are my notes, not a video\n".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try VideoReader(path)) { error in
            XCTAssertEqual(error as? MediaError,
                           MediaError("\(path): not a video or image FFmpeg can read (Invalid data found when processing input)"))
        }
        XCTAssertThrowsError(try readImage(path))
    }

    func testMissingFile() {
        let path = temp("absent.mp4")
        XCTAssertThrowsError(try VideoReader(path)) { error in
            XCTAssertEqual(error as? MediaError, MediaError("no such file: \(path)"))
        }
        XCTAssertThrowsError(try readImage(path)) { error in
            XCTAssertEqual("\(error)", "no such file: \(path)")
        }
    }

    func testAbsentCameraListsTheCamerasThatExist() {
        XCTAssertThrowsError(try VideoReader("/dev/video99")) { error in
            let message = "\(error)"
            XCTAssertTrue(message.hasPrefix("/dev/video99: no such camera ("), message)
            XCTAssertTrue(message.contains("cameras here: /dev/video") || message.contains("no cameras found"), message)
        }
    }

    /// Closed loopback ports only: an HTTP connection is refused at once; a UDP source that never
    /// sends must give up after the timeout.
    func testClosedLoopbackAddressesFailInTime() {
        let timeout = 1.5
        for url in ["http://127.0.0.1:9/x.mp4", "udp://127.0.0.1:9"] {
            let t0 = now()
            XCTAssertThrowsError(try VideoReader(url, options: ReaderOptions(timeout: timeout))) { error in
                let message = "\(error)"
                XCTAssertTrue(message.hasPrefix(url + ": "), message)
                XCTAssertFalse(message.contains("\n"))
                print(message)
            }
            XCTAssertLessThan(now() - t0, timeout + 2, url)
        }
    }

    // MARK: writing

    func testVideoWriterRoundTrip() throws {
        for (name, w, h) in [("out.mp4", 96, 64), ("out.mkv", 100, 60)] {
            let path = temp(name)
            let writer = try VideoWriter(path: path, width: w, height: h, fps: 30)
            var pictures: [RGBImage] = []
            for t in 0..<30 {
                let p = testPicture(width: w, height: h, t: t)
                pictures.append(p)
                try writer.write(p)
                XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the real name appears only at finish()")
            }
            XCTAssertThrowsError(try writer.write(RGBImage(width: 10, height: 10)))
            try writer.finish()
            XCTAssertFalse(TestData.hasTemporaryFile(path))
            XCTAssertTrue(FileManager.default.fileExists(atPath: path))

            let reader = try VideoReader(path)
            XCTAssertEqual([reader.info.width, reader.info.height], [w, h], name)
            XCTAssertEqual(reader.info.fps, 30, accuracy: 1e-6, name)
            var n = 0, worstMean = 0.0
            var decoded: [RGBImage] = []
            let timeAccuracy = name.hasSuffix(".mkv") ? 0.0006 : 1e-9   // MKV keeps milliseconds
            while let f = try reader.next() {
                XCTAssertEqual(f.time, Double(n) / 30, accuracy: timeAccuracy)
                // Lossy (H.264 crf 23, 4:2:0 chroma): a mean error of a few levels per channel value.
                let d = difference(f.image, pictures[n])
                worstMean = max(worstMean, d.mean)
                decoded.append(f.image)
                n += 1
            }
            print("\(name) (\(writer.encoderName)): worst mean abs difference per frame \(String(format: "%.2f", worstMean))")
            XCTAssertEqual(n, 30, name)
            XCTAssertLessThan(worstMean, 4, name)

            // Resampling at the file's own rate hands out every frame once, ms-rounded times or not.
            let same = try VideoReader(path, options: ReaderOptions(targetFPS: 30))
            n = 0
            while let f = try same.next() {
                if n >= decoded.count || f.image != decoded[n] { break }
                n += 1
            }
            XCTAssertEqual(n, 30, name)
            XCTAssertEqual(same.skippedFrames, 0, name)
        }
    }

    func testVideoWriterLeavesNoHalfFile() throws {
        let path = temp("abandoned.mp4")
        do {
            let writer = try VideoWriter(path: path, width: 64, height: 64, fps: 25)
            try writer.write(RGBImage(width: 64, height: 64))
            XCTAssertTrue(TestData.hasTemporaryFile(path))
        }   // dropped without finish(), as when a run is interrupted
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        XCTAssertFalse(TestData.hasTemporaryFile(path))
        XCTAssertThrowsError(try VideoWriter(path: temp("no/such/folder/x.mp4"), width: 64, height: 64, fps: 25)) { error in
            XCTAssertTrue("\(error)".contains("does the folder"), "\(error)")
        }
        XCTAssertThrowsError(try VideoWriter(path: temp("x.notavideotype"), width: 64, height: 64, fps: 25))
        // Odd sizes are padded by a repeated last row/column to the even size H.264 4:2:0 needs.
        let odd = temp("odd.mp4")
        let writer = try VideoWriter(path: odd, width: 33, height: 17, fps: 25)
        try writer.write(testPicture(width: 33, height: 17, t: 0))
        try writer.finish()
        let info = try VideoReader(odd).info
        XCTAssertEqual([info.width, info.height], [34, 18])
    }

    // MARK: live mode

    /// A short 30 fps test video of `frames` frames.
    private func shortVideo(_ name: String, frames: Int) throws -> String {
        let path = temp(name)
        let writer = try VideoWriter(path: path, width: 64, height: 48, fps: 30)
        for t in 0..<frames { try writer.write(testPicture(width: 64, height: 48, t: t)) }
        try writer.finish()
        return path
    }

    /// A consumer slower than the source: the mailbox keeps only the newest frame and counts each
    /// one it replaced, so nothing queues up. The consumer takes one frame, then nothing until
    /// the source has ended: of 15 frames, 2 are taken and 13 dropped, whatever the timing.
    func testLiveModeKeepsTheNewestFrameAndCountsTheDropped() throws {
        let reader = try VideoReader(try shortVideo("live15.mp4", frames: 15), options: ReaderOptions(live: true))
        XCTAssertTrue(reader.info.isLive)
        let first = try XCTUnwrap(try reader.next())
        XCTAssertEqual(first.index, 0)
        reader.waitForEndOfInput()
        let newest = try XCTUnwrap(try reader.next())
        XCTAssertEqual(newest.index, 1)
        // Paced at the file's own 30 fps: the 15th frame comes 14/30 s after the first at the
        // earliest (sleeping only ever makes it later). 1 ms for the clock's rounding.
        XCTAssertGreaterThan(newest.time - first.time, 14.0 / 30 - 0.001)
        XCTAssertNil(try reader.next())
        XCTAssertEqual(reader.droppedFrames, 13, "15 decoded, 2 taken")
        XCTAssertEqual(reader.skippedFrames, 0)
        XCTAssertEqual(reader.warnings, [], "the end of a file is no warning")
        XCTAssertNil(reader.endReason)
    }

    /// In live mode targetFPS caps the rate: the first frame of each 1/10 s slot is kept (by the
    /// paced file's own timestamps), the rest skipped on purpose and not counted as dropped.
    func testLiveModeTargetFPSCapsTheRate() throws {
        let reader = try VideoReader(try shortVideo("live30.mp4", frames: 30), options: ReaderOptions(targetFPS: 10, live: true))
        var times: [Double] = []
        while let f = try reader.next() { times.append(f.time) }
        XCTAssertEqual(times.count + reader.droppedFrames, 10, "one frame per 0.1 s of a 1 s video")
        XCTAssertEqual(reader.skippedFrames, 20)
        XCTAssertEqual(times, times.sorted(), "each frame is newer than the one before")
    }

    /// close() on a live reader in the middle of a long file stops its thread: next() says nil.
    func testCloseStopsALiveReader() throws {
        let reader = try VideoReader(try sharedFile("data/pushups/montage/montage_01.mp4"), options: ReaderOptions(live: true))
        XCTAssertNotNil(try reader.next())
        reader.close()
        XCTAssertNil(try reader.next())
        XCTAssertEqual(reader.warnings, [])
    }

    /// interrupt() (Ctrl-C, from any thread) ends the reading: next() says nil, with no error.
    func testInterruptEndsTheReading() throws {
        let reader = try VideoReader(try sharedFile("data/pushups/montage/montage_01.mp4"), options: ReaderOptions(live: true))
        defer { reader.close() }
        XCTAssertNotNil(try reader.next())
        reader.interrupt()
        var n = 0
        while try reader.next() != nil { n += 1 }
        XCTAssertLessThanOrEqual(n, 1, "at most the frame already in the mailbox")
        XCTAssertNil(reader.endReason, "an interrupt is no stream failure")
    }

    /// A network source end to end, on loopback only: a short MP4 served by a local HTTP server
    /// is read live (auto for http URLs), paced at its frame rate, and its end is reported.
    func testLiveHTTPStreamOnLoopback() throws {
        guard let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("python3 not found: no local HTTP server to stream from")
        }
        let path = temp("stream.mp4")
        let writer = try VideoWriter(path: path, width: 64, height: 48, fps: 30)
        for t in 0..<30 { try writer.write(testPicture(width: 64, height: 48, t: t)) }
        try writer.finish()

        let server = Process()
        server.executableURL = URL(fileURLWithPath: python)
        server.arguments = ["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", tempDir.path]
        let out = Pipe()
        server.standardOutput = out
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { server.terminate(); server.waitUntilExit() }
        // "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ..."
        var banner = ""
        let deadline = now() + 5
        while !banner.contains("port ") || !banner.contains("(") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty || now() > deadline { break }
            banner += String(decoding: chunk, as: UTF8.self)
        }
        guard let r = banner.range(of: "port "), let port = Int(banner[r.upperBound...].prefix { $0.isNumber }) else {
            throw XCTSkip("the local HTTP server did not start (\(banner))")
        }
        let url = "http://127.0.0.1:\(port)/stream.mp4"
        let reader = try VideoReader(url, options: ReaderOptions(timeout: 3))
        XCTAssertTrue(reader.info.isLive)
        XCTAssertEqual([reader.info.width, reader.info.height], [64, 48])
        let t0 = now()
        var n = 0, last = -1.0
        while let f = try reader.next() {
            XCTAssertGreaterThan(f.time, last)
            last = f.time
            n += 1
        }
        let elapsed = now() - t0
        XCTAssertEqual(n + reader.droppedFrames, 30)
        XCTAssertGreaterThan(n, 15, "a consumer that keeps up gets most frames")
        XCTAssertGreaterThan(elapsed, 0.7, "paced at 30 fps: about a second")
        XCTAssertEqual(reader.warnings.count, 1, "\(reader.warnings)")
        XCTAssertTrue(reader.warnings.first?.hasPrefix("\(url): the stream stopped at") ?? false, "\(reader.warnings)")
        print("http live: \(n) frames, \(reader.droppedFrames) dropped, \(String(format: "%.2f", elapsed)) s; \(reader.warnings)")
    }

    /// One and two decoder threads give the same frames. (Decoding speed is measured by
    /// `poseact bench video`, whose JSON has decode_ms, not by a test.)
    func testDecodeWithOneAndTwoThreads() throws {
        let path = try sharedFile("data/pushups/montage/montage_01.mp4")
        var checksums: [[Int]] = []
        for threads in [1, 2] {
            let reader = try VideoReader(path, options: ReaderOptions(threads: threads))
            var sums: [Int] = []
            while let f = try reader.next() { if f.index % 50 == 0 { sums.append(f.image.pixels.reduce(0) { $0 + Int($1) }) } }
            XCTAssertEqual(reader.warnings, [])
            checksums.append(sums)
        }
        XCTAssertEqual(checksums[0].count, 14, "657 frames, every 50th")
        XCTAssertEqual(checksums[0], checksums[1])
    }
}

/// Hard cuts on real video: the shared push-up montages join test clips back to back, and
/// `segments.csv` gives the first frame of each.
final class ShotChangeTests: XCTestCase {
    /// Every cut of montage 1 is found, on its frame, and no other frame is called one.
    func testMontageCutsAreFoundOnTheirFrames() throws {
        let dir = try sharedFile("data/pushups/montage")
        let segments = try String(contentsOfFile: dir + "/segments.csv", encoding: .utf8)
            .split(separator: "\n").dropFirst().map { $0.split(separator: ",") }
            .filter { $0[0] == "montage_01.mp4" }.map { Int($0[5])! }
        XCTAssertEqual(segments.count, 6)
        var detector = ShotChangeDetector()
        let reader = try VideoReader(dir + "/montage_01.mp4")
        var cuts: [Int] = [], quietest = Float.infinity, loudestInside: Float = 0
        while let frame = try reader.next() {
            let score = detector.score(frame.image)
            if score >= detector.threshold { cuts.append(frame.index) }
            if segments.dropFirst().contains(frame.index) { quietest = min(quietest, score) } else { loudestInside = max(loudestInside, score) }
        }
        print("montage 1: cuts at \(cuts); weakest cut \(quietest), strongest other frame \(loudestInside)")
        XCTAssertEqual(cuts, Array(segments.dropFirst()))
    }

    /// Clips of one shot (a person moving close to the camera, a 320×240 clip with burnt-in
    /// bars, a 1080p clip) have no cut.
    func testSingleShotClipsHaveNoCut() throws {
        for clip in ["test/correct/correct127.mp4", "test/wrong/wrong102.mp4", "test/wrong/wrong111.mp4"] {
            var detector = ShotChangeDetector()
            let reader = try VideoReader(try sharedFile("data/pushups/" + clip))
            var loudest: Float = 0
            while let frame = try reader.next() { loudest = max(loudest, detector.score(frame.image)) }
            XCTAssertLessThan(loudest, detector.threshold, clip)
        }
    }
}
