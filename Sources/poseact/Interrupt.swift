import Foundation
import Live

/// Ctrl-C and SIGTERM, taken on a dispatch queue (not in a signal handler): they stop the
/// live pipeline (whose summary is still printed) and end the wait after the input.
enum Interrupt {
    nonisolated(unsafe) static var pipeline: LivePipeline?
    private static let lock = NSLock()
    nonisolated(unsafe) private static var received = false
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    static var happened: Bool { lock.lock(); defer { lock.unlock() }; return received }

    static func install(stopping live: LivePipeline) {
        pipeline = live
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                lock.lock(); received = true; lock.unlock()
                pipeline?.stop()
            }
            source.resume()
            sources.append(source)
        }
    }
}
