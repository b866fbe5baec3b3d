import Foundation
import Keypoints
import Tensor

/// A reader of files from strangers, as fuzzing sees it: how its input is changed, and
/// the code a command runs on such a file (which must work or throw one line).
public struct FuzzedReader: Sendable {
    public enum Input: Sendable {
        /// Bytes with structure in their first kilobytes (flatbuffers).
        case binary
        /// Text: numbers, lines and separators are what to change.
        case text
        /// HDF5: bytes changed, with poseact's checksum wiped or computed anew (a checksum is
        /// no seal: libhdf5 parses such bytes, and the child-process check is what stands),
        /// and rewrites through libhdf5.
        case hdf5
    }
    public let name: String
    public let input: Input
    public let read: @Sendable (_ path: String) throws -> Void

    public init(name: String, input: Input, read: @escaping @Sendable (String) throws -> Void) {
        self.name = name; self.input = input; self.read = read
    }
}

/// Counts of one fuzzing run of one reader.
public struct CampaignResult: Sendable {
    public var cases = 0
    /// Changed files the reader took (a change can leave a file valid).
    public var read = 0
    /// Refused with one line.
    public var refused = 0
    /// Errors that were not one short line: what went wrong, for the report.
    public var violations: [String] = []

    public var summary: String {
        "\(cases) cases: \(read) read, \(refused) refused with one line, \(violations.count) not one line"
    }
}

public enum Campaign {
    /// The longest error line a user is shown (`OneLine.maxLength`, with room for a prefix).
    public static let maxLineLength = 600

    /// `iterations` changed copies of `seedFile` (a file, or a folder one of whose files is
    /// changed), each given to `reader.read` in `workDir`. A crash ends the process, which is
    /// the point: run under AddressSanitizer, the report names the case by its number.
    public static func run(_ reader: FuzzedReader, seedFile: String, iterations: Int, seed: UInt64,
                           workDir: String, log: (String) -> Void = { _ in }) throws -> CampaignResult {
        var rng = SplitMix64(seed: seed)
        var result = CampaignResult()
        let fm = FileManager.default
        var isFolder: ObjCBool = false
        guard fm.fileExists(atPath: seedFile, isDirectory: &isFolder) else { throw FuzzError("\(seedFile): no such seed file") }
        let name = URL(fileURLWithPath: seedFile).lastPathComponent
        for i in 0..<iterations {
            let casePath = (workDir as NSString).appendingPathComponent("case\(i)-\(name)")
            try? fm.removeItem(atPath: casePath)
            try fm.copyItem(atPath: seedFile, toPath: casePath)
            defer { try? fm.removeItem(atPath: casePath) }
            var target = casePath
            if isFolder.boolValue {
                let files = try fm.contentsOfDirectory(atPath: casePath).sorted()
                guard !files.isEmpty else { throw FuzzError("\(seedFile): an empty folder") }
                target = casePath + "/" + rng.pick(files)
            }
            let what: String
            switch reader.input {
            case .binary:
                let m = Mutation.bytes(try bytes(target), rng: &rng)
                try Data(m.bytes).write(to: URL(fileURLWithPath: target)); what = m.what
            case .text:
                let original = try bytes(target)
                let m = rng.below(4) == 0 ? Mutation.bytes(original, rng: &rng) : Mutation.text(original, rng: &rng)
                try Data(m.bytes).write(to: URL(fileURLWithPath: target)); what = m.what
            case .hdf5:
                if rng.below(2) == 0 {
                    var b = try bytes(target)
                    wipeChecksum(&b)
                    // After the user block: HDF5's own metadata (superblock, object headers, B-trees).
                    let m = Mutation.bytes(Array(b.dropFirst(512)), rng: &rng)
                    try Data(Array(b.prefix(512)) + m.bytes).write(to: URL(fileURLWithPath: target))
                    if rng.below(2) == 0 { try FileChecksum.write(target); what = "checksum computed anew, " + m.what }
                    else { what = "checksum wiped, " + m.what }
                } else {
                    what = try HDF5Rewrite.damage(target, rng: &rng)
                }
            }
            log("case \(i): \(what)")
            result.cases += 1
            do {
                try reader.read(casePath)
                result.read += 1
            } catch {
                let line = "\(error)"
                if line.isEmpty || line.contains("\n") || line.count > maxLineLength {
                    result.violations.append("case \(i) (\(what)): \(line.prefix(200).debugDescription)…")
                } else {
                    result.refused += 1
                }
            }
        }
        return result
    }

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// Zeroes poseact's checksum line, as a file written or rewritten by another tool has none.
    static func wipeChecksum(_ bytes: inout [UInt8]) {
        let marker = Array("poseact-checksum-v1 ".utf8)
        guard bytes.count >= 512, bytes.prefix(marker.count).elementsEqual(marker) else { return }
        for i in 0..<(marker.count + 17) { bytes[i] = 0 }
    }
}

public struct FuzzError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
