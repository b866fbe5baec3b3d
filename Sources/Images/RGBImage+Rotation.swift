import Foundation

extension RGBImage {
    /// This image turned clockwise by a multiple of 90 degrees (negative: counter-clockwise).
    public func rotated(clockwise degrees: Int) -> RGBImage {
        let d = ((degrees % 360) + 360) % 360
        precondition(d % 90 == 0, "RGBImage.rotated: \(degrees)° is not a multiple of 90")
        if d == 0 || width == 0 || height == 0 { return self }
        let w = width, h = height
        let nw = d == 180 ? w : h, nh = d == 180 ? h : w
        let count = w * h * 3
        let out = [UInt8](unsafeUninitializedCapacity: count) { dst, n in
            pixels.withUnsafeBufferPointer { srcBuf in
                let src = srcBuf.baseAddress!, o = dst.baseAddress!
                for ny in 0..<nh {
                    let row = o + ny * nw * 3
                    // Source position of (0, ny) and the source step for +1 in nx.
                    let start: Int, step: Int
                    switch d {
                    case 90:  start = ((h - 1) * w + ny) * 3; step = -w * 3         // x = ny, y = h-1-nx
                    case 180: start = ((h - 1 - ny) * w + (w - 1)) * 3; step = -3   // x = w-1-nx, y = h-1-ny
                    default:  start = (w - 1 - ny) * 3; step = w * 3                // x = w-1-ny, y = nx
                    }
                    var s = start
                    for nx in 0..<nw {
                        row[nx * 3] = src[s]; row[nx * 3 + 1] = src[s + 1]; row[nx * 3 + 2] = src[s + 2]
                        s += step
                    }
                }
            }
            n = count
        }
        return RGBImage(width: nw, height: nh, pixels: out)
    }

    /// This image seen in a mirror (left and right swapped).
    public func mirrored() -> RGBImage {
        var out = pixels
        let w = width
        out.withUnsafeMutableBufferPointer { dst in
            pixels.withUnsafeBufferPointer { src in
                for y in 0..<height {
                    let row = y * w * 3
                    for x in 0..<w {
                        let a = row + x * 3, b = row + (w - 1 - x) * 3
                        dst[a] = src[b]; dst[a + 1] = src[b + 1]; dst[a + 2] = src[b + 2]
                    }
                }
            }
        }
        return RGBImage(width: width, height: height, pixels: out)
    }
}
