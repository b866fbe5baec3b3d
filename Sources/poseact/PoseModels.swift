import Foundation
import TFLite

/// The BlazePose model files and where to find them.
enum PoseModels {
    static let detector = "pose_detection.tflite"
    static let landmark = "pose_landmark_full.tflite"

    /// The first folder holding both models: an explicit one, $POSEACT_MODELS_DIR, ./models,
    /// then models/ beside any parent of the executable (a checkout's .build/release/poseact).
    static func directory(_ explicit: String?) throws -> URL {
        var candidates: [URL] = []
        if let explicit { candidates.append(URL(fileURLWithPath: explicit)) }
        if let env = ProcessInfo.processInfo.environment["POSEACT_MODELS_DIR"] { candidates.append(URL(fileURLWithPath: env)) }
        candidates.append(URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("models"))
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 { candidates.append(dir.appendingPathComponent("models")); dir.deleteLastPathComponent() }
        if explicit != nil { candidates = [candidates[0]] }
        for c in candidates where FileManager.default.fileExists(atPath: c.appendingPathComponent(detector).path)
            && FileManager.default.fileExists(atPath: c.appendingPathComponent(landmark).path) {
            return c
        }
        let looked = candidates.map(\.path).joined(separator: ", ")
        throw TFLiteError("BlazePose models not found (looked in \(looked)); run notebooks-free-scripts/setup.sh or pass --models DIR")
    }
}

/// A weights file, or a run folder (its model.poseact.h5).
func modelPath(_ path: String) -> String {
    var isDir: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue { return path + "/model.poseact.h5" }
    return path
}
