import Foundation
import XCTest
@testable import Images

private extension RGBImage {
    func rgb(_ x: Int, _ y: Int) -> RGB { let p = pixel(x, y); return RGB(p.r, p.g, p.b) }
    /// Pixels differing from black.
    var paintedCount: Int {
        var n = 0
        for i in stride(from: 0, to: pixels.count, by: 3) where pixels[i] != 0 || pixels[i + 1] != 0 || pixels[i + 2] != 0 { n += 1 }
        return n
    }
    func writePPM(_ path: String) throws {
        var data = Data("P6\n\(width) \(height)\n255\n".utf8)
        data.append(contentsOf: pixels)
        try data.write(to: URL(fileURLWithPath: path))
    }
}

final class DrawTests: XCTestCase {
    func testLinePixelsHaveTheColourAndFarPixelsAreUntouched() {
        var img = RGBImage(width: 100, height: 80)
        img.drawLine(from: (10, 20), to: (60, 20), color: .red, thickness: 3)
        for x in 10..<60 { XCTAssertEqual(img.rgb(x, 19), .red, "x \(x)"); XCTAssertEqual(img.rgb(x, 20), .red) }
        XCTAssertEqual(img.rgb(35, 23), .black)                 // just outside the 3-px band
        XCTAssertEqual(img.rgb(90, 70), .black)
        // Round caps extend by thickness / 2 beyond the ends.
        XCTAssertEqual(img.rgb(9, 19), .red)                    // centre (9.5, 19.5): 0.71 px from the end
        XCTAssertEqual(img.rgb(8, 19), .black)                  // centre (8.5, 19.5): 1.58 px > 1.5
        // A diagonal: every point along it is painted, pixels 4 px to the side are not.
        img.drawLine(from: (10, 30), to: (70, 75), color: .green, thickness: 2)
        for k in 0...20 {
            let t = Float(k) / 20
            let x = 10 + 60 * t, y = 30 + 45 * t
            XCTAssertEqual(img.rgb(min(99, Int(x)), min(79, Int(y))), .green, "t \(t)")
            XCTAssertEqual(img.rgb(min(99, Int(x + 4)), max(0, Int(y - 4))), .black, "5.6 px off the line")
        }
        // Thin (1 px) steep line is gap-free: one painted pixel on every row.
        var thin = RGBImage(width: 50, height: 50)
        thin.drawLine(from: (10.3, 2), to: (14.7, 47), color: .white, thickness: 1)
        for y in 3...46 { XCTAssertTrue((0..<50).contains { thin.rgb($0, y) == .white }, "row \(y)") }
    }

    func testCircleAndRect() {
        var img = RGBImage(width: 64, height: 64)
        img.fillCircle(center: (32, 32), radius: 10, color: .yellow)
        XCTAssertEqual(img.rgb(32, 32), .yellow)
        XCTAssertEqual(img.rgb(32 + 8, 32), .yellow)
        XCTAssertEqual(img.rgb(32 + 8, 32 + 8), .black)         // √128 ≈ 11.3 > 10
        XCTAssertEqual(Double(img.paintedCount), Double.pi * 100, accuracy: 0.08 * .pi * 100)

        var r = RGBImage(width: 64, height: 64)
        r.strokeRect((10, 10, 40, 30), color: .cyan, thickness: 2)
        XCTAssertEqual(r.rgb(30, 9), .cyan); XCTAssertEqual(r.rgb(30, 10), .cyan)     // top edge at y = 10
        XCTAssertEqual(r.rgb(9, 25), .cyan); XCTAssertEqual(r.rgb(49, 25), .cyan)     // left, right
        XCTAssertEqual(r.rgb(30, 39), .cyan)                                          // bottom edge at y = 40
        XCTAssertEqual(r.rgb(30, 25), .black)                                         // inside
        XCTAssertEqual(r.rgb(5, 5), .black)
    }

