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

    /// What notebooks-free-scripts/lint_page.py finds wrong in the web pages `files` (HTML
    /// closed in order, scripts that parse, CSS braces), one line each; "" when nothing.
    public static func pageLintFaults(_ files: [String]) throws -> String {
        let python = try tool(["python3"], install: "python3")
        _ = try tool(["node"], install: "nodejs")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [packageRoot.appendingPathComponent("notebooks-free-scripts/lint_page.py").path] + files
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let faults = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return p.terminationStatus == 0 ? "" : faults.isEmpty ? "lint_page.py failed (status \(p.terminationStatus))" : faults
    }

    /// The page templates of a target: Sources/TARGET/Resources/*.{html,css,js}.
    public static func pageResources(of target: String) throws -> [String] {
        let dir = packageRoot.appendingPathComponent("Sources/\(target)/Resources")
        return try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
            .filter { ["html", "css", "js"].contains(($0 as NSString).pathExtension) }.map { dir.appendingPathComponent($0).path }
    }
}
