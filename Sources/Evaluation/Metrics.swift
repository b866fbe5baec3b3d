import Foundation

/// Precision, recall and F1 of one class.
public struct ClassMetrics: Codable, Equatable, Sendable {
    public var label: String
    public var precision: Double
    public var recall: Double
    public var f1: Double
    /// Number of samples whose true label is this class.
    public var support: Int

    public init(label: String, precision: Double, recall: Double, f1: Double, support: Int) {
        self.label = label; self.precision = precision; self.recall = recall; self.f1 = f1; self.support = support
    }
}

/// Accuracy, per-class precision/recall/F1, macro F1 and the confusion matrix of a set of
/// predictions. Divisions by zero give 0, as scikit-learn's `zero_division=0`: precision of
/// a class never predicted, recall of a class with no support, F1 when P + R = 0.
public struct ClassificationMetrics: Codable, Equatable, Sendable {
    public var labels: [String]
    /// confusion[true][predicted].
    public var confusion: [[Int]]
    /// Number of samples.
    public var count: Int
    /// Share of correct predictions, 0…1; 0 when there are no samples.
    public var accuracy: Double
    public var perClass: [ClassMetrics]
    /// Mean F1 over the classes with support > 0 (a class absent from the data has no
    /// meaningful recall and would only drag the mean down); 0 when there are none.
    public var macroF1: Double

    /// `truth` and `predicted` are class indices into `labels`, one pair per sample.
    public init(labels: [String], truth: [Int], predicted: [Int]) {
        precondition(truth.count == predicted.count, "ClassificationMetrics: \(truth.count) truths, \(predicted.count) predictions")
        let k = labels.count
        var m = [[Int]](repeating: [Int](repeating: 0, count: k), count: k)
        for (t, p) in zip(truth, predicted) {
            precondition(t >= 0 && t < k && p >= 0 && p < k, "ClassificationMetrics: class index out of 0..<\(k) (true \(t), predicted \(p))")
            m[t][p] += 1
        }
        let correct = (0..<k).reduce(0) { $0 + m[$1][$1] }
        var classes: [ClassMetrics] = []
        for c in 0..<k {
            let support = m[c].reduce(0, +)
            let predictedAs = (0..<k).reduce(0) { $0 + m[$1][c] }
            let tp = Double(m[c][c])
            let p = predictedAs > 0 ? tp / Double(predictedAs) : 0
            let r = support > 0 ? tp / Double(support) : 0
            let f1 = p + r > 0 ? 2 * p * r / (p + r) : 0
            classes.append(ClassMetrics(label: labels[c], precision: p, recall: r, f1: f1, support: support))
        }
        let supported = classes.filter { $0.support > 0 }
        self.labels = labels
        self.confusion = m
        self.count = truth.count
        self.accuracy = truth.isEmpty ? 0 : Double(correct) / Double(truth.count)
        self.perClass = classes
        self.macroF1 = supported.isEmpty ? 0 : supported.reduce(0) { $0 + $1.f1 } / Double(supported.count)
    }

    /// Metrics as a report stored them.
    public init(labels: [String], confusion: [[Int]], count: Int, accuracy: Double, perClass: [ClassMetrics], macroF1: Double) {
        self.labels = labels; self.confusion = confusion; self.count = count; self.accuracy = accuracy
        self.perClass = perClass; self.macroF1 = macroF1
    }
}
