import ArgumentParser
import Basics
import Extraction
import Foundation
import Keypoints
import Pose

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
            from the i-th (0-based), for n machines; --shard auto takes i and n from an array \
            job (Slurm's SLURM_ARRAY_TASK_ID and _COUNT; with auto/n, a Kubernetes Indexed Job's \
            JOB_COMPLETION_INDEX or GNU parallel's PARALLEL_SEQ); `poseact merge` joins their \
            stores (recipes: docs/cluster.md).

            --cache DIR keeps every extracted clip in DIR by the video's content, the models and \
            the settings, and reuses it in any later run, under any name: several runs and \
            array tasks may share one folder.
            """)

    @Argument(help: "The dataset folder.") var source: String
    @Option(name: .shortAndLong, help: "The keypoint store to write (.h5).") var output: String
    @Option(help: "Annotation file (CSV or JSON): video,label and optional start,end.") var annotations: String?
    @Option(parsing: .unconditional, help: "Frame rate every clip is resampled to (the model's).") var fps: Double = 30
    // Not the pose pipeline's defaults: two jobs of one thread keep two cores busier than
    // one of two, and only the prominent person is stored.
    @Option(parsing: .unconditional, help: "People tracked per frame (the prominent one is stored).") var maxPeople = 2
    @Option(parsing: .unconditional, help: "Clips extracted at once.") var jobs = 2
    @Option(parsing: .unconditional, help: "Threads per model inference within a job.") var threads = 1
    @Flag(help: "Run the landmark model on each crop and its mirror image and average the two poses (twice the landmark work).")
    var mirrorAverage = false
    @Flag(help: "Every 10 frames, detect again and restart a track that has drifted from its person.") var redetect = false
    @Flag(help: "Pose every frame's mirror image and mirror the poses back (to measure the pose model's agreement with itself: dataset quality --mirror).")
    var mirror = false
    @Option(help: ArgumentHelp("Extract shard i of n (0-based), e.g. 0/4; auto (auto/n) reads it from an array job's variables.",
                               valueName: "i/n|auto")) var shard = TaskArgument("0/1")
    @Option(help: ArgumentHelp("Reuse clips extracted before (by content, models and settings) from this folder, and keep new ones there.",
                               valueName: "dir")) var cache: String?
    @OptionGroup var models: PoseModelsOption
    @Flag(help: "Print the summary as one JSON object on stdout.") var json = false

    func validate() throws {
        try validateFPS(fps)
        guard jobs >= 1, threads >= 1, maxPeople >= 1 else { throw ValidationError("--jobs, --threads and --max-people must be at least 1") }
        guard maxPeople <= PipelineOptions.mostPeople else { throw ValidationError("--max-people \(maxPeople): at most \(PipelineOptions.mostPeople)") }
        guard output.hasSuffix(".h5") || output.hasSuffix(".hdf5") else { throw ValidationError("--output should be an .h5 file (got '\(output)')") }
        _ = try shard.resolved(flag: "--shard")
        try OutputPaths.check(output, flag: "--output", inputs: [("the dataset folder", source)] + (annotations.map { [("--annotations", $0)] } ?? [])
                              + models.inputs)
    }

    /// `extract --json`.
    struct Summary: Encodable {
        var output: String
        var clips: Int, stored: Int, extracted: Int, cached: Int, resumed: Int
        var shard: String
        var frames: Int, framesWithPerson: Int
        var seconds: Double, framesPerSecond: Double
        var skipped: [SkippedClip]
        var problems: [DataProblem]
        var warnings: [String]
    }

    func run() throws {
        let listing = try DatasetSources.scan(source, annotations: annotations)
        report(listing.problems)
        var options = ExtractOptions()
        options.fps = fps; options.maxPeople = maxPeople; options.jobs = jobs; options.threads = threads
        let task = try shard.resolved(flag: "--shard")
        if task.count > 1 { note("extract: shard \(task)") }
        options.shardIndex = task.index; options.shardCount = task.count
        options.mirrorAverage = mirrorAverage; options.redetect = redetect; options.mirror = mirror
        let (detector, landmark) = try models.paths()
        let extractor = try Extractor(detectorPath: detector, landmarkPath: landmark, options: options)
        extractor.cache = try cache.map { try ExtractionCache(folder: $0) }
        let display = ProgressDisplay(title: "extract", total: extractor.shard(listing.clips).count, unit: "clips")
        let summary = try extractor.run(listing.clips, output: output) { p in display.update(done: p.done, detail: p.lastClip) }
        for w in ClipWarning.grouped(summary.warnings) { note("warning: \(w)") }
        let person = summary.frames > 0 ? 100 * Double(summary.framesWithPerson) / Double(summary.frames) : 0
        var lines = [String(format: "%@: %d clips stored (%d frames, a person in %.1f%%) in %@; %d extracted now%@, %d from an earlier run, %d skipped, %d data problems",
                            output, summary.stored, summary.frames, person, ProgressDisplay.duration(summary.seconds),
                            summary.extracted, cache == nil ? "" : " (\(summary.cached) from the cache)", summary.resumed, summary.skipped.count, listing.problems.count)]
        for s in summary.skipped { lines.append("  skipped \(s.id): \(s.reason)") }
        note(lines.joined(separator: "\n"))
        if json {
            print(JSONLines.encode(Summary(
                output: output, clips: summary.clips, stored: summary.stored, extracted: summary.extracted, cached: summary.cached, resumed: summary.resumed, shard: "\(options.shardIndex)/\(options.shardCount)",
                frames: summary.frames, framesWithPerson: summary.framesWithPerson, seconds: summary.seconds,
                framesPerSecond: summary.seconds > 0 ? Double(summary.frames) / summary.seconds : 0,
                skipped: summary.skipped, problems: listing.problems, warnings: summary.warnings.map(\.description))))
        }
        if summary.stored == 0 { throw ExitCode(1) }
    }
}

/// Prints problems with the input data, one line each, to stderr.
func report(_ problems: [DataProblem]) {
    for p in problems { note("problem: \(p)") }
}
