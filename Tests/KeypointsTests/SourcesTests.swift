import Foundation
import Keypoints
import TestData
import XCTest

/// Dataset sources: labeled directories (with and without split folders), `label.N.ext`
/// files, annotation CSV/JSON with time ranges, and every problem they report.
final class SourcesTests: XCTestCase {
    // MARK: Helpers

    func pushups() throws -> String {
        _ = try TestData.shared("data/pushups/train")
        return try TestData.shared("data/pushups").path
    }

    var tempDirs: [URL] = []

    /// A temporary folder holding `files` (path → content; empty placeholders for videos).
    func folder(_ files: [String: String], dirs: [String] = []) throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-sources-\(UUID().uuidString)")
        tempDirs.append(root)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        for d in dirs { try FileManager.default.createDirectory(at: root.appendingPathComponent(d), withIntermediateDirectories: true) }
        for (path, content) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try content.write(to: url, atomically: true, encoding: .utf8)
        }
        return root.path
    }

    override func tearDown() {
        for d in tempDirs { try? FileManager.default.removeItem(at: d) }
        tempDirs = []
    }

    /// Scans `root` with an annotation file of `text` (written as `annotations.<ext>`).
    func annotate(_ text: String, ext: String = "csv", videos: [String] = ["a.mp4", "b.mp4", "c.mp4"]) throws -> SourceListing {
        var files = Dictionary(uniqueKeysWithValues: videos.map { ($0, "") })
        files["annotations.\(ext)"] = text
        let root = try folder(files)
        return try DatasetSources.scan(root, annotations: "annotations.\(ext)")
    }

    func messages(_ l: SourceListing) -> String { l.problems.map(\.description).joined(separator: "\n") }

    // MARK: Push-ups (shared data)

    func testPushupsLabeledDirectoriesWithSplits() throws {
        let root = try pushups()
        let listing = try DatasetSources.scan(root)
        XCTAssertEqual(listing.clips.count, 222)
        var counts: [String: Int] = [:]
        for c in listing.clips { counts["\(c.split ?? "-")/\(c.label)", default: 0] += 1 }
        XCTAssertEqual(counts, ["train/correct": 94, "train/wrong": 83, "test/correct": 24, "test/wrong": 21])
        XCTAssertEqual(listing.clips.map(\.id), listing.clips.map(\.id).sorted())
        let c12 = try XCTUnwrap(listing.clips.first { $0.id == "test/correct/correct12.mp4" })
        XCTAssertEqual(c12.label, "correct")
        XCTAssertEqual(c12.split, "test")
        XCTAssertNil(c12.start)
        XCTAssertTrue(FileManager.default.fileExists(atPath: c12.video), c12.video)
        XCTAssertTrue(listing.clips.allSatisfy { $0.start == nil && $0.end == nil })
        // montage/ (videos with no label folder) is reported, pointing at its annotation file; README.md is not.
        print(messages(listing))
        XCTAssertEqual(listing.problems.count, 1, messages(listing))
        let p = try XCTUnwrap(listing.problems.first)
        XCTAssertTrue(p.file.hasSuffix("montage"))
        XCTAssertTrue(p.message.contains("not a split folder"), p.message)
        XCTAssertTrue(p.message.contains("3 videos"), p.message)
        XCTAssertTrue(p.message.contains("montage/annotations"), p.message)
    }

    /// segments.csv: video,source,label,start,end,first_frame,frames.
    func montageSegments(_ root: String) throws -> [(id: String, label: String, start: Double, end: Double)] {
        let text = try String(contentsOfFile: root + "/montage/segments.csv", encoding: .utf8)
        return text.split(separator: "\n").dropFirst().map { line in
            let f = line.split(separator: ",").map(String.init)
            return ("montage/\(f[0])@\(f[3])-\(f[4])", f[2], Double(f[3])!, Double(f[4])!)
        }
    }

    func checkMontage(_ listing: SourceListing, root: String) throws {
        let segments = try montageSegments(root)
        XCTAssertEqual(segments.count, 18)
        XCTAssertEqual(listing.clips.count, 18)
        XCTAssertEqual(listing.problems, [], messages(listing))
        XCTAssertEqual(listing.clips.map(\.id), segments.map(\.id).sorted())
        for s in segments {
            let c = try XCTUnwrap(listing.clips.first { $0.id == s.id }, s.id)
            XCTAssertEqual(c.label, s.label, s.id)
            XCTAssertEqual(c.start!, s.start, accuracy: 1e-9, s.id)
            XCTAssertEqual(c.end!, s.end, accuracy: 1e-9, s.id)
            XCTAssertNil(c.split)
            XCTAssertTrue(FileManager.default.fileExists(atPath: c.video), c.video)
            XCTAssertTrue(c.video.hasSuffix(String(s.id.split(separator: "@")[0])), c.video)
        }
        XCTAssertTrue(listing.clips.contains { $0.id == "montage/montage_01.mp4@3.90-7.10" })
    }

    func testMontageAnnotationsCSV() throws {
        let root = try pushups()
        // Relative to the root; the videos are named relative to the annotation file's folder.
        try checkMontage(try DatasetSources.scan(root, annotations: "montage/annotations.csv"), root: root)
        // An absolute path works the same.
        try checkMontage(try DatasetSources.scan(root, annotations: root + "/montage/annotations.csv"), root: root)
    }

    func testMontageAnnotationsJSON() throws {
        let root = try pushups()
        try checkMontage(try DatasetSources.scan(root, annotations: "montage/annotations.json"), root: root)
    }

    // MARK: Folder layouts

    func testLabeledFiles() throws {
        let root = try folder([
            "squat.1.mp4": "", "squat.2.MOV": "", "jump.rope.3.mp4": "", "pushup.12.webm": "",
            "correct12.mp4": "", "squat.mp4": "",              // no number: label unknown
            "notes.txt": "", "README.md": "", ".DS_Store": "",  // skipped quietly
            "frame.jpg": "", "frame2.png": "",                  // reported once, as a count
        ])
        let listing = try DatasetSources.scan(root)
        XCTAssertEqual(listing.clips.map(\.id), ["jump.rope.3.mp4", "pushup.12.webm", "squat.1.mp4", "squat.2.MOV"])
        XCTAssertEqual(listing.clips.map(\.label), ["jump.rope", "pushup", "squat", "squat"])
        XCTAssertTrue(listing.clips.allSatisfy { $0.split == nil && $0.video == root + "/" + $0.id })
        XCTAssertEqual(listing.problems.count, 3, messages(listing))
        XCTAssertTrue(listing.problems.contains {
            $0.message == "cannot tell the label of correct12.mp4: name it <label>.<n>.mp4 or put it in a <label>/ folder"
        }, messages(listing))
        XCTAssertTrue(listing.problems.contains { $0.message.hasPrefix("cannot tell the label of squat.mp4") })
        XCTAssertTrue(listing.problems.contains { $0.message.hasPrefix("2 files are not a video") && $0.message.contains("frame.jpg") })
    }

    func testLabelFoldersEmptyNestedAndNonVideo() throws {
        let root = try folder([
            "jump/a.mp4": "", "jump/b.mkv": "", "jump/deeper/c.mp4": "",
            "sit/cover.jpg": "",        // a label folder with no video
            "run/x.avi": "",
        ], dirs: ["empty", ".git/objects", "__MACOSX"])
        let listing = try DatasetSources.scan(root)
        XCTAssertEqual(listing.clips.map(\.id), ["jump/a.mp4", "jump/b.mkv", "run/x.avi"])
        XCTAssertEqual(listing.clips.map(\.label), ["jump", "jump", "run"])
        let text = messages(listing)
        XCTAssertEqual(listing.problems.count, 4, text)
        XCTAssertTrue(text.contains("nested folder not used (1 video inside)"), text)
        XCTAssertTrue(text.contains("label folder 'empty' has no videos"), text)
        XCTAssertTrue(text.contains("label folder 'sit' has no videos"), text)
        XCTAssertTrue(text.contains("1 file is not a video by extension and ignored (cover.jpg)"), text)
        XCTAssertFalse(text.contains("MACOSX") || text.contains(".git"), text)
    }

    func testLabelFolderWithAnnotationFileIsUsedButFlagged() throws {
        let root = try folder(["montage/m1.mp4": "", "montage/annotations.csv": "video,label,start,end\n"])
        let listing = try DatasetSources.scan(root)
        XCTAssertEqual(listing.clips.map(\.label), ["montage"])
        XCTAssertEqual(listing.problems.map(\.message),
                       ["label folder 'montage' also holds annotations.csv: its videos are labelled 'montage'; if annotations.csv labels time ranges, pass it as the annotation file instead"])
    }

    func testSplitFolderNames() throws {
        let root = try folder([
            "Train/a/1.mp4": "", "val/a/2.mp4": "", "valid/b/3.mp4": "", "validation/b/4.mp4": "", "test/a/5.mp4": "",
            "test/b.7.mp4": "",          // labeled file inside a split folder
            "stray.1.mp4": "",           // beside split folders: not used
            "extra/a/6.mp4": "",         // not a split folder: not used
        ])
        let listing = try DatasetSources.scan(root)
        XCTAssertEqual(listing.clips.map { "\($0.split!)/\($0.label)" },
                       ["train/a", "test/a", "test/b", "validation/a", "validation/b", "validation/b"])
        XCTAssertEqual(listing.clips.map(\.id), ["Train/a/1.mp4", "test/a/5.mp4", "test/b.7.mp4", "val/a/2.mp4", "valid/b/3.mp4", "validation/b/4.mp4"])
        let text = messages(listing)
        XCTAssertEqual(listing.problems.count, 2, text)
        XCTAssertTrue(text.contains("folder 'extra' is not a split folder"), text)
        XCTAssertTrue(text.contains("1 video beside the split folders not used (e.g. stray.1.mp4)"), text)
    }

    func testNoVideosThrowsOneLine() throws {
        let root = try folder(["notes.txt": "", "a/readme.md": ""])
        XCTAssertThrowsError(try DatasetSources.scan(root)) { error in
            let e = error as? DatasetError
            XCTAssertNotNil(e)
            XCTAssertTrue(e?.message.hasPrefix("no videos found in \(root): expected <label>/<video>, <split>/<label>/<video>") ?? false, "\(error)")
            XCTAssertFalse(e?.message.contains("\n") ?? true)
        }
        XCTAssertThrowsError(try DatasetSources.scan(root + "/nope")) { error in
            XCTAssertEqual(error as? DatasetError, DatasetError("dataset folder \(root)/nope does not exist"))
        }
    }

    // MARK: Annotation files

    func testAnnotationsWholeVideosAndColumnOrder() throws {
        let listing = try annotate("Label,VIDEO\njump,a.mp4\nsit,b.mp4\n")
        XCTAssertEqual(listing.clips.map(\.id), ["a.mp4", "b.mp4"])
        XCTAssertEqual(listing.clips.map(\.label), ["jump", "sit"])
        XCTAssertTrue(listing.clips.allSatisfy { $0.start == nil && $0.end == nil })
        XCTAssertEqual(listing.problems, [])
    }

    func testAnnotationMissingVideo() throws {
        let listing = try annotate("video,label,start,end\na.mp4,jump,0,2\nx.mp4,jump,0,2\n")
        XCTAssertEqual(listing.clips.map(\.id), ["a.mp4@0.00-2.00"])
        XCTAssertEqual(listing.problems.count, 1)
        XCTAssertEqual(listing.problems[0].row, 3)
        XCTAssertTrue(listing.problems[0].message.hasPrefix("video 'x.mp4' not found under "), listing.problems[0].message)
        XCTAssertTrue(listing.problems[0].file.hasSuffix("annotations.csv"))
    }

    func testAnnotationEndNotAfterStart() throws {
        let listing = try annotate("video,label,start,end\na.mp4,jump,3,2\na.mp4,jump,2,2\na.mp4,jump,2,3\n")
        XCTAssertEqual(listing.clips.map(\.id), ["a.mp4@2.00-3.00"])
        XCTAssertEqual(listing.problems.map(\.row), [2, 3])
        XCTAssertEqual(listing.problems[0].message, "end 2.00 s is not after start 3.00 s: row skipped (the range is [start, end))")
    }

    func testAnnotationMalformedTime() throws {
        let listing = try annotate("video,label,start,end\na.mp4,jump,1:6x,3\nb.mp4,sit,-1,3\nc.mp4,sit,1,3\n")
        XCTAssertEqual(listing.clips.map(\.id), ["c.mp4@1.00-3.00"])
        XCTAssertEqual(listing.problems.map(\.row), [2, 3])
        XCTAssertEqual(listing.problems[0].message, "start '1:6x' is not a time (use 3, 3.14, 01:03, 01:03.14 or 05:01:03); skipped")
    }

    /// Decision: a file mixing seconds and clock times is read as written (each value is
    /// unambiguous) and reported once, since it is often a slip (minutes typed as seconds).
    func testAnnotationMixedTimeFormatsAcceptedWithOneWarning() throws {
        let listing = try annotate("video,label,start,end\na.mp4,jump,0,63\nb.mp4,sit,00:00,01:03\nc.mp4,sit,01:03.5,70\n")
        XCTAssertEqual(listing.clips.map(\.id), ["a.mp4@0.00-63.00", "b.mp4@0.00-63.00", "c.mp4@63.50-70.00"])
        XCTAssertEqual(listing.problems.count, 1, messages(listing))
        XCTAssertEqual(listing.problems[0].row, 3)
        XCTAssertTrue(listing.problems[0].message.hasPrefix("times mix seconds (first on row 2) and clock times such as 01:03 (first on row 3)"),
                      listing.problems[0].message)
    }

    func testAnnotationPartialRanges() throws {
        let listing = try annotate("video,label,start,end\na.mp4,jump,0,1\nb.mp4,sit,,\nc.mp4,sit,2,\n")
        XCTAssertEqual(listing.clips.map(\.id), ["a.mp4@0.00-1.00"])
        XCTAssertEqual(listing.problems.map(\.row), [3, 4])
        XCTAssertEqual(listing.problems[0].message, "no start/end, but other rows have them: give every row a range, or none; skipped")
        XCTAssertEqual(listing.problems[1].message, "has a start but no end: give both; skipped")
    }

    func testAnnotationUnknownColumns() throws {
        let listing = try annotate("video,label,notes,Person\na.mp4,jump,good,1\n")
        XCTAssertEqual(listing.clips.map(\.id), ["a.mp4"])
        XCTAssertEqual(listing.problems.count, 1)
        XCTAssertEqual(listing.problems[0].row, 1)
        XCTAssertEqual(listing.problems[0].message, "unknown columns 'notes', 'Person' ignored (columns: video, label, start, end, split)")
    }

    func testAnnotationMissingColumnThrows() throws {
        XCTAssertThrowsError(try annotate("video,start,end\na.mp4,0,1\n")) { error in
            let m = (error as? DatasetError)?.message ?? "\(error)"
            XCTAssertTrue(m.contains("has no 'label' column"), m)
        }
        XCTAssertThrowsError(try annotate("name,label\na.mp4,jump\n")) { error in
            XCTAssertTrue(((error as? DatasetError)?.message ?? "").contains("has no 'video' column"), "\(error)")
        }
        XCTAssertThrowsError(try annotate("video,label,start\na.mp4,jump,0\n")) { error in
            XCTAssertTrue(((error as? DatasetError)?.message ?? "").contains("has a 'start' column but no 'end' column"), "\(error)")
        }
        XCTAssertThrowsError(try annotate("[{\"video\": \"a.mp4\"}]", ext: "json")) { error in
            XCTAssertTrue(((error as? DatasetError)?.message ?? "").contains("has no 'label' key"), "\(error)")
        }
    }

    func testAnnotationQuotedFields() throws {
        let csv = "video,label,start,end\r\n\"my clip, take 2.mp4\",\"jump, high\",0,1\r\n\"b.mp4\",\"say \"\"hi\"\"\",\"1\",\"2.50\"\r\n\"c.mp4\",\"two\nlines\",1,2\r\n\r\n"
        let listing = try annotate(csv, videos: ["my clip, take 2.mp4", "b.mp4", "c.mp4"])
        XCTAssertEqual(listing.problems, [], messages(listing))
        XCTAssertEqual(listing.clips.map(\.id), ["b.mp4@1.00-2.50", "c.mp4@1.00-2.00", "my clip, take 2.mp4@0.00-1.00"])
        XCTAssertEqual(listing.clips.map(\.label), ["say \"hi\"", "two\nlines", "jump, high"])
    }

    func testAnnotationWrongFieldCountEmptyLabelAndDuplicates() throws {
        let listing = try annotate("video,label,start,end\na.mp4,jump,0,1,extra\nb.mp4,,0,1\nc.mp4,sit,0,1\nc.mp4,sit,0.001,1\nc.mp4,run,0,1\n")
        XCTAssertEqual(listing.clips.map(\.id), ["c.mp4@0.00-1.00"])
        XCTAssertEqual(listing.problems.map(\.row), [2, 3, 5, 6], messages(listing))
        XCTAssertTrue(listing.problems[0].message.hasPrefix("has 5 fields, the header has 4"))
        XCTAssertEqual(listing.problems[1].message, "no label for 'b.mp4': row skipped")
        XCTAssertEqual(listing.problems[2].message, "duplicate of row 4 (same video and range): kept once")
        XCTAssertTrue(listing.problems[3].message.contains("label 'run' instead of 'sit'"))
    }

    func testAnnotationOverlappingRangesOfDifferentLabels() throws {
        let listing = try annotate("video,label,start,end\na.mp4,jump,0,2\na.mp4,sit,2,4\na.mp4,run,3.5,5\nb.mp4,run,3.5,5\na.mp4,sit,4.5,6\n")
        XCTAssertEqual(listing.clips.count, 5)
        XCTAssertEqual(listing.problems.map(\.row), [4, 6], messages(listing))
        XCTAssertEqual(listing.problems[0].message,
                       "range 3.50–5.00 s ('run') overlaps row 3's 2.00–4.00 s ('sit') of the same video: both kept, the frames in both have two labels")
    }

    func testAnnotationJSONWithStringTimesAndProblems() throws {
        let json = """
        [{"video": "a.mp4", "label": "jump", "start": "00:01", "end": "00:02.5", "camera": 2},
         {"video": "b.mp4", "label": "sit", "start": 1, "end": 2.25},
         {"video": "zz.mp4", "label": "sit", "start": 1, "end": 2},
         {"video": "c.mp4", "label": "sit", "start": "x", "end": 2},
         "not an object"]
        """
        let listing = try annotate(json, ext: "json")
        XCTAssertEqual(listing.clips.map(\.id), ["a.mp4@1.00-2.50", "b.mp4@1.00-2.25"])
        XCTAssertEqual(listing.clips.map(\.end), [2.5, 2.25])
        let text = messages(listing)
        XCTAssertTrue(text.contains(":5: entry is not an object"), text)
        XCTAssertTrue(text.contains("unknown key 'camera' ignored"), text)
        XCTAssertTrue(text.contains(":3: video 'zz.mp4' not found"), text)
        XCTAssertTrue(text.contains(":4: start 'x' is not a time"), text)
        // Numbers and plain-seconds strings vs "00:01": mixed formats, reported once.
        XCTAssertTrue(text.contains("times mix seconds"), text)
        XCTAssertEqual(listing.problems.count, 5, text)
    }

    func testAnnotationSplitColumnAndNoUsableRowThrows() throws {
        let listing = try annotate("video,label,split\na.mp4,jump,val\nb.mp4,jump,Train\nc.mp4,jump,holdout\n")
        XCTAssertEqual(listing.clips.map(\.split), ["validation", "train", nil])
        XCTAssertEqual(listing.problems.map(\.row), [4])
        XCTAssertThrowsError(try annotate("video,label\nx.mp4,jump\n")) { error in
            XCTAssertTrue(((error as? DatasetError)?.message ?? "").contains("gives no usable clip (1 problem; first problem:"), "\(error)")
        }
    }

    // MARK: Times

    func testParseTime() {
        let good: [(String, Double)] = [
            ("3", 3), ("3.14", 3.14), ("01:03", 63), ("01:03.14", 63.14), ("05:01:03", 5 * 3600 + 63),
            ("1:03", 63), ("5:01:03.5", 5 * 3600 + 63.5), ("0", 0), (" 12.5 ", 12.5), ("90:00", 5400), ("00:59.99", 59.99),
        ]
        for (text, value) in good {
            XCTAssertEqual(parseTime(text)!, value, accuracy: 1e-9, text)
        }
        for bad in ["", " ", "-1", "1:6x", "1:3", "1:60", "1:2:3:4", "1.5:03", "01:", ":03", "3.", ".5", "1e3", "abc", "1:03:60", "01:03.1.2", "+3", "١٢"] {
            XCTAssertNil(parseTime(bad), bad)
        }
    }
}
