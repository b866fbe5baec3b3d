#if canImport(Glibc)
import Glibc
#endif

/// Flush-to-zero and denormals-are-zero for the calling thread's SSE/AVX arithmetic.
///
/// Real frames (black letterbox bars, flat walls) drive some activations towards zero,
/// and x86 handles denormal floats in microcode, 10–100× slower: the landmark model ran
/// 8 ms on random input and 16 ms on video frames. Neural-network runtimes run with
/// denormals flushed; their values (< 1.2e-38) don't matter to any output. MXCSR is
/// per thread, so every thread that runs kernels calls this.
public func flushDenormalsToZero() {
    #if arch(x86_64) && canImport(Glibc)
    var env = fenv_t()
    fegetenv(&env)
    let ftzDaz: UInt32 = 0x8040   // MXCSR bit 15 (FTZ) and bit 6 (DAZ)
    if env.__mxcsr & ftzDaz != ftzDaz {
        env.__mxcsr |= ftzDaz
        fesetenv(&env)
    }
    #endif
}
