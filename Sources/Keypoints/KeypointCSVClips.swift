import Foundation

/// A clip's rows as read, in file order, before they become a `ClipKeypoints`.
struct ClipAccumulator {
    var id: String
    var idBytes: [UInt8]
    var label: String
    var labelBytes: [UInt8]
    var split: String?
    var splitBytes: [UInt8]
    var width: Int
    var height: Int
    var frames: [Int] = []
    var rows: [Int] = []
    var times: [Double] = []
    /// frames × joints × 3, in file order.
    var values: [Float] = []
    var labelReported = false
    var splitReported = false
    var sizeReported = false
}

extension KeypointCSVImporter {
    /// The clips that have at least one usable row, in the order they first appear.
    mutating func makeClips(_ columns: KeypointColumns) -> [ClipKeypoints] {
        let name = (path as NSString).lastPathComponent
        let jointNames = columns.joints.map(\.name)
        var result: [ClipKeypoints] = []
        result.reserveCapacity(clips.count)
        for acc in clips where !acc.frames.isEmpty {
            result.append(makeClip(acc, jointNames: jointNames, estimator: "import:\(name)", timed: columns.time != nil))
        }
        return result
    }

    /// Sorts a clip's frames, drops repeats, fills gaps, makes times.
    mutating func makeClip(_ acc: ClipAccumulator, jointNames: [String], estimator: String, timed: Bool) -> ClipKeypoints {
        let (kept, sorted) = keptRows(acc)
        let first = acc.frames[kept[0]], last = acc.frames[kept[kept.count - 1]]
        let frameCount = last - first + 1
        let keypoints = sorted && kept.count == frameCount
            ? acc.values
            : gapsFilled(acc, kept: kept, first: first, frameCount: frameCount, joints: jointNames.count)
        if kept.count < frameCount { reportGaps(acc, kept: kept, first: first, last: last) }
        let (times, clipFPS, start, end) = timed
            ? givenTimes(acc, kept: kept, first: first, frameCount: frameCount)
            : ((0..<frameCount).map { Double($0) / fps }, fps, nil, nil)
        return ClipKeypoints(id: acc.id, label: acc.label, split: acc.split, source: path, start: start, end: end, fps: clipFPS,
                             width: acc.width, height: acc.height, jointNames: jointNames, keypoints: keypoints, times: times,
                             estimator: estimator)
    }

    /// Indices of the clip's rows in frame order, the first row of each frame number only
    /// (repeats reported); and whether the file had them in order already.
    mutating func keptRows(_ acc: ClipAccumulator) -> (kept: [Int], sorted: Bool) {
        var order = Array(acc.frames.indices)
        var sorted = true
        for i in 1..<max(acc.frames.count, 1) where acc.frames[i] <= acc.frames[i - 1] { sorted = false; break }
        if !sorted { order.sort { (acc.frames[$0], $0) < (acc.frames[$1], $1) } }
        var kept: [Int] = []
        kept.reserveCapacity(order.count)
        for i in order {
            if let last = kept.last, acc.frames[last] == acc.frames[i] {
                log.add("duplicate", acc.rows[i], "frame \(acc.frames[i]) of clip \(acc.id) again (first on row \(acc.rows[last])): this row is skipped",
                        summary: "repeated frames")
                continue
            }
            kept.append(i)
        }
        return (kept, sorted)
    }

    /// The kept rows' keypoints at their frame numbers, frames without a row as no pose.
    func gapsFilled(_ acc: ClipAccumulator, kept: [Int], first: Int, frameCount: Int, joints: Int) -> [Float] {
        let stride = joints * 3
        var keypoints = [Float](repeating: 0, count: frameCount * stride)
        for f in 0..<frameCount { for j in 0..<joints { keypoints[f * stride + j * 3] = .nan; keypoints[f * stride + j * 3 + 1] = .nan } }
        for i in kept {
            let f = acc.frames[i] - first
            for k in 0..<stride { keypoints[f * stride + k] = acc.values[i * stride + k] }
        }
        return keypoints
    }

    /// Reports the frame numbers between `first` and `last` that have no row, as runs.
    mutating func reportGaps(_ acc: ClipAccumulator, kept: [Int], first: Int, last: Int) {
        let have = Set(kept.map { acc.frames[$0] })
        var runs: [String] = []
        var f = first
        while f <= last {
            if have.contains(f) { f += 1; continue }
            let s = f
            while f <= last && !have.contains(f) { f += 1 }
            runs.append(s == f - 1 ? "\(s)" : "\(s)–\(f - 1)")
        }
        let missing = last - first + 1 - kept.count
        log.add("gap", acc.rows[0], "clip \(acc.id) has no row for frame\(missing == 1 ? "" : "s") \(runs.prefix(5).joined(separator: ", "))\(runs.count > 5 ? ", …" : "") "
            + "(\(missing) in all): filled as frames with no pose", summary: "clips with missing frames")
    }

    /// Times from the `time` column, shifted to 0 with gaps interpolated, the clip's mean
    /// frame rate and its span in the source; frame/fps instead (reported) when they break
    /// `KeypointChecks.timesProblem`'s rule (finite, increasing with frame, bounded gaps).
    mutating func givenTimes(_ acc: ClipAccumulator, kept: [Int], first: Int, frameCount: Int)
        -> (times: [Double], fps: Double, start: Double?, end: Double?) {
        var times = (0..<frameCount).map { Double($0) / fps }
        let frameNumbers = kept.map { acc.frames[$0] }, given = kept.map { acc.times[$0] }
        if let (i, reason) = KeypointChecks.timesProblem(given, frames: frameNumbers) {
            log.add("time", acc.rows[kept[i]], "clip \(acc.id), frame \(frameNumbers[i]): \(reason); the clip's times are frame/\(fps) instead "
                + "(give times in seconds that increase with frame)", summary: "clips with bad times")
            return (times, fps, nil, nil)
        }
        let t0 = given[0]
        var clipFPS = fps
        if frameNumbers.count > 1 {
            clipFPS = Double(frameNumbers.last! - frameNumbers[0]) / (given.last! - t0)
        }
        var k = 0
        for f in 0..<frameCount {
            let number = first + f
            while k + 1 < frameNumbers.count && frameNumbers[k + 1] <= number { k += 1 }
            if frameNumbers[k] == number { times[f] = given[k] - t0 }
            else {
                let a = frameNumbers[k], bn = frameNumbers[k + 1]
                times[f] = given[k] + (given[k + 1] - given[k]) * Double(number - a) / Double(bn - a) - t0
            }
        }
        return (times, clipFPS, t0, given.last! + 1 / clipFPS)
    }
}
