import Foundation

// The folder layouts of `DatasetSources.scan`: labeled directories, split folders and
// labeled files, with everything not used reported.

struct FolderScanner {
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
