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
/// bounded by its size (`budget`), before the readers allocate any of it. Soft links are
/// not followed (no reader uses one; followed, one could cross into another file).
///
/// The copy lives in a private folder under `$TMPDIR` only until this process opens it:
/// it is then unlinked and kept open (later openings of the same file reopen it, for the
/// last `keptCopies` files), so it takes no room once poseact ends. A folder left by a
/// process killed while its child copied is removed by the next copy on the machine.
enum HDF5Copy {
    /// Objects visited at most: links can make a group its own descendant.
    static let maxObjects = 200_000
    /// A file's datasets may hold at most `maxExpansion` times the file's allocated size, or
    /// `smallFileBudget` for a small file. poseact's stores and windows files measure 2 to 11
    /// to 1 (keypoints, shuffled and deflated) and frames where nobody was found (NaN) about
    /// 1,000 to 1, so a store 95 % empty is about 55 to 1; a 4 MB file must not declare
    /// gigabytes of zeros.
    static let maxExpansion = 64
    static let smallFileBudget = 256 << 20
    /// Copies kept open at most (each holds a descriptor): the oldest is closed beyond.
    static let keptCopies = 8

    /// Files this process wrote, copies of the others, and the files refused: by device,
    /// inode, size and modification time, so a command that opens one file several times
    /// copies (or refuses) it once.
    nonisolated(unsafe) private static var wrote = Set<[Int]>()
    nonisolated(unsafe) private static var copies: [(key: [Int], kept: hid_t)] = []
    nonisolated(unsafe) private static var refused: [[Int]: HDF5Error] = [:]
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
            let known: (wrote: Bool, kept: hid_t?, refused: HDF5Error?) = lock.withLock {
                (wrote.contains(key), copies.first { $0.key == key }?.kept, refused[key])
            }
            if known.wrote { return try HDF5File.openTrusted(path, writable: false) }
            if let error = known.refused { throw error }
            if let kept = known.kept { return try HDF5File.reopen(kept, shownAs: path) }
        }
        let kept: hid_t
        do {
            kept = try copyInChild(path, keep: true)
        } catch let error as HDF5Error {
            if let key { lock.withLock { refused[key] = error } }
            throw error
        }
        let file = try HDF5File.reopen(kept, shownAs: path)
        lock.withLock {
            copies.append((key ?? [], kept))
            // The file opened above holds the copy open by itself: a copy dropped here is
            // closed by HDF5 when its last object is.
            while copies.count > keptCopies { HDF5File.closeKept(copies.removeFirst().kept) }
        }
        return file
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

    /// Removes the copy folders of this machine's processes that are gone (once a process).
    private static let sweptTemporary: Void = {
        let temporary = NSTemporaryDirectory()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? [] where Leftovers.isAbandoned(name, prefix: "poseact-hdf5-") {
            try? FileManager.default.removeItem(atPath: (temporary as NSString).appendingPathComponent(name))
        }
    }()

    /// One copy in a child process: its budget and deadline, a folder for it, the child,
    /// its outcome; with `keep`, the copy opened.
    private static func attempt(_ path: String, keep: Bool) throws -> hid_t {
        _ = sweptTemporary
        let budget = bytesBudget(path)
        // Generous: about 20 MB/s of declared data, the budget's worst case.
        let seconds = min(60 + budget / 20_000_000, 86_400)
        let folder = try copyFolder(for: path)
        let copy = folder + "/copy.h5"
        defer { unlink(copy); rmdir(folder) }
        // Closed on exec from the start: a program another thread starts meanwhile must not
        // hold the write end, or the read of the child's message would wait on it.
        let pipeEnds: [Int32]
        do { pipeEnds = try ChildProcess.pipeClosedOnExec() } catch { throw HDF5Error("\(path): cannot check the file (\(error))") }
        defer { close(pipeEnds[0]) }
        let pid: pid_t
        do { pid = try startCopier(path, to: copy, budget: budget, seconds: seconds, message: pipeEnds[1]) } catch {
            close(pipeEnds[1]); throw error
        }
        close(pipeEnds[1])
        let status = try waitForCopier(pid, path: path, seconds: seconds)
        try checkCopierExit(status, path: path, message: pipeEnds[0])
        return keep ? try HDF5File.openKept(copy, shownAs: path) : -1
    }

    /// What the copy may declare: `maxExpansion` times the bytes the file takes on disk (a
    /// sparse file's size is no promise of data), at least `smallFileBudget`.
    private static func bytesBudget(_ path: String) -> Int {
        var st = stat()
        let allocated = stat(path, &st) == 0 ? min(Int(st.st_size), Int(st.st_blocks) &* 512) : 0
        let (scaled, overflow) = allocated.multipliedReportingOverflow(by: maxExpansion)
        return overflow ? Int.max : max(smallFileBudget, scaled)
    }

    /// A new private folder for the copy in the temporary folder.
    private static func copyFolder(for path: String) throws -> String {
        let temporary = NSTemporaryDirectory()
        var template = Array(((temporary.hasSuffix("/") ? temporary : temporary + "/") + "poseact-hdf5-\(Leftovers.tag)-XXXXXX").utf8CString)
        guard let folder = mkdtemp(&template) else {
            throw HDF5Error("\(path): cannot make a folder to copy it into in \(temporary) (\(String(cString: strerror(errno)))); set TMPDIR to a writable folder")
        }
        return String(cString: folder)
    }

    /// Forks the child that copies `path` to `copy`; a refusal is written to `message`.
    private static func startCopier(_ path: String, to copy: String, budget: Int, seconds: Int, message: Int32) throws -> pid_t {
        fflush(stdout); fflush(stderr)
        let parent = getpid()
        let pid = fork()
        if pid < 0 { throw HDF5Error("\(path): cannot check the file (fork failed: \(String(cString: strerror(errno))))") }
        guard pid == 0 else { return pid }
        // The child: it dies with its parent and by its deadline (so the descriptors it
        // shares, a lock or the studio's socket, go with the parent's), hears signals as a
        // fresh process, and its output is not the user's. (It keeps the other descriptors:
        // libhdf5's files open in the parent are open in the child too, and a file the
        // parent still has open is reached through them.)
        ChildProcess.dieWithParent(parent)
        alarm(UInt32(seconds + 5))
        for signal in [SIGINT, SIGTERM, SIGPIPE] { Glibc.signal(signal, SIG_DFL) }
        var mask = sigset_t()
        sigemptyset(&mask)
        sigprocmask(SIG_SETMASK, &mask, nil)
        let devNull = Glibc.open("/dev/null", O_RDWR)
        if devNull >= 0 { dup2(devNull, 0); dup2(devNull, 1); dup2(devNull, 2) }
        do {
            try copyWhole(path, to: copy, budget: budget)
            _exit(0)
        } catch {
            let line = Array("\(error)".utf8.prefix(1000))
            _ = line.withUnsafeBytes { write(message, $0.baseAddress, $0.count) }
            _exit(3)
        }
    }

    /// The child's wait status; past its deadline it is killed (`Outcome.timedOut`).
    private static func waitForCopier(_ pid: pid_t, path: String, seconds: Int) throws -> Int32 {
        let deadline = Date().addingTimeInterval(TimeInterval(seconds))
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { return status }
            if r < 0 && errno != EINTR {
                let reason = String(cString: strerror(errno))
                kill(pid, SIGKILL)
                throw HDF5Error("\(path): cannot check the file (\(reason))")
            }
            if Date() > deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                throw Outcome.timedOut
            }
            usleep(2_000)
        }
    }

    /// A child that crashed, refused the file (its one line, from `message`) or failed, as
    /// one line.
    private static func checkCopierExit(_ status: Int32, path: String, message: Int32) throws {
        let signal = status & 0x7f
        if signal != 0 {
            throw HDF5Error("\(path): damaged or hostile HDF5: libhdf5 crashed reading it (\(String(cString: strsignal(signal)))), in a separate process; it was not opened. If another tool wrote it, check it there (h5dump) and save it again")
        }
        let code = (status >> 8) & 0xff
        if code == 3 {
            var bytes = [UInt8](repeating: 0, count: 1000)
            let n = read(message, &bytes, bytes.count)
            throw HDF5Error(n > 0 ? String(decoding: bytes[0..<n], as: UTF8.self) : "\(path): cannot read it")
        }
        if code != 0 {
            throw HDF5Error("\(path): damaged or hostile HDF5: libhdf5 failed reading it (exit \(code)), in a separate process; it was not opened")
        }
    }

    /// The child's work: `path` read whole and written to `copy`, refusing what a file may not do.
    static func copyWhole(_ path: String, to copy: String, budget: Int) throws {
        let source = try HDF5File.openTrusted(path, writable: false)
        let target = try writing(path) { try HDF5File.create(copy, shownAs: path) }
        var state = State(objects: maxObjects, bytes: budget, path: path)
        let from = try source.root(), to = try writing(path) { try target.root() }
        try copyGroup(from, to: to, depth: 0, state: &state)
        from.close(); to.close()
        try writing(path) { try target.close() }
        try source.close()
    }

    /// Runs a write to the copy: its failure (a full `$TMPDIR`) is said as the copy's, not as
    /// something wrong with the file read.
    static func writing<T>(_ path: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch {
            throw HDF5Error("\(path): cannot copy it into \(NSTemporaryDirectory()) to read it (\(error)); set TMPDIR to a folder with room")
        }
    }

    struct State {
        var objects: Int
        var bytes: Int
        let path: String
    }

    static func copyAttributes(_ from: HDF5Object, to: HDF5Object, path: String) throws {
        for name in try from.attributeNames() {
            // An attribute of a type no reader reads (compound, 2-D) is left out: a reader
            // asking for it says it is missing.
            guard let value = try? from.attribute(name) else { continue }
            try writing(path) { try to.setAttribute(name, value) }
        }
    }

    static func copyGroup(_ from: HDF5Group, to: HDF5Group, depth: Int, state: inout State) throws {
        try copyAttributes(from, to: to, path: state.path)
        guard depth < 64 else { throw from.error("groups nested more than 64 deep (damaged file?)") }
        for name in try from.children() {
            state.objects -= 1
            guard state.objects > 0 else { throw HDF5Error("\(state.path): more than \(maxObjects) objects (damaged or hostile file?)") }
            // Hard links alone: an external link is refused, a soft one (no reader uses one)
            // left out rather than followed, since its path could cross into another file.
            guard try from.checkLinkIsInside(name) else { continue }
            switch try from.kind(of: name) {
            case .group:
                let source = try from.group(name)
                let target = try writing(state.path) { try to.createGroup(name) }
                try copyGroup(source, to: target, depth: depth + 1, state: &state)
                source.close(); target.close()
            case .dataset:
                let source = try from.dataset(name)
                defer { source.close() }
                // Strings or compound records, or no shape at all: no reader reads one, a
                // reader asking for it says it is missing.
                guard try source.isNumeric(), let shape = try? source.shape(), try source.hasShape() else { continue }
                let elements = try source.checkedCount(shape)
                let single = try source.isSinglePrecision()
                let (bytes, overflow) = elements.multipliedReportingOverflow(by: single ? 4 : 8)
                state.bytes -= overflow ? Int.max : bytes
                guard state.bytes >= 0 else {
                    throw HDF5Error("\(state.path): its datasets declare more data than a file of its size holds (over \(maxExpansion) times its size, or \(smallFileBudget >> 20) MiB); damaged or hostile file?")
                }
                // A dataset whose data cannot be read (a filter this libhdf5 has not) is left
                // out like the others no reader reads; what it declared was bounded above.
                let target: HDF5Dataset
                if single {
                    guard let values = try? source.read(as: Float.self).values else { continue }
                    target = try writing(state.path) { try to.write(name, values, anyShape: shape, deflateLevel: 1) }
                } else {
                    guard let values = try? source.read(as: Double.self).values else { continue }
                    target = try writing(state.path) { try to.write(name, values, anyShape: shape, deflateLevel: 1) }
                }
                try copyAttributes(source, to: target, path: state.path)
                target.close()
            case .other:
                continue
            }
        }
    }
}
