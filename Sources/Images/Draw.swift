import Foundation

/// An 8-bit RGB colour.
public struct RGB: Sendable, Equatable, Hashable {
    public var r: UInt8, g: UInt8, b: UInt8
    public init(r: UInt8, g: UInt8, b: UInt8) { self.r = r; self.g = g; self.b = b }
    public init(_ r: UInt8, _ g: UInt8, _ b: UInt8) { self.init(r: r, g: g, b: b) }

    public static let black = RGB(0, 0, 0)
    public static let white = RGB(255, 255, 255)
    public static let red = RGB(230, 40, 40)
    public static let green = RGB(40, 200, 60)
    /// Pure-ish green that stands out on most video: the prominent person's skeleton.
    public static let brightGreen = RGB(0, 255, 64)
    public static let blue = RGB(40, 90, 230)
    /// A muted blue for secondary overlays (other people).
    public static let steelBlue = RGB(80, 130, 200)
    public static let yellow = RGB(255, 220, 0)
    public static let orange = RGB(255, 140, 0)
    public static let cyan = RGB(0, 220, 230)
    public static let magenta = RGB(220, 0, 220)
    public static let gray = RGB(128, 128, 128)
    public static let lightGray = RGB(200, 200, 200)
}

/// Drawing on an `RGBImage`: solid (not anti-aliased) lines with round caps, circles,
/// rectangles and a built-in 5×7 bitmap font. Coordinates are Float pixels from the
/// top-left corner, pixel (i, j) covering [i, i+1) × [j, j+1): a pixel is painted when its
/// centre (i + 0.5, j + 0.5) lies inside the shape. Everything is clipped to the image;
/// shapes partly or wholly outside it, and non-finite coordinates, are fine. Every shape
/// is filled row by row as spans (no per-pixel distance tests over a bounding box), so a
/// few skeletons on a 640×480 frame take some microseconds.
extension RGBImage {
    // MARK: spans

    /// Paints pixels x0...x1 of row y (already clipped) in `color`.
    @inline(__always)
    private static func span(_ p: UnsafeMutablePointer<UInt8>, _ width: Int, _ y: Int, _ x0: Int, _ x1: Int, _ c: RGB) {
        var i = (y * width + x0) * 3
        var x = x0
        while x <= x1 {
            p[i] = c.r; p[i + 1] = c.g; p[i + 2] = c.b
            i += 3; x += 1
        }
    }

    /// Row range whose pixel centres lie in [y0, y1], clipped to the image.
    @inline(__always)
    private func rows(_ y0: Float, _ y1: Float) -> ClosedRange<Int>? {
        guard y0.isFinite, y1.isFinite, height > 0, width > 0 else { return nil }
        let a = Int(min(max(y0 - 0.5, -1), Float(height)).rounded(.up))
        let b = Int(min(max(y1 - 0.5, -1), Float(height)).rounded(.down))
        let a0 = max(0, a), b0 = min(height - 1, b)
        return a0 <= b0 ? a0...b0 : nil
    }

    /// Paints the pixels of row y whose centres lie in [lo, hi].
    @inline(__always)
    private static func spanCovering(_ p: UnsafeMutablePointer<UInt8>, _ width: Int, _ y: Int, _ lo: Float, _ hi: Float, _ c: RGB) {
        guard lo <= hi else { return }
        let a = max(0, Int(min(max(lo - 0.5, -1), Float(width)).rounded(.up)))
        let b = min(width - 1, Int(min(max(hi - 0.5, -1), Float(width)).rounded(.down)))
        if a <= b { span(p, width, y, a, b, c) }
    }

    // MARK: shapes

    /// Fills the pixels whose centres lie in [x, x + width) × [y, y + height).
    public mutating func fillRect(_ rect: (x: Float, y: Float, width: Float, height: Float), color: RGB) {
        guard rect.width > 0, rect.height > 0, rect.x.isFinite, rect.width.isFinite else { return }
        guard let rs = rows(rect.y, rect.y + rect.height - 1e-4) else { return }
        let w = width
        let lo = rect.x, hi = rect.x + rect.width - 1e-4
        pixels.withUnsafeMutableBufferPointer { buf in
            let p = buf.baseAddress!
            for y in rs { Self.spanCovering(p, w, y, lo, hi, color) }
        }
    }

