import Foundation

// The one scan of a labeled folder, for videos (`DatasetSources.scan`, before extraction) and
// for other tools' keypoint files (`ForeignDataset.scan`, before import): labeled
// directories, split folders and loose files, with everything not used reported. Both read
// the same layouts with the same rule for split folders (`SplitFolder`).

/// Which folder names are splits, and the split each stands for: `train`, `validation` (also
/// `val`, `valid`) and `test`, any case. The rule of every folder scan and annotation file.
public enum SplitFolder {
    public static let names: [String: String] = [
        "train": "train", "validation": "validation", "val": "validation", "valid": "validation", "test": "test",
    ]

    /// The split a folder (or an annotation's split column) named `name` stands for; nil when it is not a split.
    public static func split(named name: String) -> String? { names[name.lowercased()] }
}

/// What a clip is in a scan: a video file, or a keypoint file or folder.
struct ClipKind {
    /// "video", "keypoint clip": the word of the problems.
    let noun: String
    /// Extensions (lower-cased, no dot) of a clip file.
    let extensions: Set<String>
    /// A folder that is itself one clip (OpenPose's frames), not a label folder.
    let isClipFolder: (String) -> Bool
    /// Loose files (not in a label folder) are named `<label>.<n>.<ext>`; otherwise they are
    /// returned unlabeled, for the caller to label.
    let namesCarryLabels: Bool
    /// Mention annotation files (time ranges of videos) where a CSV or JSON sits beside clips.
    let suggestsAnnotations: Bool

    static let video = ClipKind(noun: "video", extensions: DatasetSources.videoExtensions, isClipFolder: { _ in false },
                                namesCarryLabels: true, suggestsAnnotations: true)

    func isClipFile(_ name: String) -> Bool { extensions.contains((name as NSString).pathExtension.lowercased()) }
    func plural(_ n: Int) -> String { "\(noun)\(n == 1 ? "" : "s")" }
}

/// A clip found: its path relative to the root, its label (nil for a loose file when the
/// kind's names carry none) and its split.
struct FoundClip {
    let rel: String
    let label: String?
    let split: String?
}

struct FolderScanner {
    let root: String
    let kind: ClipKind
    var clips: [FoundClip] = []
    var problems: [DataProblem] = []
    /// Entries already reported by `list` (a folder may be listed more than once).
    var reported: Set<String> = []
    let fm = FileManager.default

    init(root: String, kind: ClipKind) { self.root = root; self.kind = kind }

    func path(_ rel: String) -> String { rel.isEmpty ? root : root + "/" + rel }
    func display(_ rel: String) -> String { rel.isEmpty ? root : rel }
    func join(_ rel: String, _ name: String) -> String { rel.isEmpty ? name : rel + "/" + name }

    /// Entries of a folder, sorted, without hidden ones and `__MACOSX`; split into folders and
    /// files (a folder that is one clip counts as a file). A hidden folder (".x", "..x") and a
    /// symbolic link to nothing are reported (a label folder renamed by mistake, a moved
    /// clip), each once; dotfiles are skipped quietly.
    mutating func list(_ rel: String) -> (dirs: [String], files: [String]) {
        let names = ((try? fm.contentsOfDirectory(atPath: path(rel))) ?? []).sorted()
        var dirs: [String] = [], files: [String] = []
        for n in names where n != "__MACOSX" {
            let child = join(rel, n)
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
            if isDir.boolValue && !kind.isClipFolder(path(child)) { dirs.append(n) } else { files.append(n) }
        }
        return (dirs, files)
    }

    /// An entry `list` returned as a file: a clip file, or a folder that is a clip.
    func isClip(_ rel: String) -> Bool {
        var isDir: ObjCBool = false
        if kind.isClipFile(rel) { return true }
        return fm.fileExists(atPath: path(rel), isDirectory: &isDir) && isDir.boolValue
    }

    mutating func problem(_ rel: String, _ message: String) {
        problems.append(DataProblem(file: path(rel), message: message))
    }

    func isNote(_ name: String) -> Bool { ["csv", "json"].contains((name as NSString).pathExtension.lowercased()) }

