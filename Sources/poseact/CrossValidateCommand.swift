import ArgumentParser
import Basics
import Classifier
import Evaluation
import Foundation

struct CrossValidate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crossval",
        abstract: "Score a training config by k-fold cross-validation on the train split.",
        discussion: """
            Trains the config once per fold and seed (poseact train --fold i/k --seed s), each \
            run on the train split less one fold and tested on that fold, and pools the folds: \
            a seed's clip accuracy is the clips right over all k folds. The test split is never \
            read, so configs can be compared here as often as needed and the test split scored \
            once, at the end. Folds are whole clips (whole source videos for annotated ranges), \
            dealt out per label in runs of 5 neighbours (clip1–5 to fold 1, clip6–10 to fold 2, \
            …), so near-duplicate cuts of one recording stay on one side.

            Runs go to OUTPUT/seed-S/fold-I (each resumable, so the same command goes on where \
            it stopped), --jobs at a time with training.threads each (default 1: then the \
            figures are reproduced bit for bit on any machine). Prints one line per run and the \
            summary: per seed and their mean and spread; --json prints the summary as one \
            JSON object, and OUTPUT/crossval.json keeps it.

            On a cluster, --task i/n (or auto, from an array job's variables: Slurm's \
            SLURM_ARRAY_TASK_ID and _COUNT; with auto/n, a Kubernetes Indexed Job's \
            JOB_COMPLETION_INDEX or GNU parallel's PARALLEL_SEQ) trains only every n-th run from \
            the i-th (seed by seed, fold by fold), all tasks into one shared OUTPUT; then the \
            same command with --pool instead trains nothing and pools the runs into the summary, \
            the same as one machine's. A retried task resumes its own runs only (recipes: \
            docs/cluster.md).
            """)

    @OptionGroup var options: ConfigOverrides
    @Option(parsing: .unconditional, help: "Number of folds.") var folds = 5
    @Option(help: "Seeds (whole numbers ≥ 0), comma-separated.") var seeds = SeedList([1, 2, 3])
    @Option(name: .shortAndLong, help: "Folder for the runs and the summary.") var output: String
    @Option(parsing: .unconditional, help: "Runs trained at the same time.") var jobs = 2
    @Option(help: ArgumentHelp("Train only this task's share of the runs: i/n, or auto (auto/n) from an array job's variables; then --pool.",
                               valueName: "i/n|auto")) var task: TaskArgument?
    @Flag(help: "Train nothing: pool the runs that the tasks trained in OUTPUT into the summary.") var pool = false
    @Flag(help: "Print the summary as one JSON object on stdout.") var json = false

    static let maxRuns = 10_000

    func validate() throws {
        guard (2...TrainingConfig.maxFolds).contains(folds) else { throw ValidationError("--folds must be in 2…\(TrainingConfig.maxFolds)") }
        // (Each run is a training: a list this long is a typo, refused before the plan is made.)
        guard seeds.seeds.count * folds <= Self.maxRuns else {
            throw ValidationError("\(seeds.seeds.count) seeds × \(folds) folds is \(seeds.seeds.count * folds) runs; at most \(Self.maxRuns)")
        }
        if let seed = seeds.seeds.firstRepeated {
            throw ValidationError("--seeds \(seeds.defaultValueDescription): seed \(seed) is given twice; give each seed once")
        }
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        guard options.fold == nil else { throw ValidationError("--fold is chosen by crossval itself: leave it out") }
        guard options.seed == nil else { throw ValidationError("give seeds with --seeds, not --seed") }
        guard !(pool && task != nil) else { throw ValidationError("--pool gathers what the tasks trained: give it without --task") }
        _ = try task?.resolved(flag: "--task")
        try OutputPaths.check(output, flag: "--output", kind: .folder, writes: ["config.yaml", "crossval.json"],
                              inputs: options.data.map { [("--data", $0)] } ?? [])
    }

    func run() throws {
        var config = try options.resolved()
        if options.threads == nil && config.training.threads == 0 { config.training.threads = 1 }
        let data = config.data.store!
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        let runs = seeds.seeds.flatMap { s in (1...folds).map { Run(seed: s, fold: $0) } }
        // Before any training: every fold holds clips (otherwise the first run to meet an
        // empty one fails after the others trained), and what the runs may report.
        let plan = try TrainingData.folds(of: data, config: config, folds: folds)
        if let empty = plan.groups.firstIndex(where: \.isEmpty) {
            throw ConfigError("\(data): fold \(empty + 1) of \(folds) would hold no clip (the train split's \(plan.clips.reduce(0, +)) clips make "
                + "\(plan.groups.filter { !$0.isEmpty }.count) folds, dealt per label in runs of 5): give fewer --folds")
        }
        if pool {
            try finish(summary(pooling: runs, foldClips: plan.clips, labels: plan.labels, config: config))
            return
        }
        // The children read this file: the config with every flag applied, so that a rerun of
        // the same command resumes the same runs (train refuses a run folder of another config).
        try AtomicFile.write(config.yaml(), to: configPath)
        let share = try task?.resolved(flag: "--task") ?? .whole
        let tally = try train(runs, share: share, data: data)
        if share.count > 1 {
            note("crossval: task \(share.index)/\(share.count) done (\(tally.results.count) runs); when every task is done, the same command with --pool instead of --task gives the summary")
            return
        }
        try finish(CrossValidationSummary(folds: folds, seeds: seeds.seeds, results: seeds.seeds.map { s in
            runs.indices.filter { runs[$0].seed == s }.map { tally.results[$0]! }
        }))
    }

    /// One fold of one seed.
    struct Run: Sendable { let seed: Int, fold: Int }

    var configPath: String { output + "/config.yaml" }
    func folder(_ run: Run) -> String { "\(output)/seed-\(run.seed)/fold-\(run.fold)" }

    /// `--pool`: the runs the array's tasks trained, each checked, as one summary.
    func summary(pooling runs: [Run], foldClips: [Int], labels: Set<String>, config: TrainingConfig) throws -> CrossValidationSummary {
        guard let recorded = try? InputFile.read(configPath, limit: 1 << 20, what: "config"),
              String(decoding: recorded, as: UTF8.self) == config.yaml() else {
            throw ConfigError("\(configPath): \(FileManager.default.fileExists(atPath: configPath) ? "the runs here were trained with another config or flags" : "missing: no task has run here"); "
                + "--pool takes the very flags the tasks were given")
        }
        var results: [FoldResult] = [], missing: [String] = []
        for run in runs {
            switch Self.result(in: folder(run), expecting: foldClips[run.fold - 1], labels: labels) {
            case .success(let r): results.append(r)
            case .failure(let failure):
                guard FileManager.default.fileExists(atPath: folder(run) + "/evaluation.json") else {
                    missing.append("seed \(run.seed) fold \(run.fold)"); continue
                }
                throw ConfigError("seed \(run.seed) fold \(run.fold): \(failure.message): not pooled; delete \(folder(run)) and rerun its task")
            }
        }
        guard missing.isEmpty else {
            throw ConfigError("\(output): \(missing.count) of \(runs.count) runs are not finished (\(missing.prefix(4).joined(separator: ", "))\(missing.count > 4 ? ", …" : "")): "
                + "rerun their tasks (run k is task k mod n, counting seed by seed, fold by fold, from 0), then --pool again")
        }
        return CrossValidationSummary(folds: folds, seeds: seeds.seeds, results: seeds.seeds.indices.map {
            Array(results[$0 * folds ..< ($0 + 1) * folds])
        })
    }

    /// This task's share of the runs, `jobs` at a time, each a child `poseact train`. Ctrl-C
    /// or SIGTERM: the runs under way are stopped with it, no other starts, and the same
    /// command resumes them later.
    func train(_ runs: [Run], share: ArrayTask, data: String) throws -> Tally {
        let mine = share.share(Array(runs.indices)).count
        if share.count > 1 { note("crossval: task \(share): \(mine) of \(runs.count) runs") }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let progress = ProgressDisplay(title: "crossval", total: mine, unit: "runs")
        let tally = Tally()
        let queue = DispatchQueue(label: "crossval", attributes: .concurrent)
        let slots = DispatchSemaphore(value: jobs), group = DispatchGroup()
        let configPath = configPath, folds = folds
        ChildProcess.forwardSignals()
        progress.update(done: 0)
        for (index, run) in runs.enumerated() where share.owns(index) {
            slots.wait()
            if ChildProcess.stoppedBy != nil { slots.signal(); break }
            group.enter()
            let folder = folder(run)
            queue.async {
                defer { slots.signal(); group.leave() }
                let outcome = Self.train(executable: executable, config: configPath, data: data, seed: run.seed,
                                         fold: "\(run.fold)/\(folds)", folder: folder)
                if case .failure = outcome, ChildProcess.stoppedBy != nil { return }   // stopped on purpose: said once, at the end
                tally.add(outcome, index: index, run: run, folds: folds, progress: progress)
            }
        }
        group.wait()
        if let signal = ChildProcess.stoppedBy {
            note("crossval: stopped (signal \(signal)) with \(tally.results.count) of \(mine) runs done; the same command resumes")
            throw ExitCode(128 + signal)
        }
        if let first = tally.failures.first {
            throw ConfigError("\(tally.failures.count) of \(tally.done) runs failed; first: \(first) (see its train.log; the same command resumes)")
        }
        return tally
    }

    /// Keeps the summary in OUTPUT/crossval.json and prints it.
    func finish(_ summary: CrossValidationSummary) throws {
        try AtomicFile.write(JSONLines.encode(summary) + "\n", to: output + "/crossval.json")
        if json { print(JSONLines.encode(summary)) } else { printText(summary) }
    }

    func printText(_ summary: CrossValidationSummary) {
        for s in summary.perSeed {
            print(String(format: "seed %d: clips %d/%d = %.1f%%, windows %.1f%%", s.seed, s.clipsRight, s.clips,
                         s.clipAccuracy * 100, s.windowAccuracy * 100))
        }
        print(String(format: "cross-validation (%d folds, %d seeds): clip accuracy %.1f%% ± %.1f (sd), windows %.1f%% ± %.1f",
                     summary.folds, summary.seeds.count, summary.clipAccuracy * 100, summary.clipAccuracySD * 100,
                     summary.windowAccuracy * 100, summary.windowAccuracySD * 100))
        if !summary.smoothedWindowAccuracy.isEmpty {
            let ks = summary.smoothedWindowAccuracy.indices.map {
                String(format: "%d: %.1f%% ± %.1f", $0 + 1, summary.smoothedWindowAccuracy[$0] * 100, summary.smoothedWindowAccuracySD[$0] * 100)
            }
            print("windows with the last k predictions averaged (live --smooth k), k = " + ks.joined(separator: ", "))
        }
    }

    /// What the runs report, under one lock.
    final class Tally: @unchecked Sendable {
        let lock = NSLock()
        var results: [Int: FoldResult] = [:], failures: [String] = [], done = 0

        /// A run's outcome, kept and said, and the progress (one run's lines at a time, in order).
        func add(_ outcome: Result<FoldResult, Failure>, index: Int, run: Run, folds: Int, progress: ProgressDisplay) {
            lock.lock(); defer { lock.unlock() }
            defer { progress.update(done: done) }   // (before the unlock: defers run last first)
            done += 1
            switch outcome {
            case .success(let r):
                results[index] = r
                note(String(format: "seed %d fold %d/%d: clips %d/%d (%.1f%%), windows %.1f%%", run.seed, run.fold, folds,
                            r.clipsRight, r.clips, 100 * Double(r.clipsRight) / Double(max(r.clips, 1)),
                            100 * Double(r.windowsRight) / Double(max(r.windows, 1))))
            case .failure(let e): failures.append("seed \(run.seed) fold \(run.fold): \(e.message)")
            }
        }
    }

    struct Failure: Error { var message: String }

    /// One fold of one seed, trained (or resumed) by a child `poseact train`.
    static func train(executable: String, config: String, data: String, seed: Int, fold: String,
                      folder: String) -> Result<FoldResult, Failure> {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let log = folder + "/train.log"
            let fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw ConfigError("\(log): cannot write (\(String(cString: strerror(errno)))); is it a link?") }
            let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
            defer { try? handle.close() }
            // What it prints goes to its train.log byte for byte (a log that cannot be written,
            // a full disk, costs the log, not the run); its last error line is its failure.
            var lastError: String?
            guard let status = try ChildProcess.run(executable, ["train", "--config", config, "--data", data, "--seed", String(seed),
                                                                 "--fold", fold, "--output", folder], bytes: { chunk in
                var rest = chunk
                while !rest.isEmpty {
                    let n = write(handle.fileDescriptor, rest.baseAddress, rest.count)
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { break }
                    rest = UnsafeRawBufferPointer(rebasing: rest[n...])
                }
            }, line: { line in
                if line.hasPrefix("Error") { lastError = line }
            }) else {
                return .failure(Failure(message: "not started: crossval is stopping"))
            }
            guard status == 0 else { return .failure(Failure(message: lastError ?? "exit \(status)")) }
            return result(in: folder, expecting: nil, labels: nil)
        } catch {
            return .failure(Failure(message: "\(error)"))
        }
    }

    /// A finished run's result: its test fold's evaluation. A run gathered by `--pool` may
    /// come from anyone who could write the folder: its fold holds at most `clips` clips
    /// (those with no window are not scored), of the store's `labels`.
    static func result(in folder: String, expecting clips: Int?, labels: Set<String>?) -> Result<FoldResult, Failure> {
        let path = folder + "/evaluation.json"
        let data: Data
        do { data = try InputFile.read(path, limit: 64 << 20, what: "evaluation report") } catch {
            return .failure(Failure(message: "\(error)"))
        }
        guard let report = try? JSONLines.decode(EvaluationReport.self, from: String(decoding: data, as: UTF8.self)) else {
            return .failure(Failure(message: "\(path): not an evaluation report"))
        }
        let shares = [report.clips.accuracy, report.windows.accuracy] + (report.smoothedWindowAccuracy ?? [])
        guard shares.allSatisfy({ (0...1).contains($0) }), report.clips.count >= 0, report.windows.count >= 0 else {
            return .failure(Failure(message: "\(path): counts or accuracies out of range"))
        }
        if let clips, report.clips.count > clips {
            return .failure(Failure(message: "\(path): \(report.clips.count) clips scored, but the fold holds \(clips)"))
        }
        if let labels, let stranger = report.clips.labels.first(where: { !labels.contains($0) }) {
            return .failure(Failure(message: "\(path): label '\(OneLine.excerpt(stranger))' is not one of the data's"))
        }
        return .success(FoldResult(report))
    }
}
