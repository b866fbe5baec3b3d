import Foundation

/// The result of evaluating a model on a data set, at window and at clip level.
public struct EvaluationReport: Codable, Sendable {
    /// Path of the weights file.
    public var model: String
    /// Path of the data.
    public var data: String
    /// E.g. "test".
    public var split: String?
    public var windows: ClassificationMetrics
    public var clips: ClassificationMetrics
    /// The clips given a wrong label, worst first (nil in reports written before it existed).
    public var misclassified: [MisclassifiedClip]?

    public init(model: String, data: String, split: String?, windows: ClassificationMetrics, clips: ClassificationMetrics,
                misclassified: [MisclassifiedClip]? = nil) {
        self.model = model; self.data = data; self.split = split; self.windows = windows; self.clips = clips
        self.misclassified = misclassified
    }

    /// A flat JSON object for scripts. Unqualified names ("per_class", "confusion",
    /// "macro_f1") are clip level, the unit the model is judged by; "window_…" the same at
    /// window level. "split" is null when not given.
    public func jsonObject() -> [String: Any] {
        func classes(_ m: ClassificationMetrics) -> [[String: Any]] {
            m.perClass.map { ["label": $0.label, "precision": $0.precision, "recall": $0.recall, "f1": $0.f1, "support": $0.support] }
        }
        return [
            "model": model, "data": data, "split": split.map { $0 as Any } ?? NSNull(),
            "labels": clips.labels,
            "clips": clips.count, "windows": windows.count,
            "clip_accuracy": clips.accuracy, "window_accuracy": windows.accuracy,
            "macro_f1": clips.macroF1, "window_macro_f1": windows.macroF1,
            "per_class": classes(clips), "window_per_class": classes(windows),
            "confusion": clips.confusion, "window_confusion": windows.confusion,
            "misclassified": (misclassified ?? []).map {
                ["clip": $0.clip, "label": $0.label, "predicted": $0.predicted, "confidence": $0.confidence, "windows": $0.windows] as [String: Any]
            },
        ]
    }

    /// `jsonObject()` on one line, keys sorted.
    public func json() -> String {
        // Metrics never hold NaN or infinities (divisions by zero give 0), so this cannot throw.
        let data = try! JSONSerialization.data(withJSONObject: jsonObject(), options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

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

        md += ["", "## Confusion matrix (clips)", "", "Rows: true class; columns: predicted class.", ""]
        let short = LabelText.abbreviations(clips.labels, maxLength: 8)
        md.append("| true \\ predicted | " + short.map(cell).joined(separator: " | ") + " |")
        md.append("|---|" + String(repeating: "---:|", count: short.count))
        for (i, row) in clips.confusion.enumerated() {
            md.append("| \(cell(clips.labels[i])) | " + row.map(String.init).joined(separator: " | ") + " |")
        }
        if let confusionPicture {
            md += ["", "![Confusion matrix](\(confusionPicture))"]
        }
        if let misclassified, !misclassified.isEmpty {
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
