import Foundation
import Basics

// Annotation files read into rows; `AnnotationClips.swift` checks the rows and makes them clips.

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
        let data: Data
        do { data = try InputFile.read(file, limit: KeypointChecks.maxFileBytes, what: "annotation file") } catch let error as InputFileError {
            throw DatasetError(error.message)
        }
        let bytes = [UInt8](data)
        let ext = (file as NSString).pathExtension.lowercased()
        let firstByte = bytes.first { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF) }
        let isJSON = ext == "json" || (ext != "csv" && (firstByte == UInt8(ascii: "[") || firstByte == UInt8(ascii: "{")))
        var reader = AnnotationReader(root: trimSlash(root), file: file)
        if isJSON { try reader.readJSON(data) } else { try reader.readCSV(bytes) }
        reader.makeClips()
        guard !reader.clips.isEmpty else {
            let first = reader.problems.first.map { "; first problem: \($0)" } ?? ""
            throw DatasetError("annotation file \(file) gives no usable clip (\(reader.problems.count) problem\(reader.problems.count == 1 ? "" : "s")\(first))")
        }
        return SourceListing(clips: reader.clips.sorted { $0.id < $1.id }, problems: reader.problems)
    }
}

struct AnnotationRow {
    var row: Int
    var video: String?
    var label: String?
    var start: TimeField?
    var end: TimeField?
    var split: String?
}

/// A time as written: a JSON number, or text.
enum TimeField {
    case number(Double)
    case text(String)
}

struct AnnotationReader {
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
        let elements: [AnnotationJSONElement]
        do { elements = try JSONDecoder().decode([AnnotationJSONElement].self, from: data) } catch let error as DecodingError {
            if error.isSyntaxError { throw DatasetError("annotation file " + error.oneLine(file: file, expected: "", data: data)) }
            throw DatasetError("annotation file \(file) must be a JSON array of objects {\"video\", \"label\", \"start\", \"end\"}")
        }
        var seen = Set<String>(), unknown: [String] = []
        var parsed: [(Int, [String: AnnotationJSONValue])] = []
        for (i, element) in elements.enumerated() {
            guard case .entry(let keys) = element else { problem(i + 1, "entry is not an object {\"video\", \"label\", …}: skipped"); continue }
            var fields: [String: AnnotationJSONValue] = [:]
            for (k, v) in keys {
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
        for (row, f) in parsed {
            rows.append(AnnotationRow(row: row, video: f["video"]?.string, label: f["label"]?.string,
                                      start: f["start"]?.time, end: f["end"]?.time, split: f["split"]?.string))
        }
    }
}

/// One element of an annotation JSON array: an object (its keys as written, matched to fields
/// through `AnnotationReader.aliases` by the reader), or anything else (skipped with a problem).
enum AnnotationJSONElement: Decodable {
    case entry([(String, AnnotationJSONValue)])
    case notObject

    init(from decoder: any Decoder) throws {
        guard let c = try? decoder.container(keyedBy: AnyCodingKey.self) else { self = .notObject; return }
        self = .entry(c.allKeys.map { ($0.stringValue, (try? c.decode(AnnotationJSONValue.self, forKey: $0)) ?? .other) })
    }
}

/// A value of an annotation entry: text, a number, or something no field takes (null, an array…).
enum AnnotationJSONValue: Decodable {
    case text(String)
    case integer(Int)
    case number(Double)
    case other

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let s = try? c.decode(String.self) { self = .text(s) }
        else if let i = try? c.decode(Int.self) { self = .integer(i) }
        else if let d = try? c.decode(Double.self) { self = .number(d) }
        else if let b = try? c.decode(Bool.self) { self = .integer(b ? 1 : 0) }
        else { self = .other }
    }

    /// Text trimmed (nil when empty), or a number as written.
    var string: String? {
        switch self {
        case .text(let s): let t = s.trimmingCharacters(in: .whitespaces); return t.isEmpty ? nil : t
        case .integer(let i): return String(i)
        case .number(let d): return NSNumber(value: d).stringValue
        case .other: return nil
        }
    }

    var time: TimeField? {
        switch self {
        case .text: return string.map(TimeField.text)
        case .integer(let i): return .number(Double(i))
        case .number(let d): return .number(d)
        case .other: return nil
        }
    }
}
