import ArgumentParser

struct DatasetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dataset", abstract: "Look at keypoint stores before training, compare two, or write them out as CSV.", subcommands: [Inspect.self, Quality.self, Export.self, Compare.self])
}
