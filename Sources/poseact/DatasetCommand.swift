import ArgumentParser

struct DatasetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dataset", abstract: "Look at keypoint stores before training.", subcommands: [Inspect.self])
}
