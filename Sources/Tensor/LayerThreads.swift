import CBLAS
import Foundation
import Synchronization

/// The threads a training step runs on: the layers' GEMMs (`PanelGemm`) and their own loops
/// (batch norm, the graph gathering, ReLU), which otherwise run on one core while the others
/// wait (a third of an ST-GCN epoch's time at 2 threads), and as many for OpenBLAS's
/// remaining products (the heads, ST-GCN++'s gathering). Set for a training run or an evaluation; 1 everywhere else (the pose
/// engine splits its own work, and live runs the classifier beside it).
///
/// A loop is cut into `pieces(_:minPerPiece:)` contiguous pieces that depend only on its
/// length and the thread count, never on which thread runs which piece, so a reduction
/// that sums per piece and then adds the pieces in order gives the same bits every run.
public enum LayerThreads {
    private static let threads = Atomic<Int>(1)
    /// Its own pool: between two loops OpenBLAS's threads run the GEMMs, and a worker that
    /// spun on there as the engine's do would take a core from them.
    private static let pool = ThreadPool(threads: ProcessInfo.processInfo.activeProcessorCount, spinIterations: 1_000)

    public static var count: Int { threads.load(ordering: .relaxed) }

    /// OpenBLAS's threads and the layers' to `n` (≥ 1).
    public static func set(_ n: Int) {
        let n = max(1, n)
        openblas_set_num_threads(Int32(n))
        threads.store(n, ordering: .relaxed)
    }

    /// How many pieces a loop over `length` items is cut into: 1 on one thread or when it is
    /// short, else a few per thread so that a descheduled thread does not hold up the rest.
    public static func pieces(_ length: Int, minPerPiece: Int) -> Int {
        let n = count
        guard n > 1 else { return 1 }
        return max(1, min(n * 4, length / max(1, minPerPiece)))
    }

    /// Calls `body(range, piece)` for each of `pieces` contiguous pieces of 0..<length, on
    /// up to `count` threads; returns when all are done.
    @inline(__always)
    public static func run(_ length: Int, pieces: Int, _ body: (_ range: Range<Int>, _ piece: Int) -> Void) {
        if pieces <= 1 { if length > 0 { body(0..<length, 0) }; return }
        pool.run(tasks: pieces, threads: count) { task, _ in
            body(chunk(length, parts: pieces, index: task), task)
        }
    }

    /// `run` with `pieces(length, minPerPiece:)` pieces, for loops whose items are independent.
    @inline(__always)
    public static func forEach(_ length: Int, minPerPiece: Int, _ body: (_ range: Range<Int>) -> Void) {
        run(length, pieces: pieces(length, minPerPiece: minPerPiece)) { range, _ in body(range) }
    }
}
