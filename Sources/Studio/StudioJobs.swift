import Basics
import Foundation
import OutputLines
import PageServing

/// One command of a job, as the page shows it and as it runs: poseact with `arguments`, in
/// the project folder. With `stdout`, what the command prints on stdout is kept in that file
/// (written whole, on success: `poseact pose VIDEO > poses/VIDEO.jsonl`).
public struct StudioCommand: Sendable, Equatable, Encodable {
    public let arguments: [String]
    public let stdout: String?

    public init(_ arguments: [String], stdout: String? = nil) { self.arguments = arguments; self.stdout = stdout }

    /// The command line a user would type in the project folder.
    public var line: String {
        (["poseact"] + arguments).map(Self.quoted).joined(separator: " ") + (stdout.map { " > " + Self.quoted($0) } ?? "")
    }

    static func quoted(_ word: String) -> String {
        let plain = word.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "-_./=:,@%+".unicodeScalars.contains($0) }
        return plain && !word.isEmpty ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// A job of the studio: the commands an action stands for, run one after the other as
/// child processes of the studio (the very commands the page shows), with what they print.
public struct StudioJob: Sendable, Encodable {
    public enum Status: String, Sendable, Encodable { case running, done, failed, stopped }
    public let id: Int
    /// What the page asked for ("extract", "train", …) and what it is about (a run's name, a video).
    public let action: String
    public let subject: String
    public let commands: [StudioCommand]
    public var lines: [String] { commands.map(\.line) }
    public var status: Status = .running
    /// The command under way (0-based).
    public var step = 0
    /// The last lines the commands printed (stderr and stdout that is not kept in a file).
    public var output: [String] = []
    /// The JSON objects the commands printed, one per line (train --json's epochs, summaries).
    public var events: [String] = []
    /// The latest progress line of the command running ("extract: 12/54 clips  3.10 clips/s  ETA 14s").
    public var progress: ProgressLine?
    public var exitStatus: Int32?
    public let started: Date
    public var seconds: Double = 0

    enum CodingKeys: String, CodingKey { case id, action, subject, lines, status, step, output, events, progress, exitStatus, seconds }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id); try c.encode(action, forKey: .action); try c.encode(subject, forKey: .subject)
        try c.encode(lines, forKey: .lines); try c.encode(status, forKey: .status); try c.encode(step, forKey: .step)
        try c.encode(output, forKey: .output); try c.encode(events, forKey: .events)
        try c.encodeIfPresent(progress, forKey: .progress); try c.encodeIfPresent(exitStatus, forKey: .exitStatus)
        try c.encode(seconds, forKey: .seconds)
    }
}

/// The studio's jobs: one at a time (a laptop's cores are the commands'), each command a
/// child process that stops with the studio (`ChildProcess`), its output read line by line
/// as it comes. Every change wakes the page's feed (`signal`).
public final class StudioJobs: @unchecked Sendable {
    public enum Failure {}
    public typealias Refusal = OneLineError<Failure>

    private let lock = NSLock()
    private var jobs: [StudioJob] = []
    private var runningPID: pid_t?
    private var stopRequested = false
    let executable: String
    let signal: ChangeSignal
    /// Lines and events kept for the running job, and for each job before it (its last
    /// event is its result: an inspection, a summary): the page's state stays small.
    static let keptLines = 200, keptEvents = 2000, keptEarlierLines = 20, keptJobs = 20
    /// A JSON line may be long (an inspection lists its short clips); another line is cut.
    static let longestEvent = 1 << 20, longestLine = 4096

    init(executable: String, signal: ChangeSignal) { self.executable = executable; self.signal = signal }

    public var all: [StudioJob] { lock.withLock { jobs } }
    public var running: StudioJob? { lock.withLock { jobs.last.flatMap { $0.status == .running ? $0 : nil } } }

