/// Counts repetitions of any body movement from the pose sequence alone, with no training,
/// frame by frame (live) or over a recorded sequence (the same calls).
///
/// Each frame's joints are centred on their centroid and scaled by their spread, so that
/// where the person stands and how large they appear do not matter. Over the last `window`
/// seconds, the direction along which the pose varies most (the first principal component
/// of the normalised joint coordinates, by power iteration) turns the sequence into one
/// signal: for push-ups the body going down and up, for jumping jacks the arms and legs
/// opening, for waving the hand going left and right. A repetition is that signal leaving
/// its resting side, reaching the other side and coming back, with hysteresis: the sides
/// lie beyond ±`hysteresis` of the signal's half-range (between its 10th and 90th
/// percentiles over the window) around the middle of that range, so jitter inside the band
/// never counts, and a pause at either end moves neither side. Tempo may change from one repetition to the next: nothing assumes a
/// period, only that a repetition spans less than the window.
///
/// The direction is refreshed every `refresh` frames, its sign kept pointing as before, so
/// that a refresh never flips a side and counts a half cycle.
public final class RepetitionCounter {
    /// One completed repetition: when it ended, how long it took (seconds), and when it
    /// was farthest from where it rests (a push-up's bottom, a jumping jack's widest).
    public struct Repetition: Equatable, Sendable {
        public var index: Int
        public var end: Double
        public var duration: Double
        public var turn: Double
        public var start: Double { end - duration }
    }

    /// Seconds of poses the direction and the sides are taken from.
    public let window: Double
    /// Half-width of the dead band, as a share of the signal's half-range over the window.
    public let hysteresis: Float
    /// Smallest movement that counts: the signal's half-range, in units of the body's
    /// spread (the joints' RMS distance from their centroid, about half a torso length),
    /// below which the person is taken to be still. BlazePose's jitter on a still person is
    /// a few hundredths; a push-up or a wave is several tenths.
    public let minimumAmplitude: Float
    /// Frames between refreshes of the direction.
    public let refresh: Int

    public private(set) var count = 0
    public private(set) var repetitions: [Repetition] = []

    private var frames: [[Float]] = []      // normalised joint coordinates, oldest first
    private var times: [Double] = []
    private var direction: [Float] = []
    private var sinceRefresh = 0   // frames since the direction was found; an empty direction is found at once
    /// Which side the signal rests on between repetitions (+1 or −1), once it has left the
    /// band for the first time; `away` is true while it is on the other side.
    private var restingSide: Float = 0
    private var away = false
    private var lastEnd: Double?
    private var startOfRepetition: Double?
    /// The farthest the signal went on the other side in this repetition, and when.
    private var farthest: (value: Float, time: Double)?

    public init(window: Double = 4, hysteresis: Float = 0.5, minimumAmplitude: Float = 0.1, refresh: Int = 5) {
        precondition(window > 0 && hysteresis > 0 && minimumAmplitude >= 0 && refresh >= 1)
        self.window = window; self.hysteresis = hysteresis; self.minimumAmplitude = minimumAmplitude; self.refresh = refresh
    }

    /// Feeds one frame: `joints` holds (x, y) per joint, NaN where a joint (or the whole
    /// person) is missing; `time` in seconds, increasing. Returns the repetitions this frame
    /// completes: usually none or one; when the movement is first large enough to count, the
    /// ones already in the window, which were waiting for it.
    @discardableResult
    public func push(joints: [Float], time: Double) -> [Repetition] {
        guard let frame = Self.normalise(joints) else { return [] }   // no person: nothing moves
        if let first = frames.first, frame.count != first.count { reset() }
        frames.append(frame); times.append(time)
        while let oldest = times.first, time - oldest > window { frames.removeFirst(); times.removeFirst() }
        guard times.count >= 8, time - times[0] >= min(1, window / 2) else { return [] }

        sinceRefresh += 1
        if sinceRefresh >= refresh || direction.isEmpty {
            refreshDirection()
            sinceRefresh = 0
        }
        let raw = frames.map { dot($0, direction) }
        // Each value averaged with the two before it: pose jitter is frame to frame.
        let signal = raw.indices.map { i in (raw[max(i - 2, 0)] + raw[max(i - 1, 0)] + raw[i]) / 3 }
        let (centre, amplitude) = Self.range(signal)
        guard amplitude >= minimumAmplitude else { return [] }
        let band = hysteresis * amplitude
        func side(_ x: Float) -> Float { x > centre + band ? 1 : x < centre - band ? -1 : 0 }
        if restingSide == 0 {
            // The first time the movement is large enough: the side the window starts on is
            // the resting one, and the cycles already in the window are counted now.
            return signal.indices.compactMap { step(side(signal[$0]), value: signal[$0], at: times[$0]) }
        }
        return step(side(signal[signal.count - 1]), value: signal[signal.count - 1], at: time).map { [$0] } ?? []
    }