    func testClippingDoesNotCrash() {
        var img = RGBImage(width: 40, height: 30)
        img.drawLine(from: (-100, -100), to: (1000, 1000), color: .red, thickness: 4)   // crosses the image
        XCTAssertEqual(img.rgb(15, 15), .red)
        img.drawLine(from: (-50, -50), to: (-10, -60), color: .blue, thickness: 9)      // wholly outside
        img.drawLine(from: (1e9, 5), to: (-1e9, 5), color: .green, thickness: 2)       // huge coordinates
        XCTAssertEqual(img.rgb(0, 5), .green); XCTAssertEqual(img.rgb(39, 5), .green)
        img.drawLine(from: (.nan, 3), to: (5, .infinity), color: .white, thickness: 3)  // ignored
        img.drawLine(from: (20, 20), to: (20, 20), color: .yellow, thickness: 5)       // a dot
        XCTAssertEqual(img.rgb(20, 20), .yellow)
        img.fillCircle(center: (-5, -5), radius: 10, color: .magenta)                   // partly outside
        XCTAssertEqual(img.rgb(0, 0), .magenta)
        img.fillCircle(center: (100, 100), radius: 10, color: .white)                   // wholly outside
        img.fillCircle(center: (20, 15), radius: 1e12, color: .gray)                   // covers all
        XCTAssertEqual(img.rgb(39, 29), .gray)
        img.strokeRect((-10, -10, 100, 100), color: .orange, thickness: 3)
        img.strokeRect((35, 25, 20, 20), color: .orange, thickness: 3)
        XCTAssertEqual(img.rgb(38, 25), .orange)
        img.drawText("EDGE", at: (-7, -3), color: .white, scale: 2, background: .black)
        img.drawText("EDGE", at: (35, 28), color: .white, scale: 3)
        img.drawText("X", at: (Int.max / 4, -1_000_000), color: .white)
        var empty = RGBImage(width: 0, height: 0)
        empty.drawLine(from: (0, 0), to: (5, 5), color: .red, thickness: 2)
        empty.fillCircle(center: (0, 0), radius: 3, color: .red)
        empty.drawText("A", at: (0, 0), color: .red)
    }

    func testTextDrawsInsideItsBox() {
        XCTAssertEqual(RGBImage.textSize("AB").width, 11)
        XCTAssertEqual(RGBImage.textSize("AB").height, 7)
        XCTAssertEqual(RGBImage.textSize("id 12\nx", scale: 2).height, 30)
        var img = RGBImage(width: 120, height: 40)
        let s = "Id 7: 93.5% _-"
        let size = img.drawText(s, at: (4, 6), color: .white, scale: 1)
        XCTAssertEqual(size.width, s.count * 6 - 1)
        var inside = 0, outside = 0
        for y in 0..<40 {
            for x in 0..<120 where img.rgb(x, y) != .black {
                if x >= 4 && x < 4 + size.width && y >= 6 && y < 6 + size.height { inside += 1 } else { outside += 1 }
            }
        }
        XCTAssertGreaterThan(inside, 80)
        XCTAssertEqual(outside, 0)
        // "1" has its vertical stroke in column 2: pixel (4 + 2, 6 + 3) of a lone "1".
        var one = RGBImage(width: 10, height: 10)
        one.drawText("1", at: (0, 0), color: .red)
        XCTAssertEqual(one.rgb(2, 3), .red); XCTAssertEqual(one.rgb(0, 3), .black)
        // Background fills the padded box; lower case draws like upper case.
        var bg = RGBImage(width: 40, height: 20)
        bg.drawText("ab", at: (5, 5), color: .black, scale: 1, background: .blue)
        XCTAssertEqual(bg.rgb(4, 4), .blue); XCTAssertEqual(bg.rgb(5 + 11, 5 + 7), .blue)
        XCTAssertEqual(bg.rgb(3, 3), .black)
        var upper = RGBImage(width: 40, height: 20)
        upper.drawText("AB", at: (5, 5), color: .black, scale: 1, background: .blue)
        XCTAssertEqual(bg, upper)
    }
}
