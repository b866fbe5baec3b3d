import Foundation

// Dataset sources: the ways Create ML's action classifier accepts labeled videos, and an
// honest account of what in the folder or the annotation file could not be used.

/// The clips found by `DatasetSources.scan` and what was wrong with the rest.
public struct SourceListing: Sendable {
    /// Sorted by id.
    public var clips: [ClipSource]
    /// Everything not used, and why; never fatal. In file order within a file.
    public var problems: [DataProblem]
    public init(clips: [ClipSource], problems: [DataProblem]) { self.clips = clips; self.problems = problems }
}

/// A dataset that cannot be read at all (no videos, a missing required column, an
/// unreadable file). One line, saying what is accepted.
public struct DatasetError: Error, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ m: String) { message = m }
    public var description: String { message }
}

public enum DatasetSources {
    /// Extensions (lower-cased, no dot) taken for videos.
    public static let videoExtensions: Set<String> = [
        "mp4", "mov", "m4v", "avi", "mkv", "webm", "mpg", "mpeg", "wmv", "flv", "3gp", "ts", "mts",
    ]

    /// Split folder names (lower-cased) and the split they stand for.
    public static let splitFolders: [String: String] = [
        "train": "train", "validation": "validation", "val": "validation", "valid": "validation", "test": "test",
    ]

    /// Files skipped without a word where videos are expected: notes and metadata that
    /// commonly sit beside videos (`README.md`, `annotations.csv`, `labels.json`, …).
    static let quietExtensions: Set<String> = ["md", "txt", "csv", "json", "yaml", "yml", "rtf", "pdf", "html"]

    /// Finds the labeled clips under `root`, in one of the layouts Create ML accepts:
    ///
    /// - **Labeled directories**: `root/<label>/*.<video>`; or, with split folders,
    ///   `root/<split>/<label>/*.<video>` where `<split>` is `train`, `validation` (also
    ///   `val`, `valid`) or `test`, any case. When `root` has a split folder, other
    ///   folders beside it are not label folders: each is reported and not used.
    /// - **Labeled files**: `root/<label>.<n>.<ext>` (also inside a split folder), e.g.
    ///   `squat.12.mp4`. A video named otherwise is reported: its label cannot be told.
    /// - **Annotation file** (`annotations`, CSV or JSON, a path as given or relative to
    ///   `root`): the videos it names, each with a label and optionally a time range; the
    ///   folder layout is then not used. See `readAnnotations` for the format.
    ///
    /// Folders nested deeper than a label folder, label folders with no video, files
    /// that are not videos (by extension; dotfiles and notes such as `.md`, `.txt`,
    /// `.csv`, `.json` are skipped quietly), `__MACOSX` and hidden folders are reported
    /// or skipped, never fatal. Finding no video at all throws a `DatasetError` naming the
    /// layouts accepted.
    ///
    /// Ids: the video's path relative to `root` (`train/correct/correct12.mp4`), plus
    /// `@<start>-<end>` in seconds with 2 decimals for a range
    /// (`montage/montage_01.mp4@3.60-7.20`). `video` is `root` joined with that path.
    public static func scan(_ root: String, annotations: String? = nil) throws -> SourceListing {
        let fm = FileManager.default
        var isDir: ObjCBool = false
        guard fm.fileExists(atPath: root, isDirectory: &isDir) else {
            throw DatasetError("dataset folder \(root) does not exist")
        }
        if let annotations {
            return try scanAnnotations(root: root, annotations: annotations)
        }
        guard isDir.boolValue else { throw DatasetError("\(root) is a file, not a dataset folder (give the folder holding the videos)") }
        var scanner = FolderScanner(root: trimSlash(root))
        scanner.scanRoot()
        guard !scanner.clips.isEmpty else {
            throw DatasetError("no videos found in \(root): expected <label>/<video>, <split>/<label>/<video> "
                + "(split: train, validation, test), <label>.<n>.<ext> files, or an annotation file "
                + "(video extensions: \(videoExtensions.sorted().joined(separator: " ")))")
        }
        return SourceListing(clips: scanner.clips.sorted { $0.id < $1.id }, problems: scanner.problems)
    }

