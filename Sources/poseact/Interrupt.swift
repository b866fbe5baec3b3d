import Basics
import Foundation
import Live

/// Ctrl-C and SIGTERM, taken on a dispatch queue (not in a signal handler): they stop the
/// live pipeline (whose summary is still printed) and end the wait after the input, or
/// stop the children poseact started (`forwardSignals`: crossval's runs, the studio's commands).
enum Interrupt {
    nonisolated(unsafe) static var pipeline: LivePipeline?
    private static let lock = NSLock()
    nonisolated(unsafe) private static var received = false
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    static var happened: Bool { lock.lock(); defer { lock.unlock() }; return received }

    static func install(stopping live: LivePipeline) {
        pipeline = live
        install { _ in pipeline?.stop() }
    }

    /// From now on SIGINT and SIGTERM no longer end poseact: each sets `happened` and calls
    /// `action` with the signal.
    static func install(_ action: @escaping @Sendable (Int32) -> Void) {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                lock.lock(); received = true; lock.unlock()
                action(sig)
            }
            source.resume()
            sources.append(source)
        }
    }
}

extension ChildProcess {
    /// From now on SIGINT and SIGTERM sent to poseact go to every running child, and no new
    /// child starts; `Interrupt.happened` says one came.
    static func forwardSignals() {
        Interrupt.install { signal in stopAll(signal) }
    }
}
