import ArgumentParser
import Dataset
import Foundation
import JSONLines

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import keypoints other tools made (CSV) into a keypoint store.",
        discussion: """
            The CSV has one row per frame: clip,label,split,frame,width,height, then NAME_x,NAME_y,NAME_c \
            for each joint (pixels, origin top-left; empty x/y for a missing joint), as \
            shared/data/penn-action/keypoints.csv. Joints are mapped by name.
            """)
    @Argument(help: "The keypoint CSV file.") var file: String
    @Option(name: .shortAndLong, help: "The keypoint store to write (.h5).") var output: String
    @Option(parsing: .unconditional, help: "Frame rate of the rows, when the CSV has no time column.") var fps: Double = 30
    @Flag(help: "Print the summary as one JSON object on stdout.") var json = false

    func validate() throws {
        try validateFPS(fps)
        try OutputPaths.check(output, flag: "--output", inputs: [("the CSV file", file)])
    }

    /// `import --json`.
    struct Summary: Encodable {
        var output: String
        var clips: Int, frames: Int, labels: Int
        var problems: [String]
    }

    func run() throws {
        let result = try KeypointCSV.read(file, fps: fps)
        report(result.problems)
        guard !result.clips.isEmpty else { throw DatasetError("\(file): no usable row, so no clip to import (nothing written)") }
        let writer = try KeypointStoreWriter(path: output, attributes: ["created_by": "poseact import", "source": file])
        do { for clip in result.clips { try writer.append(clip) }; try writer.finish() } catch { writer.abandon(); throw error }
        let frames = result.clips.reduce(0) { $0 + $1.frameCount }
        let labels = Set(result.clips.map(\.label)).count
        note("\(output): \(result.clips.count) clips, \(frames) frames, \(labels) labels imported; \(result.problems.count) data problems")
        if json {
            print(JSONLines.encode(Summary(output: output, clips: result.clips.count, frames: frames, labels: labels,
                                           problems: result.problems.map(\.description))))
        }
    }
}
