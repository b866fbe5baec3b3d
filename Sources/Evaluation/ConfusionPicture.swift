import Images

/// A confusion matrix as a picture: the layout of a `ConfusionTable` (which holds the
/// shares, colours and cell texts).
public enum ConfusionPicture {
    static let ink = ConfusionTable.ink
    static let faint = ConfusionTable.faint

    /// A heat map of the row-normalised confusion matrix (rows: true class, columns:
    /// predicted), each cell showing its count and row share. Rows are labelled
    /// "number name" on the left and columns by the number only on top, so long names
    /// need no rotated text and the picture stays readable up to ~20 classes. Each row's
    /// support is at its right, the title and the accuracy on top, a colour scale below.
    public static func render(_ m: ClassificationMetrics, title: String) -> RGBImage {
        let k = m.labels.count
        let table = ConfusionTable(m)
        let L = Layout(m, title: title)
        let (big, cell, pad, gridX, gridY, gridSize) = (Layout.big, L.cell, Layout.pad, L.gridX, L.gridY, L.gridSize)
        let (titleH, lineH, bigH) = (Layout.titleH, Layout.lineH, Layout.bigH)
        let (width, height, rowNames, header, scaleY) = (L.width, L.height, L.rowNames, L.header, L.scaleY)

        var img = RGBImage(width: width, height: height, pixels: [UInt8](repeating: 255, count: width * height * 3))
        var y = pad
        img.drawText(title, at: (pad, y), color: ink, scale: 3)
        y += titleH + 10
        img.drawText(header[1], at: (pad, y), color: ink, scale: big)
        y += bigH + 6
        img.drawText(header[2], at: (pad, y), color: ink)
        y += lineH + 6
        guard k > 0 else { return img }
        y += 8
        img.drawText("predicted", at: (gridX, y), color: faint)
        let numberY = gridY - 8 - bigH

        for i in 0..<k {
            let top = gridY + i * cell
            let row = table.rows[i]
            // Row name, right-aligned against the grid, vertically centred on the row.
            let nameW = RGBImage.textSize(rowNames[i], scale: big).width
            img.drawText(rowNames[i], at: (gridX - 12 - nameW, top + (cell - bigH) / 2), color: ink, scale: big)
            img.drawText("n=\(row.total)", at: (gridX + gridSize + 10, top + (cell - bigH) / 2), color: faint, scale: big)
            // Column number above the grid.
            let num = String(i + 1)
            let numW = RGBImage.textSize(num, scale: big).width
            img.drawText(num, at: (gridX + i * cell + (cell - numW) / 2, numberY), color: ink, scale: big)

            for (j, c) in row.cells.enumerated() {
                let left = gridX + j * cell
                img.fillRect((Float(left), Float(top), Float(cell), Float(cell)), color: c.colour)
                let textColor = c.textColour
                let count = c.countText
                let countScale = RGBImage.textSize(count, scale: big).width <= cell - 6 ? big : 1
                let cs = RGBImage.textSize(count, scale: countScale)
                if let pct = c.shareText {
                    let ps = RGBImage.textSize(pct, scale: 1)
                    let blockTop = top + (cell - cs.height - 4 - ps.height) / 2
                    img.drawText(count, at: (left + (cell - cs.width) / 2, blockTop), color: textColor, scale: countScale)
                    img.drawText(pct, at: (left + (cell - ps.width) / 2, blockTop + cs.height + 4), color: textColor)
                } else {
                    img.drawText(count, at: (left + (cell - cs.width) / 2, top + (cell - cs.height) / 2), color: textColor, scale: countScale)
                }
            }
        }
        // Grid lines.
        for t in 0...k {
            let o = Float(t * cell)
            img.fillRect((Float(gridX), Float(gridY) + o, Float(gridSize), 1), color: .lightGray)
            img.fillRect((Float(gridX) + o, Float(gridY), 1, Float(gridSize)), color: .lightGray)
        }

        // Colour scale: 0% … 100% of the row.
        let barW = L.barWidth
        img.drawText("0%", at: (gridX, scaleY), color: ink)
        let barX = gridX + RGBImage.textSize("0%", scale: 1).width + 6
        for x in 0..<barW {
            img.fillRect((Float(barX + x), Float(scaleY - 2), 1, Float(lineH + 4)), color: ConfusionTable.colour(share: Double(x) / Double(max(barW - 1, 1))))
        }
        img.strokeRect((Float(barX), Float(scaleY - 2), Float(barW), Float(lineH + 4)), color: .lightGray)
        img.drawText(Layout.scaleCaption, at: (barX + barW + 6, scaleY), color: ink)
        return img
    }

    /// Where everything goes (internal so tests can find the cells).
    struct Layout {
        static let big = 2                                     // font scale of labels and counts
        static let pad = 16
        static let titleH = RGBImage.textSize("X", scale: 3).height
        static let lineH = RGBImage.textSize("X", scale: 1).height
        static let bigH = RGBImage.textSize("X", scale: big).height
        static let scaleCaption = ConfusionTable.scaleCaption

        let cell, gridX, gridY, gridSize, scaleY, barWidth, width, height: Int
        let rowNames, header: [String]

        init(_ m: ClassificationMetrics, title: String) {
            let k = m.labels.count
            cell = k <= 6 ? 64 : (k <= 12 ? 52 : 44)
            rowNames = m.labels.enumerated().map { "\($0.offset + 1) " + LabelText.truncate($0.element, maxLength: 24) }
            header = [title,
                      "accuracy \(LabelText.percent(m.accuracy)) of \(m.count), macro F1 \(LabelText.percent(m.macroF1))",
                      "rows: true class   columns: predicted   cells: count, share of the row"]
            let rowNameWidth = rowNames.map { RGBImage.textSize($0, scale: Self.big).width }.max() ?? 0
            let supportWidth = RGBImage.textSize("n=" + String(m.confusion.map { $0.reduce(0, +) }.max() ?? 0), scale: Self.big).width
            // Top to bottom: title, two info lines, "predicted", column numbers, grid, colour scale.
            gridX = Self.pad + rowNameWidth + 12
            gridY = Self.pad + Self.titleH + 10 + (Self.bigH + 6) + (Self.lineH + 6) + 8 + Self.lineH + 6 + Self.bigH + 8
            gridSize = k * cell
            scaleY = gridY + gridSize + 20
            barWidth = max(min(gridSize, 240), 120)
            let scaleRight = gridX + RGBImage.textSize("0%", scale: 1).width + 6 + barWidth + 6
                + RGBImage.textSize(Self.scaleCaption, scale: 1).width
            let contentW = max(gridX + gridSize + 10 + supportWidth, scaleRight) + Self.pad
            let headerW = Self.pad + max(RGBImage.textSize(title, scale: 3).width, RGBImage.textSize(header[1], scale: Self.big).width,
                                         RGBImage.textSize(header[2], scale: 1).width) + Self.pad
            width = max(contentW, headerW)
            height = scaleY + Self.lineH + 4 + Self.pad
        }
    }
}
