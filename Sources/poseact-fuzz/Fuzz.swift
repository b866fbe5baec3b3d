import ArgumentParser
import Foundation
import ReaderFuzzing

/// Fuzzes every reader of files from strangers: built with AddressSanitizer
/// (`notebooks-free-scripts/fuzz.sh`), a crash, a wild read or write, or a Swift check that
/// traps ends the run with the report; an error that is not one short line is counted too.
@main
struct Fuzz: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "poseact-fuzz",
        abstract: "Fuzz poseact's file readers (seeded, bounded) under AddressSanitizer.",
        subcommands: [MakeSeeds.self, Run.self])
}

struct MakeSeeds: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "seeds", abstract: "Write the good files fuzzing starts from.")
    @Option(help: "Folder to write the seeds into.") var out: String
    @Option(help: "A keypoint CSV (Penn Action's) to cut the store from.") var keypoints: String
    @Option(help: "The foreign-format samples (Tests/KeypointsTests/Samples).") var samples: String
    @Option(help: "A training config (configs/penn-action.yaml).") var config: String
    @Option(help: "The pose models' folder (the TFLite seeds).") var models: String?

    func run() throws {
        try Seeds.make(in: out, keypointCSV: keypoints, samples: samples, configYAML: config, models: models)
        print("seeds written to \(out)")
    }
}

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Fuzz the readers from the seeds.")
    @Option(help: "The seeds' folder.") var seeds: String
    @Option(name: .customLong("reader"), help: "Only these readers (repeatable); all by default.") var readers: [String] = []
    @Option(help: "Cases per reader.") var iterations = 200
    @Option(help: "Random seed: the same seed gives the same cases.") var seed: UInt64 = 1
    @Flag(help: "Print each case before it runs (to find the one that crashed).") var verbose = false

    func validate() throws {
        guard iterations > 0 else { throw ValidationError("--iterations must be at least 1") }
    }

    func run() throws {
        let all = try Readers.all(seeds: seeds)
        let unknown = Set(readers).subtracting(all.map(\.reader.name))
        guard unknown.isEmpty else {
            throw ValidationError("no reader \(unknown.sorted().joined(separator: ", ")); readers: \(all.map(\.reader.name).joined(separator: ", "))")
        }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-fuzz-\(getpid())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        var passed = 0, failed = 0, cases = 0   // readers without / with a violation
        for (index, (reader, seedFile)) in all.enumerated() where readers.isEmpty || readers.contains(reader.name) {
            let result = try Campaign.run(reader, seedFile: seedFile, iterations: iterations, seed: seed &+ UInt64(index),
                                          workDir: work, log: { if verbose { print("\(reader.name) \($0)"); fflush(stdout) } })
            cases += result.cases
            print("fuzz \(reader.name): \(result.summary)")
            for v in result.violations.prefix(5) { print("  \(v)") }
            if result.violations.isEmpty { passed += 1 } else { failed += 1 }
            fflush(stdout)
        }
        // Reaching this line means no case crashed (under ASan, any wild access would have).
        print("fuzz: \(cases) cases over \(passed + failed) readers, no crash; \(failed) reader(s) with errors that are not one line")
        if failed > 0 { throw ExitCode(1) }
    }
}
