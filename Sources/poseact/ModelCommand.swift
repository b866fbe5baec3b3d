import ArgumentParser

struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model", abstract: "Look inside model files.", subcommands: [Inspect.self])
}