    /// The id of a range of a video: `"<relative path>@<start>-<end>"`, seconds with 2 decimals.
    public static func rangeID(_ relativePath: String, start: Double, end: Double) -> String {
        "\(relativePath)@\(String(format: "%.2f", start))-\(String(format: "%.2f", end))"
    }

    static func isVideo(_ name: String) -> Bool {
        videoExtensions.contains((name as NSString).pathExtension.lowercased())
    }

    static func trimSlash(_ p: String) -> String {
        var p = p
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        return p
    }
}

// MARK: - Folder layouts

private struct FolderScanner {
    let root: String
    var clips: [ClipSource] = []
    var problems: [DataProblem] = []
    /// Entries already reported by `list` (a folder may be listed more than once).
    var reported: Set<String> = []
    let fm = FileManager.default

    init(root: String) { self.root = root }

    func path(_ rel: String) -> String { rel.isEmpty ? root : root + "/" + rel }
    func display(_ rel: String) -> String { rel.isEmpty ? root : rel }

    /// Entries of a folder, sorted, without hidden ones and `__MACOSX`; split into folders and
    /// files. A hidden folder (".x", "..x") and a symbolic link to nothing are reported (a
    /// label folder renamed by mistake, a moved video), each once; dotfiles are skipped quietly.
    mutating func list(_ rel: String) -> (dirs: [String], files: [String]) {
        let names = ((try? fm.contentsOfDirectory(atPath: path(rel))) ?? []).sorted()
        var dirs: [String] = [], files: [String] = []
        for n in names where n != "__MACOSX" {
            let child = rel.isEmpty ? n : rel + "/" + n
            var isDir: ObjCBool = false
            let exists = fm.fileExists(atPath: path(child), isDirectory: &isDir)
            if !exists {
                if (try? fm.destinationOfSymbolicLink(atPath: path(child))) != nil, reported.insert(child).inserted {
                    problem(child, "a symbolic link to nothing (its target was moved or deleted): skipped")
                }
                continue
            }
            if n.hasPrefix(".") {
                if isDir.boolValue, n != ".git", reported.insert(child).inserted {
                    problem(child, "a hidden folder (its name starts with a dot): skipped; rename it to use it")
                }
                continue
            }
            if isDir.boolValue { dirs.append(n) } else { files.append(n) }
        }
        return (dirs, files)
    }

    mutating func problem(_ rel: String, _ message: String) {
        problems.append(DataProblem(file: path(rel), message: message))
    }

    mutating func scanRoot() {
        let (dirs, files) = list("")
        let splitDirs = dirs.filter { DatasetSources.splitFolders[$0.lowercased()] != nil }
        if splitDirs.isEmpty {
            for d in dirs { scanLabelFolder(d, label: d, split: nil) }
            scanLabeledFiles("", files: files, split: nil)
            return
        }
        // Split layout: root/<split>/<label>/…; anything else at the top is not part of it.
        for d in dirs {
            if let split = DatasetSources.splitFolders[d.lowercased()] {
                let (labelDirs, splitFiles) = list(d)
                for l in labelDirs { scanLabelFolder(d + "/" + l, label: l, split: split) }
                scanLabeledFiles(d, files: splitFiles, split: split)
            } else {
                let inside = list(d).files
                let videos = inside.filter(DatasetSources.isVideo).count
                var msg = "folder '\(d)' is not a split folder (train, validation, test) and is not used"
                if videos > 0 { msg += "; its \(videos) video\(videos == 1 ? "" : "s") have no label here" }
                let notes = inside.filter { ["csv", "json"].contains(($0 as NSString).pathExtension.lowercased()) }
                if videos > 0, !notes.isEmpty {
                    msg += " (to use time-range labels, pass the annotation file: \(d)/\(notes[0]))"
                } else {
                    msg += " (with split folders, labels go in <split>/<label>/)"
                }
                problem(d, msg)
            }
        }
        let topVideos = files.filter(DatasetSources.isVideo)
        if !topVideos.isEmpty {
            problem("", "\(topVideos.count) video\(topVideos.count == 1 ? "" : "s") beside the split folders not used (e.g. \(topVideos[0])): put them in <split>/<label>/")
        }
    }

