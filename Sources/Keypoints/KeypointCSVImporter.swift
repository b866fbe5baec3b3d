import Basics
import Foundation

/// A joint's columns in a keypoint CSV.
struct JointColumns {
    var name: String
    var x: Int
    var y: Int
    var c: Int?
}

/// Where each value of a row is: the header mapped to columns.
struct KeypointColumns {
    /// Fields a row must have.
    let count: Int
    let clip: Int, label: Int, frame: Int, width: Int, height: Int
    let split: Int?, time: Int?
    /// In header order.
    let joints: [JointColumns]
}

/// Reads one keypoint CSV (see `KeypointCSV.read`): header, then rows onto their clips,
/// then each clip's frames sorted, gaps filled and times made (`KeypointCSVClips.swift`).
struct KeypointCSVImporter {
    let path: String
    let fps: Double
    var cursor: CSVCursor
    /// The fields of the record last read.
    var fields: [CSVField] = []
    var log: ProblemLog
    /// In the order of their first row.
    var clips: [ClipAccumulator] = []
    var clipIndex: [String: Int] = [:]
    /// The clip of the last row, checked first: rows of a clip are usually together.
    var current = -1

    init(path: String, fps: Double, bytes: UnsafeBufferPointer<UInt8>) {
        self.path = path; self.fps = fps; cursor = CSVCursor(bytes); log = ProblemLog(file: path)
        fields.reserveCapacity(128)
    }

    mutating func run() throws -> ImportResult {
        let header = try readHeader()
        let columns = try mapColumns(header)
        let dataRows = readRows(columns)
        if dataRows == 0 {
            log.add("empty", nil, "no data rows after the header", summary: "")
        }
        let clips = makeClips(columns)
        return ImportResult(clips: clips, problems: log.finish())
    }

    /// The header's names, trimmed.
    mutating func readHeader() throws -> [String] {
        guard cursor.next(&fields) != nil else {
            throw DatasetError("keypoint file \(path) is empty (needs a header: clip,label,split,frame,width,height,NAME_x,NAME_y,NAME_c,…)")
        }
        return fields.map { cursor.string($0).trimmingCharacters(in: .whitespaces) }
    }

    // MARK: - Header

    /// Finds the columns by name; reports unknown, repeated and incomplete ones; throws
    /// when a required column or every joint is missing.
    mutating func mapColumns(_ names: [String]) throws -> KeypointColumns {
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
            unknownColumns.append(name.isEmpty ? "(column \(i + 1), unnamed)" : OneLine.excerpt(name))
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
        let joints = usableJoints(jointOrder.map { (name: $0, columns: jointCols[$0]!) })
        guard !joints.isEmpty else {
            throw DatasetError("keypoint file \(path) has no joint columns (NAME_x, NAME_y, NAME_c, e.g. left_knee_x, left_knee_y, left_knee_c)")
        }
        return KeypointColumns(count: names.count, clip: column["clip"]!, label: column["label"]!, frame: column["frame"]!,
                               width: column["width"]!, height: column["height"]!, split: column["split"], time: column["time"],
                               joints: joints)
    }

    /// The joints with both an x and a y column; the others, a missing `_c` and a name
    /// poseact does not know are reported.
    mutating func usableJoints(_ found: [(name: String, columns: (x: Int?, y: Int?, c: Int?))]) -> [JointColumns] {
        var joints: [JointColumns] = []
        let known = Set(Skeleton.allNames)
        for (name, cols) in found {
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
            joints.append(JointColumns(name: name, x: x, y: y, c: cols.c))
        }
        return joints
    }

    // MARK: - Rows

    /// Reads every data row onto its clip; returns how many data rows there were.
    mutating func readRows(_ columns: KeypointColumns) -> Int {
        var values = [Float](repeating: 0, count: columns.joints.count * 3)
        var dataRows = 0
        while let row = cursor.next(&fields) {
            dataRows += 1
            readRow(row, columns, values: &values)
        }
        return dataRows
    }

