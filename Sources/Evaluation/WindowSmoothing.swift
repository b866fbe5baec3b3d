/// Window accuracy as `live --smooth k` shows it: each window's prediction is the mean of the
/// probabilities of the last k windows of its clip (itself and the k − 1 before it, by start,
/// fewer at the clip's beginning), as the live recognizer averages its last k predictions.
public enum WindowSmoothing {
    /// The largest k reported.
    public static let largest = 8

    /// Accuracy for k = 1 … `largest` (k = 1: the windows' own accuracy).
    public static func accuracies(clipIDs: [String], starts: [Int], truth: [Int], probabilities: [[Float]],
                                  largest: Int = largest) -> [Double] {
        precondition(clipIDs.count == starts.count && starts.count == truth.count && truth.count == probabilities.count,
                     "WindowSmoothing: one clip id, start, truth and probability vector per window")
        guard !truth.isEmpty else { return [] }
        let byClip = Dictionary(grouping: truth.indices, by: { clipIDs[$0] })
        var right = [Int](repeating: 0, count: largest)
        for (_, members) in byClip {
            let ordered = members.sorted { (starts[$0], $0) < (starts[$1], $1) }
            for (position, w) in ordered.enumerated() {
                var sum = [Float](repeating: 0, count: probabilities[w].count)
                for k in 1...largest {
                    guard position - k + 1 >= 0 else {
                        // Fewer windows than k so far: the same mean as the largest k that fits.
                        if argmax(sum) == truth[w] { right[k - 1] += 1 }
                        continue
                    }
                    let p = probabilities[ordered[position - k + 1]]
                    for c in sum.indices { sum[c] += p[c] }
                    if argmax(sum) == truth[w] { right[k - 1] += 1 }
                }
            }
        }
        return right.map { Double($0) / Double(truth.count) }
    }
}
