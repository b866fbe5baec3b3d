import Foundation

// An annotation file's rows made into clips: each row checked, its video found, its id made.

extension AnnotationReader {
    /// Validates rows, resolves videos, builds clips; each problem is said with its row.
    mutating func makeClips() {
        let what = json ? "entry" : "row"
        let ranged = rows.contains { $0.start != nil || $0.end != nil }
        var styles = TimeStyles()
        var byID: [String: (row: Int, label: String)] = [:]

        for r in rows {
            guard let video = r.video else { problem(r.row, "no video: \(what) skipped"); continue }
            guard let label = r.label else { problem(r.row, "no label for '\(video)': \(what) skipped"); continue }
            var start: Double? = nil, end: Double? = nil
            if ranged {
                guard let range = range(of: r, what: what, styles: &styles) else { continue }
                (start, end) = (range.start, range.end)
            }
            guard let rel = videoPath(video, row: r.row, what: what) else { continue }
            var split: String? = nil
            if let s = r.split {
                if let known = SplitFolder.split(named: s) { split = known }
                else { problem(r.row, "split '\(s)' is not train, validation or test; the clip is kept without a split") }
            }

            let id = start.map { DatasetSources.rangeID(rel, start: $0, end: end!) } ?? rel
            if let earlier = byID[id] {
                if earlier.label == label {
                    problem(r.row, "duplicate of \(what) \(earlier.row) (same video and range): kept once")
                } else {
                    problem(r.row, "same video and range as \(what) \(earlier.row) but label '\(label)' instead of '\(earlier.label)': the first is kept")
                }
                continue
            }
            byID[id] = (r.row, label)
            let videoPath = rel.hasPrefix("/") ? rel : root + "/" + rel
            clips.append(ClipSource(id: id, video: videoPath, label: label, split: split, start: start, end: end))
        }
        sayOverlaps(rowOf: byID.mapValues(\.row), what: what)
        if let s = styles.seconds, let c = styles.clock {
            problem(max(s, c), "times mix seconds (first on \(what) \(s)) and clock times such as 01:03 (first on \(what) \(c)); "
                + "both are read as written (01:03 = 63 s): check that the seconds are not meant as minutes")
        }
        problems = problems.enumerated().sorted { ($0.element.row ?? 0, $0.offset) < ($1.element.row ?? 0, $1.offset) }.map(\.element)
    }

    /// The first row that writes a time in seconds, and in clock time (01:03).
    struct TimeStyles { var seconds: Int?, clock: Int? }

    /// A row's [start, end) in seconds, or nil when it has none or a bad one (said).
    private mutating func range(of r: AnnotationRow, what: String, styles: inout TimeStyles) -> (start: Double, end: Double)? {
        guard let s = r.start, let e = r.end else {
            if r.start == nil && r.end == nil {
                problem(r.row, "no start/end, but other \(what)s have them: give every \(what) a range, or none; skipped")
            } else {
                problem(r.row, "has \(r.start == nil ? "an end but no start" : "a start but no end"): give both; skipped")
            }
            return nil
        }
        var times: [Double] = []
        for (name, t) in [("start", s), ("end", e)] {
            switch t {
            case .number(let v):
                guard v.isFinite, v >= 0 else {
                    problem(r.row, "\(name) \(v) is not a time (use seconds ≥ 0, or 01:03, 01:03.14, 05:01:03); skipped"); continue
                }
                styles.seconds = styles.seconds ?? r.row
                times.append(v)
            case .text(let text):
                guard let v = parseTime(text) else {
                    problem(r.row, "\(name) '\(text)' is not a time (use 3, 3.14, 01:03, 01:03.14 or 05:01:03); skipped"); continue
                }
                if text.contains(":") { styles.clock = styles.clock ?? r.row } else { styles.seconds = styles.seconds ?? r.row }
                times.append(v)
            }
        }
        guard times.count == 2 else { return nil }
        guard times[1] > times[0] else {
            problem(r.row, "end \(fmt(times[1])) s is not after start \(fmt(times[0])) s: \(what) skipped (the range is [start, end))")
            return nil
        }
        return (times[0], times[1])
    }

    /// The row's video, under the root or beside the annotation file, as a path relative to
    /// the root where it is under it; nil when not found (said).
    private mutating func videoPath(_ video: String, row: Int, what: String) -> String? {
        let absRoot = URL(fileURLWithPath: root).standardizedFileURL.path
        let annotationDir = (file as NSString).deletingLastPathComponent
        var isDir: ObjCBool = false
        var candidates: [String] = video.hasPrefix("/") ? [video] : [root + "/" + video]
        if !video.hasPrefix("/") && !annotationDir.isEmpty { candidates.append(annotationDir + "/" + video) }
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0, isDirectory: &isDir) && !isDir.boolValue }) else {
            let where_ = video.hasPrefix("/") ? "" : " under \(root)"
                + (candidates.count > 1 && URL(fileURLWithPath: annotationDir).standardizedFileURL.path != absRoot
                    ? " or beside the annotation file" : "")
            problem(row, "video '\(video)' not found\(where_): \(what) skipped")
            return nil
        }
        let absVideo = URL(fileURLWithPath: found).standardizedFileURL.path
        if !DatasetSources.isVideo(found) {
            problem(row, "'\(video)' does not have a video extension; kept, extraction will tell whether it is readable")
        }
        return absVideo.hasPrefix(absRoot + "/") ? String(absVideo.dropFirst(absRoot.count + 1)) : absVideo
    }

    /// Ranges of one video that overlap under different labels: kept, but frames in both
    /// get two labels, so it is said.
    private mutating func sayOverlaps(rowOf: [String: Int], what: String) {
        var ranges: [String: [(start: Double, end: Double, label: String, row: Int)]] = [:]
        for c in clips {
            guard let s = c.start, let e = c.end else { continue }
            let row = rowOf[c.id]!
            for other in ranges[c.video, default: []] where other.label != c.label && s < other.end && other.start < e {
                problem(row, "range \(fmt(s))–\(fmt(e)) s ('\(c.label)') overlaps \(what) \(other.row)'s \(fmt(other.start))–\(fmt(other.end)) s ('\(other.label)') "
                    + "of the same video: both kept, the frames in both have two labels")
                break
            }
            ranges[c.video, default: []].append((s, e, c.label, row))
        }
    }

    func fmt(_ v: Double) -> String { String(format: "%.2f", v) }
}
