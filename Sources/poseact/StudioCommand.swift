import ArgumentParser
import Basics
import Foundation
import PageServing
import Studio

struct StudioCommandLine: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "studio",
        abstract: "A page that takes you from a folder of videos to a model on your camera.",
        discussion: """
            Serves one page (loopback only unless --serve-host says otherwise; then with a \
            token in its URL) over PROJECT_DIR, a folder that holds the store, the runs, the \
            labels, the previews and the exports. Its views: Data (add folders of labeled clips \
            or untrimmed videos with annotations, see what extract will find, extract, inspect, \
            watch a clip's skeleton), Label (mark segments on an untrimmed video with the keyboard; \
            segments a model proposes), Train (a shipped recipe, a few keys changed; start, stop, \
            resume; the curves as they come; cross-validation), Evaluate (the report), Preview \
            (drop a video: the label over time, repetitions and angles; the camera; export). \
            Every action runs the poseact command it shows, in PROJECT_DIR.
            """)

    @Argument(help: "The project folder (made if missing).") var project = "poseact-studio"
    @Option(help: "Port of the page (0: any free port).") var serve = 8090
    @Option(help: "Address to listen on: 127.0.0.1 (this machine) or another (then a token is needed).") var serveHost = "127.0.0.1"
    @Option(help: ArgumentHelp("Also accept this host name for the page on loopback (repeatable).", valueName: "name")) var serveName: [String] = []
    @Option(help: "Folder of the training recipes (default: the shipped configs).") var recipes: String?

    func validate() throws {
        guard (0...65535).contains(serve) else { throw ValidationError("--serve takes a port 0…65535 (got \(serve))") }
        for name in serveName where !PageAccess.isValidName(name) {
            throw ValidationError("--serve-name \(name): not a host name (letters, digits, hyphens and dots, no port) nor an IP address")
        }
        if let recipes {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: recipes, isDirectory: &isFolder), isFolder.boolValue else {
                throw ValidationError("--recipes \(recipes): no such folder")
            }
        }
    }

    func run() throws {
        let folder = try StudioProject(folder: project)
        let recipeFolder = recipes.map { URL(fileURLWithPath: $0).standardizedFileURL.path } ?? Self.shippedRecipes()
        // The commands run in the project folder, so that what the page shows is what a user types there.
        guard FileManager.default.changeCurrentDirectoryPath(folder.folder) else { throw ValidationError("\(folder.folder): cannot work in it") }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        ChildProcess.forwardSignals()
        let studio = try Studio(project: folder, executable: executable, recipes: recipeFolder, host: serveHost, port: serve, names: serveName)
        note("studio: \(studio.url)  (project \(folder.folder); recipes \(recipeFolder ?? "not found"); Ctrl-C stops)")
        fflush(stderr)
        while !Interrupt.happened { usleep(100_000) }
        studio.stop()
        // A running command was sent the signal too: its summary is in the page's log; wait for it.
        while studio.jobs.running != nil { usleep(100_000) }
        note("studio: stopped")
    }

    /// The shipped training configs: beside the executable (the tarball), the package's
    /// share folder, or the checkout it was built in.
    static func shippedRecipes() -> String? {
        ShippedFolders.candidates("configs").first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("pushups.yaml").path) }?.path
    }
}
