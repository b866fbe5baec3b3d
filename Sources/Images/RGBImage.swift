/// An 8-bit RGB image, rows top to bottom, 3 bytes a pixel, no padding between rows.
public struct RGBImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    /// width × height × 3 bytes: R, G, B.
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * 3, "RGBImage: \(pixels.count) bytes for \(width)×\(height)")
        self.width = width; self.height = height; self.pixels = pixels
    }

    /// A black image.
    public init(width: Int, height: Int) {
        self.init(width: width, height: height, pixels: [UInt8](repeating: 0, count: width * height * 3))
    }

    @inline(__always) public func pixel(_ x: Int, _ y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        let i = (y * width + x) * 3
        return (pixels[i], pixels[i + 1], pixels[i + 2])
    }
}
