import Basics
import Classifier
import Evaluation
import Extraction
import Foundation
import Keypoints
import KeypointWindows
import Media
import Pose

/// What the recognizer says about the prominent person, as Apple's sample says it.
public enum ActionState: Equatable, Sendable {
    /// Fewer than `minPoseShare` of the window's frames hold a pose.
    case noPerson
    /// The best label's probability is under the threshold.
    case lowConfidence(label: String, confidence: Float)
    case action(label: String, confidence: Float)

    /// The label shown and summed in the summary: the action, or "no person" / "low confidence".
    public var name: String {
        switch self {
        case .noPerson: return "no person"
        case .lowConfidence: return "low confidence"
        case .action(let label, _): return label
        }
    }

    public var confidence: Float? {
        switch self {
        case .noPerson: return nil
        case .lowConfidence(_, let c), .action(_, let c): return c
        }
    }
}

/// One prediction: at `time` (seconds of the input), for the frames up to it.
public struct Prediction: Sendable {
    public var time: Double
    public var frame: Int
    public var personID: Int?
    public var state: ActionState
    /// Class probabilities (smoothed when smoothing is on); empty for `noPerson`.
    public var probabilities: [Float]

    public init(time: Double, frame: Int, personID: Int?, state: ActionState, probabilities: [Float]) {
        self.time = time; self.frame = frame; self.personID = personID; self.state = state; self.probabilities = probabilities
    }
}

/// Turns the poses of a video, frame by frame at the model's frame rate, into action
/// predictions: the prominent person's keypoints go through the very preprocessing of
/// training (`StreamingPreprocessor`) as they come, and every `stride` frames its last
/// window goes through the model.
///
/// With `background`, the model runs on a thread of its own (`ClassifierWorker`): `push`
/// hands the window over and returns at once, and the prediction comes out of a later
/// `push` (or `finish()`), still in order, with the time and frame of its window. Live
/// does this so that a slow model never holds up a frame; annotate and tests do not (their
/// predictions must not depend on timing).
public final class ActionRecognizer {
    public let classifier: ActionClassifier
    public var spec: PreprocessingSpec { classifier.spec }
    /// Under this probability the state is `lowConfidence` (Apple's sample: 0.6).
    public var minConfidence: Float
    /// Predictions averaged (their probabilities) into the one reported; 1 = none.
    public var smoothing: Int
    /// Frames by which the predictions come later than the earliest they could: people who
    /// appear together get different phases, so that their models do not all run on one frame.
    public var phase = 0
    /// The prominent person's poses through the model's preprocessing, frame by frame, from
    /// when they are first seen; its last window is the model input. Made at the first frame
    /// (and again when the frame size changes: the pixel reference points depend on it).
    private var sequence: StreamingPreprocessor?
    private var recent: [[Float]] = []
    private var frameCount = 0
    private var nextPrediction: Double?
    /// The time of the last frame pushed.
    public private(set) var lastTime: Double?
    /// A window to classify: its values and mask (nil: no person), and whose it is.
    struct Job { var window: (values: [Float], mask: [Float])?; var time: Double; var frame: Int; var personID: Int? }
    private let worker: ClassifierWorker<Job, (Job, [Float])>?
    /// Predictions finished by the worker, not yet returned.
    private var finished: [Prediction] = []

    /// The model's milliseconds per window go to `modelTimes` (the coach's, for `bench live`).
    public convenience init(classifier: ActionClassifier, minConfidence: Float = 0.6, smoothing: Int = 1, background: Bool = false) {
        self.init(classifier: classifier, minConfidence: minConfidence, smoothing: smoothing, background: background, modelTimes: nil)
    }

    init(classifier: ActionClassifier, minConfidence: Float, smoothing: Int, background: Bool, modelTimes: SharedTimes?) {
        self.classifier = classifier
        self.minConfidence = minConfidence
        self.smoothing = max(1, smoothing)
        self.modelTimes = modelTimes
        worker = background ? ClassifierWorker(name: "poseact-classifier") { job in (job, Self.classify(job, classifier, modelTimes)) } : nil
    }
    private let modelTimes: SharedTimes?

