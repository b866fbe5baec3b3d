import Images

/// The one description of a confusion matrix that every report draws: the picture
/// (`ConfusionPicture`), the HTML report's table and the Markdown table. Rows are the true
/// class, columns the predicted one; a cell's share is of its row (the true class's clips),
/// its colour runs from white (0 %) to `fullColour` (100 %), and a zero is shown faint and
/// without a share, so the eye finds the errors. The renderers only lay it out.
public struct ConfusionTable: Sendable, Equatable {
    public struct Cell: Sendable, Equatable {
        public let count: Int
        /// count / the row's total, 0 in a row without clips.
        public let share: Double
        public let colour: RGB
        /// White on dark cells (over half the row), faint for a zero, else `ink`.
        public let textColour: RGB
        public let countText: String
        /// "75%" (rounded to a whole percent); nil for a zero.
        public let shareText: String?
    }

    public struct Row: Sendable, Equatable {
        public let label: String
        /// The true class's clips (the row's support).
        public let total: Int
        public let cells: [Cell]
    }

    public let labels: [String]
    public let rows: [Row]

    /// A full row's colour; lighter shares are blended from white towards it.
    public static let fullColour = RGB(20, 70, 170)
    public static let ink = RGB(30, 30, 30)
    public static let faint = RGB(170, 170, 170)
    /// What the colour scale stands for.
    public static let scaleCaption = "100% of the true class"

    /// Cell colour for a row share t in 0…1: white to `fullColour`.
    public static func colour(share t: Double) -> RGB {
        let s = min(max(t, 0), 1)
        func mix(_ a: UInt8) -> UInt8 { UInt8((255 - (255 - Double(a)) * s).rounded()) }
        return RGB(mix(fullColour.r), mix(fullColour.g), mix(fullColour.b))
    }

    public init(_ m: ClassificationMetrics) {
        labels = m.labels
        rows = m.confusion.enumerated().map { i, counts in
            let total = counts.reduce(0, +)
            let cells = counts.map { n -> Cell in
                let share = total > 0 ? Double(n) / Double(total) : 0
                return Cell(count: n, share: share, colour: Self.colour(share: share),
                            textColour: n == 0 ? Self.faint : (share > 0.5 ? .white : Self.ink),
                            countText: String(n),
                            shareText: n == 0 ? nil : String(Int((share * 100).rounded())) + "%")
            }
            return Row(label: m.labels[i], total: total, cells: cells)
        }
    }
}

extension RGB {
    /// `#rrggbb`, for a page.
    public var hex: String {
        func two(_ v: UInt8) -> String { let s = String(v, radix: 16); return s.count == 1 ? "0" + s : s }
        return "#" + two(r) + two(g) + two(b)
    }
}
