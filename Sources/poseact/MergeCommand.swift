import ArgumentParser
import Foundation
import Keypoints

struct Merge: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Join keypoint stores (e.g. the shards of an extraction) into one.")
    @Argument(help: "Keypoint stores.") var stores: [String]
    @Option(name: .shortAndLong, help: "The store to write.") var output: String

    func validate() throws {
        guard !stores.isEmpty else { throw ValidationError("give the keypoint stores to merge") }
        try OutputPaths.check(output, flag: "--output", inputs: stores.map { ("a store to merge", $0) })
    }

    func run() throws {
        // A second run writing the same file is refused, not left to replace this one's.
        let lock = try OutputPaths.lock(output)
        defer { withExtendedLifetime(lock) {} }
        let n = try KeypointStore.merge(stores, into: output)
        note("\(output): \(n) clips from \(stores.count) stores")
    }
}
