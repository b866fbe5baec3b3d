import Foundation
import Synchronization

/// A 64-byte aligned, zero-initialised float buffer that is allocated once and reused: the
/// arena of an execution plan, the weights of a layer, a scratch area for im2col.
public final class FloatBuffer: @unchecked Sendable {
    public let count: Int
    public let pointer: UnsafeMutablePointer<Float>

    public init(count: Int) {
        self.count = count
        let raw = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1) * 4, alignment: 64)
        pointer = raw.bindMemory(to: Float.self, capacity: max(count, 1))
        pointer.initialize(repeating: 0, count: max(count, 1))
        Self.live.add(max(count, 1), ordering: .relaxed)
    }

    /// Floats held by the buffers alive: a net's size is known before it is built
    /// (`ModelSize`, to refuse a spec that asks for terabytes) and a test checks it here.
    public static var liveFloats: Int { live.load(ordering: .relaxed) }
    private static let live = Atomic<Int>(0)

    public convenience init(_ values: [Float]) {
        self.init(count: values.count)
        values.withUnsafeBufferPointer { pointer.update(from: $0.baseAddress!, count: values.count) }
    }

    deinit {
        Self.live.subtract(max(count, 1), ordering: .relaxed)
        UnsafeMutableRawPointer(pointer).deallocate()
    }

    public var buffer: UnsafeMutableBufferPointer<Float> { .init(start: pointer, count: count) }
    public var array: [Float] { Array(buffer) }
}

/// IEEE half → single precision, exactly (subnormals, infinities and NaN included).
@inline(__always)
public func halfToFloat(_ h: UInt16) -> Float {
    let sign = UInt32(h & 0x8000) << 16
    let exponent = UInt32(h >> 10) & 0x1F
    let mantissa = UInt32(h & 0x3FF)
    if exponent == 0 {
        if mantissa == 0 { return Float(bitPattern: sign) }
        // Subnormal half: value = mantissa × 2^-24.
        let value = Float(mantissa) * Float(bitPattern: 0x3380_0000)
        return sign != 0 ? -value : value
    }
    if exponent == 0x1F { return Float(bitPattern: sign | 0x7F80_0000 | (mantissa << 13)) }
    return Float(bitPattern: sign | ((exponent + 112) << 23) | (mantissa << 13))
}
