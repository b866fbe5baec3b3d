import Foundation
import XCTest

/// Where the tests find what is not in the repository, for every test target: the shared
/// folder (the data sets and the BlazePose fixtures) and the pose models.
///
/// Something missing skips the test on a developer's machine that lacks it, and fails the
/// test in CI (`CI` or `POSEACT_REQUIRE_TOOLS` set), where it must be there: a green CI run
/// never means that half the suite was skipped.
public enum TestData {
    /// The checkout: three levels up from Tests/TestData/TestData.swift.
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `$POSEACT_SHARED`, else `../shared` beside the checkout.
    public static var sharedFolder: URL {
        if let env = ProcessInfo.processInfo.environment["POSEACT_SHARED"], !env.isEmpty { return URL(fileURLWithPath: env) }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared")
    }

    /// `$POSEACT_MODELS_DIR`, else `models/` in the checkout (where setup.sh puts them).
    public static var modelsFolder: URL {
        if let env = ProcessInfo.processInfo.environment["POSEACT_MODELS_DIR"], !env.isEmpty { return URL(fileURLWithPath: env) }
        return packageRoot.appendingPathComponent("models")
    }

    /// A file or folder of the shared folder, e.g. "data/penn-action/keypoints.csv".
    public static func shared(_ relative: String) throws -> URL {
        try existing(sharedFolder.appendingPathComponent(relative), "set POSEACT_SHARED to the shared folder")
    }

    /// A pose model, e.g. "pose_detection.tflite".
    public static func model(_ name: String) throws -> URL {
        try existing(modelsFolder.appendingPathComponent(name), "run notebooks-free-scripts/setup.sh, or set POSEACT_MODELS_DIR")
    }

    /// Whether a temporary file of `path`'s atomic write ("<name>.<random>.tmp" beside it) exists.
    public static func hasTemporaryFile(_ path: String) -> Bool {
        let url = URL(fileURLWithPath: path)
        let files = (try? FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)) ?? []
        return files.contains { $0.hasPrefix(url.lastPathComponent + ".") && $0.hasSuffix(".tmp") }
    }

    /// Whether missing data and tools fail tests instead of skipping them.
    public static var required: Bool {
        let env = ProcessInfo.processInfo.environment
        return env["POSEACT_REQUIRE_TOOLS"] != nil || env["CI"] == "true"
    }

    /// The error for something a test needs and does not have: a skip, or in CI a failure.
    public static func missing(_ what: String) -> Error {
        required ? Missing(description: "\(what) (CI must have it)") : XCTSkip(what)
    }

    private static func existing(_ url: URL, _ hint: String) throws -> URL {
        guard FileManager.default.fileExists(atPath: url.path) else { throw missing("\(url.path) not found: \(hint)") }
        return url
    }

    struct Missing: Error, CustomStringConvertible { let description: String }
}

extension XCTestCase {
    /// A path `name` in a folder of its own that is removed when the test ends.
    public func temporaryPath(_ name: String, prefix: String = "poseact-test") -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return dir.appendingPathComponent(name).path
    }
}
