import Foundation

// Timing for the benchmarks and the live summary.

/// Times `body` `runs` times after `warmup` untimed runs; milliseconds, sorted.
func timeRuns(_ runs: Int, warmup: Int, _ body: () -> Void) -> [Double] {
    for _ in 0..<warmup { body() }
    var times: [Double] = []
    times.reserveCapacity(runs)
    for _ in 0..<runs {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    }
    return times.sorted()
}

/// The p-quantile (0…1) of sorted values, linearly interpolated; NaN for none.
func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let rank = p * Double(sorted.count - 1)
    let lo = Int(rank.rounded(.down)), hi = Int(rank.rounded(.up))
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - Double(lo))
}

/// Rounded to 3 decimals: a microsecond in milliseconds.
func round3(_ x: Double) -> Double { (x * 1000).rounded() / 1000 }
