import Foundation
import Keypoints

/// How steady and how self-consistent a store's keypoints are, in torso lengths (the clip's
/// median distance from mid-hips to mid-shoulders, in pixels), so that near and far people,
/// small and large frames, compare.
///
/// - **Jitter**: on still and slow joints (a joint moving under `slowSpeed` torso lengths a
///   frame, its speed taken over 4 frames of the raw keypoints, so the same samples are
///   measured before and after a filter), the mean frame-to-frame acceleration
///   |p(t+1) − 2 p(t) + p(t−1)|: a still joint should have none.
/// - **Lag** (of a filter): on moving joints (≥ `movingSpeed`), the delay d (frames, to a tenth)
///   for which the filtered track best matches the raw one shifted by d.
/// - **Mirror disagreement**: against the same clips extracted from their mirror image
///   (`extract --mirror`, which mirrors the poses back), the mean distance between a joint and
///   its mirror-run twin: the part of the error that depends on which way the person faces.
///
/// A joint counts where its confidence is at least `minConfidence` and it lies in the frame.
public struct KeypointQuality: Codable, Sendable {
    public static let slowSpeed: Float = 0.01, movingSpeed: Float = 0.03, minConfidence: Float = 0.5

    /// The body parts reported, by joint name.
    public static let parts: [(name: String, words: [String])] = [
        ("face", ["nose", "eye", "ear", "mouth", "head"]), ("trunk", ["shoulder", "hip", "neck", "root"]),
        ("arms", ["elbow", "wrist", "pinky", "index", "thumb", "hand"]), ("legs", ["knee", "ankle", "heel", "foot"]),
    ]

    /// One filter's figures.
    public struct Figures: Codable, Sendable {
        public var filter: String
        /// Mean acceleration on still and slow joints, torso lengths per frame², overall and per part.
        public var jitter: Double
        public var jitterByPart: [String: Double]
        /// Frames of delay on moving joints (0 for the raw keypoints).
        public var lagFrames: Double
        /// Mean distance to the mirror run's joints, torso lengths; nil without a mirror store.
        public var mirrorDisagreement: Double?
        public var stillSamples: Int, movingSamples: Int
    }

    public var clips: Int, frames: Int
    public var fps: Double
    public var figures: [Figures]

    /// Sums over clips for one filter.
    struct Tally {
        var jitter = 0.0, still = 0, moving = 0
        var byPart: [String: (Double, Int)] = [:]
        /// Squared error of the filtered track against the raw one shifted by d/10 frames, d = 0…100.
        var lagError = [Double](repeating: 0, count: 101)
        var mirror = 0.0, mirrorCount = 0
    }

    /// Measures `clips` (and their mirror runs, by id, if given) raw and under every filter.
    public static func measure(_ clips: [ClipKeypoints], mirrored: [String: ClipKeypoints]? = nil) -> KeypointQuality {
        let filters = KeypointFilter.allCases
        var tallies = [Tally](repeating: Tally(), count: filters.count)
        var frames = 0
        for clip in clips {
            frames += clip.frameCount
            let j = clip.jointNames.count
            guard j > 0, clip.frameCount >= 5, let torso = torsoLength(clip) else { continue }
            let rows = (0..<clip.frameCount).map { Array(clip.keypoints[($0 * j * 3)..<(($0 + 1) * j * 3)]) }
            let mirrorRows: [[Float]]? = mirrored?[clip.id].flatMap { m in
                m.frameCount == clip.frameCount && m.jointNames == clip.jointNames
                    ? (0..<m.frameCount).map { Array(m.keypoints[($0 * j * 3)..<(($0 + 1) * j * 3)]) } : nil
            }
            let partOf = clip.jointNames.map { name in parts.first { $0.words.contains { name.contains($0) } }?.name ?? "other" }
            let w = Float(max(clip.width, 1)), h = Float(max(clip.height, 1))
            for (f, filter) in filters.enumerated() {
                let seq = filter == .none ? rows : KeypointRowSmoother.smooth(rows, times: clip.times, width: clip.width, height: clip.height)
                let mseq = filter == .none ? mirrorRows : mirrorRows.map { KeypointRowSmoother.smooth($0, times: clip.times, width: clip.width, height: clip.height) }
                tally(&tallies[f], raw: rows, seq: seq, mirror: mseq, joints: j, w: w, h: h, torso: torso, partOf: partOf)
            }
        }
        let figures = zip(filters, tallies).map { filter, t -> Figures in
            var lag = 0.0
            if filter != .none, let best = t.lagError.indices.min(by: { t.lagError[$0] < t.lagError[$1] }) { lag = Double(best) / 10 }
            return Figures(filter: filter.rawValue, jitter: t.still > 0 ? t.jitter / Double(t.still) : 0,
                           jitterByPart: t.byPart.mapValues { $0.1 > 0 ? $0.0 / Double($0.1) : 0 }, lagFrames: lag,
                           mirrorDisagreement: t.mirrorCount > 0 ? t.mirror / Double(t.mirrorCount) : nil,
                           stillSamples: t.still, movingSamples: t.moving)
        }
        return KeypointQuality(clips: clips.count, frames: frames, fps: clips.first?.fps ?? 30, figures: figures)
    }

