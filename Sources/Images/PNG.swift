import Basics
import CZlib
import Foundation

/// A picture that cannot be written.
public enum ImageFailure {}
public typealias ImageError = OneLineError<ImageFailure>

/// Writes an RGB image as a PNG (8-bit RGB, no interlace, zlib's deflate), as an
/// `AtomicFile`. The pictures poseact writes (confusion matrices, overlays, figures) are
/// drawn, not decoded, so this needs no codec library: PNG is a few chunks around a zlib
/// stream.
public func writePNG(_ image: RGBImage, to path: String) throws {
    guard image.width > 0, image.height > 0 else { throw ImageError("\(path): cannot write an empty image") }
    try AtomicFile.write(try PNG.encode(image), to: path)
}

/// PNG's byte layout (ISO/IEC 15948): signature, IHDR, IDAT, IEND.
public enum PNG {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    public static func encode(_ image: RGBImage) throws -> Data {
        // PNG's sides are at most 2³¹−1; the rows below are read through a raw pointer, so the
        // pixels must be exactly the size the picture says.
        guard image.width > 0, image.height > 0, image.width <= Int(Int32.max), image.height <= Int(Int32.max),
              case let (bytes, o1) = image.width.multipliedReportingOverflow(by: image.height * 3), !o1,
              image.pixels.count == bytes else {
            throw ImageError("cannot write a \(image.width)×\(image.height) picture of \(image.pixels.count) bytes as a PNG")
        }
        let rowBytes = image.width * 3
        // Each row is its filter type and its bytes; "Up" (2) halves the size of drawn
        // pictures, whose rows mostly repeat the one above.
        var filtered = [UInt8](repeating: 0, count: (rowBytes + 1) * image.height)
        image.pixels.withUnsafeBufferPointer { p in
            for y in 0..<image.height {
                let o = y * (rowBytes + 1), row = y * rowBytes
                filtered[o] = 2
                for x in 0..<rowBytes {
                    filtered[o + 1 + x] = y == 0 ? p[row + x] : p[row + x] &- p[row - rowBytes + x]
                }
            }
        }
        var compressedSize = compressBound(uLong(filtered.count))
        var compressed = [UInt8](repeating: 0, count: Int(compressedSize))
        let status = compress2(&compressed, &compressedSize, filtered, uLong(filtered.count), 9)
        guard status == Z_OK else { throw ImageError("cannot compress a \(image.width)×\(image.height) picture (zlib \(status))") }
        var header = [UInt8]()
        header += bigEndian(UInt32(image.width)) + bigEndian(UInt32(image.height))
        header += [8, 2, 0, 0, 0]          // 8 bits a sample, RGB, deflate, filter method 0 (every row Up), no interlace
        var out = Data(signature)
        out += chunk("IHDR", header)
        out += chunk("IDAT", Array(compressed[0..<Int(compressedSize)]))
        out += chunk("IEND", [])
        return out
    }

    static func bigEndian(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    static func chunk(_ type: String, _ body: [UInt8]) -> Data {
        let typed = Array(type.utf8) + body
        let crc = typed.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
        return Data(bigEndian(UInt32(body.count)) + typed + bigEndian(crc))
    }
}
