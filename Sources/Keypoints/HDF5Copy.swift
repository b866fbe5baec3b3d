import Basics
import CHDF5
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// libhdf5 trusts the sizes and offsets in a file's metadata: a few changed bytes can make
/// it read or write at a wild address, inside the library, where no check of ours can stop
/// it, and reading a file whole once without harm does not prove that the next reading,
/// in another order, is harmless too. So this process never lets libhdf5 parse a file it
/// did not write itself. Such a file (from h5py, MATLAB, an earlier poseact run or a
/// stranger, whatever checksum it carries) is read whole in a forked child, which writes
/// what it read into a fresh file of its own: every group, every numeric dataset (float32
/// as float32, anything else as float64, shapes kept) and every attribute. The readers then
/// open that copy, written by libhdf5 itself. If the child dies (a signal, or
/// AddressSanitizer's report) or hangs, the file is refused in one line and poseact lives
/// on.
///
/// The child also enforces what a file may not do: data stored in other files (external
/// storage, virtual datasets, external links) is refused, and the data a file declares is
/// bounded by its size (`maxExpansion`), before the readers allocate any of it.
///
/// The copy lives in a private folder under `$TMPDIR` only until this process opens it:
/// it is then unlinked and kept open (later openings of the same file reopen it), so
/// nothing is left behind, even after `kill -9`.
enum HDF5Copy {
    /// Objects visited at most: links can make a group its own descendant.
    static let maxObjects = 200_000
    /// A file's datasets may hold at most this many times the file's size, plus `minimumBudget`:
    /// poseact's stores and windows files measure 2 to 11 to 1 (keypoints, shuffled and
    /// deflated), frames where nobody was found (NaN) compress about 1,000 to 1, so a store
    /// nine tenths empty is about 30 to 1; a 4 MB file must not declare gigabytes of zeros.
    static let maxExpansion = 32
    static let minimumBudget = 16 << 20

    /// Files this process wrote, and copies of the others: by device, inode, size and
    /// modification time, so a command that opens one file several times copies it once.
    nonisolated(unsafe) private static var wrote = Set<[Int]>()
    nonisolated(unsafe) private static var copies: [[Int]: hid_t] = [:]
    private static let lock = NSLock()