    /// Starts a job on a thread of its own (which waits for each child it starts, so the
    /// kernel's parent-death signal follows a thread that lives as long as the child);
    /// refused while another runs. `finished` runs after the last command, on that thread.
    @discardableResult
    public func start(action: String, subject: String, commands: [StudioCommand],
                      finished: (@Sendable (StudioJob) -> Void)? = nil) throws -> StudioJob {
        let job: StudioJob = try lock.withLock {
            if let busy = jobs.last, busy.status == .running {
                throw Refusal("\(busy.action) \(busy.subject) is running: stop it first, or wait for it to end")
            }
            let job = StudioJob(id: (jobs.last?.id ?? 0) + 1, action: action, subject: subject, commands: commands, started: Date())
            for i in jobs.indices {
                jobs[i].events = Array(jobs[i].events.suffix(1))
                jobs[i].output = Array(jobs[i].output.suffix(Self.keptEarlierLines))
            }
            jobs.append(job)
            if jobs.count > Self.keptJobs { jobs.removeFirst(jobs.count - Self.keptJobs) }
            stopRequested = false
            return job
        }
        signal.changed()
        let thread = Thread { [self] in
            let status = run(job)
            update(job.id) { $0.status = status; $0.seconds = Date().timeIntervalSince($0.started) }
            if let done = lock.withLock({ jobs.first { $0.id == job.id } }) { finished?(done) }
        }
        thread.name = "studio job \(job.id)"
        thread.start()
        return job
    }

    /// Stops job `id` if it is the one running: SIGINT to its command (as Ctrl-C would),
    /// none after it. (A late Stop of a job that ended does not stop the next one.)
    public func stop(_ id: Int) {
        lock.withLock {
            guard let running = jobs.last, running.id == id, running.status == .running else { return }
            stopRequested = true
            if let pid = runningPID { ChildProcess.signal(pid, SIGINT) }
        }
    }

    private func update(_ id: Int, _ change: (inout StudioJob) -> Void) {
        lock.withLock {
            if let i = jobs.firstIndex(where: { $0.id == id }) { change(&jobs[i]) }
        }
        signal.changed()
    }

    private func run(_ job: StudioJob) -> StudioJob.Status {
        for (step, command) in job.commands.enumerated() {
            if lock.withLock({ stopRequested }) { return .stopped }
            update(job.id) { $0.step = step; $0.output.append("$ " + command.line) }
            let status: Int32?
            do { status = try runCommand(command, job: job.id) } catch {
                update(job.id) { $0.output.append("\(error)") }
                return .failed
            }
            update(job.id) { $0.exitStatus = status }
            if lock.withLock({ stopRequested }) { return .stopped }
            guard status == 0 else { return status == nil ? .stopped : .failed }
        }
        return .done
    }

    /// One command, its output read as it comes: stdout and stderr through one pipe, or
    /// stdout into its file (temporary until the command succeeds) and stderr through the pipe.
    private func runCommand(_ command: StudioCommand, job id: Int) throws -> Int32? {
        let kept = try command.stdout.map { try AtomicFile($0) }
        var keptFD: Int32?
        if let kept {
            keptFD = open(kept.temporaryPath, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
            guard keptFD != nil, keptFD! >= 0 else { kept.discard(); throw Refusal("\(kept.temporaryPath): cannot write") }
        }
        defer { keptFD.map { _ = close($0) } }
        guard !lock.withLock({ stopRequested }) else { kept?.discard(); return nil }
        let status: Int32?
        do {
            status = try ChildProcess.run(executable, command.arguments, output: keptFD, longestLine: Self.longestLine,
                                          longestJSONLine: Self.longestEvent, started: { pid in
                // A Stop that came while it started reaches it now.
                lock.withLock { runningPID = pid; if stopRequested { ChildProcess.signal(pid, SIGINT) } }
            }) { line in take(line, job: id) }
        } catch {
            kept?.discard()
            throw Refusal("\(command.line): not started (\(error))")
        }
        lock.withLock { runningPID = nil }
        if status == 0 { try kept?.commit() } else { kept?.discard() }
        return status
    }

    /// What a command printed: JSON lines are events, progress lines (`ProgressLine`) are
    /// the progress, the rest is output.
    private func take(_ line: String, job id: Int) {
        update(id) { job in
            if line.hasPrefix("{") {
                job.events.append(line)
                if job.events.count > Self.keptEvents { job.events.removeFirst() }
            } else if let progress = ProgressLine(parsing: line) {
                job.progress = progress
            } else {
                job.output.append(line)
                if job.output.count > Self.keptLines { job.output.removeFirst(job.output.count - Self.keptLines) }
            }
        }
    }
}
