import Errors
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A file written whole or not at all, poseact's one way of writing an output: the bytes
/// go to "<path>.tmp" beside it (same folder, so the rename stays on one file system),
/// which is renamed over `path` once complete. A reader sees the old file or the new, an
/// interrupted run never leaves a half-written file under the real name, and a failure
/// removes the temporary file. Lives in Media, the lowest target every writer depends on.
public struct AtomicFile: Sendable {
    public let path: String

    public init(_ path: String) { self.path = path }

    public var temporaryPath: String { path + ".tmp" }

    /// Gives the finished temporary file its name, replacing any file there; if it cannot,
    /// removes the temporary file and throws.
    public func commit() throws {
        if rename(temporaryPath, path) != 0 {
            let reason = String(cString: strerror(errno))
            discard()
            throw FileWriteError("\(path): cannot give the finished file its name (\(reason))")
        }
    }

    /// Removes the temporary file; `path` stays as it was.
    public func discard() { unlink(temporaryPath) }

    /// `body` writes the file at the temporary path it is given, which then gets its name.
    /// If `body` throws, the temporary file is removed and the error passed on.
    public static func write(to path: String, _ body: (_ temporaryPath: String) throws -> Void) throws {
        let file = AtomicFile(path)
        do { try body(file.temporaryPath) } catch { file.discard(); throw error }
        try file.commit()
    }

    public static func write(_ data: Data, to path: String) throws {
        try write(to: path) { temporary in
            do { try data.write(to: URL(fileURLWithPath: temporary)) } catch {
                let folder = (path as NSString).deletingLastPathComponent
                throw FileWriteError("\(path): cannot write (\((error as NSError).localizedDescription)): "
                    + "does the folder \(folder.isEmpty ? "." : folder) exist and is it writable?")
            }
        }
    }

    public static func write(_ text: String, to path: String) throws { try write(Data(text.utf8), to: path) }
}

/// An output file that could not be written, as one line naming it.
public enum FileWriteFailure {}
public typealias FileWriteError = OneLineError<FileWriteFailure>
