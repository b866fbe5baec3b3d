import CPUKernels
#if canImport(Glibc)
import Glibc
#endif

/// The Swift targets are built for AVX2 + FMA on x86-64 (see Package.swift). This file is
/// built for the baseline instruction set and calls only C (no Swift generics, whose shared
/// specialisations the linker may take from an AVX2 module), so that on an older CPU it can
/// say so plainly instead of letting the first loop die with SIGILL.
enum CPUCheck {
    static func requireSupported() {
        #if POSEACT_NEEDS_AVX2 && os(Linux)
        if pa_path_supported(PA_PATH_AVX2) == 0 {
            fputs("Error: this CPU lacks AVX2 and FMA, which this build of poseact needs; rebuild for any x86-64 CPU "
                  + "with `POSEACT_PORTABLE=1 swift build -c release` (the pose engine still picks its fastest kernels at run time)\n",
                  stderr)
            exit(1)
        }
        #endif
    }
}
