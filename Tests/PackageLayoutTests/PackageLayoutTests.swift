import Foundation
import TestData
import XCTest

/// `Package.swift` against the code: every target declares exactly the modules its files
/// import, and the keypoint wing reaches no video library, pose engine or C kernel.
final class PackageLayoutTests: XCTestCase {
    struct Target { let name: String, path: String?, type: String, dependencies: Set<String> }

    /// Modules of the toolchain and the system, which no target declares.
    static let system: Set<String> = ["Foundation", "FoundationNetworking", "FoundationXML", "FoundationEssentials",
                                      "Glibc", "Darwin", "Dispatch", "XCTest", "Synchronization"]

    static func package() throws -> [Target] {
        // A scratch folder of its own: `swift test` holds the lock of the package's .build.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-dump-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let dump = try TestData.run("/usr/bin/env", ["swift", "package", "--package-path", TestData.packageRoot.path, "--scratch-path", scratch, "dump-package"])
        guard dump.status == 0 else { throw TestData.missing("`swift package dump-package` failed: is swift on PATH?") }
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        return try XCTUnwrap(json["targets"] as? [[String: Any]]).map { t in
            let deps = (t["dependencies"] as? [[String: Any]] ?? []).compactMap { d -> String? in
                ((d["byName"] ?? d["target"] ?? d["product"]) as? [Any])?.first as? String
            }
            return Target(name: t["name"] as! String, path: t["path"] as? String, type: t["type"] as! String, dependencies: Set(deps))
        }
    }