    /// One data row onto its clip, or skipped (reported). `values` is scratch for the
    /// row's joints.
    mutating func readRow(_ row: Int, _ columns: KeypointColumns, values: inout [Float]) {
        if cursor.malformed {
            log.add("quote", row, "a quoted field is not closed properly; text after the closing quote was dropped", summary: "rows with bad quoting")
        }
        if fields.count != columns.count {
            log.add("columns", row, "has \(fields.count) field\(fields.count == 1 ? "" : "s"), the header has \(columns.count): row skipped",
                    summary: "rows with the wrong number of fields")
            return
        }
        guard let clip = clipOfRow(row, columns) else { return }
        guard let (frame, width, height) = frameAndSize(row, columns) else { return }
        var time = 0.0
        if let cTime = columns.time {
            guard let t = cursor.number(fields[cTime]), t.isFinite else {
                log.add("row", row, "time '\(OneLine.excerpt(cursor.string(fields[cTime])))' is not a number of seconds: row skipped", summary: "rows skipped")
                return
            }
            time = t
        }
        checkAgreement(row, clip: clip, columns, width: width, height: height)
        readJoints(row, columns, width: width, height: height, into: &values)
        clips[clip].values.append(contentsOf: values)
        clips[clip].frames.append(frame)
        clips[clip].rows.append(row)
        if columns.time != nil { clips[clip].times.append(time) }
    }

    /// The index of the row's clip, created on its first usable row; nil when the row is
    /// skipped (reported).
    mutating func clipOfRow(_ row: Int, _ columns: KeypointColumns) -> Int? {
        let fc = fields[columns.clip]
        if current >= 0 && cursor.equals(fc, clips[current].idBytes) { return current }
        let id = cursor.string(fc).trimmingCharacters(in: .whitespaces)
        if id.isEmpty {
            log.add("row", row, "clip is empty: row skipped", summary: "rows skipped")
            return nil
        }
        if let i = clipIndex[id] {
            current = i
            return i
        }
        current = -1   // created below, once the row is known to be usable
        // Validate the numbers first, so that a broken row does not create a clip.
        guard let (_, w, h) = frameAndSize(row, columns) else { return nil }
        let label = cursor.string(fields[columns.label]).trimmingCharacters(in: .whitespaces)
        // A store cannot hold a clip without a label (it would refuse to open): the row waits
        // for one of the clip's rows that gives it.
        if let problem = KeypointChecks.labelProblem(label) {
            log.add("row", row, "clip \(OneLine.excerpt(id)) has \(problem): row skipped", summary: "rows skipped")
            return nil
        }
        let split = columns.split.map { cursor.string(fields[$0]).trimmingCharacters(in: .whitespaces) }
        clips.append(ClipAccumulator(id: id, idBytes: cursor.bytes(fc), label: label,
                                     labelBytes: cursor.bytes(fields[columns.label]),
                                     split: split.flatMap { $0.isEmpty ? nil : $0 },
                                     splitBytes: columns.split.map { cursor.bytes(fields[$0]) } ?? [],
                                     width: w, height: h))
        current = clips.count - 1
        clipIndex[id] = current
        return current
    }

    /// Frame number and size of the row, or nil (reported) if they are not usable.
    mutating func frameAndSize(_ row: Int, _ columns: KeypointColumns) -> (Int, Int, Int)? {
        func integer(_ f: CSVField) -> Int? {
            guard let v = cursor.number(f), v.isFinite, v == v.rounded(), abs(v) < 1e15 else { return nil }
            return Int(v)
        }
        guard let frame = integer(fields[columns.frame]), (0...KeypointChecks.maxFrame).contains(frame) else {
            log.add("row", row, "frame '\(OneLine.excerpt(cursor.string(fields[columns.frame])))' is not a whole number in 0…\(KeypointChecks.maxFrame): row skipped",
                    summary: "rows skipped")
            return nil
        }
        var size: [Int] = []
        for (name, c) in [("width", columns.width), ("height", columns.height)] {
            guard let v = cursor.number(fields[c]).flatMap(KeypointChecks.pixels) else {
                log.add("row", row, KeypointChecks.sizeProblem(name, cursor.string(fields[c])) + ": row skipped", summary: "rows skipped")
                return nil
            }
            size.append(v)
        }
        return (frame, size[0], size[1])
    }