    mutating func scanRoot() {
        let (dirs, files) = list("")
        let splitDirs = dirs.filter { SplitFolder.split(named: $0) != nil }
        if splitDirs.isEmpty {
            for d in dirs { scanLabelFolder(d, label: d, split: nil) }
            scanLooseFiles("", files: files, split: nil)
            return
        }
        // Split layout: root/<split>/<label>/…; anything else at the top is not part of it.
        for d in dirs {
            if let split = SplitFolder.split(named: d) {
                let (labelDirs, splitFiles) = list(d)
                for l in labelDirs { scanLabelFolder(d + "/" + l, label: l, split: split) }
                scanLooseFiles(d, files: splitFiles, split: split)
            } else {
                let inside = list(d).files
                let found = inside.filter { isClip(d + "/" + $0) }.count
                var msg = "folder '\(d)' is not a split folder (train, validation, test) and is not used"
                if found > 0 { msg += "; its \(found) \(kind.plural(found)) have no label here" }
                let notes = inside.filter { isNote($0) && !kind.isClipFile($0) }
                if kind.suggestsAnnotations, found > 0, !notes.isEmpty {
                    msg += " (to use time-range labels, pass the annotation file: \(d)/\(notes[0]))"
                } else {
                    msg += " (with split folders, labels go in <split>/<label>/)"
                }
                problem(d, msg)
            }
        }
        let topClips = files.filter { isClip($0) }
        if !topClips.isEmpty {
            problem("", "\(topClips.count) \(kind.plural(topClips.count)) beside the split folders not used (e.g. \(topClips[0])): put them in <split>/<label>/")
        }
    }

    mutating func scanLabelFolder(_ rel: String, label: String, split: String?) {
        let (dirs, files) = list(rel)
        var found = 0
        for f in files where isClip(rel + "/" + f) {
            clips.append(FoundClip(rel: rel + "/" + f, label: label, split: split))
            found += 1
        }
        reportOthers(rel, files: files)
        for d in dirs {
            let nested = countClips(rel + "/" + d)
            problem(rel + "/" + d, "nested folder not used (\(nested) \(kind.plural(nested)) inside): \(kind.noun)s go directly in the label folder \(rel)/")
        }
        if found == 0 {
            problem(rel, "label folder '\(rel)' has no \(kind.noun)s; label '\(label)' not used here")
        } else if kind.suggestsAnnotations, let notes = files.first(where: { isNote($0) && !kind.isClipFile($0) }) {
            // Videos beside an annotation-like file: perhaps time ranges, not one label.
            problem(rel, "label folder '\(rel)' also holds \(notes): its \(kind.noun)s are labelled '\(label)'; "
                + "if \(notes) labels time ranges, pass it as the annotation file instead")
        }
    }

    /// Clips directly in `rel` (the root or a split folder): with a kind whose names carry
    /// labels, named `<label>.<n>.<ext>` (others reported); else found unlabeled.
    mutating func scanLooseFiles(_ rel: String, files: [String], split: String?) {
        for f in files where isClip(join(rel, f)) {
            let id = join(rel, f)
            guard kind.namesCarryLabels else {
                clips.append(FoundClip(rel: id, label: nil, split: split))
                continue
            }
            if let label = labeledFileLabel(f) {
                clips.append(FoundClip(rel: id, label: label, split: split))
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

    /// Files that are neither clips nor quiet notes: one problem per folder, with a count.
    mutating func reportOthers(_ rel: String, files: [String]) {
        let others = files.filter {
            !isClip(join(rel, $0)) && !DatasetSources.quietExtensions.contains(($0 as NSString).pathExtension.lowercased())
        }
        guard !others.isEmpty else { return }
        let examples = others.prefix(3).joined(separator: ", ") + (others.count > 3 ? ", …" : "")
        problem(rel, "\(others.count) file\(others.count == 1 ? " is" : "s are") not a \(kind.noun) by extension and ignored (\(examples)); "
            + "\(kind.noun) extensions: \(kind.extensions.sorted().joined(separator: " "))")
    }

    func countClips(_ rel: String) -> Int {
        guard let e = fm.enumerator(atPath: path(rel)) else { return 0 }
        var n = 0
        while let p = e.nextObject() as? String {
            if kind.isClipFile(p) || kind.isClipFolder(path(rel + "/" + p)) { n += 1 }
        }
        return n
    }
}
