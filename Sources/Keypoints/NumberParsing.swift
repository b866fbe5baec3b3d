import Foundation

/// Parses a decimal number from bytes `[s, e)` (spaces around allowed). Exact: plain
/// decimals with at most 15 significant digits and 22 decimals take Clinger's fast
/// path (one correctly rounded multiply or divide, so the result equals
/// `Double(String)`); anything else (exponents beyond, long mantissas, `nan`, `inf`) goes
/// through `Double(String)`. Nil if not a number.
@inline(__always)
func parseNumber(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Double? {
    var s = start, e = end
    while s < e && (b[s] == 0x20 || b[s] == 0x09) { s += 1 }
    while e > s && (b[e - 1] == 0x20 || b[e - 1] == 0x09) { e -= 1 }
    if s == e { return nil }
    var i = s
    var negative = false
    if b[i] == UInt8(ascii: "-") { negative = true; i += 1 } else if b[i] == UInt8(ascii: "+") { i += 1 }
    var mantissa: UInt64 = 0
    var digits = 0, fractionDigits = 0
    var sawDigit = false
    while i < e, b[i] &- 0x30 < 10 {
        if mantissa == 0 && b[i] == 0x30 { sawDigit = true; i += 1; continue }   // leading zeros
        mantissa = mantissa &* 10 &+ UInt64(b[i] &- 0x30); digits += 1; sawDigit = true; i += 1
    }
    if i < e && b[i] == UInt8(ascii: ".") {
        i += 1
        while i < e, b[i] &- 0x30 < 10 {
            if mantissa == 0 && b[i] == 0x30 { fractionDigits += 1; sawDigit = true; i += 1; continue }
            mantissa = mantissa &* 10 &+ UInt64(b[i] &- 0x30); digits += 1; fractionDigits += 1; sawDigit = true; i += 1
        }
    }
    if i == e && sawDigit && digits <= 15 && fractionDigits <= 22 {
        // mantissa < 10^15 < 2^53: exact as a Double, and so are the powers of ten up to 10^22.
        var v = Double(mantissa)
        if fractionDigits > 0 { v /= powersOfTen[fractionDigits] }
        return negative ? -v : v
    }
    // Slow path: exponents, long mantissas, words; Double(String) decides.
    let text = String(decoding: UnsafeBufferPointer(rebasing: b[s..<e]), as: UTF8.self)
    return Double(text)
}

private let powersOfTen: [Double] = (0...22).map { p in (0..<p).reduce(1.0) { acc, _ in acc * 10 } }

extension CSVCursor {
    /// The field as a number (see `parseNumber`), nil if it is not one.
    @inline(__always)
    func number(_ f: CSVField) -> Double? { parseNumber(b, f.start, f.end) }
}
