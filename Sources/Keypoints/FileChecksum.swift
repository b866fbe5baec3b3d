import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A checksum of a whole HDF5 file poseact wrote, kept in the file's user block (the 512
/// bytes HDF5 leaves to applications before its own data; h5py, h5dump and MATLAB skip
/// them). libhdf5 trusts the sizes and offsets it reads and can crash on a damaged file;
/// checked before the library opens it, a changed or cut file is one line instead. Files
/// other tools wrote have no checksum and are opened as they are.
public enum FileChecksum {
    static let userBlock = 512
    static let marker = Array("poseact-checksum-v1 ".utf8)

    /// The checksum of everything after the user block, with its length: every word goes
    /// through a bijection of the state, so one changed word always changes the result.
    static func digest(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
        let words = bytes.count / 8
        for i in 0..<words {
            let w = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))
            h = ((h ^ w) &* 0x0000_0100_0000_01b3)
            h = (h << 31) | (h >> 33)
        }
        for i in (words * 8)..<bytes.count { h = (h ^ UInt64(bytes[i])) &* 0x0000_0100_0000_01b3 }
        return h
    }

    static func contents(_ path: String) -> Data? {
        try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
    }

    static func stored(_ data: Data) -> UInt64? {
        guard data.count >= userBlock, data.prefix(marker.count).elementsEqual(marker) else { return nil }
        let hex = data[marker.count..<(marker.count + 16)]
        return UInt64(String(decoding: hex, as: UTF8.self), radix: 16)
    }

    /// true: the checksum matches; false: it does not (or the file is shorter than its user
    /// block says); nil: the file carries no checksum of poseact's.
    static func verify(_ path: String) -> Bool? {
        guard let data = contents(path), let expected = stored(data) else { return nil }
        return data.withUnsafeBytes { digest(UnsafeRawBufferPointer(rebasing: $0[userBlock...])) } == expected
    }

    /// Writes the checksum of the closed file at `path` into its user block, or clears a
    /// stale one when `valid` is false (the file may still change: HDF5 kept it open).
    public static func write(_ path: String, valid: Bool = true) throws {
        guard let data = contents(path), data.count >= userBlock else { return }
        let hasBlock = data.prefix(8).elementsEqual([0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a]) == false
        // No user block (another tool wrote the file), or one holding another tool's bytes:
        // left as it is.
        guard hasBlock, stored(data) != nil || data.prefix(userBlock).allSatisfy({ $0 == 0 }) else { return }
        var line = [UInt8](repeating: 0, count: marker.count + 17)
        if valid {
            let sum = data.withUnsafeBytes { digest(UnsafeRawBufferPointer(rebasing: $0[userBlock...])) }
            let hex = String(sum, radix: 16)
            line = marker + Array((String(repeating: "0", count: 16 - hex.count) + hex + "\n").utf8)
        } else if stored(data) == nil {
            return
        }
        let fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw HDF5Error("\(path): cannot write its checksum (\(String(cString: strerror(errno))))") }
        defer { close(fd) }
        guard pwrite(fd, line, line.count, 0) == line.count else {
            throw HDF5Error("\(path): cannot write its checksum (\(String(cString: strerror(errno)))); is the disk full?")
        }
    }
}