    deinit { worker?.close() }

    /// Windows the background model skipped because a newer one was due before it got to them.
    public var skippedWindows: Int { worker?.replaced ?? 0 }

    public func reset() {
        _ = worker?.finishAll()
        sequence = nil; recent = []; frameCount = 0; nextPrediction = nil; lastTime = nil; finished = []
    }

    /// With `background`: waits for the windows handed over and returns their predictions
    /// (the end of an input). Without: none.
    public func finish() -> [Prediction] {
        guard let worker else { return [] }
        let out = finished + worker.finishAll().map { prediction($0.0, $0.1) }
        finished = []
        return out
    }

    /// Adds one frame with the people found in it, `time` in seconds (frames come at the
    /// model's rate, or fewer when a live source drops some); returns a prediction every
    /// `stride` frames' worth of time (with `background`, a later frame returns it).
    public func push(persons: [Person], width: Int, height: Int, time: Double) -> Prediction? {
        push(person: persons.first(where: \.isProminent) ?? persons.first, width: width, height: height, time: time)
    }

    /// Adds one frame of one person (nil: not in this frame), as `push(persons:…)` does
    /// with the prominent one.
    public func push(person: Person?, width: Int, height: Int, time: Double) -> Prediction? {
        if sequence == nil || sequence?.width != width || sequence?.height != height {
            sequence = StreamingPreprocessor(jointNames: Skeleton.blazePoseNames, width: width, height: height, spec: spec,
                                             retention: .lastWindow)
        }
        let world = spec.features.contains(.world) ? ClipKeypoints.worldRow(person?.worldLandmarks) : nil
        sequence?.append(ClipKeypoints.row(person?.landmarks, width: width, height: height), world: world, time: time)
        lastTime = time
        frameCount += 1
        let period = Double(spec.stride) / spec.fps
        // The first prediction on the stride grid once enough frames have come for a window to
        // pass the pose-share rule: an earlier one would say "no person" whatever the frames
        // hold (with 32-frame windows and 60 %: the 24th frame). Half a frame of slack for
        // jittery times.
        if nextPrediction == nil {
            let strides = max(1, (spec.minPoseFrames + spec.stride - 1) / spec.stride)
            nextPrediction = time + Double(strides) * period - 1.5 / spec.fps + Double(phase) / spec.fps
        }
        if let next = nextPrediction, time >= next {
            nextPrediction = next + period * max(1, ((time - next) / period).rounded(.down) + 1)
            let w = sequence?.lastWindow()
            let job = Job(window: w.map { ($0.values, $0.mask) }, time: time, frame: frameCount - 1, personID: person?.id)
            guard let worker else {
                return prediction(job, Self.classify(job, classifier, modelTimes))
            }
            worker.submit(job)
        }
        guard let worker else { return nil }
        finished += worker.takeFinished().map { prediction($0.0, $0.1) }
        return finished.isEmpty ? nil : finished.removeFirst()
    }

    /// The model's probabilities for a job's window (none without a window).
    private static func classify(_ job: Job, _ classifier: ActionClassifier, _ times: SharedTimes?) -> [Float] {
        guard let window = job.window else { return [] }
        let start = monotonicSeconds()
        defer { times?.add((monotonicSeconds() - start) * 1000) }
        return classifier.probabilities(values: [window.values], masks: [window.mask])[0]
    }

