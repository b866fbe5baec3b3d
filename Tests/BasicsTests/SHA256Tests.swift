import Basics
import Foundation
import XCTest

/// SHA-256 as poseact uses it: the FIPS 180-2 known answers, over bytes and over a file
/// read in chunks (the journal's file names from it are JournalTests').
final class SHA256Tests: XCTestCase {
    static let known: [(String, String)] = [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ]
    static let millionA = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"

    func testKnownAnswers() {
        for (text, hash) in Self.known { XCTAssertEqual(SHA256.hex(Array(text.utf8)), hash, text) }
        XCTAssertEqual(SHA256.hex([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)), Self.millionA)
    }

    func testFileInChunksThatCrossBlocksAndTheBuffer() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-sha-\(UUID().uuidString)").path
        defer { unlink(path) }
        try Data(repeating: UInt8(ascii: "a"), count: 1_000_000).write(to: URL(fileURLWithPath: path))
        // 1,000,000 is no multiple of these: the last chunk is short, and 1000 and 4097 split 64-byte blocks.
        for chunk in [1000, 4097, 1 << 16, 1 << 20, 2_000_000] {
            XCTAssertEqual(try SHA256.hex(file: path, chunkSize: chunk), Self.millionA, "chunks of \(chunk)")
        }
        let empty = path + ".empty"
        defer { unlink(empty) }
        try Data().write(to: URL(fileURLWithPath: empty))
        XCTAssertEqual(try SHA256.hex(file: empty), Self.known[0].1)
        XCTAssertThrowsError(try SHA256.hex(file: path + ".missing"))
    }
}
