import Basics
import Foundation
import Hummingbird
import Keypoints
import NIOCore
import PageServing

/// `poseact studio`: one page, served by a `PageServer` like the live page, over a project
/// folder (`StudioProject`), that takes a user from a folder of videos to a model on their
/// camera. Every action runs the poseact command it stands for, as a child process in the
/// project folder (`StudioJobs`), and the page shows that command line: the page teaches the
/// CLI, and what it makes is what the command makes.
///
///   GET  /                 the page (Resources/studio.*), with the state of the moment
///   GET  /state.json       the project and the jobs, for scripts
///   GET  /ws               a WebSocket: the state, each time it changes (as the live page's)
///   POST /api/ACTION       an action (JSON body): sources, extract, inspect, train, resume,
///                          crossval, stop, evaluate, export, label-video, poses, propose,
///                          labels, preview, camera
///   GET  /data/clips, /data/clip?id=, /data/poses?video=, /data/proposals?video=,
///        /data/labels?video=, /data/preview?video=   what the views draw
///   POST /api/upload?name= a video dropped on the page (streamed to videos/, bounded)
///   GET  /media?path=      a video the project knows (byte ranges, for seeking)
///   GET  /report/RUN/FILE  a run's evaluation report
///   GET  /download?file=   an export
public final class Studio: @unchecked Sendable {
    public let project: StudioProject
    public let jobs: StudioJobs
    let recipes: String?
    let signal = ChangeSignal()
    private let lock = NSLock()
    /// studio.json is read, changed and written under it (two requests at once lose nothing).
    private let settingsLock = NSLock()
    /// Per source folder: what `extract` would find in it (scanned when the studio starts and when added).
    private var scans: [String: SourceScan] = [:]
    /// Videos the label view was given (absolute paths), besides the sources' and the uploads.
    private var labelVideos: [String] = []
    private var server: PageServer!

    public var url: String { server.url }
    public var port: Int { server.port }
    public var access: PageAccess { server.access }
    public var feeds: FeedCount { server.feeds }

    /// What the page may send besides uploads, and uploads.
    public static let bodyBytes = 1 << 20
    public var uploadBytes = 4 << 30

    /// `executable`: poseact itself, which runs the commands; `recipes`: the folder of the
    /// shipped training configs, if found.
    public init(project: StudioProject, executable: String, recipes: String?, host: String = "127.0.0.1", port: Int,
                names: [String] = [], limits: PageLimits = PageLimits()) throws {
        self.project = project
        self.recipes = recipes
        jobs = StudioJobs(executable: executable, signal: signal)
        for source in try project.sources() { scans[source.folder] = SourceScan(source) }
        labelVideos = try project.labelVideos()
        let feed = StudioFeed(studio: self)
        // The token even on loopback: the page runs commands and serves the user's videos,
        // which the machine's other users must not reach.
        server = try PageServer(host: host, port: port, names: names, limits: limits, tokenOnLoopback: true, feed: feed) { [unowned self] router, access in
            self.addRoutes(router, access: access)
        }
    }

    public func stop() { server.stop() }

    // MARK: - State

    /// What the page shows, as JSON.
    struct State: Encodable {
        struct Run: Encodable {
            let name: String, hasModel: Bool, hasCheckpoint: Bool, hasReport: Bool, config: String?
            /// metrics.json's epochs, as train wrote them.
            let history: [[String: Double]]
        }
        struct Recipe: Encodable { let name: String, text: String }
        let project: String
        let sources: [SourceScan]
        let store: Bool
        let recipes: [Recipe]
        let runs: [Run]
        let crossvals: [String]
        let labelVideos: [String]
        let uploads: [String]
        let exports: [String]
        let labels: [String]
        let jobs: [StudioJob]
    }

