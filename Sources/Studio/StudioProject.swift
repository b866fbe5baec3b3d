import Basics
import Foundation

/// A studio project: one folder that holds what the studio makes, the commands' outputs at
/// fixed places (relative to the folder, in which the studio and its commands run):
///
///   studio.json          the data sources (folders of labeled clips, with an annotation file or not)
///   keypoints.h5         the keypoint store (`extract`, `merge`)
///   parts/N.h5           one store per source, when there are several
///   cache/               `extract --cache`: a clip is never extracted twice
///   runs/NAME/           `train --output` (report/: `evaluate --report`)
///   crossval/NAME/       `crossval --output`
///   labels/NAME.csv      the label view's annotation files (Create ML's columns)
///   poses/NAME.jsonl     `pose VIDEO`'s landmarks, drawn over the video
///   proposals/NAME.json  `annotate --timeline`: occurrences a model proposes as labels
///   videos/              videos dropped on the page
///   previews/NAME.json   `annotate --json`: the preview's timeline, repetitions and angles
///   exports/             `export`: weights files and ONNX
public struct StudioProject: Sendable {
    /// One source of labeled clips, as `extract` takes it: a folder, and an annotation file
    /// for untrimmed videos in it.
    public struct Source: Codable, Sendable, Equatable {
        public var folder: String
        public var annotations: String?
        public init(folder: String, annotations: String? = nil) { self.folder = folder; self.annotations = annotations }
    }

    struct Settings: Codable {
        var sources: [Source] = []
        /// Videos opened in the label view (absolute paths).
        var labelVideos: [String]? = nil
    }

    public static let store = "keypoints.h5"
    static let settingsFile = "studio.json"
    static let folders = ["parts", "cache", "runs", "crossval", "labels", "poses", "proposals", "videos", "previews", "exports"]
    /// What the page may play: the videos FFmpeg reads that browsers play too.
    static let videoExtensions: Set<String> = ["mp4", "m4v", "mov", "webm", "mkv", "ogv"]

    public enum Failure {}
    public typealias ProjectError = OneLineError<Failure>

    /// The project folder, absolute.
    public let folder: String

    /// Opens (or makes) the project folder; the caller then works in it.
    public init(folder: String) throws {
        let url = URL(fileURLWithPath: folder).standardizedFileURL
        self.folder = url.path
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: self.folder, isDirectory: &isFolder) {
            guard isFolder.boolValue else { throw ProjectError("\(folder): is a file; the studio's project is a folder (new or one the studio made)") }
        } else {
            do { try FileManager.default.createDirectory(atPath: self.folder, withIntermediateDirectories: true) } catch {
                throw ProjectError("\(folder): cannot make the project folder (\(error.localizedDescription))")
            }
        }
        // Everything checked before anything is made: a folder that is not the studio's is left as it was.
        var missing: [String] = []
        for name in Self.folders {
            let path = self.folder + "/" + name
            var status = stat()
            if lstat(path, &status) == 0 {
                guard status.st_mode & S_IFMT == S_IFDIR else {
                    throw ProjectError("\(path): is not a folder; the studio keeps its \(name) there: move it away")
                }
            } else {
                missing.append(path)
            }
        }
        _ = try settings()
        for path in missing {
            guard mkdir(path, 0o755) == 0 else { throw ProjectError("\(path): cannot make it (\(String(cString: strerror(errno))))") }
        }
    }

    func path(_ relative: String) -> String { folder + "/" + relative }

    /// The settings in studio.json (none in a new project). A file that is not the studio's
    /// is one line.
    func settings() throws -> Settings {
        let file = path(Self.settingsFile)
        guard let data = try Self.smallRegularFile(file, limit: 1 << 20) else { return Settings() }
        do { return try JSONLines.decode(Settings.self, from: data) } catch let error as DecodingError {
            throw ProjectError(error.oneLine(file: file, expected: "the studio's settings", fix: "move it away to start afresh", data: data))
        }
    }

    func save(_ settings: Settings) throws {
        try AtomicFile.write(JSONLines.document(settings), to: path(Self.settingsFile))
    }

    public func sources() throws -> [Source] { try settings().sources }
    public func labelVideos() throws -> [String] { try settings().labelVideos ?? [] }

    /// Adds a source (once), after checking it is a folder and its annotation file a file.
    public func add(_ source: Source) throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source.folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw ProjectError("\(source.folder): no such folder; give the folder of the labeled clips (one folder per label, or videos with an annotation file)")
        }
        if let annotations = source.annotations {
            guard FileManager.default.fileExists(atPath: annotations, isDirectory: &isFolder), !isFolder.boolValue else {
                throw ProjectError("\(annotations): no such annotation file (CSV or JSON: video,label,start,end)")
            }
        }
        var settings = try settings()
        guard !settings.sources.contains(source) else { return }
        settings.sources.append(source)
        try save(settings)
    }

    /// Adds a video to label (once): a regular file with a video's extension.
    public func addLabelVideo(_ video: String) throws {
        var status = stat()
        guard stat(video, &status) == 0, status.st_mode & S_IFMT == S_IFREG, Self.isVideo(video) else {
            throw ProjectError("\(video): not a video file (\(Self.videoExtensions.sorted().joined(separator: ", ")))")
        }
        var settings = try settings()
        guard !(settings.labelVideos ?? []).contains(video) else { return }
        settings.labelVideos = (settings.labelVideos ?? []) + [video]
        try save(settings)
    }

    /// A file's bytes when it is a regular file of at most `limit` bytes, nil when there is
    /// nothing at the path; one line otherwise (a FIFO or a device is never opened).
    static func smallRegularFile(_ path: String, limit: Int) throws -> Data? {
        var status = stat()
        if lstat(path, &status) != 0 && errno == ENOENT { return nil }
        // Never through a link nor waiting on a FIFO, read through the descriptor checked.
        do { return try InputFile.read(path, limit: limit, followLinks: false) } catch let error as InputFileError {
            throw ProjectError(error.message)
        }
    }

    /// Names the studio gives files: a video's name without its folder and extension, in
    /// letters, digits, '.', '-' and '_' (others become '_').
    public static func safeName(_ name: String) -> String {
        let base = URL(fileURLWithPath: name).deletingPathExtension().lastPathComponent
        let cleaned = String(base.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) && $0.isASCII || "-_.".unicodeScalars.contains($0) ? Character($0) : "_" })
        let trimmed = cleaned.drop { $0 == "." }
        return trimmed.isEmpty ? "video" : String(trimmed.prefix(80))
    }

    /// Whether a run, recipe or crossval name is one the studio accepts (no path in it).
    public static func isName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.first != "."
            && name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_.".unicodeScalars.contains($0)) }
    }

    /// The names of the entries of a project folder (sorted), of one kind.
    func entries(_ relative: String, folders: Bool) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path(relative))) ?? []
        return names.filter { name in
            var status = stat()
            guard !name.hasPrefix("."), lstat(path(relative + "/" + name), &status) == 0 else { return false }
            return (status.st_mode & S_IFMT == S_IFDIR) == folders && (folders || status.st_mode & S_IFMT == S_IFREG)
        }.sorted()
    }

    static func isVideo(_ path: String) -> Bool { videoExtensions.contains(URL(fileURLWithPath: path).pathExtension.lowercased()) }
}
