import CZlib
import Foundation
@testable import Images
import XCTest

/// The PNG writer read back by hand (chunks, CRCs, zlib, the "Up" filter undone), so the
/// picture it writes is checked without the codec library the video wing uses (MediaTests
/// also reads it back with FFmpeg).
final class PNGTests: XCTestCase {
    func testChunksCRCsAndPixelsReadBack() throws {
        var image = RGBImage(width: 37, height: 23)
        for i in image.pixels.indices { image.pixels[i] = UInt8((i * 7 + i / 111) % 251) }
        let png = [UInt8](try PNG.encode(image))
        XCTAssertEqual(Array(png.prefix(8)), PNG.signature)
        var at = 8, chunks: [(String, [UInt8])] = []
        func u32(_ o: Int) -> Int { Int(png[o]) << 24 | Int(png[o + 1]) << 16 | Int(png[o + 2]) << 8 | Int(png[o + 3]) }
        while at < png.count {
            let length = u32(at), type = String(decoding: png[at + 4..<at + 8], as: UTF8.self)
            let body = Array(png[at + 8..<at + 8 + length])
            let crc = Array(png[at + 4..<at + 8 + length]).withUnsafeBufferPointer { Int(crc32(0, $0.baseAddress, uInt($0.count))) }
            XCTAssertEqual(u32(at + 8 + length), crc, "\(type)'s CRC")
            chunks.append((type, body)); at += 12 + length
        }
        XCTAssertEqual(chunks.map(\.0), ["IHDR", "IDAT", "IEND"])
        XCTAssertEqual(chunks[0].1, [0, 0, 0, 37, 0, 0, 0, 23, 8, 2, 0, 0, 0])
        var raw = [UInt8](repeating: 0, count: (37 * 3 + 1) * 23)
        var size = uLongf(raw.count)
        XCTAssertEqual(uncompress(&raw, &size, chunks[1].1, uLong(chunks[1].1.count)), Z_OK)
        XCTAssertEqual(Int(size), raw.count)
        var pixels: [UInt8] = []
        for y in 0..<23 {
            let row = Array(raw[y * 112..<(y + 1) * 112])
            XCTAssertEqual(row[0], 2, "row \(y) uses the Up filter")
            for x in 0..<111 { pixels.append(y == 0 ? row[1 + x] : row[1 + x] &+ pixels[(y - 1) * 111 + x]) }
        }
        XCTAssertEqual(pixels, image.pixels)
    }

    func testAnEmptyPictureIsOneLine() {
        XCTAssertThrowsError(try writePNG(RGBImage(width: 0, height: 0), to: "/tmp/none.png")) { error in
            XCTAssertEqual("\(error)", "/tmp/none.png: cannot write an empty image")
        }
    }

    func testPixelsThatDoNotFitTheSizeAreRefused() {
        // `pixels` is a var: a picture can be given bytes its size does not hold.
        var wrong = RGBImage(width: 4, height: 4)
        wrong.pixels = [UInt8](repeating: 0, count: 10)
        XCTAssertThrowsError(try PNG.encode(wrong)) { error in
            XCTAssertEqual("\(error)", "cannot write a 4×4 picture of 10 bytes as a PNG")
        }
    }
}
