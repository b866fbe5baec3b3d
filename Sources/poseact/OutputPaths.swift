import ArgumentParser
import Basics
import Foundation
import Keypoints
#if canImport(Glibc)
import Glibc
#endif

/// A path that cannot be used as given: one line (no usage text, it is not a usage mistake).
enum PathFailure {}
typealias PathError = OneLineError<PathFailure>

/// Checks made in `validate()`, before any work, on the paths a command will write: an
/// output that is also an input (the same file by another name, a symlink or a hard link)
/// would be destroyed by the temp-file-then-rename at the end, and an output whose folder
/// cannot be written would be found out only after all the work.
enum OutputPaths {
    enum Kind { case file, folder }

    /// `output` (given as `flag`) must not be any of `inputs` (every file the command reads,
    /// and its other outputs), must be of `kind` if it exists, and its folder must exist and
    /// be writable. A folder output names in `writes` the files the command writes in it:
    /// none of them may be an input either.
    static func check(_ output: String, flag: String, kind: Kind = .file, writes: [String] = [],
                      inputs: [(flag: String, path: String)] = []) throws {
        guard !output.isEmpty else { throw PathError("\(flag) is an empty path; give a \(kind == .file ? "file" : "folder") path") }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: output, isDirectory: &isFolder) {
            if kind == .file && isFolder.boolValue {
                throw PathError("\(flag) \(output) is a folder; give a file path")
            }
            if kind == .folder && !isFolder.boolValue {
                throw PathError("\(flag) \(output) is a file; give a folder path")
            }
        }
        let written = [output] + (kind == .folder ? writes.map { output + "/" + $0 } : [])
        for path in written {
            for input in inputs where sameFile(path, input.path) {
                let what = path == output ? "\(flag) \(output)" : "\(path) (written in \(flag))"
                throw PathError("\(what) is also \(input.flag) (\(input.path)): writing it would destroy the input; give another path")
            }
        }
        // A device, a FIFO or a link where a file goes: said now, not after the work.
        if kind == .file {
            do { try AtomicFile.checkReplaceable(output) } catch let error as FileWriteError { throw PathError("\(flag) \(error.message)") }
        }
        let parent = URL(fileURLWithPath: output).deletingLastPathComponent().path
        if kind == .folder && FileManager.default.fileExists(atPath: output) {
            guard access(output, W_OK) == 0 else {
                throw PathError("\(flag) \(output): the folder is not writable; give another path")
            }
            return
        }
        guard FileManager.default.fileExists(atPath: parent, isDirectory: &isFolder) else {
            if kind == .folder { return }   // created with its parents
            throw PathError("\(flag) \(output): the folder \(parent) does not exist; create it or give another path")
        }
        guard isFolder.boolValue, access(parent, W_OK) == 0 else {
            throw PathError("\(flag) \(output): \(parent) is not a writable folder; give another path")
        }
    }

    /// True when both paths name one file: for existing files the same device and inode,
    /// however named (a symlink, a hard link, another spelling); else the same path.
    static func sameFile(_ a: String, _ b: String) -> Bool {
        var sa = stat(), sb = stat()
        guard stat(a, &sa) == 0, stat(b, &sb) == 0 else {
            return URL(fileURLWithPath: a).standardizedFileURL.path == URL(fileURLWithPath: b).standardizedFileURL.path
        }
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }

    /// The lock of a file output for the length of the command: a second run writing the same
    /// file is refused with one line instead of the two replacing each other's file.
    static func lock(_ output: String) throws -> FileLock {
        // One name for one output ("out/" is "out"), in a folder that exists (a report
        // folder is made with its parents).
        var name = output
        while name.count > 1 && name.hasSuffix("/") { name.removeLast() }
        let parent = URL(fileURLWithPath: name).deletingLastPathComponent().path
        try? FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        return try FileLock(name + ".lock", what: output, removeWhenDone: true)
    }
}
