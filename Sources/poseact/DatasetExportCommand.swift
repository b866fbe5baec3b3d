import ArgumentParser
import Basics
import Foundation
import Keypoints

extension DatasetCommand {
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a keypoint store back out as the keypoint CSV that `poseact import` reads.",
            discussion: """
                One row per frame: clip,label,split,frame,width,height,time, then NAME_x,NAME_y,NAME_c \
                per joint (pixels from the top-left corner, empty x and y for a missing joint; \
                time in seconds of the clip's source). Importing the file gives the same clips, \
                frames, times and keypoints, to the 4 decimals written.
                """)
        @Argument(help: "A keypoint store (.h5).") var store: String
        @Option(help: "The CSV file to write.") var csv: String
        @Flag(help: "Print the summary as one JSON object on stdout.") var json = false

        func validate() throws {
            try OutputPaths.check(csv, flag: "--csv", inputs: [("the store", store)])
        }

        struct Summary: Encodable { var csv: String; var clips: Int; var rows: Int }

        func run() throws {
            let lock = try OutputPaths.lock(csv)
            defer { withExtendedLifetime(lock) {} }
            let keypoints = try KeypointStore(path: store)
            var bar: ProgressDisplay?
            if keypoints.entries.count > 50 { bar = ProgressDisplay(title: "export", total: keypoints.entries.count, unit: "clips") }
            let written = try KeypointCSV.export(keypoints, to: csv) { bar?.update(done: $0) }
            note("\(csv): \(written.clips) clips, \(written.rows) rows")
            if json { print(JSONLines.encode(Summary(csv: csv, clips: written.clips, rows: written.rows))) }
        }
    }
}
