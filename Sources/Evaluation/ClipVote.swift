/// Position of the largest value (from 0); ties go to the lowest and NaNs are never chosen
/// (unless every value is NaN, then 0). The one argmax of training, evaluation and live.
/// Precondition: `v` is not empty.
@inlinable
public func argmax<C: Collection>(_ v: C) -> Int where C.Element: FloatingPoint {
    precondition(!v.isEmpty, "argmax of an empty vector")
    var best = 0, bestValue = -C.Element.infinity
    for (i, x) in v.enumerated() where x > bestValue { best = i; bestValue = x }
    return best
}

/// Turning window predictions into clip predictions.
public enum ClipVote {
    /// Mean of the window probability vectors of each clip, argmax (ties → lowest index).
    /// Averaging probabilities (soft voting) rather than counting window argmaxes lets a
    /// few confident windows outweigh many undecided ones. A clip's truth is that of its
    /// first window (all windows of a clip share it). Returns clips in first-appearance order,
    /// with the mean probability of each clip's predicted class and its number of windows.
    public static func aggregate(clipIDs: [String], truth: [Int], probabilities: [[Float]])
        -> (clipIDs: [String], truth: [Int], predicted: [Int], confidence: [Double], windows: [Int]) {
        precondition(clipIDs.count == truth.count && truth.count == probabilities.count,
                     "ClipVote: \(clipIDs.count) clip ids, \(truth.count) truths, \(probabilities.count) probability vectors")
        var order: [String] = [], clipTruth: [Int] = []
        var sums: [[Double]] = [], counts: [Int] = []   // summed in Double: clips can have thousands of windows
        var slot: [String: Int] = [:]
        for (i, id) in clipIDs.enumerated() {
            let p = probabilities[i]
            let s: Int
            if let known = slot[id] {
                s = known
                precondition(p.count == sums[s].count, "ClipVote: clip \(id) has probability vectors of different lengths")
            } else {
                s = order.count
                slot[id] = s
                order.append(id); clipTruth.append(truth[i])
                sums.append([Double](repeating: 0, count: p.count)); counts.append(0)
            }
            for (c, x) in p.enumerated() { sums[s][c] += Double(x) }
            counts[s] += 1
        }
        // Dividing by the count does not move the argmax; kept so the numbers are the means.
        let means = sums.indices.map { s in sums[s].map { $0 / Double(counts[s]) } }
        let predicted = means.map { argmax($0) }
        return (order, clipTruth, predicted, zip(means, predicted).map { $0[$1] }, counts)
    }
}