    /// A rectangle's outline, `thickness` pixels wide and centred on the rectangle's edges.
    public mutating func strokeRect(_ rect: (x: Float, y: Float, width: Float, height: Float), color: RGB, thickness: Float = 1) {
        let t = max(thickness, 1)
        let ox = rect.x - t / 2, oy = rect.y - t / 2
        let ow = rect.width + t, oh = rect.height + t
        fillRect((ox, oy, ow, t), color: color)                            // top
        fillRect((ox, oy + oh - t, ow, t), color: color)                   // bottom
        if oh > 2 * t {
            fillRect((ox, oy + t, t, oh - 2 * t), color: color)            // left
            fillRect((ox + ow - t, oy + t, t, oh - 2 * t), color: color)   // right
        }
    }

    /// A filled disc: the pixels whose centres are within `radius` of `center`.
    public mutating func fillCircle(center: (x: Float, y: Float), radius: Float, color: RGB) {
        guard center.x.isFinite, center.y.isFinite, radius.isFinite, radius >= 0 else { return }
        guard let rs = rows(center.y - radius, center.y + radius) else { return }
        let w = width
        let r2 = radius * radius
        pixels.withUnsafeMutableBufferPointer { buf in
            let p = buf.baseAddress!
            for y in rs {
                let dy = Float(y) + 0.5 - center.y
                let h2 = r2 - dy * dy
                if h2 < 0 { continue }
                let h = h2.squareRoot()
                Self.spanCovering(p, w, y, center.x - h, center.x + h, color)
            }
        }
    }

    /// A line `thickness` pixels wide with round caps: the pixels whose centres are within
    /// thickness / 2 of the segment (thickness below 1 counts as 1).
    public mutating func drawLine(from a: (x: Float, y: Float), to b: (x: Float, y: Float), color: RGB, thickness: Float = 1) {
        guard a.x.isFinite, a.y.isFinite, b.x.isFinite, b.y.isFinite, thickness.isFinite else { return }
        let r = max(thickness, 1) / 2
        guard let rs = rows(min(a.y, b.y) - r, max(a.y, b.y) + r) else { return }
        // The segment's band (without caps) as a quadrilateral.
        let dx = b.x - a.x, dy = b.y - a.y
        let len = (dx * dx + dy * dy).squareRoot()
        var quad: [(x: Float, y: Float)] = []
        if len > 1e-6 {
            let nx = -dy / len * r, ny = dx / len * r
            quad = [(a.x + nx, a.y + ny), (b.x + nx, b.y + ny), (b.x - nx, b.y - ny), (a.x - nx, a.y - ny)]
        }
        let w = width
        let r2 = r * r
        pixels.withUnsafeMutableBufferPointer { buf in
            let p = buf.baseAddress!
            for y in rs {
                let yc = Float(y) + 0.5
                var lo = Float.infinity, hi = -Float.infinity
                // Caps.
                let da = yc - a.y, ha2 = r2 - da * da
                if ha2 >= 0 { let h = ha2.squareRoot(); lo = min(lo, a.x - h); hi = max(hi, a.x + h) }
                let db = yc - b.y, hb2 = r2 - db * db
                if hb2 >= 0 { let h = hb2.squareRoot(); lo = min(lo, b.x - h); hi = max(hi, b.x + h) }
                // Band: where the row crosses the quadrilateral's edges.
                if !quad.isEmpty {
                    for k in 0..<4 {
                        let p0 = quad[k], p1 = quad[(k + 1) & 3]
                        if (p0.y <= yc && p1.y >= yc) || (p1.y <= yc && p0.y >= yc) {
                            if p0.y == p1.y {
                                lo = min(lo, p0.x, p1.x); hi = max(hi, p0.x, p1.x)
                            } else {
                                let x = p0.x + (yc - p0.y) * (p1.x - p0.x) / (p1.y - p0.y)
                                lo = min(lo, x); hi = max(hi, x)
                            }
                        }
                    }
                }
                // The capsule is convex, so the row's slice is the single interval [lo, hi].
                Self.spanCovering(p, w, y, lo, hi, color)
            }
        }
    }

    // MARK: text

    /// Glyph cell of the built-in font: 5×7 pixels plus one pixel of spacing right and below.
    public static let glyphWidth = 5, glyphHeight = 7, glyphAdvance = 6, lineAdvance = 8

