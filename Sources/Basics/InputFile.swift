import Foundation
#if canImport(Glibc)
import Glibc
#endif

public enum InputFileFailure {}
/// An input that is not a file poseact can read: a FIFO, a device, a socket, a folder, too big.
public typealias InputFileError = OneLineError<InputFileFailure>

/// The one way poseact opens a file a user names or a folder holds, before any reader looks
/// at a byte of it. Opening a FIFO for reading waits for a writer that may never come, and a
/// device or a socket can give bytes for ever; so the path is opened with `O_NONBLOCK`
/// (which never waits), checked with `fstat` on that descriptor, and anything but a regular
/// file is refused in one line. Readers that want the bytes read them through the same
/// descriptor: what is read is what was checked. (Inputs that are streams on purpose, a
/// camera device or a FIFO given to `live --input`, do not come through here.)
public enum InputFile {
    /// What a file's mode says it is, for messages ("a FIFO").
    public static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: return "a file"
        case S_IFDIR: return "a folder"
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFSOCK: return "a socket"
        case S_IFLNK: return "a symbolic link"
        default: return "not a regular file"
        }
    }

    /// An open, checked regular file: its descriptor (the caller closes it) and size.
    public struct Opened {
        public let descriptor: Int32
        public let size: Int
    }

    /// Opens `path` for reading without waiting on it and refuses anything but a regular
    /// file; `what` names the input in the message ("video", "weights file"). With
    /// `followLinks` false a symbolic link at `path` itself is refused too.
    public static func open(_ path: String, what: String = "file", followLinks: Bool = true, allowStream: Bool = false) throws -> Opened {
        // A stream the user names on purpose (`--config <(…)`, /dev/stdin) is waited for
        // like any pipe; anything else never is.
        let fd = Glibc.open(path, O_RDONLY | (allowStream ? 0 : O_NONBLOCK) | O_CLOEXEC | O_NOCTTY | (followLinks ? 0 : O_NOFOLLOW))
        guard fd >= 0 else {
            let code = errno
            switch code {
            case ENOENT: throw InputFileError("\(path): no such file")
            case ELOOP where !followLinks: throw InputFileError("\(path): a symbolic link, which poseact does not follow here; give the file itself")
            case EACCES: throw InputFileError("\(path): cannot read the \(what) (permission denied)")
            default: throw InputFileError("\(path): cannot open the \(what) (\(String(cString: strerror(code))))")
            }
        }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            let code = errno
            close(fd)
            throw InputFileError("\(path): cannot read the \(what) (\(String(cString: strerror(code))))")
        }
        let stream = allowStream && [S_IFIFO, S_IFCHR].contains(status.st_mode & S_IFMT)
        guard status.st_mode & S_IFMT == S_IFREG || stream else {
            close(fd)
            throw InputFileError("\(path): \(kind(status.st_mode)), not a \(what) poseact can read; give a regular file")
        }
        // Reads block again as they would on any file: O_NONBLOCK was only for the open.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return Opened(descriptor: fd, size: Int(status.st_size))
    }

    /// Refuses what `open` refuses and returns the size, for readers that open the path
    /// themselves (libhdf5, FFmpeg): a regular file stays one unless someone who can write
    /// the folder swaps it meanwhile.
    @discardableResult
    public static func check(_ path: String, what: String = "file", followLinks: Bool = true) throws -> Int {
        let opened = try open(path, what: what, followLinks: followLinks)
        close(opened.descriptor)
        return opened.size
    }

    /// A regular file's bytes, refused in one line before a byte is read when it is over
    /// `limit` (a sparse 3 GB file costs nothing on disk and everything in memory).
    public static func read(_ path: String, limit: Int, what: String = "file", followLinks: Bool = true, allowStream: Bool = false) throws -> Data {
        let opened = try open(path, what: what, followLinks: followLinks, allowStream: allowStream)
        let handle = FileHandle(fileDescriptor: opened.descriptor, closeOnDealloc: true)
        guard opened.size <= limit else {
            throw InputFileError("\(path): \(sizeText(opened.size)), over the \(sizeText(limit)) poseact reads of a \(what)")
        }
        do {
            // The size is checked again as it is read: a file can grow while it is read.
            var data = Data()
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                data.append(chunk)
                if data.count > limit { throw InputFileError("\(path): grew past the \(sizeText(limit)) poseact reads of a \(what) while it was read") }
            }
            return data
        } catch let error as InputFileError {
            throw error
        } catch {
            throw InputFileError("\(path): cannot read the \(what) (\(error.localizedDescription))")
        }
    }

    /// "3.2 MB", "512 bytes".
    public static func sizeText(_ bytes: Int) -> String {
        if bytes < 10_000 { return "\(bytes) bytes" }
        if bytes < 10_000_000 { return String(format: "%.0f kB", Double(bytes) / 1e3) }
        return String(format: "%.0f MB", Double(bytes) / 1e6)
    }
}
