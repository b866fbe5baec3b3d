import Basics
import Foundation

/// One training epoch's numbers.
public struct EpochRecord: Codable, Equatable, Sendable {
    public var epoch: Int
    public var trainLoss: Double
    public var trainAccuracy: Double
    public var validationLoss: Double?
    public var validationAccuracy: Double?
    public var learningRate: Double
    /// Wall-clock seconds the epoch took.
    public var seconds: Double

    public init(epoch: Int, trainLoss: Double, trainAccuracy: Double, validationLoss: Double? = nil,
                validationAccuracy: Double? = nil, learningRate: Double, seconds: Double) {
        self.epoch = epoch; self.trainLoss = trainLoss; self.trainAccuracy = trainAccuracy
        self.validationLoss = validationLoss; self.validationAccuracy = validationAccuracy
        self.learningRate = learningRate; self.seconds = seconds
    }
}

/// Training history as an SVG plot and as CSV.
public enum LearningCurves {
    public static let csvHeader = "epoch,train_loss,train_accuracy,validation_loss,validation_accuracy,learning_rate,seconds"

    /// CSV with `csvHeader`, one row an epoch, empty cells for nil. Numbers are written in
    /// Swift's shortest round-trip form, so `records(fromCSV:)` gives back the same values.
    public static func csv(_ history: [EpochRecord]) -> String {
        CSV.text(header: csvHeader.components(separatedBy: ","), rows: history.map { r in
            [String(r.epoch), "\(r.trainLoss)", "\(r.trainAccuracy)", r.validationLoss.map { "\($0)" } ?? "",
             r.validationAccuracy.map { "\($0)" } ?? "", "\(r.learningRate)", "\(r.seconds)"]
        })
    }

    public enum CSVFailure {}
    public typealias CSVError = OneLineError<CSVFailure>

    /// Parses what `csv` writes (header required, blank lines ignored).
    public static func records(fromCSV text: String) throws -> [EpochRecord] {
        var lines = text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        guard let head = lines.first, head.trimmingCharacters(in: .whitespaces) == csvHeader else {
            throw CSVError("learning-curve CSV: the first line must be \"\(csvHeader)\"")
        }
        lines.removeFirst()
        return try lines.enumerated().map { n, line in
            let c = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            func bad(_ what: String) -> CSVError { CSVError("learning-curve CSV line \(n + 2): \(what)") }
            guard c.count == 7 else { throw bad("\(c.count) cells, expected 7") }
            func number(_ i: Int) throws -> Double {
                guard let x = Double(c[i]) else { throw bad("\"\(c[i])\" is not a number") }
                return x
            }
            func optional(_ i: Int) throws -> Double? { c[i].isEmpty ? nil : try number(i) }
            guard let epoch = Int(c[0]) else { throw bad("\"\(c[0])\" is not an epoch number") }
            return EpochRecord(epoch: epoch, trainLoss: try number(1), trainAccuracy: try number(2),
                               validationLoss: try optional(3), validationAccuracy: try optional(4),
                               learningRate: try number(5), seconds: try number(6))
        }
    }

    /// The epoch with the highest validation accuracy (ties: lower validation loss, then
    /// earlier); nil without validation numbers.
    public static func bestEpoch(_ history: [EpochRecord]) -> Int? {
        var best: EpochRecord?
        for r in history {
            guard let a = r.validationAccuracy, a.isFinite else { continue }
            guard let b = best, let ba = b.validationAccuracy else { best = r; continue }
            if validatesBetter(accuracy: a, loss: r.validationLoss ?? .infinity,
                               than: ba, loss: b.validationLoss ?? .infinity) { best = r }
        }
        return best?.epoch
    }

    /// The one rule for the best epoch, in training (`training.keep: best`, patience) and in
    /// the reports: the higher validation accuracy, ties to the lower validation loss; on a full
    /// tie the earlier epoch stays.
    public static func validatesBetter(accuracy: Double, loss: Double, than bestAccuracy: Double, loss bestLoss: Double) -> Bool {
        accuracy > bestAccuracy || (accuracy == bestAccuracy && loss < bestLoss)
    }

    // MARK: SVG

    static let trainColor = "#1f5fbf", validationColor = "#e07b00"

