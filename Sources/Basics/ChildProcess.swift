import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The one way poseact starts another process (crossval's `train` runs, the studio's
/// commands). A child must be
/// stoppable like poseact itself, so:
/// - it starts with an empty signal mask and every signal at its default action: the thread
///   that spawns it may be a dispatch worker (which blocks signals), and poseact ignores
///   SIGINT and SIGTERM once it takes them on a dispatch source, and both would be inherited;
/// - it stays in poseact's process group, so Ctrl-C in a terminal reaches it too;
/// - SIGINT and SIGTERM sent to poseact are sent on to it (`stopAll`, called by the
///   command's signal handler);
/// - it dies with poseact, however poseact ends (kill -9 included): it is told its parent's
///   pid and asks the kernel for SIGKILL when that parent goes (`dieWithParent`).
public enum ChildProcess {
    public static let parentVariable = "POSEACT_PARENT_PID"

    private static let lock = NSLock()
    nonisolated(unsafe) private static var running: Set<pid_t> = []
    nonisolated(unsafe) private static var stopSignal: Int32?

    /// The signal that stopped poseact's children, once one came (no child starts after it).
    public static var stoppedBy: Int32? { lock.lock(); defer { lock.unlock() }; return stopSignal }

    /// First thing in `main`: a poseact started by poseact dies with its parent.
    public static func dieWithParent() {
        guard let value = getenv(parentVariable), let parent = pid_t(String(cString: value)) else { return }
        unsetenv(parentVariable)
        dieWithParent(parent)
    }

    /// Asks the kernel for SIGKILL when `parent` ends (a forked child calls it at once); ends
    /// now if it has already.
    public static func dieWithParent(_ parent: pid_t) {
        // prctl is variadic, so Swift does not import it; its integer arguments are passed alike
        // either way on Linux's ABIs.
        typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "prctl") {   // RTLD_DEFAULT
            _ = unsafeBitCast(symbol, to: Prctl.self)(1 /* PR_SET_PDEATHSIG, <linux/prctl.h> */, UInt(SIGKILL), 0, 0, 0)
        }
        // The parent may have ended before the request: then nobody would send the signal.
        if getppid() != parent { _exit(128 + SIGKILL) }
    }

    /// Sends `signal` to every running child, and no new child starts; `stoppedBy` says
    /// which signal it was.
    public static func stopAll(_ signal: Int32) {
        lock.lock(); defer { lock.unlock() }
        if stopSignal == nil { stopSignal = signal }
        for pid in running { kill(pid, signal) }
    }

    /// Runs `executable` with `arguments`, stdin from /dev/null, stdout and stderr to
    /// `output` (a file descriptor), and waits for it: its exit status, or 128 + the signal
    /// that ended it, or nil when it did not start because poseact is stopping.
    public static func run(_ executable: String, _ arguments: [String], output: Int32) throws -> Int32? {
        guard let pid = try start(executable, arguments, output: output) else { return nil }
        return wait(pid)
    }

    /// Starts `executable` as `run` does, without waiting (stderr to `errors`, when given):
    /// its pid, or nil when poseact is stopping. It must be waited for (`wait`) on the thread
    /// that started it: the kernel's parent-death signal follows that thread, which must not
    /// end before the child.
    public static func start(_ executable: String, _ arguments: [String], output: Int32, errors: Int32? = nil) throws -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, errors ?? output, 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        sigdelset(&all, SIGKILL); sigdelset(&all, SIGSTOP)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var environment = ProcessInfo.processInfo.environment
        environment[parentVariable] = String(getpid())
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }

        var pid = pid_t()
        lock.lock()
        if stopSignal != nil { lock.unlock(); return nil }
        let failed = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        if failed == 0 { running.insert(pid) }
        lock.unlock()
        guard failed == 0 else { throw POSIXError(POSIXErrorCode(rawValue: failed) ?? .EIO) }
        return pid
    }

    /// Waits for a child `start` started: its exit status, or 128 + the signal that ended it.
    public static func wait(_ pid: pid_t) -> Int32 {
        // Waited for without reaping, then out of `running`, then reaped: until it is reaped
        // its pid cannot be another process's, so `signal` never reaches a stranger.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
        lock.lock(); running.remove(pid); lock.unlock()
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// A pipe, [read end, write end], both closed on exec. pipe2 is not in Swift's Glibc:
    /// close-on-exec is set under the lock `start` spawns under, so no child started on
    /// another thread (crossval runs several) inherits the write end, which would keep a
    /// read of the pipe waiting until that child ends too.
    public static func pipeClosedOnExec() throws -> [Int32] {
        var ends: [Int32] = [0, 0]
        lock.lock()
        let made = pipe(&ends) == 0, failure = errno
        if made { for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) } }
        lock.unlock()
        guard made else { throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO) }
        return ends
    }

    /// Runs `executable` as `start` does and hands `line` each line it prints, as it comes
    /// (stdout and stderr through one pipe; stdout to `output` instead, when given), then
    /// waits for it: its exit status as `wait` gives it, or nil when poseact is stopping.
    /// `started` is told its pid first (another thread may stop it with `signal`). A carriage
    /// return ends a line too (a progress bar redrawn in place); a line is cut at
    /// `longestLine` bytes, one that starts with "{" (a JSON line) at `longestJSONLine`.
    /// `bytes` is handed each read's bytes as they are, before the lines are cut (a log
    /// kept byte for byte).
    public static func run(_ executable: String, _ arguments: [String], output: Int32? = nil,
                           longestLine: Int = 4096, longestJSONLine: Int = 1 << 20,
                           started: (pid_t) -> Void = { _ in }, bytes: (UnsafeRawBufferPointer) -> Void = { _ in },
                           line: (String) -> Void) throws -> Int32? {
        let ends = try pipeClosedOnExec()
        let pid: pid_t?
        do { pid = try start(executable, arguments, output: output ?? ends[1], errors: ends[1]) } catch {
            close(ends[0]); close(ends[1])
            throw error
        }
        close(ends[1])
        guard let pid else { close(ends[0]); return nil }
        started(pid)
        readLines(ends[0], longestLine: longestLine, longestJSONLine: longestJSONLine, bytes: bytes, line)
        close(ends[0])
        return wait(pid)
    }

    private static func readLines(_ fd: Int32, longestLine: Int, longestJSONLine: Int, bytes: (UnsafeRawBufferPointer) -> Void,
                                  _ line: (String) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 16384), pending: [UInt8] = []
        func flush() {
            guard !pending.isEmpty else { return }
            line(String(decoding: pending.first == UInt8(ascii: "{") ? pending[...] : pending.prefix(longestLine), as: UTF8.self))
            pending.removeAll(keepingCapacity: true)
        }
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            buffer.withUnsafeBytes { bytes(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            for byte in buffer[0..<n] {
                if byte == 10 || byte == 13 { flush() } else if pending.count < longestJSONLine { pending.append(byte) }
            }
        }
        flush()
    }

    /// Sends `signal` to one running child (the studio's Stop).
    public static func signal(_ pid: pid_t, _ signal: Int32) {
        lock.lock(); defer { lock.unlock() }
        if running.contains(pid) { kill(pid, signal) }
    }
}
