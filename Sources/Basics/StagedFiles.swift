import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Files that belong together in one folder (a report's JSON, Markdown, picture and page),
/// replaced together: all are written into a private staging folder inside it first, and
/// only when every one is complete are they renamed into place, the page last. A run
/// stopped while it works (kill -9 while a picture renders) leaves the old set as it was,
/// never new files beside an old page; its staging folder is removed by the next run.
public final class StagedFiles {
    public let folder: String
    /// Where the files are written until `commit`: "<folder>/.staging-<host>-<pid>-<random>".
    public let staging: String

    public init(folder: String) throws {
        self.folder = folder
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
            throw FileWriteError("\(folder): cannot create the folder (\(error.localizedDescription))")
        }
        Self.sweep(folder)
        var template = Array("\(folder)/.staging-\(Leftovers.tag)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw FileWriteError("\(folder): cannot write in it (\(String(cString: strerror(errno)))): is the folder writable?")
        }
        staging = String(cString: made)
    }

    /// The path a file `name` is written to before `commit`.
    public func path(_ name: String) -> String { staging + "/" + name }

    /// Renames the staged files into the folder in the order given (the page last), each
    /// replacing only a regular file, and removes the staging folder.
    public func commit(_ names: [String]) throws {
        // Every target first: a refusal halfway would leave a mixed set.
        for name in names { try AtomicFile.checkReplaceable(folder + "/" + name) }
        for name in names {
            let target = folder + "/" + name
            try AtomicFile.checkReplaceable(target)
            guard rename(path(name), target) == 0 else {
                throw FileWriteError("\(target): cannot give the finished file its name (\(String(cString: strerror(errno))))")
            }
        }
        removeStaging()
    }

    deinit { removeStaging() }

    private func removeStaging() { try? FileManager.default.removeItem(atPath: staging) }

    /// Removes staging folders of processes of this machine that are gone.
    static func sweep(_ folder: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where Leftovers.isAbandoned(name, prefix: ".staging-") {
            let path = folder + "/" + name
            var status = stat()
            if lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR { try? FileManager.default.removeItem(atPath: path) }
        }
    }
}
