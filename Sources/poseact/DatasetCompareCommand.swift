import ArgumentParser
import Basics
import Keypoints

extension DatasetCommand {
    struct Compare: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check that two keypoint stores hold the same clips, bit for bit (e.g. one machine's and the merged tasks').",
            discussion: """
                Compares ids, labels, splits, ranges, frame sizes, times, keypoints, world landmarks \
                and the models that made them; where each clip's video was and the stores' own \
                attributes may differ. Prints the first differences and exits 1, or one line and 0.
                """)
        @Argument(help: "A keypoint store (.h5).") var first: String
        @Argument(help: "Another keypoint store (.h5).") var second: String

        func run() throws {
            let a = try KeypointStore(path: first), b = try KeypointStore(path: second)
            let differences = try StoreComparison.differences(a, b)
            guard differences.isEmpty else {
                for d in differences { note(d) }
                note("\(first) and \(second) differ (the first \(differences.count) differences above)")
                throw ExitCode(1)
            }
            print("\(first) and \(second): the same \(a.entries.count) clips, bit for bit")
        }
    }
}
