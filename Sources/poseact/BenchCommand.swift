import ArgumentParser

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Benchmarks of the hot paths, printing machine-readable JSON.",
        subcommands: [PeakBench.self, PoseModelsBench.self, PoseVideoBench.self, TrainBench.self, LiveBench.self])
}
