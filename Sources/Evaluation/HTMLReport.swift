import Basics
import Foundation

/// `evaluate --report DIR`'s `index.html`: one self-contained page (no network, nothing
/// outside the file) with the per-class precision and recall, the confusion matrix whose
/// cells list their clips, the learning curves, and every misclassified clip as an
/// animated skeleton with the prediction over time under it.
public struct HTMLReport: Sendable {
    /// One clip as the page animates it.
    public struct Clip: Codable, Sendable {
        public var id: String
        public var label: String
        public var predicted: String
        public var confidence: Double
        /// Frames per second of `frames`.
        public var fps: Double
        /// The picture's aspect (width / height): x and y are normalised to it.
        public var aspect: Double
        /// Per frame, x and y per joint (0–1, null when missing).
        public var frames: [[Float?]]
        /// Per window: its first frame, its length, and the label the model gave it with its probability.
        public var windows: [WindowPrediction]

        public init(id: String, label: String, predicted: String, confidence: Double, fps: Double, aspect: Double,
                    frames: [[Float?]], windows: [WindowPrediction]) {
            self.id = id; self.label = label; self.predicted = predicted; self.confidence = confidence
            self.fps = fps; self.aspect = aspect; self.frames = frames; self.windows = windows
        }
    }

    public struct WindowPrediction: Codable, Sendable {
        public var start: Int
        public var length: Int
        public var label: String
        public var confidence: Double
        public init(start: Int, length: Int, label: String, confidence: Double) {
            self.start = start; self.length = length; self.label = label; self.confidence = confidence
        }
    }

    /// Misclassified clips animated at most (each adds ~100 kB of poses to the page); the
    /// confusion cells list them all.
    public static let maxAnimated = 60

    public var title: String
    public var report: EvaluationReport
    /// Per clip: its true and predicted label (every clip scored), for the confusion cells.
    public var clipLabels: [(clip: String, truth: String, predicted: String)]
    /// The skeleton's joints and its edges (index pairs), for the animation.
    public var joints: [String]
    public var edges: [(Int, Int)]
    public var misclassified: [Clip]
    /// The training history's SVG, when the model file carries one.
    public var learningCurves: String?

    public init(title: String, report: EvaluationReport, clipLabels: [(clip: String, truth: String, predicted: String)],
                joints: [String], edges: [(Int, Int)], misclassified: [Clip], learningCurves: String?) {
        self.title = title; self.report = report; self.clipLabels = clipLabels; self.joints = joints; self.edges = edges
        self.misclassified = misclassified; self.learningCurves = learningCurves
    }

    /// The page: Resources/report.html, .css and .js, filled in.
    public func html() -> String {
        let escape = PageTemplate.escaped
        let labels = report.clips.labels
        var cells: [String: [String]] = [:]
        for c in clipLabels { cells["\(c.truth)\u{1}\(c.predicted)", default: []].append(c.clip) }
        var rows = ""
        for m in report.clips.perClass {
            rows += "<tr><td>\(escape(m.label))</td><td>\(String(format: "%.3f", m.precision))</td><td>\(String(format: "%.3f", m.recall))</td>"
                + "<td>\(String(format: "%.3f", m.f1))</td><td>\(m.support)</td></tr>\n"
        }
        var confusion = "<tr><th>true \\ predicted</th>" + labels.map { "<th>\(escape($0))</th>" }.joined() + "</tr>\n"
        for row in ConfusionTable(report.clips).rows {
            let truth = row.label
            confusion += "<tr><th>\(escape(truth))</th>"
            for (predicted, c) in zip(labels, row.cells) {
                let clips = cells["\(truth)\u{1}\(predicted)"] ?? []
                let list = clips.isEmpty ? "" : "<div class=\"clips\">" + clips.map(escape).joined(separator: "<br>") + "</div>"
                let share = c.shareText.map { " \($0)" } ?? ""
                confusion += "<td class=\"cell\(c.count > 0 ? " some" : "")\" style=\"background:\(c.colour.hex);color:\(c.textColour.hex)\">"
                    + "<b>\(c.countText)</b>\(share)\(list)</td>"
            }
            confusion += "</tr>\n"
        }
        struct Data: Encodable {
            var labels: [String]; var joints: [String]; var edges: [[Int]]; var clips: [Clip]
        }
        let data = Data(labels: labels, joints: joints, edges: edges.map { [$0.0, $0.1] }, clips: misclassified)
        let curves = learningCurves.map { "<h2>Learning curves</h2><div class=\"curves\">\($0)</div>" } ?? ""
        let animated = report.misclassified.count > misclassified.count ? ", the \(misclassified.count) surest animated" : ""
        let page = PageTemplate(html: PackageResources.report_html, style: PackageResources.report_css,
                                script: PackageResources.report_js)
        return page.filled([
            "title": .text(title), "model": .text(report.model), "data": .text(report.data), "split": .text(report.split ?? "all"),
            "clip_accuracy": .text(String(format: "%.1f %%", report.clips.accuracy * 100)), "clip_count": .text("\(report.clips.count)"),
            "window_accuracy": .text(String(format: "%.1f %%", report.windows.accuracy * 100)),
            "window_count": .text("\(report.windows.count)"), "macro_f1": .text(String(format: "%.3f", report.clips.macroF1)),
            "class_rows": .markup(rows), "confusion_rows": .markup(confusion), "learning_curves": .markup(curves),
            "misclassified": .text("\(report.misclassified.count)\(animated)"), "clips": .json(data),
        ])
    }
}
