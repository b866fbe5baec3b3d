import Foundation

// An annotation file's rows made into clips: each row checked, its video found, its id made.

extension AnnotationReader {
    /// Validates rows, resolves videos, builds clips.
    mutating func makeClips() {
        let fm = FileManager.default
        let what = json ? "entry" : "row"
        let absRoot = URL(fileURLWithPath: root).standardizedFileURL.path
        let annotationDir = (file as NSString).deletingLastPathComponent
        let ranged = rows.contains { $0.start != nil || $0.end != nil }
        var seconds: Int? = nil, clock: Int? = nil      // first row using each time style
        var byID: [String: (row: Int, label: String)] = [:]

        for r in rows {
            guard let video = r.video else { problem(r.row, "no video: \(what) skipped"); continue }
            guard let label = r.label else { problem(r.row, "no label for '\(video)': \(what) skipped"); continue }

            // Range.
            var start: Double? = nil, end: Double? = nil
            if ranged {
                guard let s = r.start, let e = r.end else {
                    if r.start == nil && r.end == nil {
                        problem(r.row, "no start/end, but other \(what)s have them: give every \(what) a range, or none; skipped")
                    } else {
                        problem(r.row, "has \(r.start == nil ? "an end but no start" : "a start but no end"): give both; skipped")
                    }
                    continue
                }
                var bad = false
                for (name, t) in [("start", s), ("end", e)] {
                    switch t {
                    case .number(let v):
                        if !v.isFinite || v < 0 { problem(r.row, "\(name) \(v) is not a time (use seconds ≥ 0, or 01:03, 01:03.14, 05:01:03); skipped"); bad = true }
                        else { seconds = seconds ?? r.row; if name == "start" { start = v } else { end = v } }
                    case .text(let text):
                        guard let v = parseTime(text) else {
                            problem(r.row, "\(name) '\(text)' is not a time (use 3, 3.14, 01:03, 01:03.14 or 05:01:03); skipped"); bad = true
                            continue
                        }
                        if text.contains(":") { clock = clock ?? r.row } else { seconds = seconds ?? r.row }
                        if name == "start" { start = v } else { end = v }
                    }
                }
                if bad { continue }
                if let s = start, let e = end, e <= s {
                    problem(r.row, "end \(fmt(e)) s is not after start \(fmt(s)) s: \(what) skipped (the range is [start, end))")
                    continue
                }
            }

            // Video.
            var path: String? = nil
            var isDir: ObjCBool = false
            var candidates: [String] = video.hasPrefix("/") ? [video] : [root + "/" + video]
            if !video.hasPrefix("/") && !annotationDir.isEmpty { candidates.append(annotationDir + "/" + video) }
            for c in candidates where fm.fileExists(atPath: c, isDirectory: &isDir) && !isDir.boolValue { path = c; break }
            guard let found = path else {
                let where_ = video.hasPrefix("/") ? "" : " under \(root)"
                    + (candidates.count > 1 && URL(fileURLWithPath: annotationDir).standardizedFileURL.path != absRoot
                        ? " or beside the annotation file" : "")
                problem(r.row, "video '\(video)' not found\(where_): \(what) skipped")
                continue
            }
            let absVideo = URL(fileURLWithPath: found).standardizedFileURL.path
            let rel = absVideo.hasPrefix(absRoot + "/") ? String(absVideo.dropFirst(absRoot.count + 1)) : absVideo
            if !DatasetSources.isVideo(found) {
                problem(r.row, "'\(video)' does not have a video extension; kept, extraction will tell whether it is readable")
            }

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

        // Ranges of one video that overlap under different labels: kept, but frames in both get two labels.
        var ranges: [String: [(start: Double, end: Double, label: String, row: Int)]] = [:]
        for c in clips {
            guard let s = c.start, let e = c.end else { continue }
            let row = byID[c.id]!.row
            for other in ranges[c.video, default: []] where other.label != c.label && s < other.end && other.start < e {
                problem(row, "range \(fmt(s))–\(fmt(e)) s ('\(c.label)') overlaps \(what) \(other.row)'s \(fmt(other.start))–\(fmt(other.end)) s ('\(other.label)') "
                    + "of the same video: both kept, the frames in both have two labels")
                break
            }
            ranges[c.video, default: []].append((s, e, c.label, row))
        }

        if let s = seconds, let c = clock {
            problem(max(s, c), "times mix seconds (first on \(what) \(s)) and clock times such as 01:03 (first on \(what) \(c)); "
                + "both are read as written (01:03 = 63 s): check that the seconds are not meant as minutes")
        }
        problems = problems.enumerated().sorted { ($0.element.row ?? 0, $0.offset) < ($1.element.row ?? 0, $1.offset) }.map(\.element)
    }

    func fmt(_ v: Double) -> String { String(format: "%.2f", v) }
}