    /// A self-contained SVG: two panels side by side (loss, accuracy), train and validation
    /// series, axes with ticks and labels, a legend, and `bestEpoch` marked by a dashed line
    /// (by default `bestEpoch(history)`; pass the epoch the trainer kept if it chose otherwise).
    /// Non-finite values and missing validation numbers leave gaps in the lines.
    public static func svg(_ history: [EpochRecord], title: String, bestEpoch best: Int? = nil) -> String {
        let panelW = 440.0, panelH = 300.0
        let margin = (left: 64.0, right: 20.0, top: 70.0, bottom: 56.0)
        let width = margin.left + panelW + 90 + panelW + margin.right
        let height = margin.top + panelH + margin.bottom + 26
        let best = best ?? bestEpoch(history)
        var s = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(f(width))" height="\(f(height))" viewBox="0 0 \(f(width)) \(f(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(f(width / 2))" y="28" text-anchor="middle" font-size="18" font-weight="bold">\(PageTemplate.escaped(title))</text>

        """
        // Legend, centred under the title.
        let lx = width / 2 - 170
        s += "<g>"
        s += "<line x1=\"\(f(lx))\" y1=\"48\" x2=\"\(f(lx + 24))\" y2=\"48\" stroke=\"\(trainColor)\" stroke-width=\"2\"/>"
        s += "<text x=\"\(f(lx + 30))\" y=\"52\">train</text>"
        s += "<line x1=\"\(f(lx + 80))\" y1=\"48\" x2=\"\(f(lx + 104))\" y2=\"48\" stroke=\"\(validationColor)\" stroke-width=\"2\"/>"
        s += "<text x=\"\(f(lx + 110))\" y=\"52\">validation</text>"
        if best != nil {
            s += "<line x1=\"\(f(lx + 190))\" y1=\"48\" x2=\"\(f(lx + 214))\" y2=\"48\" stroke=\"#555\" stroke-dasharray=\"4 3\"/>"
            s += "<text x=\"\(f(lx + 220))\" y=\"52\">best validation epoch</text>"
        }
        s += "</g>\n"

        let epochs = history.map { Double($0.epoch) }
        let xRange = (epochs.min() ?? 0, max(epochs.max() ?? 1, (epochs.min() ?? 0) + 1))
        let losses = history.flatMap { [$0.trainLoss, $0.validationLoss].compactMap { $0 } }.filter(\.isFinite)
        let lossTop = max(losses.max() ?? 1, 1e-9)
        let panels: [(name: String, x0: Double, y: (Double, Double), percent: Bool,
                      train: (EpochRecord) -> Double?, validation: (EpochRecord) -> Double?)] = [
            ("Loss", margin.left, (0, lossTop), false, { $0.trainLoss }, { $0.validationLoss }),
            ("Accuracy", margin.left + panelW + 90, (0, 1), true, { $0.trainAccuracy }, { $0.validationAccuracy }),
        ]
        for p in panels {
            let frame = (x: p.x0, y: margin.top, w: panelW, h: panelH)
            let xt = ticks(xRange.0, xRange.1, integer: true, extend: false)
            let yt = ticks(p.y.0, p.y.1, integer: false, extend: true)
            let yMax = max(p.y.1, yt.last ?? p.y.1)            // the axis ends on a tick
            func px(_ e: Double) -> Double { frame.x + (e - xRange.0) / (xRange.1 - xRange.0) * frame.w }
            func py(_ v: Double) -> Double { frame.y + frame.h - (v - p.y.0) / (yMax - p.y.0) * frame.h }
            s += "<g>\n<text x=\"\(f(frame.x + frame.w / 2))\" y=\"\(f(frame.y - 8))\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">\(p.name)</text>\n"
            // Grid and ticks.
            for v in yt {
                let y = py(v)
                s += "<line x1=\"\(f(frame.x))\" y1=\"\(f(y))\" x2=\"\(f(frame.x + frame.w))\" y2=\"\(f(y))\" stroke=\"#e6e6e6\"/>"
                s += "<text x=\"\(f(frame.x - 6))\" y=\"\(f(y + 4))\" text-anchor=\"end\">\(p.percent ? f(v * 100) + "%" : tickLabel(v, yt))</text>\n"
            }
            for e in xt {
                let x = px(e)
                s += "<line x1=\"\(f(x))\" y1=\"\(f(frame.y + frame.h))\" x2=\"\(f(x))\" y2=\"\(f(frame.y + frame.h + 5))\" stroke=\"#333\"/>"
                s += "<text x=\"\(f(x))\" y=\"\(f(frame.y + frame.h + 19))\" text-anchor=\"middle\">\(f(e))</text>\n"
            }
            s += "<rect x=\"\(f(frame.x))\" y=\"\(f(frame.y))\" width=\"\(f(frame.w))\" height=\"\(f(frame.h))\" fill=\"none\" stroke=\"#333\"/>\n"
            s += "<text x=\"\(f(frame.x + frame.w / 2))\" y=\"\(f(frame.y + frame.h + 40))\" text-anchor=\"middle\">epoch</text>\n"
            if let best {
                let x = px(Double(best))
                s += "<line x1=\"\(f(x))\" y1=\"\(f(frame.y))\" x2=\"\(f(x))\" y2=\"\(f(frame.y + frame.h))\" stroke=\"#555\" stroke-dasharray=\"4 3\"/>"
                s += "<text x=\"\(f(x + 4))\" y=\"\(f(frame.y + 14))\" fill=\"#555\">best: \(best)</text>\n"
            }
            for (series, color) in [(p.train, trainColor), (p.validation, validationColor)] {
                let points = history.map { r -> (Double, Double)? in
                    guard let v = series(r), v.isFinite else { return nil }
                    return (px(Double(r.epoch)), py(v))
                }
                s += polyline(points, color: color, dots: history.count <= 60)
            }
            s += "</g>\n"
        }
        if history.isEmpty {
            s += "<text x=\"\(f(width / 2))\" y=\"\(f(margin.top + panelH / 2))\" text-anchor=\"middle\" fill=\"#888\">no epochs</text>\n"
        }
        return s + "</svg>\n"
    }

    /// Runs of consecutive points as polylines (nil breaks a run), with dots when few.
    static func polyline(_ points: [(Double, Double)?], color: String, dots: Bool) -> String {
        var out = "", run: [(Double, Double)] = []
        func flush() {
            if run.count > 1 {
                out += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" stroke-linejoin=\"round\" points=\"" +
                    run.map { "\(f($0.0)),\(f($0.1))" }.joined(separator: " ") + "\"/>\n"
            }
            if dots || run.count == 1 {
                for p in run { out += "<circle cx=\"\(f(p.0))\" cy=\"\(f(p.1))\" r=\"2.5\" fill=\"\(color)\"/>" }
                if !run.isEmpty { out += "\n" }
            }
            run = []
        }
        for p in points { if let p { run.append(p) } else { flush() } }
        flush()
        return out
    }

    /// About six round tick values (1, 2 or 5 × 10ⁿ apart) within lo…hi, whole numbers only
    /// when `integer`; with `extend`, the last one at or past hi (for an axis ending on a tick).
    static func ticks(_ lo: Double, _ hi: Double, integer: Bool, extend: Bool) -> [Double] {
        guard hi > lo, lo.isFinite, hi.isFinite else { return [lo] }
        let raw = (hi - lo) / 6
        let mag = pow(10, (log10(raw)).rounded(.down))
        var step = [1.0, 2, 5, 10].map { $0 * mag }.first { $0 >= raw } ?? 10 * mag
        if integer { step = max(step.rounded(), 1) }
        let first = (lo / step).rounded(.up) * step
        let last = (hi / step).rounded(extend ? .up : .down) * step
        return stride(from: first, through: last + step / 2, by: step).map { $0 }
    }

    /// A tick value with as many decimals as the tick spacing needs.
    static func tickLabel(_ v: Double, _ all: [Double]) -> String {
        let step = all.count > 1 ? all[1] - all[0] : 1
        let decimals = max(0, Int((-log10(step)).rounded(.up)))
        return String(format: "%.\(decimals)f", v)
    }

    /// A coordinate or whole number: at most two decimals, no trailing zeros.
    static func f(_ x: Double) -> String {
        if x == x.rounded() && abs(x) < 1e15 { return String(Int(x)) }
        var t = String(format: "%.2f", x)
        while t.hasSuffix("0") { t.removeLast() }
        if t.hasSuffix(".") { t.removeLast() }
        return t
    }
}