    func state() -> State {
        let runs = project.entries("runs", folders: true).map { name -> State.Run in
            let folder = "runs/\(name)"
            func exists(_ file: String) -> Bool { FileManager.default.fileExists(atPath: project.path(folder + "/" + file)) }
            let config = (try? StudioProject.smallRegularFile(project.path(folder + "/config.yaml"), limit: 1 << 16))?.flatMap { String(data: $0, encoding: .utf8) }
            return State.Run(name: name, hasModel: exists("model.poseact.h5"), hasCheckpoint: exists("checkpoint.h5"),
                             hasReport: exists("report/index.html"), config: config, history: Self.history(project.path(folder + "/metrics.json")))
        }
        let recipeList: [State.Recipe] = recipes.map { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".yaml") }.sorted().compactMap { file in
                let text = (try? StudioProject.smallRegularFile(folder + "/" + file, limit: 1 << 16))?.flatMap { String(data: $0, encoding: .utf8) }
                return text.map { State.Recipe(name: String(file.dropLast(5)), text: $0) }
            }
        } ?? []
        let (scanList, labelList) = lock.withLock { (scans.values.sorted { $0.folder < $1.folder }, labelVideos) }
        return State(project: project.folder, sources: scanList, store: FileManager.default.fileExists(atPath: project.path(StudioProject.store)),
                     recipes: recipeList, runs: runs, crossvals: project.entries("crossval", folders: true),
                     labelVideos: labelList, uploads: project.entries("videos", folders: false).map { "videos/\($0)" },
                     exports: project.entries("exports", folders: false), labels: project.entries("labels", folders: false), jobs: jobs.all)
    }

    /// A run's epochs so far, from its metrics.json (each epoch's numbers; a missing
    /// validation figure is null there, and left out here).
    static func history(_ path: String) -> [[String: Double]] {
        guard let data = try? StudioProject.smallRegularFile(path, limit: 4 << 20),
              let epochs = try? JSONLines.decode([[String: Double?]].self, from: data) else { return [] }
        return epochs.map { $0.compactMapValues { $0 } }
    }

    func stateJSON() -> Data { Data(JSONLines.encode(state()).utf8) }

    // MARK: - Videos the page may play

    /// The videos the project knows: its sources' clips, the label view's videos, the uploads.
    func knownVideos() -> Set<String> {
        var videos = Set(project.entries("videos", folders: false).map { project.path("videos/" + $0) })
        lock.withLock {
            for scan in scans.values { videos.formUnion(scan.videos) }
            videos.formUnion(labelVideos)
        }
        return videos
    }

    /// An absolute, standardised path for a path the page names (relative: to the project).
    func absolute(_ path: String) -> String {
        (path.hasPrefix("/") ? URL(fileURLWithPath: path) : URL(fileURLWithPath: project.path(path))).standardizedFileURL.path
    }

    /// A video the page names, if the project knows it, has a video's extension (an
    /// annotation file may name any file) and is a regular file.
    func knownVideo(_ path: String?) throws -> String {
        guard let path, !path.isEmpty else { throw StudioProject.ProjectError("no video given") }
        let full = absolute(path)
        guard StudioProject.isVideo(full), knownVideos().contains(full) else { throw StudioProject.ProjectError("\(path): not a video of this project; add it first (Data or Label)") }
        var status = stat()
        guard stat(full, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { throw StudioProject.ProjectError("\(path): not a readable video file") }
        return full
    }

    /// How the commands name a video: relative to the project when inside it.
    func commandPath(_ full: String) -> String {
        guard full.hasPrefix(project.folder + "/") else { return full }
        let relative = String(full.dropFirst(project.folder.count + 1))
        return relative.hasPrefix("-") ? "./" + relative : relative   // (never read as a flag)
    }

    // MARK: - Actions

    /// An action's JSON body (every field optional; each action says which it needs).
    struct Action: Decodable {
        var folder: String?, annotations: String?
        var recipe: String?, name: String?, run: String?
        var epochs: Int?, model: String?, learningRate: Double?, window: Int?, seed: Int?, batchSize: Int?, restart: Bool?
        var folds: Int?, seeds: String?
        var format: String?, video: String?, device: String?, job: Int?
        var segments: [Segment]?
        struct Segment: Decodable { var label: String, start: Double, end: Double }
    }

    /// What the page can ask for (POST /api/NAME), each one method below.
    enum ActionName: String {
        case sources, extract, inspect, train, resume, crossval, stop, evaluate, export
        case labelVideo = "label-video", poses, propose, labels, enroll, preview, camera
    }

    /// Does what the page asked; the answer's JSON (`{}` unless the action has one).
    func perform(_ action: String, _ body: Action) throws -> Data {
        guard let name = ActionName(rawValue: action) else { throw StudioProject.ProjectError("\(action): no such action") }
        switch name {
        case .sources: try addSource(body)
        case .extract: try start("extract", "keypoints.h5", extractCommands())
        case .inspect: try start("inspect", "keypoints.h5", [StudioCommand(["dataset", "inspect", StudioProject.store, "--json"])])
        case .train: try train(body)
        case .resume: try resume(body)
        case .crossval: try crossval(body)
        case .stop:
            guard let id = body.job else { throw StudioProject.ProjectError("stop: give the job's number") }
            jobs.stop(id)
        case .evaluate: try evaluate(body)
        case .export: try export(body)
        case .labelVideo: try addLabelVideo(body)
        case .poses: try findPoses(body)
        case .propose: try propose(body)
        case .labels: return try saveLabels(body)
        case .enroll: try enroll(body)
        case .preview: try preview(body)
        case .camera: try camera(body)
        }
        return Data("{}".utf8)
    }

    /// A folder of labeled clips (and its annotation file), scanned as extract will.
    func addSource(_ body: Action) throws {
        guard let folder = body.folder, !folder.isEmpty else { throw StudioProject.ProjectError("give a folder of labeled clips") }
        let source = StudioProject.Source(folder: absolute(folder), annotations: body.annotations.flatMap { $0.isEmpty ? nil : absolute($0) })
        try settingsLock.withLock { try project.add(source) }
        let scan = SourceScan(source)
        lock.withLock { scans[source.folder] = scan }
        signal.changed()
    }

    /// `train` from a recipe, with the keys the page changed.
    func train(_ body: Action) throws {
        let name = try runName(body.name)
        let recipe = try recipePath(body.recipe)
        var arguments = ["train", "--config", recipe, "--data", StudioProject.store, "--output", "runs/\(name)", "--json"]
        arguments += overrides(body)
        if body.restart == true { arguments.append("--restart") }
        try start("train", name, [StudioCommand(arguments)])
    }

    /// `train` again on the run's own config.yaml (its recipe with the keys the page changed):
    /// the checkpoint's run goes on as `poseact train` would have.
    func resume(_ body: Action) throws {
        let name = try runName(body.name)
        guard FileManager.default.fileExists(atPath: project.path("runs/\(name)/config.yaml")) else {
            throw StudioProject.ProjectError("runs/\(name): no run to resume; start it from a recipe")
        }
        try start("train", name, [StudioCommand(["train", "--config", "runs/\(name)/config.yaml", "--data", StudioProject.store,
                                                 "--output", "runs/\(name)", "--json"])])
    }

    /// `crossval` from a recipe; folds and seeds are bounded by crossval's own checks, as the
    /// overrides are by train's.
    func crossval(_ body: Action) throws {
        let name = try runName(body.name)
        var arguments = ["crossval", "--config", try recipePath(body.recipe), "--data", StudioProject.store, "--output", "crossval/\(name)", "--json"]
        if let folds = body.folds { arguments.append("--folds=\(folds)") }
        if let seeds = body.seeds, !seeds.isEmpty { arguments.append("--seeds=\(seeds)") }
        arguments += overrides(body)
        try start("crossval", name, [StudioCommand(arguments)])
    }

    func evaluate(_ body: Action) throws {
        let run = try existingRun(body.run)
        try start("evaluate", run, [StudioCommand(["evaluate", "runs/\(run)", "--data", StudioProject.store, "--report", "runs/\(run)/report", "--json"])])
    }

    /// The run's model as a weights file or ONNX, into exports/.
    func export(_ body: Action) throws {
        let run = try existingRun(body.run)
        let file = body.format == "onnx" ? "exports/\(run).onnx" : "exports/\(run).poseact.h5"
        try start("export", run, [StudioCommand(["export", "runs/\(run)", "--output", file])])
    }

    /// An untrimmed video for the Label view (kept in the project's settings).
    func addLabelVideo(_ body: Action) throws {
        guard let video = body.video, !video.isEmpty else { throw StudioProject.ProjectError("give a video file to label") }
        let full = absolute(video)
        try settingsLock.withLock { try project.addLabelVideo(full) }
        lock.withLock { if !labelVideos.contains(full) { labelVideos.append(full) } }
        signal.changed()
    }

    /// `pose` on a video, into poses/NAME.jsonl, for its skeleton in the Label view.
    func findPoses(_ body: Action) throws {
        let video = try knownVideo(body.video)
        try start("poses", commandPath(video), [StudioCommand(["pose", commandPath(video), "--max-people", "1"],
                                                              stdout: "poses/\(StudioProject.safeName(video)).jsonl")])
    }

    /// `annotate` with a run's model: the segments it proposes for a video.
    func propose(_ body: Action) throws {
        let video = try knownVideo(body.video), run = try existingRun(body.run)
        try start("propose", commandPath(video), [StudioCommand(["annotate", commandPath(video), "--model", "runs/\(run)",
                                                                 "--timeline", "proposals/\(StudioProject.safeName(video)).json"])])
    }

    /// The Label view's segments as Create ML's annotation file, labels/NAME.csv.
    func saveLabels(_ body: Action) throws -> Data {
        let video = try knownVideo(body.video)
        let file = "labels/\(StudioProject.safeName(video)).csv"
        try AtomicFile.write(try Self.annotationCSV(video: video, segments: body.segments ?? []), to: project.path(file))
        signal.changed()
        struct Saved: Encodable { let file: String, folder: String }
        return Data(JSONLines.encode(Saved(file: file, folder: URL(fileURLWithPath: video).deletingLastPathComponent().path)).utf8)
    }

    /// The Label view's saved segments of a video added to a run's labels without training:
    /// `extract --annotations` of its labels file, then `enroll` of those clips into
    /// exports/RUN-VIDEO.poseact.h5 (the run itself unchanged).
    func enroll(_ body: Action) throws {
        let video = try knownVideo(body.video), run = try existingRun(body.run)
        let name = StudioProject.safeName(video), labels = "labels/\(name).csv", store = "parts/enroll-\(name).h5"
        guard FileManager.default.fileExists(atPath: project.path(labels)) else {
            throw StudioProject.ProjectError("\(labels): no saved segments of this video yet; label some and save them first")
        }
        let folder = commandPath(URL(fileURLWithPath: video).deletingLastPathComponent().path)
        try start("enroll", run, [
            StudioCommand(["extract", folder, "--annotations", labels, "--output", store, "--cache", "cache"]),
            StudioCommand(["enroll", "runs/\(run)", "--data", store, "--output", "exports/\(run)-\(name).poseact.h5"]),
        ])
    }

    /// `annotate --json` with a run's model and the push-up angles, for the Preview view.
    func preview(_ body: Action) throws {
        let video = try knownVideo(body.video), run = try existingRun(body.run)
        try start("preview", commandPath(video), [StudioCommand(["annotate", commandPath(video), "--model", "runs/\(run)",
                                                                 "--angles", "left_elbow,right_elbow,body_line", "--json"],
                                                                stdout: "previews/\(StudioProject.safeName(video)).json")])
    }

    /// `live` on a camera with a run's model, its own page served.
    func camera(_ body: Action) throws {
        let run = try existingRun(body.run)
        let device = body.device ?? "/dev/video0"
        guard device.hasPrefix("/dev/video"), device.count > 10, device.dropFirst(10).allSatisfy(\.isNumber) else {
            throw StudioProject.ProjectError("\(device): a camera is /dev/videoN")
        }
        try start("camera", device, [StudioCommand(["live", "--camera", device, "--model", "runs/\(run)", "--serve", "0"])])
    }

    private func start(_ action: String, _ subject: String, _ commands: [StudioCommand]) throws {
        try jobs.start(action: action, subject: subject, commands: commands)
    }

    /// `extract` for every source, into keypoints.h5 (one source) or one store each, merged.
    /// A stopped extraction goes on where it stopped when started again (extract's journal);
    /// the cache keeps every clip extracted once.
    func extractCommands() throws -> [StudioCommand] {
        let sources = try project.sources()
        guard !sources.isEmpty else { throw StudioProject.ProjectError("no data yet: add a folder of labeled clips first") }
        func extract(_ source: StudioProject.Source, _ output: String) -> StudioCommand {
            StudioCommand(["extract", source.folder, "--output", output, "--cache", "cache"]
                          + (source.annotations.map { ["--annotations", $0] } ?? []))
        }
        var commands: [StudioCommand]
        if sources.count == 1 {
            commands = [extract(sources[0], StudioProject.store)]
        } else {
            let parts = sources.indices.map { "parts/\($0 + 1).h5" }
            commands = zip(sources, parts).map { extract($0, $1) } + [StudioCommand(["merge"] + parts + ["--output", StudioProject.store])]
        }
        return commands + [StudioCommand(["dataset", "inspect", StudioProject.store, "--json"])]
    }

    func runName(_ name: String?) throws -> String {
        guard let name, StudioProject.isName(name) else {
            throw StudioProject.ProjectError("a run's name: 1 to 64 letters, digits, '.', '-' or '_' (not starting with '.')")
        }
        return name
    }

    func existingRun(_ name: String?) throws -> String {
        let run = try runName(name)
        guard FileManager.default.fileExists(atPath: project.path("runs/\(run)/model.poseact.h5")) else {
            throw StudioProject.ProjectError("runs/\(run): no model yet; train it first")
        }
        return run
    }

    func recipePath(_ name: String?) throws -> String {
        guard let recipes else { throw StudioProject.ProjectError("the shipped configs were not found; reinstall poseact") }
        guard let name, StudioProject.isName(name), FileManager.default.fileExists(atPath: recipes + "/\(name).yaml") else {
            throw StudioProject.ProjectError("\(name ?? ""): no such recipe")
        }
        return recipes + "/\(name).yaml"
    }

    /// The recipe's keys the page lets a user change, as `train`'s flags. Their bounds are
    /// `train`'s own (the config's checks): a value out of bounds is refused by the command
    /// the job runs, in its own words, never by a second set of numbers here. Each flag is
    /// one argument, `--name=value`, so no value (a negative number, say) reads as a flag.
    func overrides(_ body: Action) -> [String] {
        var flags: [String] = []
        if let e = body.epochs { flags.append("--epochs=\(e)") }
        if let m = body.model, !m.isEmpty { flags.append("--model=\(m)") }
        if let r = body.learningRate { flags.append("--learning-rate=\(r)") }
        if let w = body.window { flags.append("--window=\(w)") }
        if let s = body.seed { flags.append("--seed=\(s)") }
        if let b = body.batchSize { flags.append("--batch-size=\(b)") }
        return flags
    }

    /// Create ML's annotation file for one video: video,label,start,end, the video named as
    /// `extract --annotations` finds it in its folder (the file's name).
    static func annotationCSV(video: String, segments: [Action.Segment]) throws -> String {
        guard segments.count <= 10_000 else { throw StudioProject.ProjectError("more than 10,000 segments") }
        let name = URL(fileURLWithPath: video).lastPathComponent
        let rows = try segments.sorted { $0.start < $1.start }.map { s -> [String] in
            let label = s.label.trimmingCharacters(in: .whitespaces)
            guard !label.isEmpty, label.count <= 100, !label.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }) else {
                throw StudioProject.ProjectError("a label is 1 to 100 printable characters")
            }
            guard s.start.isFinite, s.end.isFinite, s.start >= 0, s.end > s.start else {
                throw StudioProject.ProjectError("a segment ends after it starts (\(s.start) to \(s.end) s)")
            }
            return [name, label, String(format: "%.2f", s.start), String(format: "%.2f", s.end)]
        }
        return CSV.text(header: ["video", "label", "start", "end"], rows: rows)
    }
}

