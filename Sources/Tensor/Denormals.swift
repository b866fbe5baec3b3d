#if canImport(Glibc)
import Glibc
#endif

/// Flush-to-zero and denormals-are-zero for SSE/AVX arithmetic.
///
/// Real frames (black letterbox bars, flat walls) drive some activations towards zero,
/// and x86 handles denormal floats in microcode, 10–100× slower. Neural-network runtimes
/// run with denormals flushed; values below 1.2e-38 don't matter to any output. MXCSR is
/// per thread: the pool's own workers set it for good, and a caller's thread has it set
/// only for the duration of an inference (`withDenormalsFlushed`), so the engine never
/// changes its caller's floating-point behaviour.
public func flushDenormalsToZero() {
    #if arch(x86_64) && canImport(Glibc)
    var env = fenv_t()
    fegetenv(&env)
    if env.__mxcsr & ftzDaz != ftzDaz {
        env.__mxcsr |= ftzDaz
        fesetenv(&env)
    }
    #endif
}

/// Runs `body` with denormals flushed on this thread, then restores the thread's state.
@inline(__always)
public func withDenormalsFlushed<T>(_ body: () throws -> T) rethrows -> T {
    #if arch(x86_64) && canImport(Glibc)
    var saved = fenv_t()
    fegetenv(&saved)
    if saved.__mxcsr & ftzDaz == ftzDaz { return try body() }
    var flushed = saved
    flushed.__mxcsr |= ftzDaz
    fesetenv(&flushed)
    defer { fesetenv(&saved) }
    return try body()
    #else
    return try body()
    #endif
}

private let ftzDaz: UInt32 = 0x8040   // MXCSR bit 15 (flush to zero) and bit 6 (denormals are zero)