    /// The clip's median torso length in pixels; nil when no frame shows hips and shoulders.
    static func torsoLength(_ clip: ClipKeypoints) -> Float? {
        let names = clip.jointNames
        func idx(_ n: String) -> Int? { Skeleton.index(of: n, in: names) }
        guard let ls = idx("left_shoulder"), let rs = idx("right_shoulder"), let lh = idx("left_hip"), let rh = idx("right_hip") else { return nil }
        let j = names.count, w = Float(max(clip.width, 1)), h = Float(max(clip.height, 1))
        var lengths: [Float] = []
        for f in 0..<clip.frameCount {
            let b = f * j * 3
            func p(_ i: Int) -> (Float, Float)? {
                let c = clip.keypoints[b + i * 3 + 2], x = clip.keypoints[b + i * 3], y = clip.keypoints[b + i * 3 + 1]
                return c >= minConfidence && x.isFinite && y.isFinite ? (x * w, y * h) : nil
            }
            guard let a = p(ls), let bb = p(rs), let c = p(lh), let d = p(rh) else { continue }
            let dx = (a.0 + bb.0 - c.0 - d.0) / 2, dy = (a.1 + bb.1 - c.1 - d.1) / 2
            lengths.append((dx * dx + dy * dy).squareRoot())
        }
        guard !lengths.isEmpty else { return nil }
        let m = lengths.sorted()[lengths.count / 2]
        return m > 1 ? m : nil
    }

    static func tally(_ t: inout Tally, raw: [[Float]], seq: [[Float]], mirror: [[Float]]?, joints: Int, w: Float, h: Float, torso: Float,
                      partOf: [String]) {
        let n = raw.count
        func point(_ rows: [[Float]], _ f: Int, _ i: Int) -> SIMD2<Float>? {
            guard f >= 0, f < rows.count else { return nil }
            let x = rows[f][i * 3], y = rows[f][i * 3 + 1], c = rows[f][i * 3 + 2]
            guard c >= minConfidence, x.isFinite, y.isFinite, (0...1).contains(x), (0...1).contains(y) else { return nil }
            return SIMD2(x * w, y * h) / torso
        }
        func length(_ v: SIMD2<Float>) -> Float { (v * v).sum().squareRoot() }
        for i in 0..<joints {
            for f in 0..<n {
                if let m = mirror, let a = point(seq, f, i), let b = point(m, f, i) {
                    t.mirror += Double(length(a - b)); t.mirrorCount += 1
                }
                guard let r0 = point(raw, f - 2, i), let r4 = point(raw, f + 2, i) else { continue }
                let speed = length(r4 - r0) / 4
                if speed < slowSpeed, let a = point(seq, f - 1, i), let b = point(seq, f, i), let c = point(seq, f + 1, i) {
                    let acc = Double(length(a - 2 * b + c))
                    t.jitter += acc; t.still += 1
                    t.byPart[partOf[i], default: (0, 0)].0 += acc; t.byPart[partOf[i], default: (0, 0)].1 += 1
                } else if speed >= movingSpeed, let s = point(seq, f, i) {
                    t.moving += 1
                    // The raw track at f − d/10 frames, linearly between frames.
                    for d in 0...100 {
                        let back = Float(d) / 10, k = f - Int(back.rounded(.up)), frac = Float(Int(back.rounded(.up))) - back
                        guard let p0 = point(raw, k, i), let p1 = point(raw, k + 1, i) else { continue }
                        let r = p0 + (p1 - p0) * frac
                        let e = s - r
                        t.lagError[d] += Double((e * e).sum())
                    }
                }
            }
        }
    }

    /// The figures as a table.
    public func text(title: String) -> String {
        var lines = [String(format: "%@: %d clips, %d frames; in torso lengths (a clip's median hips-to-shoulders distance)", title, clips, frames)]
        let partNames = Self.parts.map(\.name)
        lines.append("filter     jitter (still joints, per frame²)   " + partNames.map { $0.padding(toLength: 7, withPad: " ", startingAt: 0) }.joined()
                     + "  lag          mirror disagreement")
        for f in figures {
            let parts = partNames.map { p in f.jitterByPart[p].map { String(format: "%-7.4f", $0) } ?? "-      " }.joined()
            let lag = f.filter == KeypointFilter.none.rawValue ? "-          " : String(format: "%4.1f fr %3.0f ms", f.lagFrames, f.lagFrames / fps * 1000)
            let mirror = f.mirrorDisagreement.map { String(format: "%.4f", $0) } ?? "-"
            lines.append(f.filter.padding(toLength: 11, withPad: " ", startingAt: 0)
                         + String(format: "%-36.4f", f.jitter) + parts + "  " + lag + "  " + mirror)
        }
        if let s = figures.first { lines.append("(\(s.stillSamples) still and slow joint samples, \(s.movingSamples) moving)") }
        return lines.joined(separator: "\n")
    }
}
