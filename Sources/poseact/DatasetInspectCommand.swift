import ArgumentParser
import Basics
import Keypoints

extension DatasetCommand {
    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Clips and frames per label and split, and the warnings to read before training.")
        @Argument(help: "A keypoint store (.h5).") var store: String
        @Option(parsing: .unconditional, help: "The training window, in frames, to flag clips shorter than it.") var window = 32
        @Flag(help: "Print one JSON object instead of text.") var json = false

        func validate() throws {
            guard window >= 1 else { throw ValidationError("--window must be at least 1 frame (got \(window))") }
        }

        func run() throws {
            let report = try DatasetReport(store: KeypointStore(path: store), window: window)
            print(json ? JSONLines.encode(report) : report.text())
        }
    }
}
