import Foundation
import Pose

/// Clips read from a keypoint file and what was wrong in it.
public struct ImportResult: Sendable {
    /// In the order the clips first appear in the file.
    public var clips: [ClipKeypoints]
    public var problems: [DataProblem]
    public init(clips: [ClipKeypoints], problems: [DataProblem]) { self.clips = clips; self.problems = problems }
}

/// Keypoint CSV, the interchange format (ARCHITECTURE.md, "Formats"): one row per frame,
/// `clip,label,split,frame,width,height` then `NAME_x,NAME_y,NAME_c` per joint, in pixels
/// from the top-left corner, `c` a confidence 0–1, empty x/y for a missing joint.
/// `shared/data/penn-action/keypoints.csv` is one.
public enum KeypointCSV {
    /// Columns a keypoint CSV must have (any case); `split` and `time` are optional.
    public static let requiredColumns = ["clip", "label", "frame", "width", "height"]
    /// Bounds on what a row may say: frame numbers up to a million (9 hours at 30 fps; a
    /// clip's frames are allocated from its first to its last number), pictures up to
    /// 100,000 pixels a side, joints within 100 picture sizes of the picture (a typo or an
    /// overflow, not a pose).
    public static let maxFrame = 1_000_000, maxPixels = 100_000
    public static let farOutside = 100.0

    /// At most this many problems of one kind are listed per file; one more line counts the rest.
    public static let problemsListedPerKind = 20

    /// Reads a keypoint CSV into clips.
    ///
    /// - Columns are found by name, in any order and any case. Joint columns are
    ///   `NAME_x`, `NAME_y` and `NAME_c`; names are put in poseact's spelling
    ///   (`Skeleton.canonicalName`: `leftShoulder_x` → `left_shoulder`) and keep the
    ///   order of the header. A name outside `Skeleton.allNames` is kept and reported
    ///   once. A joint with no `_c` column has confidence 1 wherever x and y are given.
    ///   Other columns are reported once and ignored.
    /// - Rows are grouped by `clip` (text: `0001` stays `0001`), whether contiguous or
    ///   not, and sorted by `frame`. A frame number missing between the first and last
    ///   becomes a frame with no pose (NaN, NaN, 0), reported once per clip; a repeated
    ///   frame is reported and the first kept. A clip whose rows disagree on label or
    ///   split keeps its first row's, reported once.
    /// - x and y are normalised by the row's `width` and `height`. Empty x and y, or
    ///   `nan` in x, y or c, make the joint missing (NaN, NaN, 0).
    /// - Times: frames are `1/fps` apart, from 0 at the clip's first frame. With a `time`
    ///   column (seconds), its values are used instead, shifted so the first frame is at
    ///   0; `start`/`end` then give the span in the source (`end` = last time + one
    ///   frame), and `fps` is the clip's mean frame rate.
    /// - Problems name the row (its line in the file, header = 1). A row with the wrong
    ///   number of fields, or a `frame`, `width`, `height` or `time` that is not a
    ///   number, is skipped; a joint value that is not a number makes that joint missing
    ///   in that frame.
    /// - Throws `DatasetError` if the file cannot be read, is empty, lacks a required
    ///   column, or has no joint columns.
    public static func read(_ path: String, fps: Double = 30) throws -> ImportResult {
        guard fps.isFinite && fps > 0 else { throw DatasetError("frame rate must be a positive number, not \(fps)") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DatasetError("cannot read keypoint file \(path)")
        }
        return try data.withUnsafeBytes { raw in
            var importer = Importer(path: path, fps: fps, bytes: raw.bindMemory(to: UInt8.self))
            return try importer.run()
        }
    }
}

/// Problems, at most `KeypointCSV.problemsListedPerKind` of a kind, then a count of the rest.
private struct ProblemLog {
    let file: String
    var problems: [DataProblem] = []
    var counts: [String: Int] = [:]
    var order: [String] = []
    var descriptions: [String: String] = [:]

    init(file: String) { self.file = file }

    mutating func add(_ kind: String, _ row: Int?, _ message: @autoclosure () -> String, summary: String) {
        let n = counts[kind, default: 0]
        if n == 0 { order.append(kind); descriptions[kind] = summary }
        counts[kind] = n + 1
        if n < KeypointCSV.problemsListedPerKind { problems.append(DataProblem(file: file, row: row, message: message())) }
    }