    mutating func scanLabelFolder(_ rel: String, label: String, split: String?) {
        let (dirs, files) = list(rel)
        var found = 0
        for f in files where DatasetSources.isVideo(f) {
            let id = rel + "/" + f
            clips.append(ClipSource(id: id, video: path(id), label: label, split: split))
            found += 1
        }
        reportOthers(rel, files: files)
        for d in dirs {
            let nested = countVideos(rel + "/" + d)
            problem(rel + "/" + d, "nested folder not used (\(nested) video\(nested == 1 ? "" : "s") inside): videos go directly in the label folder \(rel)/")
        }
        if found == 0 {
            problem(rel, "label folder '\(rel)' has no videos; label '\(label)' not used here")
        } else if let notes = files.first(where: { ["csv", "json"].contains(($0 as NSString).pathExtension.lowercased()) }) {
            // Videos beside an annotation-like file: perhaps time ranges, not one label.
            problem(rel, "label folder '\(rel)' also holds \(notes): its videos are labelled '\(label)'; "
                + "if \(notes) labels time ranges, pass it as the annotation file instead")
        }
    }

    /// Videos named `<label>.<n>.<ext>` directly in `rel` (the root or a split folder).
    mutating func scanLabeledFiles(_ rel: String, files: [String], split: String?) {
        for f in files where DatasetSources.isVideo(f) {
            let id = rel.isEmpty ? f : rel + "/" + f
            if let label = labeledFileLabel(f) {
                clips.append(ClipSource(id: id, video: path(id), label: label, split: split))
            } else {
                let ext = (f as NSString).pathExtension
                problems.append(DataProblem(file: path(id),
                    message: "cannot tell the label of \(f): name it <label>.<n>.\(ext) or put it in a <label>/ folder"))
            }
        }
        reportOthers(rel, files: files)
    }

    /// `squat.12.mp4` → `squat`; nil when the name has no `.<number>` before the extension.
    func labeledFileLabel(_ name: String) -> String? {
        let stem = (name as NSString).deletingPathExtension
        guard let dot = stem.lastIndex(of: ".") else { return nil }
        let number = stem[stem.index(after: dot)...]
        let label = stem[..<dot]
        guard !number.isEmpty, number.allSatisfy(\.isASCII), number.allSatisfy(\.isNumber), !label.isEmpty else { return nil }
        return String(label)
    }

    /// Files that are neither videos nor quiet notes: one problem per folder, with a count.
    mutating func reportOthers(_ rel: String, files: [String]) {
        let others = files.filter {
            !DatasetSources.isVideo($0) && !DatasetSources.quietExtensions.contains(($0 as NSString).pathExtension.lowercased())
        }
        guard !others.isEmpty else { return }
        let examples = others.prefix(3).joined(separator: ", ") + (others.count > 3 ? ", …" : "")
        problem(rel, "\(others.count) file\(others.count == 1 ? " is" : "s are") not a video by extension and ignored (\(examples)); "
            + "video extensions: \(DatasetSources.videoExtensions.sorted().joined(separator: " "))")
    }

    func countVideos(_ rel: String) -> Int {
        guard let e = fm.enumerator(atPath: path(rel)) else { return 0 }
        var n = 0
        while let p = e.nextObject() as? String { if DatasetSources.isVideo(p) { n += 1 } }
        return n
    }
}

// MARK: - Annotation files

