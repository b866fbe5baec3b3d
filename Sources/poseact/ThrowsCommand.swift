import ArgumentParser

struct Throws: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "throws",
        abstract: "Render throw scenes with exact truth, and score --trajectories on them.",
        subcommands: [ThrowsRender.self, ThrowsScore.self])
}
