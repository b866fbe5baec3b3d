import Foundation
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

    func testWritesAndReplacesThroughATemporaryFileBeside() throws {
        let p = path("notes.txt")
        XCTAssertEqual(AtomicFile(p).temporaryPath, p + ".tmp", "beside the file: the rename stays on one file system")
        try AtomicFile.write("first\n", to: p)
        try AtomicFile.write(to: p) { temporary in
            XCTAssertEqual(temporary, p + ".tmp")
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
        // A folder with something in it cannot be replaced by a file.
        let p = path("taken")
        try FileManager.default.createDirectory(atPath: p + "/inside", withIntermediateDirectories: true)
        XCTAssertThrowsError(try AtomicFile.write("x", to: p)) { error in
            XCTAssertTrue("\(error)".hasPrefix(p + ": cannot give the finished file its name"), "\(error)")
        }
        XCTAssertEqual(try contents(), ["taken"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: p), ["inside"])
    }
}
