import ArgumentParser
import Basics
import Foundation
import Keypoints

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import keypoints other tools made into a keypoint store.",
        discussion: """
            Formats (found from the input, or --format): \
            the keypoint CSV, one row per frame: clip,label,split,frame,width,height, then \
            NAME_x,NAME_y,NAME_c for each joint (pixels, origin top-left; empty x/y for a \
            missing joint), as Penn Action's keypoints.csv and `dataset export --csv` \
            write it; \
            OpenPose's per-frame JSON (a folder of *_keypoints.json per clip, BODY_25 or COCO-18; \
            needs --size); \
            COCO keypoint JSON (images as frames, annotations as people; MMPose, YOLO-pose); \
            MediaPipe pose landmarks (JSON: frames of 33 landmarks, normalised; --size unless \
            the file has width and height); \
            NTU RGB+D .skeleton files (Kinect's 25 joints in the colour camera's pixels). \
            Joints are mapped by name onto poseact's (BlazePose's, plus head, neck, root); \
            others keep their names. Where a frame holds several people, the largest is kept. \
            Clips other than CSV come one per input, or from a folder laid out as for \
            extract: [train|validation|test/]<label>/<clip>; an NTU file's action (A013) is \
            its label when no folder gives one.
            """)
    @Argument(help: "The keypoint CSV, or a clip or a folder of clips in another format.") var input: String
    @Option(name: .shortAndLong, help: "The keypoint store to write (.h5).") var output: String
    @Option(help: "The input's format: auto, csv, openpose, coco, mediapipe, ntu.") var format = "auto"
    @Option(help: "The label of a single clip (overrides the folders').") var label: String?
    @Option(help: ArgumentHelp("The picture's size, where the format does not say it (OpenPose, MediaPipe).", valueName: "WIDTHxHEIGHT"))
    var size: String?
    @Option(parsing: .unconditional, help: "Frame rate of the rows or frames, when they carry no times.") var fps: Double = 30
    @Flag(help: "Print the summary as one JSON object on stdout.") var json = false

    func validate() throws {
        try validateFPS(fps)
        guard format == "auto" || KeypointFormat(rawValue: format) != nil else {
            throw ValidationError("--format \(format): one of auto, \(KeypointFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        _ = try pictureSize()
        try OutputPaths.check(output, flag: "--output", inputs: [("the input", input)])
    }

    func pictureSize() throws -> (width: Int, height: Int)? {
        guard let size else { return nil }
        let parts = size.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0, w <= KeypointChecks.maxPixels, h <= KeypointChecks.maxPixels else {
            throw ValidationError("--size \(size): WIDTHxHEIGHT in pixels, e.g. 1920x1080")
        }
        return (w, h)
    }

    /// `import --json`.
    struct Summary: Encodable {
        var output: String
        var format: String
        var clips: Int, frames: Int, labels: Int
        var problems: [String]
    }

    func run() throws {
        let lock = try OutputPaths.lock(output)
        defer { withExtendedLifetime(lock) {} }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: input, isDirectory: &isFolder) else { throw DatasetError("\(input): no such file or folder") }
        // A folder of clips is read clip by clip, each in the format it is in.
        let asked = KeypointFormat(rawValue: format)
        let detected = isFolder.boolValue ? nil : try KeypointFormat.detect(input)
        // A file is what it is: --format that says otherwise is the mistake to name (a CSV
        // read "as NTU" would only be asked for a label).
        if let asked, let detected, asked != detected {
            throw DatasetError("\(input): \(detected.description), not --format \(asked.rawValue): leave --format out, or give --format \(detected.rawValue)")
        }
        let chosen = asked ?? detected
        var clips: [ClipKeypoints] = [], problems: [DataProblem] = []
        var formats: Set<String> = []
        if chosen == .csv {
            formats = ["csv"]
            let result = try KeypointCSV.read(input, fps: fps)
            clips = result.clips; problems = result.problems
            report(problems)
        } else {
            let (sources, unused) = try ForeignDataset.listing(input, label: label)
            for source in sources {
                if let asked, source.format != asked {
                    throw DatasetError("\(source.path): \(source.format.rawValue), not the --format \(asked.rawValue) asked")
                }
                formats.insert(source.format.rawValue)
            }
            let result = try ForeignKeypoints.read(sources, fps: fps, size: try pictureSize())
            clips = result.clips; problems = unused + result.problems
            report(problems)
        }
        guard !clips.isEmpty else { throw DatasetError("\(input): no usable row, so no clip to import (nothing written)") }
        let writer = try KeypointStoreWriter(path: output, attributes: ["created_by": "poseact import", "source": input, "source_format": formats.sorted().joined(separator: ",")])
        do { for clip in clips { try writer.append(clip) }; try writer.finish() } catch { writer.abandon(); throw error }
        let frames = clips.reduce(0) { $0 + $1.frameCount }
        let labels = Set(clips.map(\.label)).count
        note("\(output): \(clips.count) clips, \(frames) frames, \(labels) labels imported (\(formats.sorted().joined(separator: ", "))); \(problems.count) data problems")
        if json {
            print(JSONLines.encode(Summary(output: output, format: formats.sorted().joined(separator: ","), clips: clips.count, frames: frames, labels: labels,
                                           problems: problems.map(\.description))))
        }
    }
}
