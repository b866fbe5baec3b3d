import Foundation

/// The learning curves measured on the project's datasets (notebooks-free-scripts/
/// learning-curve.sh; docs/keypoints.md#how-many-clips-you-need): test clip accuracy by
/// training clips per label (push-ups: the mean of three random draws; Penn Action: one
/// draw). The last point is every training clip, placed at the label with the fewest
/// (83 push-up clips, 40 Penn Action ones). `dataset inspect` places a store on them.
public struct LearningCurve: Sendable {
    public let dataset: String
    public let labels: Int
    /// (clips per label, test clip accuracy 0–1), by clips per label.
    public let points: [(clipsPerLabel: Int, clipAccuracy: Double)]

    public static let measured: [LearningCurve] = [
        LearningCurve(dataset: "the push-ups (correct or wrong form, 2 labels)", labels: 2,
                      points: [(5, 0.593), (10, 0.667), (20, 0.763), (40, 0.785), (83, 0.889)]),
        LearningCurve(dataset: "Penn Action (15 actions)", labels: 15,
                      points: [(5, 0.793), (10, 0.839), (20, 0.909), (40, 0.973)]),
    ]

    /// The accuracy at `n` clips per label, linear in log n between the measured points;
    /// nil below the first or above the last.
    public func accuracy(at n: Int) -> Double? {
        guard n >= 1, let first = points.first, let last = points.last, n >= first.clipsPerLabel, n <= last.clipsPerLabel else { return nil }
        for (a, b) in zip(points, points.dropFirst()) where n <= b.clipsPerLabel {
            let t = (log(Double(n)) - log(Double(a.clipsPerLabel))) / (log(Double(b.clipsPerLabel)) - log(Double(a.clipsPerLabel)))
            return a.clipAccuracy + t * (b.clipAccuracy - a.clipAccuracy)
        }
        return last.clipAccuracy
    }

    /// Where `n` training clips per label (the fewest of a store's labels) stand on the curves, as one sentence.
    public static func note(clipsPerLabel n: Int) -> String {
        let at = measured.compactMap { c in c.accuracy(at: n).map { String(format: "%@ %.0f %%", c.dataset, 100 * $0) } }
        let smallest = measured.compactMap { $0.points.first?.clipsPerLabel }.min() ?? 1
        let largest = measured.compactMap { $0.points.last?.clipsPerLabel }.max() ?? 1
        if n < smallest {
            return "\(n) training clips for a label: below the \(smallest) of the learning curves measured; expect an unreliable model "
                + "and film more (docs/keypoints.md#how-many-clips-you-need)"
        }
        let doubled = measured.compactMap { c in c.accuracy(at: 2 * n).map { String(format: "%.0f %%", 100 * $0) } }
        var s = "\(n) training clips for the smallest label: with as many, the learning curves measured gave "
            + (at.isEmpty ? "no figure (beyond their \(largest))" : at.joined(separator: ", ")) + " of held-out clips"
        if !doubled.isEmpty, 2 * n <= largest { s += "; with twice as many, " + doubled.joined(separator: ", ") }
        return s + " (docs/keypoints.md#how-many-clips-you-need)"
    }
}
