import Foundation

/// SHA-256 (FIPS 180-4), as lower-case hex where poseact shows or stores it: the pose models'
/// check where they are found, the model hash stored with extracted keypoints, the extraction
/// journal's file names and cache keys, the weights' digest.
///
/// Written here rather than taken from swift-crypto: these hashes are all poseact needs of a
/// cryptographic library, and swift-crypto builds BoringSSL's 400 C files into every build
/// (106 s of a release build on a 2-core Zen 3, again for the test, AddressSanitizer and
/// arm64 builds of each CI run). Plain Swift without the CPU's SHA instructions: 140 MB/s on
/// that Zen 3 (coreutils' sha256sum: 155 MB/s), so the two models' check at a command's start
/// takes about 70 ms (BoringSSL: 5 ms). The known answers of FIPS 180-2 and a million-byte
/// message read in chunks that split its blocks are its tests (BasicsTests/SHA256Tests.swift);
/// a model file whose digest came out wrong would be refused by the models' own check.
public struct SHA256 {
    private var h: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
    /// The bytes of a block not yet complete (the first `pendingCount` of 64).
    private var pending = [UInt8](repeating: 0, count: 64)
    private var pendingCount = 0
    private var length: UInt64 = 0

    public init() {}

    public mutating func update<Bytes: ContiguousBytes>(data: Bytes) {
        data.withUnsafeBytes { update(bufferPointer: $0) }
    }

    public mutating func update(bufferPointer bytes: UnsafeRawBufferPointer) {
        length &+= UInt64(bytes.count)
        var offset = 0
        if pendingCount > 0 {
            let take = min(64 - pendingCount, bytes.count)
            for i in 0..<take { pending[pendingCount + i] = bytes[i] }
            pendingCount += take
            offset = take
            guard pendingCount == 64 else { return }
            pending.withUnsafeBytes { compress(blocks: $0) }
            pendingCount = 0
        }
        let whole = (bytes.count - offset) / 64 * 64
        if whole > 0 { compress(blocks: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + whole])) }
        offset += whole
        for i in offset..<bytes.count { pending[i - offset] = bytes[i] }
        pendingCount = bytes.count - offset
    }

    /// The 32-byte digest of everything given so far (the hasher itself is left as it was).
    public func finalize() -> [UInt8] {
        var last = self
        let bits = length &* 8
        var padding: [UInt8] = [0x80]
        padding += [UInt8](repeating: 0, count: (119 - pendingCount) % 64)
        for shift in stride(from: 56, through: 0, by: -8) { padding.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        padding.withUnsafeBytes { last.update(bufferPointer: $0) }
        precondition(last.pendingCount == 0, "SHA-256 padding must end on a block boundary")
        let words = [last.h.0, last.h.1, last.h.2, last.h.3, last.h.4, last.h.5, last.h.6, last.h.7]
        return words.flatMap { word in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> UInt32($0)) } }
    }

    public static func hash<Bytes: ContiguousBytes>(data: Bytes) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: data)
        return hasher.finalize()
    }

    public static func hex(_ bytes: [UInt8]) -> String { hex(digest: hash(data: bytes)) }

    /// The hash of a file, read `chunkSize` bytes at a time: a model file need not fit in memory twice.
    public static func hex(file path: String, chunkSize: Int = 1 << 20) throws -> String {
        // Through InputFile: a FIFO named like a video would make the read wait for ever.
        let opened = try InputFile.open(path)
        let handle = FileHandle(fileDescriptor: opened.descriptor, closeOnDealloc: true)
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: chunkSize), !chunk.isEmpty {
            hasher.update(data: chunk)
        }
        return hex(digest: hasher.finalize())
    }

    public static func hex(digest: [UInt8]) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }

    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    // Masking shifts (&>>, &<<): every amount here is a constant below 32.
    @inline(__always) private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &>> n) | (x &<< (32 &- n)) }

    /// Whole 64-byte blocks into the state (the state in local variables across the blocks).
    private mutating func compress(blocks: UnsafeRawBufferPointer) {
        var (h0, h1, h2, h3, h4, h5, h6, h7) = h
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            Self.k.withUnsafeBufferPointer { k in
                for start in stride(from: 0, to: blocks.count, by: 64) {
                    for t in 0..<16 {
                        w[t] = UInt32(bigEndian: blocks.loadUnaligned(fromByteOffset: start + 4 * t, as: UInt32.self))
                    }
                    for t in 16..<64 {
                        let s0 = Self.rotr(w[t - 15], 7) ^ Self.rotr(w[t - 15], 18) ^ (w[t - 15] &>> 3)
                        let s1 = Self.rotr(w[t - 2], 17) ^ Self.rotr(w[t - 2], 19) ^ (w[t - 2] &>> 10)
                        w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
                    }
                    var (a, b, c, d, e, f, g, hh) = (h0, h1, h2, h3, h4, h5, h6, h7)
                    for t in 0..<64 {
                        let t1 = hh &+ (Self.rotr(e, 6) ^ Self.rotr(e, 11) ^ Self.rotr(e, 25)) &+ ((e & f) ^ (~e & g)) &+ k[t] &+ w[t]
                        let t2 = (Self.rotr(a, 2) ^ Self.rotr(a, 13) ^ Self.rotr(a, 22)) &+ ((a & b) ^ (a & c) ^ (b & c))
                        hh = g; g = f; f = e; e = d &+ t1; d = c; c = b; b = a; a = t1 &+ t2
                    }
                    h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d; h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= hh
                }
            }
        }
        h = (h0, h1, h2, h3, h4, h5, h6, h7)
    }
}
