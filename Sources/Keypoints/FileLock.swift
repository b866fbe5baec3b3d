import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive lock on a path, held for the life of the value: a second `extract` to one
/// store, or a second `train` in one run folder, is refused with one line instead of the two
/// deleting each other's files. `flock` is released by the kernel when the process ends,
/// killed or not, so a stale lock file never blocks a later run; the file keeps the holder's
/// pid for the message.
public final class FileLock {
    public let path: String
    private var fd: Int32
    private let removeWhenDone: Bool

    /// Takes the lock at `path` (created if missing) or throws, naming the process that holds it.
    /// `removeWhenDone`: the lock file goes when the lock is released (for a lock beside an
    /// output file, where a lasting file would be litter).
    public init(_ path: String, what: String, removeWhenDone: Bool = false) throws {
        self.path = path
        self.removeWhenDone = removeWhenDone
        // Never through a link: the pid written below would land in whatever file it names.
        fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let reason = errno == ELOOP ? "it is a symbolic link; remove it" : String(cString: strerror(errno))
            throw DatasetError("\(path): cannot create the lock file (\(reason))")
        }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_nlink == 1 else {
            close(fd); fd = -1
            throw DatasetError("\(path): the lock file is not a regular file of its own (a link?); remove it")
        }
        // A file already there is ours only if it holds a pid (or nothing): the lock writes
        // into it and may remove it, and a user's own OUT.lock is not poseact's to destroy.
        var existing = [UInt8](repeating: 0, count: 33)
        let read = pread(fd, &existing, existing.count, 0)
        let text = read > 0 ? String(decoding: existing[0..<read], as: UTF8.self) : ""
        guard read <= 32, text.isEmpty || text.trimmingCharacters(in: .whitespacesAndNewlines).allSatisfy(\.isNumber) else {
            close(fd); fd = -1
            throw DatasetError("\(path): exists and is not a poseact lock file; poseact will not overwrite it: move it, or choose another output name")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            var buffer = [UInt8](repeating: 0, count: 32)
            let n = pread(fd, &buffer, buffer.count, 0)
            let holder = n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : "?"
            close(fd); fd = -1
            throw DatasetError("\(what) is in use by another poseact (pid \(holder)); wait for it to end, or stop it")
        }
        // A file removed by its last holder after this one opened it is no lock any more.
        var opened = stat(), named = stat()
        if removeWhenDone && (fstat(fd, &opened) != 0 || stat(path, &named) != 0 || opened.st_ino != named.st_ino || opened.st_dev != named.st_dev) {
            close(fd); fd = -1
            throw DatasetError("\(what) is in use by another poseact, just ending; try again")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pwrite(fd, pid, pid.count, 0)
    }

    deinit {
        guard fd >= 0 else { return }
        if removeWhenDone { unlink(path) }   // before the lock is released: a newcomer makes a new file
        close(fd)   // releases the lock; without removeWhenDone the file stays (harmless)
    }
}
