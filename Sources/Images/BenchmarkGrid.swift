import Foundation

extension RGBImage {
    /// The image repeated `copies` times in a grid of ⌈√copies⌉ columns: that many people to
    /// track, for benchmarks (side by side only, a frame would get so wide that the
    /// letterboxed detector input shrinks people out of its range).
    public func tiled(_ copies: Int) -> RGBImage {
        guard copies > 1 else { return self }
        let columns = Self.tileColumns(copies), rows = (copies + columns - 1) / columns
        var out = RGBImage(width: width * columns, height: height * rows)
        let row = width * 3
        out.pixels.withUnsafeMutableBufferPointer { dst in
            pixels.withUnsafeBufferPointer { src in
                for c in 0..<copies {
                    let x0 = (c % columns) * row, y0 = (c / columns) * height
                    for y in 0..<height {
                        (dst.baseAddress! + (y0 + y) * row * columns + x0).update(from: src.baseAddress! + y * row, count: row)
                    }
                }
            }
        }
        return out
    }

    /// The columns of the grid `tiled(copies)` makes.
    public static func tileColumns(_ copies: Int) -> Int { Int(Double(max(copies, 1)).squareRoot().rounded(.up)) }
}
