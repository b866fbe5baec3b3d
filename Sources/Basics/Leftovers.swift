import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a run leaves when it is killed (a temporary file, a staging folder, an HDF5 copy)
/// carries the machine and the process that made it: "<host>-<pid>". A later run removes
/// it only when it was made on this machine by a process that no longer runs; a folder
/// shared between machines (a cluster's file system, containers) holds other machines'
/// files in the making, whose pids mean nothing here.
public enum Leftovers {
    /// This machine: 8 hex digits of a hash of its host name.
    public static let host: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count - 1)
        var hash: UInt32 = 0x811c_9dc5
        for byte in buffer.prefix(while: { $0 != 0 }) { hash = (hash ^ UInt32(UInt8(bitPattern: byte))) &* 0x0100_0193 }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }()

    /// "<host>-<pid>" of this process, for a name.
    public static var tag: String { "\(host)-\(getpid())" }

    /// Whether `host` and `pid` (as a name carries them) are this machine's and the process
    /// is gone.
    public static func isAbandoned(host: Substring, pid: Substring) -> Bool {
        guard host == Self.host[...], let pid = Int32(pid), pid > 0 else { return false }
        return kill(pid, 0) != 0 && errno == ESRCH
    }

    /// For a name "<prefix><host>-<pid>-<rest>": whether it was abandoned.
    public static func isAbandoned(_ name: String, prefix: String) -> Bool {
        guard name.hasPrefix(prefix) else { return false }
        let parts = name.dropFirst(prefix.count).split(separator: "-", maxSplits: 2)
        return parts.count == 3 && isAbandoned(host: parts[0], pid: parts[1])
    }
}