    /// The modules a target's Swift files import, the system's left out.
    static func imports(of target: Target) throws -> Set<String> {
        let folder = TestData.packageRoot.appendingPathComponent(target.path ?? (target.type == "test" ? "Tests/" : "Sources/") + target.name)
        var modules = Set<String>()
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        let pattern = try NSRegularExpression(pattern: #"^(?:@testable |@preconcurrency )*import (\w+)$"#, options: .anchorsMatchLines)
        while let url = files?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            let text = try String(contentsOf: url, encoding: .utf8)
            for m in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                modules.insert(String(text[Range(m.range(at: 1), in: text)!]))
            }
        }
        return modules.subtracting(system)
    }

    func testEveryTargetDeclaresWhatItImportsAndNothingElse() throws {
        let targets = try Self.package()
        let executables = Set(targets.filter { $0.type == "executable" }.map(\.name))
        XCTAssertGreaterThan(targets.count, 20)
        for t in targets where t.type != "system" {
            let imported = try Self.imports(of: t)
            // A test target may name an executable it runs (PoseactCLITests runs `poseact`): built first, never imported.
            let declared = t.dependencies.subtracting(executables)
            XCTAssertEqual(imported.subtracting(declared).sorted(), [], "\(t.name) imports modules Package.swift does not give it")
            XCTAssertEqual(declared.subtracting(imported).sorted(), [], "\(t.name) is given modules it does not import")
        }
    }

    /// The names a target's own Swift files make public and that a file importing it must
    /// name to need the import: its types, its top-level functions and values, and the members
    /// of its extensions on types of other modules. (A member of the module's own types is
    /// reached through a value of that type without importing the module.)
    static func publicNames(of target: String) throws -> Set<String> {
        let folder = TestData.packageRoot.appendingPathComponent("Sources/" + target)
        let modifiers = #"(?:(?:static|final|class|mutating|nonisolated|override|convenience|required|indirect|lazy|@\w+(?:\([^)]*\))?)\s+)*"#
        let type = try NSRegularExpression(pattern: #"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:public|open)\s+"# + modifiers
                                            + #"(?:struct|class|enum|protocol|typealias|actor)\s+(\w+)"#, options: .anchorsMatchLines)
        let topLevel = try NSRegularExpression(pattern: #"^(?:@\w+(?:\([^)]*\))?\s+)*public\s+"# + modifiers + #"(?:func|var|let)\s+`?(\w+)"#,
                                                options: .anchorsMatchLines)
        let extensionBody = try NSRegularExpression(pattern: #"^(?:public\s+)?extension\s+([\w.]+)[^{]*\{(.*?)^\}"#,
                                                     options: [.anchorsMatchLines, .dotMatchesLineSeparators])
        let member = try NSRegularExpression(pattern: #"^\s+(?:@\w+(?:\([^)]*\))?\s+)*public\s+"# + modifiers + #"(?:func|var|let)\s+`?(\w+)"#,
                                             options: .anchorsMatchLines)
        var texts: [String] = []
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        while let url = files?.nextObject() as? URL {
            if url.pathExtension == "swift" { texts.append(try String(contentsOf: url, encoding: .utf8)) }
        }
        func groups(_ regex: NSRegularExpression, _ text: String, _ group: Int = 1) -> [String] {
            regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range(at: group), in: text)!]) }
        }
        let types = Set(texts.flatMap { groups(type, $0) })
        var names = types.union(texts.flatMap { groups(topLevel, $0) })
        for text in texts {
            for m in extensionBody.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let extended = String(text[Range(m.range(at: 1), in: text)!]).split(separator: ".").first.map(String.init) ?? ""
                if !types.contains(extended) { names.formUnion(groups(member, String(text[Range(m.range(at: 2), in: text)!]))) }
            }
        }
        return names
    }

    /// Every `import` of one of the package's own modules in a source file is used: the file
    /// names something that module makes public. An unused import is a false line on the map.
    func testEveryImportOfOurOwnModulesIsUsed() throws {
        let targets = try Self.package().filter { $0.type == "regular" && $0.path == nil }
        var names: [String: Set<String>] = [:]
        for t in targets { names[t.name] = try Self.publicNames(of: t.name) }
        let importLine = try NSRegularExpression(pattern: #"^(@testable |@preconcurrency )*import (\w+)$"#, options: .anchorsMatchLines)
        let comment = try NSRegularExpression(pattern: "//[^\n]*")
        var unused: [String] = []
        let files = FileManager.default.enumerator(at: TestData.packageRoot.appendingPathComponent("Sources"), includingPropertiesForKeys: nil)
        while let url = files?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            let text = try String(contentsOf: url, encoding: .utf8)
            var body = importLine.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "")
            body = comment.stringByReplacingMatches(in: body, range: NSRange(body.startIndex..., in: body), withTemplate: "")
            let words = Set(body.split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init))
            for m in importLine.matches(in: text, range: NSRange(text.startIndex..., in: text)) where m.range(at: 1).location == NSNotFound {
                let module = String(text[Range(m.range(at: 2), in: text)!])
                // (A C target's names are in its headers; those imports are not read here.)
                if let exported = names[module], !exported.isEmpty, words.isDisjoint(with: exported) {
                    unused.append("\(url.path.replacingOccurrences(of: TestData.packageRoot.path + "/", with: "")) imports \(module)")
                }
            }
        }
        XCTAssertGreaterThan(names.count, 15)
        XCTAssertEqual(unused, [], "imports nothing of the file uses")
    }

    /// docs/ARCHITECTURE.md's table of targets names, for each target, the package's own
    /// targets it depends on: the same as Package.swift's.
    func testTheArchitectureTableNamesEachTargetsDependencies() throws {
        let targets = try Self.package()
        let names = Set(targets.map(\.name))
        let text = try String(contentsOf: TestData.packageRoot.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        var rows = 0
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4 else { continue }
            let named = cells[1].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
            guard named.count == 1, let target = targets.first(where: { $0.name == named[0] }) else { continue }
            let listed = Set(cells[3].split { ", ;".contains($0) }.map(String.init)).intersection(names)
            XCTAssertEqual(listed.sorted(), target.dependencies.intersection(names).sorted(), "docs/ARCHITECTURE.md's row of \(target.name)")
            rows += 1
        }
        XCTAssertEqual(rows, targets.filter { $0.path == nil && ["regular", "executable"].contains($0.type) }.count,
                       "a row for every target in Sources/")
    }

    /// What `swift build --target Classifier` compiles: the keypoint wing and the foundation.
    func testTheKeypointWingNeedsNoVideoOrPoseEngine() throws {
        let byName = Dictionary(uniqueKeysWithValues: try Self.package().map { ($0.name, $0) })
        for root in ["Keypoints", "KeypointWindows", "Evaluation", "Classifier"] {
            var seen = Set<String>(), todo = [root]
            while let next = todo.popLast() {
                guard seen.insert(next).inserted, let t = byName[next] else { continue }
                todo += t.dependencies
            }
            for video in ["CFFmpeg", "Media", "TFLite", "Pose", "Extraction", "Live"] {
                XCTAssertFalse(seen.contains(video), "\(root) reaches \(video)")
            }
            // The C kernels (plain C, no library) are the pose engine's and the training
            // layers' GEMMs: the classifier needs them, the keypoints and reports do not.
            XCTAssertEqual(seen.contains("CPUKernels"), root == "Classifier", "\(root) and CPUKernels")
        }
    }

    /// The pose models' sha256: the list poseact checks at run time (PoseModels.swift) and the
    /// one setup.sh fetches and package.sh packs by (lib/models.sh) are the same.
    func testTheModelHashesAreOneList() throws {
        func hashes(_ file: String, _ pattern: String) throws -> [String: String] {
            let text = try String(contentsOf: TestData.packageRoot.appendingPathComponent(file), encoding: .utf8)
            let regex = try NSRegularExpression(pattern: pattern)
            var found: [String: String] = [:]
            for m in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                found[String(text[Range(m.range(at: 1), in: text)!])] = String(text[Range(m.range(at: 2), in: text)!])
            }
            return found
        }
        let shell = try hashes("notebooks-free-scripts/lib/models.sh", #""(\w+\.tflite)\|[^|]+\|([0-9a-f]{64})""#)
        let swift = try hashes("Sources/poseact/PoseModels.swift", #"(detector|landmark): "([0-9a-f]{64})""#)
        XCTAssertEqual(shell.count, 2)
        XCTAssertEqual(Set(shell.values), Set(swift.values), "lib/models.sh \(shell), PoseModels.swift \(swift)")
        XCTAssertEqual(swift.count, 2)
    }
}
