import Foundation

// What kind of input a path or URL names, and the clock and formats the readers share.

enum InputKind {
    case file, camera, network(scheme: String)

    init(_ input: String) {
        if input.hasPrefix("/dev/video") { self = .camera; return }
        if let r = input.range(of: "://") {
            let scheme = input[..<r.lowerBound].lowercased()
            if scheme == "file" { self = .file } else { self = .network(scheme: scheme) }
            return
        }
        self = .file
    }
    var autoLive: Bool { if case .file = self { return false } else { return true } }
    var isFile: Bool { if case .file = self { return true } else { return false } }
    /// Sources that deliver in real time by themselves (no pacing needed in live mode).
    var realTime: Bool {
        switch self {
        case .file: return false
        case .camera: return true
        case .network(let s): return !["http", "https", "ftp", "sftp", "hls"].contains(s)
        }
    }
}

/// Seconds on the monotonic clock (CLOCK_MONOTONIC): for durations, never for dates.
public func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// The cameras this machine has: the V4L2 devices (/dev/videoN), in number order.
public func listCameras() -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []
    return names.filter { $0.hasPrefix("video") }
        .sorted { (Int($0.dropFirst(5)) ?? Int.max, $0) < (Int($1.dropFirst(5)) ?? Int.max, $1) }
        .map { "/dev/" + $0 }
}

func formatSeconds(_ t: Double) -> String { String(format: "%.2f s", t) }
func formatTimeout(_ t: Double) -> String {
    t == t.rounded() ? "\(Int(t)) s" : String(format: "%.1f s", t)
}