    /// The problems in row order (header first), then the counts of those not listed.
    mutating func finish() -> [DataProblem] {
        problems = problems.enumerated().sorted { ($0.element.row ?? 0, $0.offset) < ($1.element.row ?? 0, $1.offset) }.map(\.element)
        for k in order {
            let n = counts[k]!, extra = n - KeypointCSV.problemsListedPerKind
            if extra > 0 {
                problems.append(DataProblem(file: file, message: "\(extra) more \(descriptions[k]!) not listed (\(n) in all)"))
            }
        }
        return problems
    }
}

private struct Joint {
    var name: String
    var x: Int
    var y: Int
    var c: Int?
}

private struct ClipAccumulator {
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

private struct Importer {
    let path: String
    let fps: Double
    let b: UnsafeBufferPointer<UInt8>
    var log: ProblemLog

    init(path: String, fps: Double, bytes: UnsafeBufferPointer<UInt8>) {
        self.path = path; self.fps = fps; b = bytes; log = ProblemLog(file: path)
    }

    mutating func run() throws -> ImportResult {
        var cursor = CSVCursor(b)
        var fields: [CSVField] = []
        fields.reserveCapacity(128)
        guard cursor.next(&fields) != nil else {
            throw DatasetError("keypoint file \(path) is empty (needs a header: clip,label,split,frame,width,height,NAME_x,NAME_y,NAME_c,…)")
        }
        let names = fields.map { cursor.string($0).trimmingCharacters(in: .whitespaces) }

        // Header.
        var column: [String: Int] = [:]
        var jointOrder: [String] = []
        var jointCols: [String: (x: Int?, y: Int?, c: Int?)] = [:]
        var unknownColumns: [String] = [], repeated: [String] = []
        for (i, name) in names.enumerated() {
            let lower = name.lowercased()
            if KeypointCSV.requiredColumns.contains(lower) || lower == "split" || lower == "time" {
                if column[lower] == nil { column[lower] = i } else { repeated.append(name) }
                continue
            }
            if lower.count > 2, let axis = lower.last, lower.dropLast().hasSuffix("_"), "xyc".contains(axis) {
                let joint = Skeleton.canonicalName(String(name.dropLast(2)))
                if jointCols[joint] == nil { jointOrder.append(joint); jointCols[joint] = (nil, nil, nil) }
                var cols = jointCols[joint]!
                let taken: Bool
                switch axis {
                case "x": taken = cols.x != nil; if !taken { cols.x = i }
                case "y": taken = cols.y != nil; if !taken { cols.y = i }
                default: taken = cols.c != nil; if !taken { cols.c = i }
                }
                if taken { repeated.append(name) }
                jointCols[joint] = cols
                continue
            }
            unknownColumns.append(name.isEmpty ? "(column \(i + 1), unnamed)" : name)
        }
        for req in KeypointCSV.requiredColumns where column[req] == nil {
            throw DatasetError("keypoint file \(path) has no '\(req)' column (needs clip, label, frame, width, height, "
                + "then NAME_x, NAME_y, NAME_c for each joint)")
        }
        if !unknownColumns.isEmpty {
            log.add("header", 1, "unknown column\(unknownColumns.count == 1 ? "" : "s") \(unknownColumns.map { "'\($0)'" }.joined(separator: ", ")) ignored "
                + "(columns: clip, label, split, frame, time, width, height, NAME_x, NAME_y, NAME_c)", summary: "header problems")
        }
        if !repeated.isEmpty {
            log.add("header", 1, "column\(repeated.count == 1 ? "" : "s") \(repeated.map { "'\($0)'" }.joined(separator: ", ")) repeat an earlier one; the first is used",
                    summary: "header problems")
        }
        var joints: [Joint] = []
        let known = Set(Skeleton.allNames)
        for name in jointOrder {
            let cols = jointCols[name]!
            guard let x = cols.x, let y = cols.y else {
                let missing = cols.x == nil ? "x" : "y"
                log.add("header", 1, "joint '\(name)' has no \(name)_\(missing) column; not used", summary: "header problems")
                continue
            }
            if cols.c == nil {
                log.add("header", 1, "joint '\(name)' has no \(name)_c column: confidence 1 wherever x and y are given", summary: "header problems")
            }
            if !known.contains(name) {
                log.add("header", 1, "joint '\(name)' is not a poseact joint name; kept, but models map joints by name "
                    + "(names: nose, left_shoulder, …, head, neck, root)", summary: "header problems")
            }
            joints.append(Joint(name: name, x: x, y: y, c: cols.c))
        }
        guard !joints.isEmpty else {
            throw DatasetError("keypoint file \(path) has no joint columns (NAME_x, NAME_y, NAME_c, e.g. left_knee_x, left_knee_y, left_knee_c)")
        }

        let cClip = column["clip"]!, cLabel = column["label"]!, cFrame = column["frame"]!
        let cWidth = column["width"]!, cHeight = column["height"]!
        let cSplit = column["split"], cTime = column["time"]
        let columnCount = names.count
        let jointCount = joints.count

        // Rows.
        var clips: [ClipAccumulator] = []
        var clipIndex: [String: Int] = [:]
        var current = -1
        var rowValues = [Float](repeating: 0, count: jointCount * 3)

        var dataRows = 0
        while let row = cursor.next(&fields) {
            dataRows += 1
            if cursor.malformed {
                log.add("quote", row, "a quoted field is not closed properly; text after the closing quote was dropped", summary: "rows with bad quoting")
            }
            if fields.count != columnCount {
                log.add("columns", row, "has \(fields.count) field\(fields.count == 1 ? "" : "s"), the header has \(columnCount): row skipped",
                        summary: "rows with the wrong number of fields")
                continue
            }
            // Clip.
            let fc = fields[cClip]
            if current < 0 || !cursor.equals(fc, clips[current].idBytes) {
                let id = cursor.string(fc).trimmingCharacters(in: .whitespaces)
                if id.isEmpty {
                    log.add("row", row, "clip is empty: row skipped", summary: "rows skipped")
                    continue
                }
                if let i = clipIndex[id] {
                    current = i
                } else {
                    current = -1   // created below, once the row is known to be usable
                }
                if current < 0 {
                    // Validate the numbers first, so that a broken row does not create a clip.
                    guard let (_, w, h) = frameAndSize(row, fields, cFrame, cWidth, cHeight) else { continue }
                    let label = cursor.string(fields[cLabel]).trimmingCharacters(in: .whitespaces)
                    let split = cSplit.map { cursor.string(fields[$0]).trimmingCharacters(in: .whitespaces) }
                    clips.append(ClipAccumulator(id: id, idBytes: cursor.bytes(fc), label: label,
                                                 labelBytes: cursor.bytes(fields[cLabel]),
                                                 split: split.flatMap { $0.isEmpty ? nil : $0 },
                                                 splitBytes: cSplit.map { cursor.bytes(fields[$0]) } ?? [],
                                                 width: w, height: h))
                    current = clips.count - 1
                    clipIndex[id] = current
                    if label.isEmpty {
                        log.add("label", row, "clip \(id) has an empty label", summary: "label problems")
                    }
                }
            }
            guard let (frame, width, height) = frameAndSize(row, fields, cFrame, cWidth, cHeight) else { continue }
            var time = 0.0
            if let cTime {
                guard let t = parseNumber(b, fields[cTime].start, fields[cTime].end), t.isFinite else {
                    log.add("row", row, "time '\(cursor.string(fields[cTime]))' is not a number of seconds: row skipped", summary: "rows skipped")
                    continue
                }
                time = t
            }

            // Label, split and size agree with the clip's first row.
            if !clips[current].labelReported && !cursor.equals(fields[cLabel], clips[current].labelBytes) {
                clips[current].labelReported = true
                log.add("label", row, "clip \(clips[current].id) has label '\(cursor.string(fields[cLabel]))' here but '\(clips[current].label)' before; the first is kept",
                        summary: "clips with mixed labels")
            }
            if let cSplit, !clips[current].splitReported && !cursor.equals(fields[cSplit], clips[current].splitBytes) {
                clips[current].splitReported = true
                log.add("split", row, "clip \(clips[current].id) has split '\(cursor.string(fields[cSplit]))' here but '\(clips[current].split ?? "")' before; the first is kept",
                        summary: "clips with mixed splits")
            }
            if (width != clips[current].width || height != clips[current].height) && !clips[current].sizeReported {
                clips[current].sizeReported = true
                log.add("size", row, "clip \(clips[current].id) changes frame size from \(clips[current].width)×\(clips[current].height) to \(width)×\(height); "
                    + "each frame is normalised by its own size, the first is stored", summary: "clips with changing frame sizes")
            }

            // Joints, into one row of `stride` values, then onto the clip.
            let w = Double(width), h = Double(height)
            for j in 0..<jointCount {
                let joint = joints[j]
                let fx = fields[joint.x], fy = fields[joint.y]
                var x = Double.nan, y = Double.nan, c = 0.0
                let xEmpty = isBlank(b, fx), yEmpty = isBlank(b, fy)
                if xEmpty || yEmpty {
                    if xEmpty != yEmpty {
                        let (given, empty) = xEmpty ? ("y", "x") : ("x", "y")
                        log.add("half", row, "\(joint.name)_\(given) is given but \(joint.name)_\(empty) is empty: the joint is missing in this frame",
                                summary: "joints with only one coordinate")
                    }
                } else if let px = parseNumber(b, fx.start, fx.end) {
                    if let py = parseNumber(b, fy.start, fy.end) {
                        var pc = 1.0
                        var ok = true
                        if let cc = joint.c, !isBlank(b, fields[cc]) {
                            if let v = parseNumber(b, fields[cc].start, fields[cc].end) { pc = v } else { badNumber(row, joint.name + "_c", fields[cc]); ok = false }
                        }
                        if ok && !(px.isNaN || py.isNaN || pc.isNaN) {
                            if !(px.isFinite && py.isFinite && pc.isFinite) {
                                let (name, field) = !px.isFinite ? ("_x", fx) : !py.isFinite ? ("_y", fy) : ("_c", fields[joint.c!])
                                badNumber(row, joint.name + name, field)
                            } else if abs(px) > KeypointCSV.farOutside * w || abs(py) > KeypointCSV.farOutside * h {
                                log.add("far", row, "\(joint.name) at (\(px), \(py)) is over \(Int(KeypointCSV.farOutside)) frame widths outside the \(width)×\(height) picture: "
                                        + "the joint is missing in this frame", summary: "joints far outside the picture")
                            } else { x = px / w; y = py / h; c = pc }
                        }
                    } else {
                        badNumber(row, joint.name + "_y", fy)
                    }
                } else {
                    badNumber(row, joint.name + "_x", fx)
                }
                rowValues[j * 3] = Float(x); rowValues[j * 3 + 1] = Float(y); rowValues[j * 3 + 2] = Float(c)
            }
            clips[current].values.append(contentsOf: rowValues)
            clips[current].frames.append(frame)
            clips[current].rows.append(row)
            if cTime != nil { clips[current].times.append(time) }
        }

        if dataRows == 0 {
            log.add("empty", nil, "no data rows after the header", summary: "")
        }
        let name = (path as NSString).lastPathComponent
        var result: [ClipKeypoints] = []
        result.reserveCapacity(clips.count)
        for acc in clips where !acc.frames.isEmpty {
            result.append(finish(acc, jointNames: joints.map(\.name), estimator: "import:\(name)", timed: cTime != nil))
        }
        return ImportResult(clips: result, problems: log.finish())
    }


