import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// libhdf5 trusts the sizes and offsets in a file's metadata: a few changed bytes can make
/// it read or write at a wild address, inside the library, where no check of ours can stop
/// it. Every HDF5 file this process did not write itself (from h5py, MATLAB, or a stranger,
/// whatever checksum it carries) is therefore read whole first in a forked child: every
/// group, dataset and attribute, through the same wrapper the readers use. If the child dies
/// (a signal, or AddressSanitizer's report) or hangs, the file is refused in one line and
/// poseact lives on; if it finishes, libhdf5 has read every byte the readers will ask for
/// without harm. (A file changed between the check and the reading, by someone who can
/// write it while poseact runs, is not covered.)
enum HDF5Probe {
    /// Objects visited at most: links can make a group its own descendant.
    static let maxObjects = 200_000

    /// Files that passed, by device, inode, size and modification time: a command that opens
    /// one file several times forks once.
    nonisolated(unsafe) private static var passed = Set<[Int]>()
    private static let passedLock = NSLock()

    static func identity(_ path: String) -> [Int]? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return [Int(st.st_dev), Int(st.st_ino), Int(st.st_size), st.st_mtim.tv_sec, st.st_mtim.tv_nsec]
    }

    /// Throws an `HDF5Error` if libhdf5 cannot read `path` whole without dying.
    static func check(_ path: String) throws {
        let key = identity(path)
        if let key, passedLock.withLock({ passed.contains(key) }) { return }
        do {
            try probe(path)
        } catch ProbeOutcome.timedOut {
            // Once more before calling the file hostile: a child forked while another thread
            // held a lock of the runtime can wait forever through no fault of the file's.
            do { try probe(path) } catch ProbeOutcome.timedOut {
                throw HDF5Error("\(path): damaged or hostile HDF5: libhdf5 did not finish reading it, twice; it was not opened")
            }
        }
        if let key { passedLock.withLock { _ = passed.insert(key) } }
    }

    /// A file this process has just written and closed needs no check.
    static func wroteItself(_ path: String) {
        if let key = identity(path) { passedLock.withLock { _ = passed.insert(key) } }
    }

    enum ProbeOutcome: Error { case timedOut }

    private static func probe(_ path: String) throws {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        // A generous bound: a healthy 1 GB store is read whole in a few seconds.
        let seconds = 60 + size / 10_000_000
        fflush(stdout); fflush(stderr)
        let pid = fork()
        if pid < 0 { throw HDF5Error("\(path): cannot check the file (fork failed: \(String(cString: strerror(errno))))") }
        if pid == 0 {
            // The child: its own output is not the user's, it never returns to the caller, and
            // it cannot outlive its deadline (a parent killed meanwhile does not wait for it).
            alarm(UInt32(seconds + 5))
            let devNull = open("/dev/null", O_WRONLY)
            if devNull >= 0 { dup2(devNull, 1); dup2(devNull, 2) }
            if let file = try? HDF5File.openTrusted(path, writable: false), let root = try? file.root() {
                var budget = maxObjects
                visit(root, depth: 0, budget: &budget)
            }
            _exit(0)
        }
        let deadline = Date().addingTimeInterval(TimeInterval(seconds))
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR { throw HDF5Error("\(path): cannot check the file (\(String(cString: strerror(errno))))") }
            if Date() > deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                throw ProbeOutcome.timedOut
            }
            usleep(2_000)
        }
        let signal = status & 0x7f
        if signal != 0 {
            throw HDF5Error("\(path): damaged or hostile HDF5: libhdf5 crashed reading it (\(String(cString: strsignal(signal)))), in a separate process; it was not opened. If another tool wrote it, check it there (h5dump) and save it again")
        }
        let code = (status >> 8) & 0xff
        if code != 0 {
            throw HDF5Error("\(path): damaged or hostile HDF5: libhdf5 failed reading it (exit \(code)), in a separate process; it was not opened")
        }
    }

    /// Reads every attribute and dataset below `group`.
    static func visit(_ group: HDF5Group, depth: Int, budget: inout Int) {
        readAttributes(of: group)
        guard depth < 64, let names = try? group.children() else { return }
        for name in names {
            budget -= 1
            if budget <= 0 { return }
            switch try? group.kind(of: name) {
            case .group?:
                guard let child = try? group.group(name) else { continue }
                visit(child, depth: depth + 1, budget: &budget)
                child.close()
            case .dataset?:
                guard let dataset = try? group.dataset(name) else { continue }
                readAttributes(of: dataset)
                _ = try? dataset.filters()
                if (try? dataset.isNumeric()) == true {
                    _ = try? dataset.read(as: Float.self)
                    _ = try? dataset.read(as: Double.self)
                }
                dataset.close()
            default:
                continue
            }
        }
    }

    static func readAttributes(of object: HDF5Object) {
        for name in (try? object.attributeNames()) ?? [] { _ = try? object.attribute(name) }
    }
}