    /// Size in pixels of `s` drawn at `scale` (the glyphs' ink box, no background padding).
    /// Lines are separated by "\n".
    public static func textSize(_ s: String, scale: Int = 1) -> (width: Int, height: Int) {
        let lines = s.split(separator: "\n", omittingEmptySubsequences: false)
        let cols = lines.map { $0.count }.max() ?? 0
        let k = max(scale, 1)
        guard cols > 0 else { return (0, 0) }
        return ((cols * glyphAdvance - 1) * k, (lines.count * lineAdvance - 1) * k)
    }

    /// Draws `s` with the built-in 5×7 font, each font pixel a `scale`×`scale` block, the
    /// first glyph's top-left at `at`. Printable ASCII; lower case is drawn as upper case,
    /// other characters as "?"; "\n" starts a new line. With `background`, the text's box
    /// padded by `scale` pixels on every side is filled first. Clipped to the image.
    /// Returns the text's size (as `textSize`).
    @discardableResult
    public mutating func drawText(_ s: String, at origin: (x: Int, y: Int), color: RGB, scale: Int = 1, background: RGB? = nil) -> (width: Int, height: Int) {
        let k = max(scale, 1)
        let size = Self.textSize(s, scale: k)
        guard width > 0, height > 0 else { return size }
        if let bg = background, size.width > 0 {
            fillRect((Float(origin.x - k), Float(origin.y - k), Float(size.width + 2 * k), Float(size.height + 2 * k)), color: bg)
        }
        let w = width, h = height
        let font = Font5x7.rows
        pixels.withUnsafeMutableBufferPointer { buf in
            let p = buf.baseAddress!
            var cx = origin.x, cy = origin.y
            for ch in s {
                if ch == "\n" { cx = origin.x; cy += Self.lineAdvance * k; continue }
                let g = Font5x7.glyphIndex(ch)
                defer { cx += Self.glyphAdvance * k }
                if cx >= w || cy >= h || cx + 5 * k <= 0 || cy + 7 * k <= 0 { continue }
                for row in 0..<7 {
                    let bits = font[g * 7 + row]
                    if bits == 0 { continue }
                    let y0 = max(cy + row * k, 0), y1 = min(cy + row * k + k, h) - 1
                    if y0 > y1 { continue }
                    for col in 0..<5 where bits & (0x10 >> col) != 0 {
                        let x0 = max(cx + col * k, 0), x1 = min(cx + col * k + k, w) - 1
                        if x0 > x1 { continue }
                        for y in y0...y1 { Self.span(p, w, y, x0, x1, color) }
                    }
                }
            }
        }
        return size
    }
}

/// poseact's own 5×7 bitmap font for printable ASCII (upper case only; lower case maps to
/// it). Each glyph: 7 rows, 5 bits a row, bit 4 the leftmost pixel.
enum Font5x7 {
    /// 128 glyphs × 7 rows, indexed by ASCII code; codes without a glyph are blank.
    static let rows: [UInt8] = {
        var t = [UInt8](repeating: 0, count: 128 * 7)
        for line in table.split(separator: "\n") {
            guard let ch = line.first, let code = ch.asciiValue else { continue }
            let tokens = line.dropFirst().split(separator: " ")
            precondition(tokens.count == 7, "Font5x7: glyph \(ch) has \(tokens.count) rows")
            for (r, tok) in tokens.enumerated() {
                var bits: UInt8 = 0
                for c in tok { bits = bits << 1 | (c == "#" ? 1 : 0) }
                t[Int(code) * 7 + r] = bits
            }
        }
        return t
    }()

    static let question = Int(Character("?").asciiValue!)

    @inline(__always) static func glyphIndex(_ ch: Character) -> Int {
        guard let a = ch.asciiValue else { return question }
        if a >= 97 && a <= 122 { return Int(a) - 32 }      // a-z → A-Z
        if a < 32 || a > 126 { return question }
        return Int(a)
    }

