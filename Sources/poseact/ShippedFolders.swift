import Foundation

/// Where poseact finds what it ships (the pose models, the training configs), whatever
/// folder it runs from and wherever its binary was copied: one list, in order, without
/// repeats.
enum ShippedFolders {
    /// The checkout this binary was built in, from this source file's path at build time
    /// (Sources/poseact/ShippedFolders.swift): a `swift build` binary copied elsewhere still
    /// finds its checkout's models/ and configs/ while the checkout is there.
    static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The folders named `name` poseact looks in: `first` (an environment variable's or the
    /// current folder's), beside the executable (the tarball), ../share/poseact beside it,
    /// the checkout it was built in, then /usr/local/share/poseact and /usr/share/poseact (the
    /// Debian package).
    static func candidates(_ name: String, first: [URL] = []) -> [URL] {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let all = first + [
            executable.appendingPathComponent(name),
            executable.deletingLastPathComponent().appendingPathComponent("share/poseact/\(name)"),
            checkout.appendingPathComponent(name),
            URL(fileURLWithPath: "/usr/local/share/poseact/\(name)"),
            URL(fileURLWithPath: "/usr/share/poseact/\(name)"),
        ]
        var seen = Set<String>()
        return all.filter { seen.insert($0.standardizedFileURL.path).inserted }
    }
}