    mutating func badNumber(_ row: Int, _ column: String, _ f: CSVField) {
        let text = String(decoding: UnsafeBufferPointer(rebasing: b[f.start..<f.end]), as: UTF8.self)
        log.add("number", row, "\(column) '\(text)' is not a number: the joint is missing in this frame", summary: "values that are not numbers")
    }

    /// Frame number and size of a row, or nil (reported) if they are not usable.
    mutating func frameAndSize(_ row: Int, _ fields: [CSVField], _ cFrame: Int, _ cWidth: Int, _ cHeight: Int) -> (Int, Int, Int)? {
        func integer(_ f: CSVField) -> Int? {
            guard let v = parseNumber(b, f.start, f.end), v.isFinite, v == v.rounded(), abs(v) < 1e15 else { return nil }
            return Int(v)
        }
        guard let frame = integer(fields[cFrame]), (0...KeypointCSV.maxFrame).contains(frame) else {
            let text = String(decoding: UnsafeBufferPointer(rebasing: b[fields[cFrame].start..<fields[cFrame].end]), as: UTF8.self)
            log.add("row", row, "frame '\(text)' is not a whole number in 0…\(KeypointCSV.maxFrame): row skipped", summary: "rows skipped")
            return nil
        }
        for (name, c) in [("width", cWidth), ("height", cHeight)] {
            guard let v = integer(fields[c]), (1...KeypointCSV.maxPixels).contains(v) else {
                let text = String(decoding: UnsafeBufferPointer(rebasing: b[fields[c].start..<fields[c].end]), as: UTF8.self)
                log.add("row", row, "\(name) '\(text)' is not a whole number of pixels in 1…\(KeypointCSV.maxPixels): row skipped", summary: "rows skipped")
                return nil
            }
        }
        return (frame, integer(fields[cWidth])!, integer(fields[cHeight])!)
    }