    /// The hysteresis machine: one value's side (+1, −1, or 0 inside the band).
    private func step(_ side: Float, value: Float, at time: Double) -> Repetition? {
        guard side != 0 else { return nil }
        if restingSide == 0 { restingSide = side; startOfRepetition = time; return nil }
        if side != restingSide {
            away = true
            if farthest == nil || -restingSide * value > -restingSide * farthest!.value { farthest = (value, time) }
            return nil
        }
        guard away else { startOfRepetition = time; return nil }
        // Back on the resting side after the other: one repetition.
        away = false
        count += 1
        let start = lastEnd ?? startOfRepetition ?? time
        let repetition = Repetition(index: count, end: time, duration: time - start, turn: farthest?.time ?? time)
        farthest = nil
        repetitions.append(repetition)
        lastEnd = time
        return repetition
    }

    /// Forgets the poses and the side (a new occurrence, or another person); keeps nothing
    /// of the count either.
    public func reset() {
        frames = []; times = []; direction = []; sinceRefresh = 0
        restingSide = 0; away = false; lastEnd = nil; startOfRepetition = nil; farthest = nil
        count = 0; repetitions = []
    }

    // MARK: the signal

    /// Centred on the centroid of the joints present, divided by their RMS distance from it;
    /// missing joints become 0 (the centroid). Nil when fewer than two joints are present.
    static func normalise(_ joints: [Float]) -> [Float]? {
        var cx: Float = 0, cy: Float = 0, n: Float = 0
        for j in stride(from: 0, to: joints.count - 1, by: 2) where joints[j].isFinite && joints[j + 1].isFinite {
            cx += joints[j]; cy += joints[j + 1]; n += 1
        }
        guard n >= 2 else { return nil }
        cx /= n; cy /= n
        var spread: Float = 0
        for j in stride(from: 0, to: joints.count - 1, by: 2) where joints[j].isFinite && joints[j + 1].isFinite {
            spread += (joints[j] - cx) * (joints[j] - cx) + (joints[j + 1] - cy) * (joints[j + 1] - cy)
        }
        spread = (spread / n).squareRoot()
        guard spread > 0 else { return nil }
        var out = [Float](repeating: 0, count: joints.count / 2 * 2)
        for j in stride(from: 0, to: out.count, by: 2) where joints[j].isFinite && joints[j + 1].isFinite {
            out[j] = (joints[j] - cx) / spread; out[j + 1] = (joints[j + 1] - cy) / spread
        }
        return out
    }

    /// The first principal component of the window's frames (power iteration on their
    /// covariance, started from the previous direction), its sign kept as before.
    private func refreshDirection() {
        let d = frames[0].count, n = Float(frames.count)
        var mean = [Float](repeating: 0, count: d)
        for f in frames { for i in 0..<d { mean[i] += f[i] } }
        for i in 0..<d { mean[i] /= n }
        var v = direction.count == d ? direction : (0..<d).map { Float(($0 * 7919) % 13) - 6 }   // any start that is not 0
        for _ in 0..<20 {
            var next = [Float](repeating: 0, count: d)
            for f in frames {
                var p: Float = 0
                for i in 0..<d { p += (f[i] - mean[i]) * v[i] }
                for i in 0..<d { next[i] += p * (f[i] - mean[i]) }
            }
            let norm = dot(next, next).squareRoot()
            guard norm > 0 else { return }
            for i in 0..<d { next[i] /= norm }
            v = next
        }
        if direction.count == d, dot(v, direction) < 0 { for i in 0..<d { v[i] = -v[i] } }
        direction = v
    }

    /// The middle and half-width of the range between the 10th and 90th percentiles.
    static func range(_ values: [Float]) -> (centre: Float, amplitude: Float) {
        let sorted = values.sorted()
        let low = sorted[sorted.count / 10], high = sorted[sorted.count - 1 - sorted.count / 10]
        return ((low + high) / 2, (high - low) / 2)
    }
}

@inline(__always) private func dot(_ a: [Float], _ b: [Float]) -> Float {
    var s: Float = 0
    for i in 0..<min(a.count, b.count) { s += a[i] * b[i] }
    return s
}
