import Basics
import Foundation

/// The result of evaluating a model on a data set, at window and at clip level.
///
/// Its JSON (evaluation.json, `evaluate --json`, the test figures in a weights file) is one
/// flat object for scripts. Unqualified names ("per_class", "confusion", "macro_f1") are clip
/// level, the unit the model is judged by; "window_…" the same at window level. "split" is
/// null when not given.
public struct EvaluationReport: Codable, Equatable, Sendable {
    /// Path of the weights file.
    public var model: String
    /// Path of the data.
    public var data: String
    /// E.g. "test".
    public var split: String?
    public var windows: ClassificationMetrics
    public var clips: ClassificationMetrics
    /// The clips given a wrong label, worst first (none in reports written before it existed).
    public var misclassified: [MisclassifiedClip]
    /// Clips of the data that gave no window (too short, too few poses), so are not scored;
    /// nil when not counted.
    public var unscoredClips: Int?
    /// Window accuracy when each window's prediction is the mean of the probabilities of the
    /// last k windows of its clip (`live --smooth k`: the verdict a viewer sees), for k = 1
    /// (`windows.accuracy`) … `WindowSmoothing.largest`; nil in reports from before it.
    public var smoothedWindowAccuracy: [Double]?

    public init(model: String, data: String, split: String?, windows: ClassificationMetrics, clips: ClassificationMetrics,
                misclassified: [MisclassifiedClip] = [], unscoredClips: Int? = nil) {
        self.model = model; self.data = data; self.split = split; self.windows = windows; self.clips = clips
        self.misclassified = misclassified; self.unscoredClips = unscoredClips
    }

    enum CodingKeys: String, CodingKey {
        case model, data, split, labels, clips, windows, confusion, misclassified
        case clipAccuracy, windowAccuracy
        case macroF1, windowMacroF1
        case perClass, windowPerClass
        case windowConfusion
        case unscoredClips
        case smoothedWindowAccuracy
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(model, forKey: .model)
        try c.encode(data, forKey: .data)
        try c.encode(split, forKey: .split)   // null, not left out
        try c.encode(clips.labels, forKey: .labels)
        try c.encode(clips.count, forKey: .clips)
        try c.encode(windows.count, forKey: .windows)
        try c.encode(clips.accuracy, forKey: .clipAccuracy)
        try c.encode(windows.accuracy, forKey: .windowAccuracy)
        try c.encode(clips.macroF1, forKey: .macroF1)
        try c.encode(windows.macroF1, forKey: .windowMacroF1)
        try c.encode(clips.perClass, forKey: .perClass)
        try c.encode(windows.perClass, forKey: .windowPerClass)
        try c.encode(clips.confusion, forKey: .confusion)
        try c.encode(windows.confusion, forKey: .windowConfusion)
        try c.encode(misclassified, forKey: .misclassified)
        try c.encodeIfPresent(unscoredClips, forKey: .unscoredClips)
        try c.encodeIfPresent(smoothedWindowAccuracy, forKey: .smoothedWindowAccuracy)
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        model = try c.decode(String.self, forKey: .model)
        data = try c.decode(String.self, forKey: .data)
        split = try c.decodeIfPresent(String.self, forKey: .split)
        let windowClasses = try c.decode([ClassMetrics].self, forKey: .windowPerClass)
        clips = ClassificationMetrics(labels: try c.decode([String].self, forKey: .labels),
                                      confusion: try c.decode([[Int]].self, forKey: .confusion),
                                      count: try c.decode(Int.self, forKey: .clips),
                                      accuracy: try c.decode(Double.self, forKey: .clipAccuracy),
                                      perClass: try c.decode([ClassMetrics].self, forKey: .perClass),
                                      macroF1: try c.decode(Double.self, forKey: .macroF1))
        windows = ClassificationMetrics(labels: windowClasses.map(\.label),
                                        confusion: try c.decode([[Int]].self, forKey: .windowConfusion),
                                        count: try c.decode(Int.self, forKey: .windows),
                                        accuracy: try c.decode(Double.self, forKey: .windowAccuracy),
                                        perClass: windowClasses,
                                        macroF1: try c.decode(Double.self, forKey: .windowMacroF1))
        misclassified = try c.decodeIfPresent([MisclassifiedClip].self, forKey: .misclassified) ?? []
        unscoredClips = try c.decodeIfPresent(Int.self, forKey: .unscoredClips)
        smoothedWindowAccuracy = try c.decodeIfPresent([Double].self, forKey: .smoothedWindowAccuracy)
    }