    /// Sorts a clip's frames, drops repeats, fills gaps, makes times.
    mutating func finish(_ acc: ClipAccumulator, jointNames: [String], estimator: String, timed: Bool) -> ClipKeypoints {
        let stride = jointNames.count * 3
        var order = Array(acc.frames.indices)
        var sorted = true
        for i in 1..<max(acc.frames.count, 1) where acc.frames[i] <= acc.frames[i - 1] { sorted = false; break }
        if !sorted { order.sort { (acc.frames[$0], $0) < (acc.frames[$1], $1) } }

        // Repeats: keep the first row of each frame number.
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
        let first = acc.frames[kept[0]], last = acc.frames[kept[kept.count - 1]]
        let frameCount = last - first + 1

        // Keypoints, with gaps filled.
        var keypoints: [Float]
        if sorted && kept.count == frameCount {
            keypoints = acc.values
        } else {
            keypoints = [Float](repeating: 0, count: frameCount * stride)
            for f in 0..<frameCount { for j in 0..<jointNames.count { keypoints[f * stride + j * 3] = .nan; keypoints[f * stride + j * 3 + 1] = .nan } }
            for i in kept {
                let f = acc.frames[i] - first
                for k in 0..<stride { keypoints[f * stride + k] = acc.values[i * stride + k] }
            }
        }
        if kept.count < frameCount {
            let have = Set(kept.map { acc.frames[$0] })
            var runs: [String] = []
            var f = first
            while f <= last {
                if have.contains(f) { f += 1; continue }
                let s = f
                while f <= last && !have.contains(f) { f += 1 }
                runs.append(s == f - 1 ? "\(s)" : "\(s)–\(f - 1)")
            }
            let missing = frameCount - kept.count
            log.add("gap", acc.rows[0], "clip \(acc.id) has no row for frame\(missing == 1 ? "" : "s") \(runs.prefix(5).joined(separator: ", "))\(runs.count > 5 ? ", …" : "") "
                + "(\(missing) in all): filled as frames with no pose", summary: "clips with missing frames")
        }

        // Times.
        var times = (0..<frameCount).map { Double($0) / fps }
        var clipFPS = fps
        var start: Double? = nil, end: Double? = nil
        if timed {
            let frameNumbers = kept.map { acc.frames[$0] }, given = kept.map { acc.times[$0] }
            let increasing = zip(given, given.dropFirst()).allSatisfy { $0 < $1 }
            if !increasing {
                log.add("time", acc.rows[0], "clip \(acc.id): time does not increase with frame; times are frame/\(fps) instead", summary: "clips with bad times")
            } else {
                let t0 = given[0]
                if frameNumbers.count > 1 {
                    clipFPS = Double(frameNumbers.last! - frameNumbers[0]) / (given.last! - t0)
                }
                // Given times, shifted to 0; gaps interpolated between their neighbours.
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
                start = t0
                end = given.last! + 1 / clipFPS
            }
        }
        return ClipKeypoints(id: acc.id, label: acc.label, split: acc.split, source: path, start: start, end: end, fps: clipFPS,
                             width: acc.width, height: acc.height, jointNames: jointNames, keypoints: keypoints, times: times,
                             estimator: estimator)
    }
}

/// The field is empty or only spaces and tabs.
@inline(__always)
private func isBlank(_ b: UnsafeBufferPointer<UInt8>, _ f: CSVField) -> Bool {
    var i = f.start
    while i < f.end { if b[i] != 0x20 && b[i] != 0x09 { return false }; i += 1 }
    return true
}
