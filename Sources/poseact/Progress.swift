import Foundation
import OutputLines

/// Progress of a long job on stderr: a redrawn bar with rate and ETA on a terminal, plain
/// lines (at most every few seconds) when stderr is a file or a pipe.
final class ProgressDisplay {
    let title: String, unit: String
    let total: Int
    private let isTerminal = isatty(2) == 1
    private var lastPrint = Date.distantPast
    private let start = Date()

    init(title: String, total: Int, unit: String) { self.title = title; self.total = total; self.unit = unit }

    func update(done: Int, detail: String = "") {
        let now = Date()
        let elapsed = now.timeIntervalSince(start)
        let interval: TimeInterval = isTerminal ? 0.1 : 5
        guard now.timeIntervalSince(lastPrint) >= interval || done == total else { return }
        lastPrint = now
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let line = ProgressLine(title: title, done: done, total: total, unit: unit, rate: rate,
                                eta: rate > 0 ? Double(total - done) / rate : 0)
        if isTerminal {
            let width = 30, filled = total > 0 ? min(width, width * done / total) : width
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            let tail = detail.isEmpty ? "" : "  " + String(detail.suffix(40))
            FileHandle.standardError.write(Data("\r\u{1B}[K\(title) \(bar) \(line.counts)\(tail)".utf8))
            if done == total { FileHandle.standardError.write(Data("\n".utf8)) }
        } else {
            // (The studio reads this line back with ProgressLine(parsing:).)
            FileHandle.standardError.write(Data("\(line.text)\n".utf8))
        }
    }

    static func duration(_ seconds: Double) -> String { ProgressLine.duration(seconds) }
}

/// One line on stderr.
func note(_ s: String) { FileHandle.standardError.write(Data((s + "\n").utf8)) }
