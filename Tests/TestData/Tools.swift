import Foundation

extension TestData {
    /// A program a test drives that is not part of poseact (chromium, Xvfb, node, ...), the
    /// first of `names` on PATH: CI installs it (.ci/run), elsewhere its absence skips the
    /// test with the line saying what to install (see `missing`).
    public static func tool(_ names: [String], install: String) throws -> String {
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
        for name in names {
            for dir in dirs where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") { return "\(dir)/\(name)" }
        }
        throw missing("\(names[0]) not found: apt-get install \(install)")
    }

    /// Runs a program that is not poseact: its exit status and stdout (stderr dropped).
    public static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, stdout: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// What notebooks-free-scripts/lint_page.py finds wrong in the web pages `files` (HTML
    /// closed in order, scripts that parse, CSS braces), one line each; "" when nothing.
    public static func pageLintFaults(_ files: [String]) throws -> String {
        let python = try tool(["python3"], install: "python3")
        _ = try tool(["node"], install: "nodejs")
        let (status, faults) = try run(python, [packageRoot.appendingPathComponent("notebooks-free-scripts/lint_page.py").path] + files)
        return status == 0 ? "" : faults.isEmpty ? "lint_page.py failed (status \(status))" : faults
    }

    /// The page templates of a target: Sources/TARGET/Resources/*.{html,css,js}.
    public static func pageResources(of target: String) throws -> [String] {
        let dir = packageRoot.appendingPathComponent("Sources/\(target)/Resources")
        return try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
            .filter { ["html", "css", "js"].contains(($0 as NSString).pathExtension) }.map { dir.appendingPathComponent($0).path }
    }
}