    /// The prediction of a classified window: smoothed over the last ones, then the state.
    private func prediction(_ job: Job, _ probabilities: [Float]) -> Prediction {
        guard job.window != nil else {
            recent = []
            return Prediction(time: job.time, frame: job.frame, personID: nil, state: .noPerson, probabilities: [])
        }
        var p = probabilities
        recent.append(p)
        if recent.count > smoothing { recent.removeFirst(recent.count - smoothing) }
        if recent.count > 1 {
            p = (0..<p.count).map { k in recent.reduce(0) { $0 + $1[k] } / Float(recent.count) }
        }
        let best = argmax(p)
        let label = classifier.labels[best]
        let state: ActionState = p[best] < minConfidence ? .lowConfidence(label: label, confidence: p[best])
                                                          : .action(label: label, confidence: p[best])
        return Prediction(time: job.time, frame: job.frame, personID: job.personID, state: state, probabilities: p)
    }
}

/// Seconds per state, as the sample's Summary view: each prediction's state holds until
/// the next one.
public struct ActionSummary: Sendable {
    public private(set) var seconds: [String: Double] = [:]
    private var last: (name: String, time: Double)?

    public init() {}

    public mutating func add(_ p: Prediction) {
        if let last { seconds[last.name, default: 0] += max(0, p.time - last.time) }
        last = (p.state.name, p.time)
    }

    /// Closes the last state at `time` (the end of the input).
    public mutating func finish(at time: Double) {
        if let last { seconds[last.name, default: 0] += max(0, time - last.time) }
        last = nil
    }

    /// (state, seconds), longest first (ties by name).
    public var longestFirst: [(label: String, seconds: Double)] {
        seconds.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { ($0.key, $0.value) }
    }

    /// Several summaries' seconds added up (everyone's in a run).
    public static func total(_ summaries: [ActionSummary]) -> ActionSummary {
        var out = ActionSummary()
        for s in summaries { for (k, v) in s.seconds { out.seconds[k, default: 0] += v } }
        return out
    }

    /// "label  12.3 s" lines, longest first.
    public var lines: [String] { longestFirst.map { String(format: "%@  %.1f s", $0.label, $0.seconds) } }
}

/// Label ranges of a prediction timeline: consecutive predictions with the same state name
/// merged; a range runs from its first prediction to the next range's first.
public struct TimelineRange: Codable, Equatable, Sendable {
    public var start: Double
    public var end: Double
    public var label: String
    /// Mean confidence of its predictions (nil for "no person").
    public var confidence: Double?

    /// `shift` moves every prediction's time (annotate, which has the whole video, places a
    /// prediction at the middle of its window: −window/fps/2; live cannot look ahead: 0).
    /// `start`, when given, is where the first range begins (annotate: the start of the first
    /// prediction's window, since that prediction speaks for those frames); else at its
    /// prediction.
    public static func ranges(_ predictions: [Prediction], end: Double, shift: Double = 0, start: Double? = nil) -> [TimelineRange] {
        var out: [TimelineRange] = [], sums: [(Double, Int)] = []
        for (i, var p) in predictions.enumerated() {
            p.time = max(0, p.time + shift)
            if i == 0, let start { p.time = min(p.time, max(0, start)) }
            if let last = out.last, last.label == p.state.name {
                if let c = p.state.confidence { sums[sums.count - 1].0 += Double(c); sums[sums.count - 1].1 += 1 }
                continue
            }
            if !out.isEmpty { out[out.count - 1].end = p.time }
            out.append(TimelineRange(start: p.time, end: end, label: p.state.name, confidence: nil))
            sums.append(p.state.confidence.map { (Double($0), 1) } ?? (0, 0))
        }
        for i in out.indices where sums[i].1 > 0 { out[i].confidence = sums[i].0 / Double(sums[i].1) }
        return out
    }

    /// CSV with header start,end,label,confidence.
    public static func csv(_ ranges: [TimelineRange]) -> String {
        CSV.text(header: ["start", "end", "label", "confidence"], rows: ranges.map {
            [String(format: "%.3f", $0.start), String(format: "%.3f", $0.end), $0.label, $0.confidence.map { String(format: "%.3f", $0) } ?? ""]
        })
    }
}