    /// Reports, once per clip, a label, split or frame size that differs from the clip's first row.
    mutating func checkAgreement(_ row: Int, clip i: Int, _ columns: KeypointColumns, width: Int, height: Int) {
        if !clips[i].labelReported && !cursor.equals(fields[columns.label], clips[i].labelBytes) {
            clips[i].labelReported = true
            log.add("label", row, "clip \(clips[i].id) has label '\(OneLine.excerpt(cursor.string(fields[columns.label])))' here but '\(OneLine.excerpt(clips[i].label))' before; the first is kept",
                    summary: "clips with mixed labels")
        }
        if let cSplit = columns.split, !clips[i].splitReported && !cursor.equals(fields[cSplit], clips[i].splitBytes) {
            clips[i].splitReported = true
            log.add("split", row, "clip \(clips[i].id) has split '\(OneLine.excerpt(cursor.string(fields[cSplit])))' here but '\(OneLine.excerpt(clips[i].split ?? ""))' before; the first is kept",
                    summary: "clips with mixed splits")
        }
        if (width != clips[i].width || height != clips[i].height) && !clips[i].sizeReported {
            clips[i].sizeReported = true
            log.add("size", row, "clip \(clips[i].id) changes frame size from \(clips[i].width)×\(clips[i].height) to \(width)×\(height); "
                + "each frame is normalised by its own size, the first is stored", summary: "clips with changing frame sizes")
        }
    }

    /// The row's joints into `values` (x, y normalised by the row's size, c), a joint that
    /// is empty, not a number or refused by `KeypointChecks.joint` as missing (NaN, NaN, 0).
    mutating func readJoints(_ row: Int, _ columns: KeypointColumns, width: Int, height: Int, into values: inout [Float]) {
        for (j, joint) in columns.joints.enumerated() {
            let fx = fields[joint.x], fy = fields[joint.y]
            var x = Float.nan, y = Float.nan, c: Float = 0
            let xEmpty = cursor.isBlank(fx), yEmpty = cursor.isBlank(fy)
            if xEmpty || yEmpty {
                if xEmpty != yEmpty {
                    let (given, empty) = xEmpty ? ("y", "x") : ("x", "y")
                    log.add("half", row, "\(joint.name)_\(given) is given but \(joint.name)_\(empty) is empty: the joint is missing in this frame",
                            summary: "joints with only one coordinate")
                }
            } else if let px = cursor.number(fx) {
                if let py = cursor.number(fy) {
                    var pc: Double? = 1
                    if let cc = joint.c, !cursor.isBlank(fields[cc]) {
                        pc = cursor.number(fields[cc])
                        if pc == nil { badNumber(row, joint.name + "_c", fields[cc]) }
                    }
                    if let pc {
                        switch KeypointChecks.joint(joint.name, x: px, y: py, c: pc, width: width, height: height) {
                        case .present(let nx, let ny, let nc): x = nx; y = ny; c = nc
                        case .missing: break
                        case .bad(let kind, let summary, let message): log.add(kind, row, message, summary: summary)
                        }
                    }
                } else {
                    badNumber(row, joint.name + "_y", fy)
                }
            } else {
                badNumber(row, joint.name + "_x", fx)
            }
            values[j * 3] = x; values[j * 3 + 1] = y; values[j * 3 + 2] = c
        }
    }

    mutating func badNumber(_ row: Int, _ column: String, _ f: CSVField) {
        log.add("number", row, "\(column) '\(OneLine.excerpt(cursor.string(f)))' is not a number: the joint is missing in this frame", summary: "values that are not numbers")
    }
}
