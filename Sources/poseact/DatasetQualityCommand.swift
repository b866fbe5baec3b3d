import ArgumentParser
import Basics
import Classifier
import Keypoints
import KeypointWindows

extension DatasetCommand {
    struct Quality: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "How steady the keypoints are: jitter on still joints, a filter's lag, agreement with the mirror image.",
            discussion: """
                In torso lengths, raw and under each preprocessing.keypoint_filter: the mean \
                frame-to-frame acceleration of joints that are still or slow, the delay a filter \
                adds on moving joints, and, with --mirror, the mean distance to the same clips \
                extracted from their mirror image (poseact extract --mirror): how far the pose \
                model disagrees with itself when the person faces the other way.
                """)
        @Argument(help: "A keypoint store (.h5).") var store: String
        @Option(help: "The same clips extracted with extract --mirror.") var mirror: String?
        @Option(help: "Only the clips of this split.") var split: String?
        @Flag(help: "Print one JSON object instead of text.") var json = false

        func validate() throws {
            if let mirror, OutputPaths.sameFile(mirror, store) {
                throw ValidationError("--mirror \(mirror) is the store itself; give the same clips extracted with extract --mirror")
            }
        }

        func run() throws {
            let source = try KeypointStore(path: store)
            let entries = source.entries.filter { split == nil || $0.split == split }
            guard !entries.isEmpty else { throw ConfigError("\(store): no clips\(split.map { " of split '\($0)'" } ?? "")") }
            let clips = try entries.map { try source.read($0.id) }
            var mirrored: [String: ClipKeypoints]?
            if let mirror {
                let other = try KeypointStore(path: mirror)
                let ids = Set(other.entries.map(\.id))
                let shared = entries.filter { ids.contains($0.id) }
                guard !shared.isEmpty else { throw ConfigError("\(mirror): none of the clips of \(store): extract the same folder with --mirror") }
                mirrored = Dictionary(uniqueKeysWithValues: try shared.map { ($0.id, try other.read($0.id)) })
                // The store against itself would measure a perfect agreement that means nothing.
                if let plain = mirrored?.values.first(where: { !PoseSettings(estimator: $0.estimator).mirrored }) {
                    throw ConfigError("\(mirror): clip '\(OneLine.excerpt(plain.id))' was not extracted from the mirror image (its estimator is '\(OneLine.excerpt(plain.estimator))'): give the store extract --mirror wrote")
                }
            }
            let quality = KeypointQuality.measure(clips, mirrored: mirrored)
            print(json ? JSONLines.encode(quality) : quality.text(title: store + (split.map { " (\($0))" } ?? "")))
        }
    }
}
