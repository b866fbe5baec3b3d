import Foundation

/// The engine's kernels are built for AVX2 + FMA on x86-64 (see Package.swift). This file
/// is built for the baseline instruction set, so it can say so plainly instead of letting
/// the first inference die with SIGILL.
enum CPUCheck {
    static func requireSupported() {
        #if POSEACT_NEEDS_AVX2 && os(Linux)
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
              let flagsLine = info.split(separator: "\n").first(where: { $0.hasPrefix("flags") }) else { return }
        let flags = Set(flagsLine.split(separator: " ").map(String.init))
        let missing = ["avx2", "fma"].filter { !flags.contains($0) }
        if !missing.isEmpty {
            FileHandle.standardError.write(Data("""
                Error: this CPU lacks \(missing.joined(separator: " and ")), which this build of poseact needs; \
                rebuild for any x86-64 CPU with `POSEACT_PORTABLE=1 swift build -c release` (slower)\n
                """.utf8))
            exit(1)
        }
        #endif
    }
}
