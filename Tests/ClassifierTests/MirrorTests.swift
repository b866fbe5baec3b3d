import Foundation
import TestData
import XCTest
@testable import Classifier
@testable import Keypoints

/// notebooks-free-scripts/pytorch_tcn.py mirrors poseact's trainer (the TCN, and with
/// pytorch_stgcn.py the graph nets) in PyTorch and reads the same training config. Its
/// DEFAULTS must hold every key poseact's config has, no other, with poseact's built-in
/// default values; otherwise it refuses configs poseact takes, or quietly trains something
/// else. `pytorch_tcn.py --print-defaults` prints them as JSON with
/// the standard library alone (no torch needed).
final class MirrorTests: XCTestCase {
    static var repository: URL { TestData.packageRoot }

    /// section.key of every key a config text names (the shape `TrainingConfig.yaml()` writes).
    static func keys(ofYAML text: String) -> Set<String> {
        var section = "", out = Set<String>()
        for line in text.split(separator: "\n") where line.contains(":") {
            let t = line.trimmingCharacters(in: .whitespaces)
            guard !t.hasPrefix("#") else { continue }
            let key = String(t[..<t.firstIndex(of: ":")!])
            if line.hasPrefix(" ") { out.insert("\(section).\(key)") } else { section = key }
        }
        return out
    }

    /// section.key → "value" as written by `yaml()`, for naming the keys whose values differ.
    static func values(ofYAML text: String) -> [String: String] {
        var section = "", out: [String: String] = [:]
        for line in text.split(separator: "\n") where line.contains(":") {
            let t = line.trimmingCharacters(in: .whitespaces)
            guard !t.hasPrefix("#") else { continue }
            let colon = t.firstIndex(of: ":")!
            let key = String(t[..<colon])
            if line.hasPrefix(" ") {
                out["\(section).\(key)"] = t[t.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            } else { section = key }
        }
        return out
    }

    static func python3() -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("python3") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// The mirror's DEFAULTS, as the JSON text it prints.
    func mirrorDefaults() throws -> String { try mirror("--print-defaults") }

    /// `pytorch_tcn.py FLAG`'s stdout (a flag it answers with the standard library alone).
    func mirror(_ flag: String) throws -> String {
        guard let python = Self.python3() else { throw TestData.missing("python3 is not on PATH: cannot run the PyTorch mirror") }
        let script = Self.repository.appendingPathComponent("notebooks-free-scripts/pytorch_tcn.py")
        let p = Process()
        p.executableURL = python
        p.arguments = [script.path, flag]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            XCTFail("pytorch_tcn.py \(flag) exited \(p.terminationStatus): \(String(decoding: stderr, as: UTF8.self))")
            return "{}"
        }
        return String(decoding: stdout, as: UTF8.self)
    }

    /// Every key of poseact's config is a key of the mirror's DEFAULTS and the other way
    /// round, and each default value is poseact's (read with poseact's own parser, so 30 and
    /// 30.0, or `vision` and its joint list, are the same value).
    func testPyTorchMirrorKnowsEveryConfigKeyWithPoseactsDefaults() throws {
        let text = try mirrorDefaults()
        let json = try JSONSerialization.jsonObject(with: Data(text.utf8))
        guard let sections = json as? [String: Any] else { return XCTFail("--print-defaults printed no JSON object: \(text)") }
        var mirrorKeys = Set<String>()
        for (section, value) in sections {
            guard let m = value as? [String: Any] else { XCTFail("DEFAULTS[\"\(section)\"] is not a mapping"); continue }
            for key in m.keys { mirrorKeys.insert("\(section).\(key)") }
        }

        let poseact = TrainingConfig()
        let poseactKeys = Self.keys(ofYAML: poseact.yaml())
        XCTAssertGreaterThan(poseactKeys.count, 40, "the yaml() key reader read too little")
        let missing = poseactKeys.subtracting(mirrorKeys).sorted(), unknown = mirrorKeys.subtracting(poseactKeys).sorted()
        XCTAssertEqual(missing, [], "keys of poseact's training config that pytorch_tcn.py's DEFAULTS lack (add and mirror them)")
        XCTAssertEqual(unknown, [], "keys in pytorch_tcn.py's DEFAULTS that poseact's training config does not have")

        // JSON is YAML: poseact's strict parser reads the mirror's defaults (an unknown key or
        // a value of the wrong type throws), and the result must be poseact's defaults.
        let mirror: TrainingConfig
        do { mirror = try TrainingConfig.parse(text, file: "pytorch_tcn.py DEFAULTS") } catch {
            return XCTFail("poseact cannot read the mirror's DEFAULTS: \(error)")
        }
        let ours = Self.values(ofYAML: poseact.yaml()), theirs = Self.values(ofYAML: mirror.yaml())
        let differing = ours.keys.filter { ours[$0] != theirs[$0] }.sorted()
            .map { "\($0): poseact \(ours[$0]!), mirror \(theirs[$0] ?? "none")" }
        XCTAssertEqual(differing, [], "pytorch_tcn.py's DEFAULTS differ from poseact's built-in defaults")
        if differing.isEmpty {   // anything yaml() does not show (the key-by-key list above is the readable one)
            XCTAssertEqual(mirror, poseact, "pytorch_tcn.py's DEFAULTS differ from poseact's built-in defaults")
        }
    }

    /// The graph models' edges: the mirror's copy of `Skeleton.parentNames` is poseact's.
    func testPyTorchMirrorHasPoseactsSkeleton() throws {
        let json = try JSONSerialization.jsonObject(with: Data(try mirror("--print-parents").utf8))
        XCTAssertEqual(json as? [String: String], Skeleton.parentNames)
    }
}