extension DatasetSources {
    /// Reads an annotation file (Create ML's form) into clips:
    ///
    /// - **CSV**: a header row naming the columns, in any order and any case: `video`
    ///   and `label` (required; also `file`/`filename`/`path` and `class`/`action`),
    ///   `start` and `end` (optional, together; also `start_time`/`end_time`), `split`
    ///   (optional: train, validation/val/valid, test). RFC 4180: fields may be quoted,
    ///   with commas, line breaks and `""` inside. `row` in problems is the line number
    ///   (header = 1).
    /// - **JSON**: an array of objects with those keys; times as numbers (seconds) or
    ///   strings. `row` in problems is the object's position in the array (first = 1).
    /// - Times: seconds (`3`, `3.14`) or clock times (`01:03`, `01:03.14`, `05:01:03`),
    ///   see `parseTime`. A file that mixes the two is read as written (both are
    ///   unambiguous) and reported once, since it is often a sign of a slip.
    /// - Videos: a path relative to `root`, else relative to the annotation file's
    ///   folder, or absolute.
    ///
    /// Rows skipped, each reported with its row: a video not found, an empty video or
    /// label, a time that does not parse, a start without an end, an end not after its
    /// start, a row without a range when others have one (when one row has start/end,
    /// all must), a duplicate (same video and range; the first is kept). Reported but
    /// kept: ranges of one video that overlap under different labels. Unknown columns
    /// are reported once and ignored. A missing `video` or `label` column throws.
    static func scanAnnotations(root: String, annotations: String) throws -> SourceListing {
        let fm = FileManager.default
        var file = annotations
        if !fm.fileExists(atPath: file), !annotations.hasPrefix("/"), fm.fileExists(atPath: trimSlash(root) + "/" + annotations) {
            file = trimSlash(root) + "/" + annotations
        }
        guard let data = fm.contents(atPath: file) else {
            throw DatasetError("cannot read annotation file \(annotations)")
        }
        let bytes = [UInt8](data)
        let ext = (file as NSString).pathExtension.lowercased()
        let firstByte = bytes.first { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF) }
        let isJSON = ext == "json" || (ext != "csv" && (firstByte == UInt8(ascii: "[") || firstByte == UInt8(ascii: "{")))
        var reader = AnnotationReader(root: trimSlash(root), file: file)
        if isJSON { try reader.readJSON(data) } else { try reader.readCSV(bytes) }
        reader.finish()
        guard !reader.clips.isEmpty else {
            let first = reader.problems.first.map { "; first problem: \($0)" } ?? ""
            throw DatasetError("annotation file \(file) gives no usable clip (\(reader.problems.count) problem\(reader.problems.count == 1 ? "" : "s")\(first))")
        }
        return SourceListing(clips: reader.clips.sorted { $0.id < $1.id }, problems: reader.problems)
    }
}

private struct AnnotationRow {
    var row: Int
    var video: String?
    var label: String?
    var start: TimeField?
    var end: TimeField?
    var split: String?
}

/// A time as written: a JSON number, or text.
private enum TimeField {
    case number(Double)
    case text(String)
}

private struct AnnotationReader {
    let root: String
    let file: String
    var problems: [DataProblem] = []
    var clips: [ClipSource] = []
    var rows: [AnnotationRow] = []
    /// Rows are JSON array entries ("entry" in messages).
    var json = false

    init(root: String, file: String) { self.root = root; self.file = file }

    mutating func problem(_ row: Int?, _ message: String) { problems.append(DataProblem(file: file, row: row, message: message)) }

    /// Column names as accepted: lower-cased, without spaces, `_` and `-`.
    static func key(_ name: String) -> String {
        String(name.lowercased().filter { $0 != " " && $0 != "_" && $0 != "-" })
    }
    static let aliases: [String: String] = [
        "video": "video", "file": "video", "filename": "video", "path": "video", "videopath": "video", "videofile": "video",
        "label": "label", "class": "label", "action": "label",
        "start": "start", "starttime": "start", "begin": "start",
        "end": "end", "endtime": "end", "stop": "end",
        "split": "split",
    ]

    /// Maps header names to fields; reports unknown and duplicate columns; throws on a missing required one.
    mutating func columns(_ names: [String]) throws -> [String: Int] {
        var map: [String: Int] = [:]
        var unknown: [String] = [], duplicate: [String] = []
        for (i, n) in names.enumerated() {
            let trimmed = n.trimmingCharacters(in: .whitespaces)
            guard let field = Self.aliases[Self.key(trimmed)] else { if !trimmed.isEmpty { unknown.append(trimmed) }; continue }
            if map[field] != nil { duplicate.append(trimmed) } else { map[field] = i }
        }
        try checkRequired(Set(map.keys), what: "column")
        if !unknown.isEmpty {
            problem(1, "unknown column\(unknown.count == 1 ? "" : "s") \(unknown.map { "'\($0)'" }.joined(separator: ", ")) ignored (columns: video, label, start, end, split)")
        }
        if !duplicate.isEmpty {
            problem(1, "column\(duplicate.count == 1 ? "" : "s") \(duplicate.map { "'\($0)'" }.joined(separator: ", ")) repeat an earlier one; the first is used")
        }
        return map
    }

