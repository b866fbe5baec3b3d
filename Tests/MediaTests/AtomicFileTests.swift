import Basics
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Media
import XCTest

/// Every output of poseact is written as an `AtomicFile`: whole under its name, or not at
/// all, with no temporary file left behind either way.
final class AtomicFileTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-atomic-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    private func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
    private func contents() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() }
    private struct Interrupted: Error {}

    /// A process killed while writing (kill -9, Ctrl-C before any handler) leaves its
    /// temporary file; the next write in that folder removes it, and no other's.
    func testLeftoversOfDeadProcessesAreSweptByTheNextWrite() throws {
        // A child that exits at once: its pid is surely gone, and not reused this soon.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run(); child.waitUntilExit()
        let dead = child.processIdentifier
        let other = Leftovers.host == "0badcafe" ? "0badcafd" : "0badcafe"
        let leftover = path("store.h5.\(Leftovers.host)-\(dead)-abcdefghij.tmp")
        let running = path("store.h5.\(Leftovers.tag)-abcdefghij.tmp")
        let elsewhere = path("store.h5.\(other)-\(dead)-abcdefghij.tmp")
        let users = path("notes.\(Leftovers.host)-\(dead)-abc.tmp")
        for p in [leftover, running, elsewhere, users] { try Data("x".utf8).write(to: URL(fileURLWithPath: p)) }
        try AtomicFile.write("new\n", to: path("other.txt"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: leftover), "a dead process's temporary file is removed")
        XCTAssertTrue(FileManager.default.fileExists(atPath: running), "a live process's is kept")
        XCTAssertTrue(FileManager.default.fileExists(atPath: elsewhere), "another machine's is kept: its pid means nothing here")
        XCTAssertTrue(FileManager.default.fileExists(atPath: users), "a file not named as poseact's temporary files is kept")
    }

    /// A report's files are replaced together: until `commit` the old set stays whole, and a
    /// dead run's staging folder is removed by the next.
    func testStagedFilesReplaceTheirSetTogether() throws {
        let report = path("report")
        try FileManager.default.createDirectory(atPath: report, withIntermediateDirectories: true)
        for name in ["a.json", "index.html"] { try Data("old".utf8).write(to: URL(fileURLWithPath: report + "/" + name)) }
        do {
            let staged = try StagedFiles(folder: report)
            try Data("new".utf8).write(to: URL(fileURLWithPath: staged.path("a.json")))
            // Dropped before commit (the run stopped): nothing moved, nothing left.
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: report).sorted(), ["a.json", "index.html"])
        XCTAssertEqual(try String(contentsOfFile: report + "/a.json", encoding: .utf8), "old")
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run(); child.waitUntilExit()
        try FileManager.default.createDirectory(atPath: report + "/.staging-\(Leftovers.host)-\(child.processIdentifier)-Ab12Cd", withIntermediateDirectories: true)
        let staged = try StagedFiles(folder: report)
        for name in ["a.json", "index.html"] { try Data("new".utf8).write(to: URL(fileURLWithPath: staged.path(name))) }
        try staged.commit(["a.json", "index.html"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: report).sorted(), ["a.json", "index.html"], "the dead run's staging folder went")
        XCTAssertEqual(try String(contentsOfFile: report + "/index.html", encoding: .utf8), "new")
    }

    func testWritesAndReplacesThroughATemporaryFileBeside() throws {
        let p = path("notes.txt")
        let file = try AtomicFile(p)
        XCTAssertEqual((file.temporaryPath as NSString).deletingLastPathComponent, folder.path, "beside the file: the rename stays on one file system")
        XCTAssertTrue(file.temporaryPath.hasPrefix(p + ".") && file.temporaryPath.hasSuffix(".tmp"), file.temporaryPath)
        file.discard()
        try AtomicFile.write("first\n", to: p)
        try AtomicFile.write(to: p) { temporary in
            XCTAssertEqual((temporary as NSString).deletingLastPathComponent, folder.path)
            XCTAssertEqual(try String(contentsOfFile: p, encoding: .utf8), "first\n", "the old file stays until the rename")
            try Data("second\n".utf8).write(to: URL(fileURLWithPath: temporary))
        }
        XCTAssertEqual(try String(contentsOfFile: p, encoding: .utf8), "second\n")
        XCTAssertEqual(try contents(), ["notes.txt"])
    }

    func testAFailureLeavesNoFileAndNoTemporaryFile() throws {
        let p = path("out.bin")
        XCTAssertThrowsError(try AtomicFile.write(to: p) { temporary in
            try Data("half".utf8).write(to: URL(fileURLWithPath: temporary))
            throw Interrupted()
        }) { XCTAssertTrue($0 is Interrupted, "the writer's own error is passed on") }
        XCTAssertEqual(try contents(), [])

        // An older file under the name is kept as it was.
        try AtomicFile.write("old", to: p)
        XCTAssertThrowsError(try AtomicFile.write(to: p) { temporary in
            try Data("new".utf8).write(to: URL(fileURLWithPath: temporary))
            throw Interrupted()
        })
        XCTAssertEqual(try String(contentsOfFile: p, encoding: .utf8), "old")
        XCTAssertEqual(try contents(), ["out.bin"])
    }

    func testAFolderThatIsNotThereIsOneLine() throws {
        let p = path("missing/out.txt")
        XCTAssertThrowsError(try AtomicFile.write("x", to: p)) { error in
            XCTAssertTrue(error is FileWriteError)
            XCTAssertTrue("\(error)".hasPrefix(p + ": cannot write"), "\(error)")
            XCTAssertTrue("\(error)".contains("does the folder"), "\(error)")
        }
        XCTAssertEqual(try contents(), [])
    }

    func testARenameThatFailsRemovesTheTemporaryFile() throws {
        // A folder that appears under the name while the file is written is not replaced.
        let p = path("taken")
        XCTAssertThrowsError(try AtomicFile.write(to: p) { temporary in
            try Data("x".utf8).write(to: URL(fileURLWithPath: temporary))
            try FileManager.default.createDirectory(atPath: p + "/inside", withIntermediateDirectories: true)
        }) { error in
            XCTAssertTrue("\(error)".hasPrefix(p + ": is a folder"), "\(error)")
        }
        XCTAssertEqual(try contents(), ["taken"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: p), ["inside"])
    }

    /// Two writers of one name get two temporary files, each created anew: a link planted
    /// under the name the temporary file once had (`<out>.tmp`) redirects nothing.
    func testTheTemporaryFileIsNewAndUnguessable() throws {
        let p = path("store.h5"), victim = path("victim")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: p + ".tmp", withDestinationPath: victim)
        let a = try AtomicFile(p), b = try AtomicFile(p)
        XCTAssertNotEqual(a.temporaryPath, b.temporaryPath)
        a.discard(); b.discard()
        try AtomicFile.write(to: p) { temporary in
            XCTAssertNotEqual(temporary, p + ".tmp")
            try Data("new".utf8).write(to: URL(fileURLWithPath: temporary))
        }
        XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), "precious")
        XCTAssertEqual(try String(contentsOfFile: p, encoding: .utf8), "new")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: p + ".tmp"), victim, "the planted link is left alone")
    }

    /// Only a regular file is replaced: a symbolic link, a FIFO, a device or a folder under
    /// the output's name is refused before anything is written, and stays what it was.
    func testOnlyARegularFileIsReplaced() throws {
        let victim = path("victim")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        let link = path("link.csv"), fifo = path("fifo.csv"), device = path("null"), dir = path("dir.csv")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: victim)
        XCTAssertEqual(mkfifo(fifo, 0o644), 0)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        var outputs = [(link, "a symbolic link"), (fifo, "a FIFO"), (dir, "a folder")]
        // A device node of our own (the null device's numbers), where we may make one (root).
        if mknod(device, S_IFCHR | 0o666, dev_t(0x103)) == 0 { outputs.append((device, "a device")) }
        for (output, kind) in outputs {
            let before = try FileManager.default.attributesOfItem(atPath: output)[.type] as? FileAttributeType
            XCTAssertThrowsError(try AtomicFile.write("overwritten", to: output)) { error in
                XCTAssertTrue("\(error)".hasPrefix(output + ": is " + kind), "\(error)")
                XCTAssertFalse("\(error)".contains("\n"))
            }
            XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: output)[.type] as? FileAttributeType, before, output)
        }
        XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), "precious")
        let left = try contents()
        XCTAssertTrue(left.allSatisfy { !$0.hasSuffix(".tmp") }, "no temporary file left: \(left)")
    }

    /// A replaced file keeps its permissions: a private file does not become readable to all.
    func testAReplacedFileKeepsItsPermissions() throws {
        let p = path("private.csv")
        try AtomicFile.write("old", to: p)
        XCTAssertEqual(chmod(p, 0o600), 0)
        try AtomicFile.write("new", to: p)
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: p)[.posixPermissions] as? NSNumber)?.intValue, 0o600)
    }

    /// A temporary file swapped for a link while it is written is not given the output's
    /// name, and the link's target is not moved.
    func testASwappedTemporaryFileIsNotRenamed() throws {
        let p = path("model.poseact.h5"), victim = path("victim")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        XCTAssertThrowsError(try AtomicFile.write(to: p) { temporary in
            unlink(temporary)
            try FileManager.default.createSymbolicLink(atPath: temporary, withDestinationPath: victim)
        }) { error in
            XCTAssertTrue("\(error)".contains("was replaced by something else"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: p))
        XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), "precious")
    }
}
