import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A file written whole or not at all, poseact's one way of writing an output. The bytes go
/// to a temporary file beside it (same folder, so the rename stays on one file system), which
/// is renamed over `path` once complete: a reader sees the old file or the new, an
/// interrupted run never leaves a half-written file under the real name, and a failure
/// removes the temporary file. Lives in Media, the lowest target every writer depends on.
///
/// An output path may be anything, so:
/// - only a regular file (or nothing) at `path` is replaced. A symbolic link, FIFO, device,
///   socket or folder there is refused before any work: renaming over `/dev/null` would
///   replace the device with a file, and a link's target is not ours to choose. (A store, a
///   model or a video needs a file it can seek in, so writing into a sink in place is no
///   option either; leaving the output option out is how to discard an output.)
/// - the temporary file has a random name and is created exclusively (`O_EXCL|O_NOFOLLOW`):
///   a link planted under a guessed name cannot redirect the write. It is kept open until the
///   rename, and renamed only if the name still holds that very file.
public final class AtomicFile: @unchecked Sendable {
    public let path: String
    /// Where the bytes go until `commit()`: "<name>.<host>-<pid>-<random>.tmp" in the same
    /// folder. The machine and pid (`Leftovers`) let a later run tell the leftover of a
    /// process that died (`kill -9`, a power cut, Ctrl-C before a handler ran) from a run
    /// under way, here or on another machine: `sweep` removes only the former.
    public let temporaryPath: String
    private var descriptor: Int32
    private let identity: (device: UInt64, inode: UInt64)

    /// Checks that `path` may be replaced and creates the temporary file.
    public init(_ path: String) throws {
        self.path = path
        try Self.checkReplaceable(path)
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        Self.sweep(folder)
        var rng = SystemRandomNumberGenerator()
        let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        var attempt = 0
        while true {
            let tag = String((0..<10).map { _ in letters[Int(rng.next() % UInt64(letters.count))] })
            let candidate = (folder as NSString).appendingPathComponent(url.lastPathComponent + ".\(Leftovers.tag)-" + tag + ".tmp")
            let fd = open(candidate, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
            if fd >= 0 {
                // A replaced file keeps its permissions (a private file stays private).
                var old = stat()
                if lstat(path, &old) == 0 && old.st_mode & S_IFMT == S_IFREG { fchmod(fd, old.st_mode & 0o7777) }
                var status = stat()
                fstat(fd, &status)
                temporaryPath = candidate
                descriptor = fd
                identity = (UInt64(status.st_dev), UInt64(status.st_ino))
                return
            }
            let code = errno
            attempt += 1
            if code == EEXIST && attempt < 100 { continue }
            var isFolder: ObjCBool = false
            if !FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) || !isFolder.boolValue {
                throw FileWriteError("\(path): cannot write: does the folder \(folder) exist? (no such folder)")
            }
            throw FileWriteError("\(path): cannot write in \(folder) (\(String(cString: strerror(code)))): is the folder writable?")
        }
    }

    /// Dropped before `commit()`: the temporary file goes, as after a failure.
    deinit { discard() }

    /// Folders this process has swept: each once, since a folder of many outputs (an
    /// extraction's journal) would otherwise be listed once per file.
    nonisolated(unsafe) private static var swept = Set<String>()
    private static let sweptLock = NSLock()

    /// Removes the temporary files of processes of this machine that are gone from `folder`:
    /// regular files named "<name>.<host>-<pid>-<10 letters>.tmp" (`Leftovers`; a pid reused
    /// since is at worst a leftover kept until a later sweep).
    public static func sweep(_ folder: String) {
        let key = folder.isEmpty ? "." : folder
        guard sweptLock.withLock({ swept.insert(key).inserted }) else { return }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: key) else { return }
        for name in names where name.hasSuffix(".tmp") {
            let stem = name.dropLast(4)
            guard let dot = stem.lastIndex(of: ".") else { continue }
            let parts = stem[stem.index(after: dot)...].split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[2].count == 10, Leftovers.isAbandoned(host: parts[0], pid: parts[1]) else { continue }
            let path = (key as NSString).appendingPathComponent(name)
            var status = stat()
            if lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG { unlink(path) }
        }
    }

    /// Refuses an existing `path` that is not a regular file, with the reason.
    public static func checkReplaceable(_ path: String) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }   // nothing there (or unreachable: the create says why)
        let kind: String
        switch status.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFLNK:
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?"
            kind = "a symbolic link (to \(target)); poseact replaces only regular files: give the real path or remove the link"
        case S_IFDIR: kind = "a folder; give a file path"
        case S_IFIFO: kind = "a FIFO; poseact writes outputs as regular files it can replace whole: give a file path"
        case S_IFCHR, S_IFBLK: kind = "a device; poseact writes outputs as regular files it can replace whole: give a file path (to discard an output, leave its option out)"
        case S_IFSOCK: kind = "a socket; give a file path"
        default: kind = "not a regular file; give a file path"
        }
        throw FileWriteError("\(path): is \(kind)")
    }

    /// Whether the temporary name still holds the file this value created.
    private var temporaryIsOurs: Bool {
        var status = stat()
        guard lstat(temporaryPath, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return false }
        return (UInt64(status.st_dev), UInt64(status.st_ino)) == identity
    }

    /// Gives the finished temporary file its name, replacing a regular file there; if it
    /// cannot, removes the temporary file and throws.
    public func commit() throws {
        guard descriptor >= 0 else { throw FileWriteError("\(path): already written or abandoned") }
        guard temporaryIsOurs else {
            close(descriptor); descriptor = -1
            throw FileWriteError("\(path): its temporary file \(temporaryPath) was replaced by something else while poseact wrote it; nothing was renamed")
        }
        do { try Self.checkReplaceable(path) } catch { discard(); throw error }
        // On disk before the name moves: a crash after the rename never leaves an empty file.
        if fsync(descriptor) != 0 {
            let reason = String(cString: strerror(errno))
            discard()
            throw FileWriteError("\(path): cannot write (\(reason)); is the disk full?")
        }
        if rename(temporaryPath, path) != 0 {
            let reason = String(cString: strerror(errno))
            discard()
            throw FileWriteError("\(path): cannot give the finished file its name (\(reason))")
        }
        close(descriptor); descriptor = -1
    }

    /// Removes the temporary file (if it is still the one created here); `path` stays as it was.
    public func discard() {
        guard descriptor >= 0 else { return }
        if temporaryIsOurs { unlink(temporaryPath) }
        close(descriptor); descriptor = -1
    }

    /// Appends `bytes` to the temporary file through the descriptor opened at creation.
    public func append(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileWriteError("\(path): cannot write (\(String(cString: strerror(errno)))); is the disk full?")
            }
            offset += n
        }
    }

    /// `body` writes the file at the temporary path it is given, which then gets its name.
    /// If `body` throws, the temporary file is removed and the error passed on.
    public static func write(to path: String, _ body: (_ temporaryPath: String) throws -> Void) throws {
        let file = try AtomicFile(path)
        do { try body(file.temporaryPath) } catch { file.discard(); throw error }
        try file.commit()
    }

    public static func write(_ data: Data, to path: String) throws {
        let file = try AtomicFile(path)
        do { try data.withUnsafeBytes { try file.append($0) } } catch { file.discard(); throw error }
        try file.commit()
    }

    public static func write(_ text: String, to path: String) throws { try write(Data(text.utf8), to: path) }
}

/// An output file that could not be written, as one line naming it.
public enum FileWriteFailure {}
public typealias FileWriteError = OneLineError<FileWriteFailure>