    /// The report as one JSON line.
    public func json() -> String { JSONLines.encode(self) }

    /// A Markdown report: summary, per-class table (clip and window level), clip-level
    /// confusion matrix, and a pointer to the confusion picture if there is one.
    public func markdown(confusionPicture: String?) -> String {
        func cell(_ s: String) -> String { s.replacingOccurrences(of: "|", with: "\\|") }   // keep table columns intact
        var md = ["# Evaluation report", ""]
        md.append("- Model: `\(model)`")
        md.append("- Data: `\(data)`")
        if let split { md.append("- Split: \(split)") }
        md += ["", "## Summary", "", "| | |", "|---|---:|",
               "| Windows | \(windows.count) |",
               "| Clips | \(clips.count) |",
               "| Window accuracy | \(LabelText.percent(windows.accuracy)) |",
               "| Clip accuracy | \(LabelText.percent(clips.accuracy)) |",
               "| Macro F1 (clips) | \(LabelText.percent(clips.macroF1)) |",
               "| Macro F1 (windows) | \(LabelText.percent(windows.macroF1)) |"]

        md += ["", "## Per class", "",
               "| Class | Precision | Recall | F1 | Clips | Window precision | Window recall | Window F1 | Windows |",
               "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        // Window metrics matched by name, in case the two label lists ever differ.
        let windowClass = Dictionary(windows.perClass.map { ($0.label, $0) }, uniquingKeysWith: { a, _ in a })
        for c in clips.perClass {
            var row = [cell(c.label), LabelText.percent(c.precision), LabelText.percent(c.recall), LabelText.percent(c.f1), String(c.support)]
            if let w = windowClass[c.label] {
                row += [LabelText.percent(w.precision), LabelText.percent(w.recall), LabelText.percent(w.f1), String(w.support)]
            } else {
                row += ["–", "–", "–", "–"]
            }
            md.append("| " + row.joined(separator: " | ") + " |")
        }

        // Counts only: a table cell has no colour, and the shares are in the picture.
        md += ["", "## Confusion matrix (clips)", "", "Rows: true class; columns: predicted class.", ""]
        let table = ConfusionTable(clips)
        let short = LabelText.abbreviations(table.labels, maxLength: 8)
        md.append("| true \\ predicted | " + short.map(cell).joined(separator: " | ") + " |")
        md.append("|---|" + String(repeating: "---:|", count: short.count))
        for row in table.rows {
            md.append("| \(cell(row.label)) | " + row.cells.map(\.countText).joined(separator: " | ") + " |")
        }
        if let confusionPicture {
            md += ["", "![Confusion matrix](\(confusionPicture))"]
        }
        if !misclassified.isEmpty {
            // The clips to look at first: worth a check for a wrong label or a bad pose track.
            let shown = misclassified.prefix(100)
            md += ["", "## Misclassified clips", "",
                   "\(misclassified.count) of \(clips.count) clips, the most confident mistakes first"
                   + (misclassified.count > shown.count ? " (the first \(shown.count) listed)" : "") + ".", "",
                   "| Clip | Label | Predicted | Confidence | Windows |", "|---|---|---|---:|---:|"]
            for m in shown {
                md.append("| \(cell(m.clip)) | \(cell(m.label)) | \(cell(m.predicted)) | \(LabelText.percent(m.confidence)) | \(m.windows) |")
            }
        }
        return md.joined(separator: "\n") + "\n"
    }
}

/// A clip the model labels wrongly: its id, true label, the predicted label, the mean
/// probability of that label over the clip's windows, and how many windows it has.
public struct MisclassifiedClip: Codable, Equatable, Sendable {
    public var clip: String
    public var label: String
    public var predicted: String
    public var confidence: Double
    public var windows: Int

    public init(clip: String, label: String, predicted: String, confidence: Double, windows: Int) {
        self.clip = clip; self.label = label; self.predicted = predicted; self.confidence = confidence; self.windows = windows
    }
}
