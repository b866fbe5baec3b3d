import ArgumentParser
import Dataset
import Foundation

/// Warnings of the form "clip: what", grouped by what: one line for 100 clips at 25 fps.
func groupedWarnings(_ warnings: [String]) -> [String] {
    var groups: [String: [String]] = [:], order: [String] = []
    for w in warnings {
        guard let colon = w.range(of: ": ") else { order.append(w); groups[w, default: []].append(""); continue }
        let clip = String(w[..<colon.lowerBound]), what = String(w[colon.upperBound...])
        if groups[what] == nil { order.append(what) }
        groups[what, default: []].append(clip)
    }
    return order.map { what in
        let clips = groups[what]!.filter { !$0.isEmpty }
        if clips.count <= 1 { return clips.first.map { "\($0): \(what)" } ?? what }
        let examples = clips.prefix(3).joined(separator: ", ")
        return "\(clips.count) clips: \(what) (\(examples)\(clips.count > 3 ? ", …" : ""))"
    }
}

/// Prints problems with the input data, one line each, to stderr.
func report(_ problems: [DataProblem]) {
    for p in problems { FileHandle.standardError.write(Data("problem: \(p)\n".utf8)) }
}

struct Extract: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Extract body keypoints from labeled clips into a keypoint store (HDF5).",
        discussion: """
            SOURCE is a folder of labeled clips, as Create ML takes them: <label>/*.mp4 folders \
            (optionally under train/, validation/, test/), or <label>.<n>.mp4 files, or any \
            videos with --annotations FILE (CSV or JSON rows video,label[,start,end]; times as \
            3, 3.14, 01:03, 01:03.14 or 05:01:03).

            Every clip is resampled to --fps and posed with BlazePose; the prominent person's 33 \
            landmarks are stored per frame (frames without a person kept as missing). Bad data \
            is reported and the good clips still go in. The run is resumable: finished clips are \
            kept in STORE.h5.partial/, so a run that was stopped (even killed) continues where it \
            was when started again with the same options. --shard i/n extracts every n-th clip \
            from the i-th (0-based), for n machines; `poseact merge` joins their stores.
            """)

    @Argument(help: "The dataset folder.") var source: String
    @Option(name: .shortAndLong, help: "The keypoint store to write (.h5).") var output: String
    @Option(help: "Annotation file (CSV or JSON): video,label and optional start,end.") var annotations: String?
    @Option(parsing: .unconditional, help: "Frame rate every clip is resampled to (the model's).") var fps: Double = 30
    @Option(parsing: .unconditional, help: "People tracked per frame (the prominent one is stored).") var maxPeople = 2
    @Option(parsing: .unconditional, help: "Clips extracted at once.") var jobs = 2
    @Option(parsing: .unconditional, help: "Threads per model inference within a job.") var threads = 1
    @Option(help: "Extract shard i of n (0-based), e.g. 0/4.") var shard: String?
    @Option(help: "Folder with the .tflite files.") var models: String?
    @Flag(help: "Print the summary as one JSON object on stdout.") var json = false

    func parsedShard() throws -> (Int, Int) {
        guard let shard else { return (0, 1) }
        let parts = shard.split(separator: "/").compactMap { Int($0) }
        guard parts.count == 2, parts[1] >= 1, parts[0] >= 0, parts[0] < parts[1] else {
            throw ValidationError("--shard takes i/n with 0 ≤ i < n, e.g. 0/4 (got '\(shard)')")
        }
        return (parts[0], parts[1])
    }

    func validate() throws {
        try validateFPS(fps)
        guard jobs >= 1, threads >= 1, maxPeople >= 1 else { throw ValidationError("--jobs, --threads and --max-people must be at least 1") }
        _ = try parsedShard()
        guard output.hasSuffix(".h5") || output.hasSuffix(".hdf5") else { throw ValidationError("--output should be an .h5 file (got '\(output)')") }
        try OutputPaths.check(output, flag: "--output", inputs: [("the dataset folder", source)] + (annotations.map { [("--annotations", $0)] } ?? []))
    }

    func run() throws {
        let listing = try DatasetSources.scan(source, annotations: annotations)
        report(listing.problems)
        let dir = try PoseModels.directory(models)
        var options = ExtractOptions()
        options.fps = fps; options.maxPeople = maxPeople; options.jobs = jobs; options.threads = threads
        (options.shardIndex, options.shardCount) = try parsedShard()
        let extractor = try Extractor(detectorPath: dir.appendingPathComponent(PoseModels.detector).path,
                                      landmarkPath: dir.appendingPathComponent(PoseModels.landmark).path, options: options)
        let clips = extractor.shard(listing.clips)
        let display = ProgressDisplay(title: "extract", total: clips.count, unit: "clips")
        let summary = try extractor.run(listing.clips, output: output) { p in display.update(done: p.done, detail: p.lastClip) }
        for w in groupedWarnings(summary.warnings) { FileHandle.standardError.write(Data("warning: \(w)\n".utf8)) }
        let person = summary.frames > 0 ? 100 * Double(summary.framesWithPerson) / Double(summary.frames) : 0
        var lines = [String(format: "%@: %d clips stored (%d frames, a person in %.1f%%) in %@; %d extracted now, %d from an earlier run, %d skipped, %d data problems",
                            output, summary.stored, summary.frames, person, ProgressDisplay.duration(summary.seconds),
                            summary.extracted, summary.resumed, summary.skipped.count, listing.problems.count)]
        for s in summary.skipped { lines.append("  skipped \(s.id): \(s.reason)") }
        FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        if json {
            let object: [String: Any] = [
                "output": output, "clips": summary.clips, "stored": summary.stored, "extracted": summary.extracted,
                "resumed": summary.resumed, "frames": summary.frames, "frames_with_person": summary.framesWithPerson,
                "seconds": summary.seconds, "frames_per_second": summary.seconds > 0 ? Double(summary.frames) / summary.seconds : 0,
                "skipped": summary.skipped.map { ["id": $0.id, "reason": $0.reason] },
                "problems": listing.problems.map { p -> [String: Any] in var o: [String: Any] = ["file": p.file, "message": p.message]; if let r = p.row { o["row"] = r }; return o },
                "warnings": summary.warnings,
            ]
            print(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
        }
        if summary.stored == 0 { throw ExitCode(1) }
    }
}

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

    func run() throws {
        let result = try KeypointCSV.read(file, fps: fps)
        report(result.problems)
        guard !result.clips.isEmpty else { throw DatasetError("\(file): no usable row, so no clip to import (nothing written)") }
        let writer = try KeypointStoreWriter(path: output, attributes: ["created_by": "poseact import", "source": file])
        do { for clip in result.clips { try writer.append(clip) }; try writer.finish() } catch { writer.abandon(); throw error }
        let frames = result.clips.reduce(0) { $0 + $1.frameCount }
        let labels = Set(result.clips.map(\.label)).count
        FileHandle.standardError.write(Data("\(output): \(result.clips.count) clips, \(frames) frames, \(labels) labels imported; \(result.problems.count) data problems\n".utf8))
        if json {
            let object: [String: Any] = ["output": output, "clips": result.clips.count, "frames": frames, "labels": labels,
                                         "problems": result.problems.map(\.description)]
            print(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
        }
    }
}

struct Merge: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Join keypoint stores (e.g. the shards of an extraction) into one.")
    @Argument(help: "Keypoint stores.") var stores: [String]
    @Option(name: .shortAndLong, help: "The store to write.") var output: String
    func validate() throws {
        try OutputPaths.check(output, flag: "--output", inputs: stores.map { ("a store to merge", $0) })
    }
    func run() throws {
        let n = try KeypointStore.merge(stores, into: output)
        FileHandle.standardError.write(Data("\(output): \(n) clips from \(stores.count) stores\n".utf8))
    }
}

struct DatasetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dataset", abstract: "Look at keypoint stores before training.", subcommands: [Inspect.self])

    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Clips and frames per label and split, and the warnings to read before training.")
        @Argument(help: "A keypoint store (.h5).") var store: String
        @Option(parsing: .unconditional, help: "The training window, in frames, to flag clips shorter than it.") var window = 32
        @Flag(help: "Print one JSON object instead of text.") var json = false
        func run() throws {
            let report = try DatasetReport(store: KeypointStore(path: store), window: window)
            print(json ? report.json() : report.text())
        }
    }
}