    func checkRequired(_ fields: Set<String>, what: String) throws {
        for req in ["video", "label"] where !fields.contains(req) {
            throw DatasetError("annotation file \(file) has no '\(req)' \(what) (needs video and label, optionally start and end)")
        }
        if fields.contains("start") != fields.contains("end") {
            let has = fields.contains("start") ? "start" : "end", not = fields.contains("start") ? "end" : "start"
            throw DatasetError("annotation file \(file) has a '\(has)' \(what) but no '\(not)' \(what): give both, or neither")
        }
    }

    mutating func readCSV(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBufferPointer { buf in
            var cursor = CSVCursor(buf)
            var fields: [CSVField] = []
            guard cursor.next(&fields) != nil else { throw DatasetError("annotation file \(file) is empty (needs a header row: video,label,start,end)") }
            let names = fields.map { cursor.string($0) }
            let map = try columns(names)
            while let line = cursor.next(&fields) {
                if cursor.malformed { problem(line, "text after a closing quote was dropped; quote whole fields (\"a, b\")") }
                if fields.count != names.count {
                    problem(line, "has \(fields.count) field\(fields.count == 1 ? "" : "s"), the header has \(names.count): row skipped (quote fields that contain commas)")
                    continue
                }
                func text(_ k: String) -> String? {
                    guard let i = map[k] else { return nil }
                    let s = cursor.string(fields[i]).trimmingCharacters(in: .whitespaces)
                    return s.isEmpty ? nil : s
                }
                rows.append(AnnotationRow(row: line, video: text("video"), label: text("label"),
                                          start: text("start").map(TimeField.text), end: text("end").map(TimeField.text),
                                          split: text("split")))
            }
        }
    }

