import Basics
import Crypto
import Foundation

/// SHA-256 as lower-case hex, for the model hash stored with extracted keypoints and the
/// journal's file names.
extension SHA256 {
    public static func hex(_ bytes: [UInt8]) -> String { hex(SHA256.hash(data: bytes)) }

    /// The hash of a file, read `chunkSize` bytes at a time: a model file need not fit in memory twice.
    public static func hex(file path: String, chunkSize: Int = 1 << 20) throws -> String {
        // Through InputFile: a FIFO named like a video would make the read wait for ever.
        let opened = try InputFile.open(path)
        let handle = FileHandle(fileDescriptor: opened.descriptor, closeOnDealloc: true)
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: chunkSize), !chunk.isEmpty {
            hasher.update(data: chunk)
        }
        return hex(hasher.finalize())
    }

    private static func hex(_ digest: SHA256Digest) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }
}