/// What `extract` would find in a source, as the data view shows it before extraction:
/// clips per label and split, and what it could not use (`DatasetSources.scan`).
struct SourceScan: Encodable, Sendable {
    let folder: String
    let annotations: String?
    var clips = 0
    /// label → split ("" when none) → clips
    var labels: [String: [String: Int]] = [:]
    var problems: [String] = []
    var error: String?
    var videos: Set<String> = []

    enum CodingKeys: String, CodingKey { case folder, annotations, clips, labels, problems, error, videos }

    init(_ source: StudioProject.Source) {
        folder = source.folder
        annotations = source.annotations
        do {
            let listing = try DatasetSources.scan(source.folder, annotations: source.annotations)
            clips = listing.clips.count
            for clip in listing.clips {
                labels[clip.label, default: [:]][clip.split ?? "", default: 0] += 1
                videos.insert(URL(fileURLWithPath: clip.video).standardizedFileURL.path)
            }
            problems = listing.problems.prefix(100).map(\.description)
        } catch {
            self.error = "\(error)"
        }
    }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(folder, forKey: .folder); try c.encodeIfPresent(annotations, forKey: .annotations)
        try c.encode(clips, forKey: .clips); try c.encode(labels, forKey: .labels); try c.encode(problems, forKey: .problems)
        try c.encodeIfPresent(error, forKey: .error); try c.encode(videos.sorted(), forKey: .videos)
    }
}

/// The studio's WebSocket: the whole state, each time something changed.
struct StudioFeed: PageFeed {
    let studio: Studio
    var sendsText: Bool { true }

    func nextUpdate(after seen: Int) async -> (sequence: Int, payload: Data)? {
        while !Task.isCancelled {
            if studio.signal.sequence > seen {
                // A command's lines come in bursts: a fifth of a second gathers them into one
                // state, so a page gets at most five a second however fast they come. (Its
                // first state comes at once.)
                if seen >= 0 { try? await Task.sleep(nanoseconds: 200_000_000) }
                let now = studio.signal.sequence
                return (now, studio.stateJSON())
            }
            await studio.signal.wait(after: seen)
        }
        return nil
    }
}