    static func identity(_ path: String) -> [Int]? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return [Int(st.st_dev), Int(st.st_ino), Int(st.st_size), st.st_mtim.tv_sec, st.st_mtim.tv_nsec]
    }

    /// A file this process has just written and closed is opened as it is.
    static func wroteItself(_ path: String) {
        if let key = identity(path) { lock.withLock { _ = wrote.insert(key) } }
    }

    /// Opens `path` read-only: as it is when this process wrote it, otherwise its copy.
    static func open(_ path: String) throws -> HDF5File {
        let key = identity(path)
        if let key {
            let known: (wrote: Bool, copy: hid_t?) = lock.withLock { (wrote.contains(key), copies[key]) }
            if known.wrote { return try HDF5File.openTrusted(path, writable: false) }
            if let kept = known.copy { return try HDF5File.reopen(kept, shownAs: path) }
        }
        let kept = try copyInChild(path, keep: true)
        if let key { lock.withLock { copies[key] = kept } }
        return try HDF5File.reopen(kept, shownAs: path)
    }

    /// For a file opened for writing (the fuzzer's rewriting tool alone): refused as `open`
    /// would refuse it, but not copied.
    static func check(_ path: String) throws {
        _ = try copyInChild(path, keep: false)
    }

    enum Outcome: Error { case timedOut }

    /// Makes the copy and, with `keep`, returns the identifier it is kept open by (its
    /// path already gone).
    private static func copyInChild(_ path: String, keep: Bool) throws -> hid_t {
        do {
            return try attempt(path, keep: keep)
        } catch Outcome.timedOut {
            // Once more before calling the file hostile: a child forked while another thread
            // held a lock of the runtime can wait forever through no fault of the file's.
            do { return try attempt(path, keep: keep) } catch Outcome.timedOut {
                throw HDF5Error("\(path): damaged or hostile HDF5: libhdf5 did not finish reading it, twice; it was not opened")
            }
        }
    }

    private static func attempt(_ path: String, keep: Bool) throws -> hid_t {
        let size = (try? InputFile.check(path)) ?? 0
        let budget = minimumBudget + maxExpansion * size
        // A generous bound: a healthy 1 GB store is copied in well under a minute.
        let seconds = 60 + size / 5_000_000
        let temporary = NSTemporaryDirectory()
        var template = Array(((temporary.hasSuffix("/") ? temporary : temporary + "/") + "poseact-hdf5-XXXXXX").utf8CString)
        guard let folderPointer = mkdtemp(&template) else {
            throw HDF5Error("\(path): cannot make a folder for reading it in \(temporary) (\(String(cString: strerror(errno))))")
        }
        let folder = String(cString: folderPointer)
        let copy = folder + "/copy.h5"
        defer { unlink(copy); rmdir(folder) }
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw HDF5Error("\(path): cannot check the file (\(String(cString: strerror(errno))))") }
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        defer { close(pipeEnds[0]) }
        fflush(stdout); fflush(stderr)
        let pid = fork()
        if pid < 0 {
            close(pipeEnds[1])
            throw HDF5Error("\(path): cannot check the file (fork failed: \(String(cString: strerror(errno))))")
        }
        if pid == 0 {
            // The child: its own output is not the user's, it never returns to the caller, and
            // it cannot outlive its deadline (a parent killed meanwhile does not wait for it).
            alarm(UInt32(seconds + 5))
            let devNull = Glibc.open("/dev/null", O_WRONLY)
            if devNull >= 0 { dup2(devNull, 1); dup2(devNull, 2) }
            do {
                try copyWhole(path, to: copy, budget: budget)
                _exit(0)
            } catch {
                let line = Array("\(error)".utf8.prefix(1000))
                _ = line.withUnsafeBytes { write(pipeEnds[1], $0.baseAddress, $0.count) }
                _exit(3)
            }
        }
        close(pipeEnds[1])
        let deadline = Date().addingTimeInterval(TimeInterval(seconds))
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR { throw HDF5Error("\(path): cannot check the file (\(String(cString: strerror(errno))))") }
            if Date() > deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                throw Outcome.timedOut
            }
            usleep(2_000)
        }
        let signal = status & 0x7f
        if signal != 0 {
            throw HDF5Error("\(path): damaged or hostile HDF5: libhdf5 crashed reading it (\(String(cString: strsignal(signal)))), in a separate process; it was not opened. If another tool wrote it, check it there (h5dump) and save it again")
        }
        let code = (status >> 8) & 0xff
        if code == 3 {
            var bytes = [UInt8](repeating: 0, count: 1000)
            let n = read(pipeEnds[0], &bytes, bytes.count)
            throw HDF5Error(n > 0 ? String(decoding: bytes[0..<n], as: UTF8.self) : "\(path): cannot read it")
        }
        if code != 0 {
            throw HDF5Error("\(path): damaged or hostile HDF5: libhdf5 failed reading it (exit \(code)), in a separate process; it was not opened")
        }
        return keep ? try HDF5File.openKept(copy, shownAs: path) : -1
    }

    /// The child's work: `path` read whole and written to `copy`, refusing what a file may not do.
    static func copyWhole(_ path: String, to copy: String, budget: Int) throws {
        let source = try HDF5File.openTrusted(path, writable: false)
        let target = try HDF5File.create(copy, shownAs: path)
        var state = State(objects: maxObjects, bytes: budget, path: path)
        let from = try source.root(), to = try target.root()
        try copyGroup(from, to: to, depth: 0, state: &state)
        from.close(); to.close()
        try target.close()
        try source.close()
    }

    struct State {
        var objects: Int
        var bytes: Int
        let path: String
    }

    static func copyAttributes(_ from: HDF5Object, to: HDF5Object) throws {
        for name in try from.attributeNames() {
            // An attribute of a type no reader reads (compound, 2-D) is left out: a reader
            // asking for it says it is missing.
            guard let value = try? from.attribute(name) else { continue }
            try to.setAttribute(name, value)
        }
    }

    static func copyGroup(_ from: HDF5Group, to: HDF5Group, depth: Int, state: inout State) throws {
        try copyAttributes(from, to: to)
        guard depth < 64 else { throw from.error("groups nested more than 64 deep (damaged file?)") }
        for name in try from.children() {
            state.objects -= 1
            guard state.objects > 0 else { throw HDF5Error("\(state.path): more than \(maxObjects) objects (damaged or hostile file?)") }
            try from.checkLinkIsInside(name)
            switch try from.kind(of: name) {
            case .group:
                let source = try from.group(name)
                let target = try to.createGroup(name)
                try copyGroup(source, to: target, depth: depth + 1, state: &state)
                source.close(); target.close()
            case .dataset:
                let source = try from.dataset(name)
                defer { source.close() }
                // A dataset of strings or compound records: no reader reads one, a reader
                // asking for it says it is missing.
                guard try source.isNumeric() else { continue }
                let shape = try source.shape()
                let elements = try source.checkedCount(shape)
                let single = try source.isSinglePrecision()
                let (bytes, overflow) = elements.multipliedReportingOverflow(by: single ? 4 : 8)
                state.bytes -= overflow ? Int.max : bytes
                guard state.bytes >= 0 else {
                    throw HDF5Error("\(state.path): its datasets declare more data than a file of its size can hold (over \(maxExpansion) times its size); damaged or hostile file?")
                }
                let target: HDF5Dataset
                if single {
                    target = try to.write(name, try source.read(as: Float.self).values, anyShape: shape)
                } else {
                    target = try to.write(name, try source.read(as: Double.self).values, anyShape: shape)
                }
                try copyAttributes(source, to: target)
                target.close()
            case .other:
                continue
            }
        }
    }
}