    mutating func readJSON(_ data: Data) throws {
        json = true
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: data) } catch {
            throw DatasetError("annotation file \(file) is not valid JSON (\(error.localizedDescription.split(separator: "\n").first ?? ""))")
        }
        guard let array = object as? [Any] else {
            throw DatasetError("annotation file \(file) must be a JSON array of objects {\"video\", \"label\", \"start\", \"end\"}")
        }
        var seen = Set<String>(), unknown: [String] = []
        var parsed: [(Int, [String: Any])] = []
        for (i, element) in array.enumerated() {
            guard let obj = element as? [String: Any] else { problem(i + 1, "entry is not an object {\"video\", \"label\", …}: skipped"); continue }
            var fields: [String: Any] = [:]
            for (k, v) in obj {
                if let f = Self.aliases[Self.key(k)] { if fields[f] == nil { fields[f] = v }; seen.insert(f) }
                else if !unknown.contains(k) { unknown.append(k) }
            }
            parsed.append((i + 1, fields))
        }
        if !parsed.isEmpty {
            // A key absent from every object is a missing column; absent from some, a row problem.
            try checkRequired(seen, what: "key")
        }
        if !unknown.isEmpty {
            problem(nil, "unknown key\(unknown.count == 1 ? "" : "s") \(unknown.sorted().map { "'\($0)'" }.joined(separator: ", ")) ignored (keys: video, label, start, end, split)")
        }
        func string(_ v: Any?) -> String? {
            switch v {
            case let s as String: let t = s.trimmingCharacters(in: .whitespaces); return t.isEmpty ? nil : t
            case let n as NSNumber: return n.stringValue
            default: return nil
            }
        }
        func time(_ v: Any?) -> TimeField? {
            switch v {
            case let s as String: let t = s.trimmingCharacters(in: .whitespaces); return t.isEmpty ? nil : .text(t)
            case let n as NSNumber: return .number(n.doubleValue)
            default: return nil
            }
        }
        for (row, f) in parsed {
            rows.append(AnnotationRow(row: row, video: string(f["video"]), label: string(f["label"]),
                                      start: time(f["start"]), end: time(f["end"]), split: string(f["split"])))
        }
    }

    /// Validates rows, resolves videos, builds clips.
    mutating func finish() {
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
                if let known = DatasetSources.splitFolders[s.lowercased()] { split = known }
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

// MARK: - Times

/// Parses a time as Create ML accepts them, in seconds: `3`, `3.14` (seconds), `01:03`,
/// `1:03`, `01:03.14` (minutes:seconds), `05:01:03`, `5:01:03.5` (hours:minutes:seconds).
/// After a colon, minutes and seconds have two digits and are below 60; the leading part
/// may be any number of digits. Surrounding spaces are allowed. Nil if malformed or negative.
public func parseTime(_ text: String) -> Double? {
    let t = text.trimmingCharacters(in: .whitespaces)
    let parts = t.split(separator: ":", omittingEmptySubsequences: false)
    guard (1...3).contains(parts.count) else { return nil }
    // Each part: digits, and only the last may have a fraction.
    var total = 0.0
    for (i, p) in parts.enumerated() {
        let last = i == parts.count - 1
        let pieces = p.split(separator: ".", omittingEmptySubsequences: false)
        guard let whole = pieces.first, !whole.isEmpty, whole.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        if pieces.count > 2 || (pieces.count == 2 && !last) { return nil }
        if pieces.count == 2 {
            guard !pieces[1].isEmpty, pieces[1].allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        }
        if i > 0 { guard whole.count == 2 else { return nil } }
        guard let v = Double(p) else { return nil }
        if i > 0 && v >= 60 { return nil }
        total = total * 60 + v
    }
    return total
}

// MARK: - CSV

/// A field of a CSV record: byte offsets of its text (without the enclosing quotes).
struct CSVField {
    var start: Int
    var end: Int
    /// Quoted, with `""` inside to be turned into `"`.
    var escaped: Bool
}

/// An RFC 4180 CSV reader over bytes: `,` between fields, `\n`, `\r\n` or `\r` between
/// records, fields optionally in double quotes (then holding commas, line breaks and
/// `""` for a quote). Lenient: a UTF-8 byte-order mark is skipped, blank lines are
/// skipped, an unterminated quote runs to the end of the file, text after a closing
/// quote is dropped and `malformed` set for the record.
struct CSVCursor {
    let b: UnsafeBufferPointer<UInt8>
    var pos = 0
    /// Line number (1-based) at `pos`.
    var line = 1
    /// The last record had text after a closing quote, or an unterminated quote.
    var malformed = false

    init(_ buffer: UnsafeBufferPointer<UInt8>) {
        b = buffer
        if b.count >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF { pos = 3 }
    }

    /// Reads the next record into `fields`; returns the line it starts on, nil at the end.
    mutating func next(_ fields: inout [CSVField]) -> Int? {
        let n = b.count
        let comma = UInt8(ascii: ","), quote = UInt8(ascii: "\""), lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        while true {
            fields.removeAll(keepingCapacity: true)
            malformed = false
            // Skip line breaks (blank lines).
            while pos < n && (b[pos] == lf || b[pos] == cr) {
                if b[pos] == cr && pos + 1 < n && b[pos + 1] == lf { pos += 1 }
                pos += 1; line += 1
            }
            if pos >= n { return nil }
            let startLine = line
            while true {
                if pos < n && b[pos] == quote {
                    pos += 1
                    let s = pos
                    var escaped = false
                    var e = n
                    while pos < n {
                        let c = b[pos]
                        if c == quote {
                            if pos + 1 < n && b[pos + 1] == quote { escaped = true; pos += 2; continue }
                            e = pos; pos += 1; break
                        }
                        if c == lf { line += 1 }
                        pos += 1
                    }
                    if e == n { malformed = true }
                    while pos < n && b[pos] != comma && b[pos] != lf && b[pos] != cr { malformed = true; pos += 1 }
                    fields.append(CSVField(start: s, end: e, escaped: escaped))
                } else {
                    let s = pos
                    while pos < n {
                        let c = b[pos]
                        if c == comma || c == lf || c == cr { break }
                        pos += 1
                    }
                    fields.append(CSVField(start: s, end: pos, escaped: false))
                }
                if pos < n && b[pos] == comma { pos += 1; continue }
                // End of record.
                if pos < n {
                    if b[pos] == cr && pos + 1 < n && b[pos + 1] == lf { pos += 1 }
                    pos += 1; line += 1
                }
                break
            }
            // A line of only spaces is blank too.
            if fields.count == 1 && isBlank(fields[0]) { continue }
            return startLine
        }
    }

    func isBlank(_ f: CSVField) -> Bool {
        var i = f.start
        while i < f.end { if b[i] != 0x20 && b[i] != 0x09 { return false }; i += 1 }
        return true
    }

    func string(_ f: CSVField) -> String {
        let s = String(decoding: UnsafeBufferPointer(rebasing: b[f.start..<f.end]), as: UTF8.self)
        return f.escaped ? s.replacingOccurrences(of: "\"\"", with: "\"") : s
    }

    /// The field's bytes equal `other`.
    func equals(_ f: CSVField, _ other: [UInt8]) -> Bool {
        guard f.end - f.start == other.count, !f.escaped else { return false }
        return other.withUnsafeBufferPointer { o in
            o.count == 0 || memcmp(b.baseAddress! + f.start, o.baseAddress!, o.count) == 0
        }
    }

    func bytes(_ f: CSVField) -> [UInt8] {
        f.escaped ? Array(string(f).utf8) : Array(b[f.start..<f.end])
    }
}

/// Parses a decimal number from bytes `[s, e)` (spaces around allowed). Exact: plain
/// decimals with at most 15 significant digits and 22 decimals take Clinger's fast
/// path (one correctly rounded multiply or divide, so the result equals
/// `Double(String)`); anything else (exponents beyond, long mantissas, `nan`, `inf`) goes
/// through `Double(String)`. Nil if not a number.
@inline(__always)
func parseNumber(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Double? {
    var s = start, e = end
    while s < e && (b[s] == 0x20 || b[s] == 0x09) { s += 1 }
    while e > s && (b[e - 1] == 0x20 || b[e - 1] == 0x09) { e -= 1 }
    if s == e { return nil }
    var i = s
    var negative = false
    if b[i] == UInt8(ascii: "-") { negative = true; i += 1 } else if b[i] == UInt8(ascii: "+") { i += 1 }
    var mantissa: UInt64 = 0
    var digits = 0, fractionDigits = 0
    var sawDigit = false
    while i < e, b[i] &- 0x30 < 10 {
        if mantissa == 0 && b[i] == 0x30 { sawDigit = true; i += 1; continue }   // leading zeros
        mantissa = mantissa &* 10 &+ UInt64(b[i] &- 0x30); digits += 1; sawDigit = true; i += 1
    }
    if i < e && b[i] == UInt8(ascii: ".") {
        i += 1
        while i < e, b[i] &- 0x30 < 10 {
            if mantissa == 0 && b[i] == 0x30 { fractionDigits += 1; sawDigit = true; i += 1; continue }
            mantissa = mantissa &* 10 &+ UInt64(b[i] &- 0x30); digits += 1; fractionDigits += 1; sawDigit = true; i += 1
        }
    }
    if i == e && sawDigit && digits <= 15 && fractionDigits <= 22 {
        // mantissa < 10^15 < 2^53: exact as a Double, and so are the powers of ten up to 10^22.
        var v = Double(mantissa)
        if fractionDigits > 0 { v /= powersOfTen[fractionDigits] }
        return negative ? -v : v
    }
    // Slow path: exponents, long mantissas, words; Double(String) decides.
    let text = String(decoding: UnsafeBufferPointer(rebasing: b[s..<e]), as: UTF8.self)
    return Double(text)
}

private let powersOfTen: [Double] = (0...22).map { p in (0..<p).reduce(1.0) { acc, _ in acc * 10 } }