    // One glyph a line: the character, then its 7 rows top to bottom.
    private static let table = #"""
    0 .###. #...# #..## #.#.# ##..# #...# .###.
    1 ..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.
    2 .###. #...# ....# ...#. ..#.. .#... #####
    3 ####. ....# ....# .###. ....# ....# ####.
    4 ...#. ..##. .#.#. #..#. ##### ...#. ...#.
    5 ##### #.... ####. ....# ....# #...# .###.
    6 ..##. .#... #.... ####. #...# #...# .###.
    7 ##### ....# ...#. ..#.. .#... .#... .#...
    8 .###. #...# #...# .###. #...# #...# .###.
    9 .###. #...# #...# .#### ....# ...#. .##..
    A .###. #...# #...# ##### #...# #...# #...#
    B ####. #...# #...# ####. #...# #...# ####.
    C .###. #...# #.... #.... #.... #...# .###.
    D ###.. #..#. #...# #...# #...# #..#. ###..
    E ##### #.... #.... ####. #.... #.... #####
    F ##### #.... #.... ####. #.... #.... #....
    G .###. #...# #.... #.### #...# #...# .####
    H #...# #...# #...# ##### #...# #...# #...#
    I .###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.
    J ..### ...#. ...#. ...#. ...#. #..#. .##..
    K #...# #..#. #.#.. ##... #.#.. #..#. #...#
    L #.... #.... #.... #.... #.... #.... #####
    M #...# ##.## #.#.# #.#.# #...# #...# #...#
    N #...# #...# ##..# #.#.# #..## #...# #...#
    O .###. #...# #...# #...# #...# #...# .###.
    P ####. #...# #...# ####. #.... #.... #....
    Q .###. #...# #...# #...# #.#.# #..#. .##.#
    R ####. #...# #...# ####. #.#.. #..#. #...#
    S .#### #.... #.... .###. ....# ....# ####.
    T ##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..
    U #...# #...# #...# #...# #...# #...# .###.
    V #...# #...# #...# #...# #...# .#.#. ..#..
    W #...# #...# #...# #.#.# #.#.# #.#.# .#.#.
    X #...# #...# .#.#. ..#.. .#.#. #...# #...#
    Y #...# #...# .#.#. ..#.. ..#.. ..#.. ..#..
    Z ##### ....# ...#. ..#.. .#... #.... #####
    ! ..#.. ..#.. ..#.. ..#.. ..#.. ..... ..#..
    " .#.#. .#.#. .#.#. ..... ..... ..... .....
    # .#.#. .#.#. ##### .#.#. ##### .#.#. .#.#.
    $ ..#.. .#### #.#.. .###. ..#.# ####. ..#..
    % ##... ##..# ...#. ..#.. .#... #..## ...##
    & .##.. #..#. #.#.. .#... #.#.# #..#. .##.#
    ' ..#.. ..#.. ..#.. ..... ..... ..... .....
    ( ...#. ..#.. .#... .#... .#... ..#.. ...#.
    ) .#... ..#.. ...#. ...#. ...#. ..#.. .#...
    * ..... ..#.. #.#.# .###. #.#.# ..#.. .....
    + ..... ..#.. ..#.. ##### ..#.. ..#.. .....
    , ..... ..... ..... ..... .##.. ..#.. .#...
    - ..... ..... ..... ##### ..... ..... .....
    . ..... ..... ..... ..... ..... .##.. .##..
    / ..... ....# ...#. ..#.. .#... #.... .....
    : ..... .##.. .##.. ..... .##.. .##.. .....
    ; ..... .##.. .##.. ..... .##.. ..#.. .#...
    < ...#. ..#.. .#... #.... .#... ..#.. ...#.
    = ..... ..... ##### ..... ##### ..... .....
    > .#... ..#.. ...#. ....# ...#. ..#.. .#...
    ? .###. #...# ....# ...#. ..#.. ..... ..#..
    @ .###. #...# ....# .##.# #.#.# #.#.# .###.
    [ .###. .#... .#... .#... .#... .#... .###.
    \ ..... #.... .#... ..#.. ...#. ....# .....
    ] .###. ...#. ...#. ...#. ...#. ...#. .###.
    ^ ..#.. .#.#. #...# ..... ..... ..... .....
    _ ..... ..... ..... ..... ..... ..... #####
    ` .#... ..#.. ...#. ..... ..... ..... .....
    { ...#. ..#.. ..#.. .#... ..#.. ..#.. ...#.
    | ..#.. ..#.. ..#.. ..#.. ..#.. ..#.. ..#..
    } .#... ..#.. ..#.. ...#. ..#.. ..#.. .#...
    ~ ..... ..... .#... #.#.# ...#. ..... .....
    """#
}
