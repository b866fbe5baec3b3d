/// The preprocessing of one pose sequence, fed a source frame at a time: the one path both
/// a clip's windows (`Preprocessing.windows(of:)`) and `live`'s last window go through.
///
/// `append` runs steps 0–3 on the new frame as it comes (filter, map joints, resample to
/// `spec.fps`, mark missing) and keeps the model frames it gives; `window(start:)` runs
/// steps 5–7 (keep, normalise, format) on `spec.window` of them. A clip cuts its windows
/// (step 4) from all its frames; live keeps only the last window's frames and asks for it.
///
/// Resampling is by timestamp from the first frame's time: model frame k, at first + k/fps,
/// is the nearest earlier source frame, or missing when that is more than 1.5 source frame
/// periods earlier (with `sourceFPS` 0, never). Model frame k is made as soon as a source
/// frame at or after its time has come, so live's window ends at its newest frame.
public final class StreamingPreprocessor {
    /// Which of its model frames a sequence keeps.
    public enum Retention: Sendable {
        /// Every frame from the first (a clip, cut into windows at the end).
        case all
        /// The last `spec.window` frames (live).
        case lastWindow
    }

    public let spec: PreprocessingSpec
    private let mapper: Preprocessing.JointMapper
    private let parents: [Int?]
    /// The source frame's size: the pixel reference points and normalisation depend on it.
    public let width: Int, height: Int
    private let sourceFPS: Double
    private let retention: Retention
    private let depth: Bool
    private let smoother: KeypointRowSmoother?

    /// Model frames kept: the last of the `frameCount` made.
    private var frames: [Preprocessing.Frame] = []
    /// Model frames made so far (also those no longer kept).
    public private(set) var frameCount = 0
    /// Model frames no longer kept: `frames[0]` is model frame `dropped`.
    private var dropped: Int { frameCount - frames.count }
    /// The first source frame's time: model frame k is at first + k / spec.fps.
    private var firstTime: Double?
    /// The newest source frame, mapped and marked, and its time.
    private var newest: (frame: Preprocessing.Frame, time: Double)?

    /// `jointNames`: the source's joints, each frame `jointNames.count` × (x, y in 0–1 of a
    /// `width` × `height` frame, confidence). `sourceFPS`: the source's frame rate, for the
    /// gap rule of resampling (0: a gap repeats the last frame). `depth`: also give each
    /// window its `depth` (for the `turn` augmentation).
    public init(jointNames: [String], width: Int, height: Int, spec: PreprocessingSpec, sourceFPS: Double = 0,
                retention: Retention, depth: Bool = false) {
        self.spec = spec; self.width = width; self.height = height
        self.sourceFPS = sourceFPS; self.retention = retention; self.depth = depth
        mapper = Preprocessing.JointMapper(source: jointNames, layout: spec.joints, spec: spec, depth: depth)
        parents = Preprocessing.boneParents(spec)
        smoother = spec.keypointFilter == .oneEuro ? KeypointRowSmoother() : nil
    }

    /// Adds one source frame: `row` in the source layout, `world` its world landmarks
    /// (`ClipKeypoints.world` rows) when there are any, at `time` seconds, later than the
    /// frame before's. A nil `time`: the frames are already at `spec.fps`, one model frame each.
    public func append(_ row: [Float], world: [Float]? = nil, time: Double?) {
        // A frame whose time is not a number has no place in the sequence (nor in the filter's state).
        if let time, !time.isFinite { return }
        // 0. filter, over the whole sequence from its first frame.
        var row = row
        if let smoother, let time { row = smoother.smooth(row, width: width, height: height, time: time) }
        // 1. map joints, 3. mark missing (a frame's own rule, so before resampling as after).
        var frame = mapper.map(row, world: world, width: width, height: height)
        Preprocessing.markMissing(&frame, provided: mapper.providedCount, spec: spec)
        guard let time else { store(frame); return }
        // 2. resample: the model frames up to this one's time (one before the first frame's
        // has no place).
        if firstTime == nil { firstTime = time }
        let due: Int
        if let count = Preprocessing.resampledCount([firstTime!, time], fps: spec.fps) {
            due = count
        } else {
            // Absurdly far on (a broken stream's clock): live takes it as a long pause and
            // goes on from this frame.
            guard time > firstTime!, retention == .lastWindow else { return }
            skip(spec.window)
            firstTime = time - Double(frameCount) / spec.fps
            due = frameCount + 1
        }
        let first = firstTime!
        var next = frameCount
        // Live after a long pause: frames that would leave the window at once are not made.
        if retention == .lastWindow, due - next > spec.window { skip(due - spec.window - next); next = frameCount }
        let maxGap = sourceFPS > 0 ? 1.5 / sourceFPS : .infinity
        while next < due {
            let t = first + Double(next) / spec.fps
            let source = time <= t + 1e-6 ? (frame: frame, time: time) : newest
            if let source, t - source.time <= maxGap + 1e-6 { store(source.frame) } else { store(.missing(spec.joints.count)) }
            next += 1
        }
        newest = (frame, time)
    }

    /// The window of `spec.window` model frames from model frame `start` (frames past the
    /// last are missing, as at the end of a short clip): 5. keep, 6. normalise, 7. format;
    /// nil when it has too few real poses, or its frames are no longer kept.
    public func window(start: Int) -> Window? {
        let first = dropped
        guard start >= first else { return nil }
        let w = (start..<(start + spec.window)).map { $0 < frameCount ? frames[$0 - first] : .missing(spec.joints.count) }
        guard Preprocessing.keep(w, spec: spec) else { return nil }
        let normalized = Preprocessing.normalize(w, width: width, height: height, spec: spec)
        var window = Window(clipID: "live", label: "", split: nil, start: start,
                            values: Preprocessing.format(normalized, spec: spec, parents: parents), mask: w.map { $0.real ? 1 : 0 })
        if depth { window.depth = Preprocessing.formatDepth(normalized, spec: spec, parents: parents) }
        return window
    }

    /// The window that ends with the newest model frame (a sequence shorter than a window:
    /// from its first frame, padded at the end); nil as `window(start:)`.
    public func lastWindow() -> Window? {
        window(start: max(0, frameCount - spec.window))
    }

    // MARK: the frames kept

    private func store(_ frame: Preprocessing.Frame) {
        frames.append(frame)
        frameCount += 1
        // Live drops what has left the window, a window's worth at a time.
        if retention == .lastWindow, frames.count >= 2 * spec.window { frames.removeFirst(frames.count - spec.window) }
    }

    /// Counts `n` model frames as made and gone at once (with every frame kept so far).
    private func skip(_ n: Int) {
        frames.removeAll(keepingCapacity: true)
        frameCount += n
    }
}
