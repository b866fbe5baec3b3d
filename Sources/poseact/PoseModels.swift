import Basics
import Foundation
import TFLite

/// The BlazePose model files and where to find them.
enum PoseModels {
    static let detector = "pose_detection.tflite"
    static let landmark = "pose_landmark_full.tflite"
    /// Their sha256, as notebooks-free-scripts/lib/models.sh fetches them (a test holds the two
    /// lists together).
    static let sha256 = [
        detector: "9ba9dd3d42efaaba86b4ff0122b06f29c4122e756b329d89dca1e297fd8f866c",
        landmark: "e9a5c5cb17f736fafd4c2ec1da3b3d331d6edbe8a0d32395855aeb2cdfd64b9f",
    ]

    /// Where poseact looks, in order: an explicit folder alone; else $POSEACT_MODELS_DIR,
    /// ./models, then the folders `ShippedFolders` lists (beside the executable, the checkout
    /// it was built in, the Debian package's).
    static func candidates(_ explicit: String?) -> [URL] {
        if let explicit { return [URL(fileURLWithPath: explicit)] }
        var first: [URL] = []
        if let env = ProcessInfo.processInfo.environment["POSEACT_MODELS_DIR"], !env.isEmpty { first.append(URL(fileURLWithPath: env)) }
        first.append(URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("models"))
        return ShippedFolders.candidates("models", first: first)
    }

    /// The first folder holding both models. Found anywhere but an explicit --models, they must
    /// be the files poseact was tested with (their sha256): a damaged copy is said, not run.
    static func directory(_ explicit: String?) throws -> URL {
        let candidates = candidates(explicit)
        for c in candidates where FileManager.default.fileExists(atPath: c.appendingPathComponent(detector).path)
            && FileManager.default.fileExists(atPath: c.appendingPathComponent(landmark).path) {
            if explicit == nil { try verify(c) }
            return c
        }
        let looked = candidates.map(\.path).joined(separator: ", ")
        throw TFLiteError("BlazePose models not found (looked in \(looked)); run notebooks-free-scripts/setup.sh or pass --models DIR")
    }

    private static let verified = NSLock()
    nonisolated(unsafe) private static var verifiedFolders: Set<String> = []

    private static func verify(_ folder: URL) throws {
        verified.lock(); defer { verified.unlock() }
        guard !verifiedFolders.contains(folder.path) else { return }
        for (name, expected) in sha256.sorted(by: { $0.key < $1.key }) {
            let path = folder.appendingPathComponent(name).path
            let actual = try SHA256.hex(file: path)
            guard actual == expected else {
                throw TFLiteError("\(path): sha256 \(actual.prefix(16))…, not the BlazePose model poseact was tested with (\(expected.prefix(16))…): "
                    + "a damaged or other file; reinstall poseact or rerun notebooks-free-scripts/setup.sh (or pass --models DIR to use it anyway)")
            }
        }
        verifiedFolders.insert(folder.path)
    }
}

/// A weights file, or a run folder (its model.poseact.h5).
func modelPath(_ path: String) -> String {
    var isDir: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue { return path + "/model.poseact.h5" }
    return path
}
