import Foundation

/// What one fold of a cross-validation contributes: its test clips and windows, and how
/// many of each the model got right.
public struct FoldResult: Sendable, Equatable {
    public var clips: Int, clipsRight: Int, windows: Int, windowsRight: Int
    /// Windows right with the predictions smoothed over k = 1, 2, … windows
    /// (`EvaluationReport.smoothedWindowAccuracy`); empty when the report has none.
    public var smoothedWindowsRight: [Int]

    public init(clips: Int, clipsRight: Int, windows: Int, windowsRight: Int, smoothedWindowsRight: [Int] = []) {
        self.clips = clips; self.clipsRight = clipsRight; self.windows = windows; self.windowsRight = windowsRight
        self.smoothedWindowsRight = smoothedWindowsRight
    }

    /// The counts behind a fold's evaluation report.
    public init(_ report: EvaluationReport) {
        let n = Double(report.windows.count)
        self.init(clips: report.clips.count, clipsRight: Int((report.clips.accuracy * Double(report.clips.count)).rounded()),
                  windows: report.windows.count, windowsRight: Int((report.windows.accuracy * n).rounded()),
                  smoothedWindowsRight: (report.smoothedWindowAccuracy ?? []).map { Int(($0 * n).rounded()) })
    }
}

/// A cross-validation's figures (crossval.json, `crossval --json`): per seed, the clips and
/// windows right over all its folds (pooled, not a mean of the folds' accuracies); then the
/// mean, spread and range over the seeds.
public struct CrossValidationSummary: Codable, Equatable, Sendable {
    public struct Seed: Codable, Equatable, Sendable {
        public var seed: Int
        public var clipAccuracy: Double
        public var windowAccuracy: Double
        public var clipsRight: Int
        public var clips: Int
        /// Window accuracy with k = 1, 2, … windows' predictions averaged (empty: not known).
        public var smoothedWindowAccuracy: [Double] = []
    }

    public var folds: Int
    public var seeds: [Int]
    public var perSeed: [Seed]
    public var clipAccuracy: Double
    /// Sample standard deviation over the seeds (0 with one seed).
    public var clipAccuracySD: Double
    public var clipAccuracyMin: Double
    public var clipAccuracyMax: Double
    public var windowAccuracy: Double
    public var windowAccuracySD: Double
    /// The seeds' mean window accuracy with k = 1, 2, … windows' predictions averaged, and
    /// its spread (empty when a fold's report had none).
    public var smoothedWindowAccuracy: [Double] = []
    public var smoothedWindowAccuracySD: [Double] = []

    enum CodingKeys: String, CodingKey {
        case folds, seeds
        case perSeed, clipAccuracy, clipAccuracySD = "clipAccuracySd"
        case clipAccuracyMin, clipAccuracyMax
        case windowAccuracy, windowAccuracySD = "windowAccuracySd"
        case smoothedWindowAccuracy, smoothedWindowAccuracySD = "smoothedWindowAccuracySd"
    }

    /// `results[i]` are the folds of seed `seeds[i]`.
    public init(folds: Int, seeds: [Int], results: [[FoldResult]]) {
        precondition(seeds.count == results.count && !seeds.isEmpty, "CrossValidationSummary: one list of folds per seed")
        self.folds = folds
        self.seeds = seeds
        perSeed = zip(seeds, results).map { seed, rs in
            let c = rs.reduce(0) { $0 + $1.clips }, cr = rs.reduce(0) { $0 + $1.clipsRight }
            let w = rs.reduce(0) { $0 + $1.windows }, wr = rs.reduce(0) { $0 + $1.windowsRight }
            let ks = rs.map(\.smoothedWindowsRight.count).min() ?? 0
            let smoothed = (0..<ks).map { k in Double(rs.reduce(0) { $0 + $1.smoothedWindowsRight[k] }) / Double(max(w, 1)) }
            return Seed(seed: seed, clipAccuracy: Double(cr) / Double(max(c, 1)), windowAccuracy: Double(wr) / Double(max(w, 1)),
                        clipsRight: cr, clips: c, smoothedWindowAccuracy: smoothed)
        }
        let ks = perSeed.map(\.smoothedWindowAccuracy.count).min() ?? 0
        for k in 0..<ks {
            let (m, sd) = Self.meanSD(perSeed.map { $0.smoothedWindowAccuracy[k] })
            smoothedWindowAccuracy.append(m); smoothedWindowAccuracySD.append(sd)
        }
        (clipAccuracy, clipAccuracySD) = Self.meanSD(perSeed.map(\.clipAccuracy))
        (windowAccuracy, windowAccuracySD) = Self.meanSD(perSeed.map(\.windowAccuracy))
        clipAccuracyMin = perSeed.map(\.clipAccuracy).min()!
        clipAccuracyMax = perSeed.map(\.clipAccuracy).max()!
    }

    static func meanSD(_ v: [Double]) -> (Double, Double) {
        let m = v.reduce(0, +) / Double(v.count)
        let sd = v.count > 1 ? (v.map { ($0 - m) * ($0 - m) }.reduce(0, +) / Double(v.count - 1)).squareRoot() : 0
        return (m, sd)
    }
}
