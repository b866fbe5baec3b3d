import Classifier
import Foundation
import Images
import Keypoints
import KeypointWindows
import Media
import Movement
import Pose
import TestData
import XCTest
@testable import Live

final class LiveTests: XCTestCase {
    /// A stand-in model: random weights, labels "a" and "b", 30 fps, a small TCN.
    static func standIn() -> ActionClassifier {
        var config = TrainingConfig()
        config.model.channels = 8
        config.model.dilations = [1]
        config.preprocessing.fps = 30
        return ActionClassifier(labels: ["a", "b"], spec: config.preprocessing, architecture: Architecture(config: config, classes: 2))
    }

    func prediction(_ t: Double, _ state: ActionState) -> Prediction {
        Prediction(time: t, frame: Int(t * 30), personID: 1, state: state, probabilities: [])
    }

    func testTimelineMergesAndShifts() {
        let ps = [prediction(1, .noPerson), prediction(2, .action(label: "a", confidence: 0.8)),
                  prediction(3, .action(label: "a", confidence: 0.6)), prediction(4, .lowConfidence(label: "b", confidence: 0.5))]
        let r = TimelineRange.ranges(ps, end: 5)
        XCTAssertEqual(r.map(\.label), ["no person", "a", "low confidence"])
        XCTAssertEqual(r.map(\.start), [1, 2, 4])
        XCTAssertEqual(r.map(\.end), [2, 4, 5])
        XCTAssertEqual(r[1].confidence!, 0.7, accuracy: 1e-6, "mean of 0.8 and 0.6")
        XCTAssertNil(r[0].confidence)
        XCTAssertEqual(TimelineRange.ranges(ps, end: 5, shift: -0.5).map(\.start), [0.5, 1.5, 3.5])
        // Given a start (annotate: the first prediction's window's first frame), the first
        // range begins there; never after its own prediction, never before 0.
        XCTAssertEqual(TimelineRange.ranges(ps, end: 5, shift: -0.5, start: -0.2).map(\.start), [0, 1.5, 3.5])
        XCTAssertEqual(TimelineRange.ranges(ps, end: 5, shift: -0.5, start: 0.3).map(\.start), [0.3, 1.5, 3.5])
        XCTAssertEqual(TimelineRange.ranges(ps, end: 5, shift: -0.5, start: 0.8).map(\.start), [0.5, 1.5, 3.5])
        XCTAssertEqual(TimelineRange.csv(r).split(separator: "\n").first, "start,end,label,confidence")
    }

    func testSummaryCountsTimeUntilTheNextPrediction() {
        var s = ActionSummary()
        s.add(prediction(1, .action(label: "a", confidence: 0.9)))
        s.add(prediction(3.5, .noPerson))
        s.add(prediction(4, .action(label: "a", confidence: 0.9)))
        s.finish(at: 6)
        XCTAssertEqual(s.seconds["a"]!, 4.5, accuracy: 1e-9)
        XCTAssertEqual(s.seconds["no person"]!, 0.5, accuracy: 1e-9)
    }

    /// Agreement leaves out 1 s around each change of annotated label: 0–4 a, 4–8 b; a
    /// timeline that switches at 4.5 is right on all the time it is judged on.
    func testAgreementLeavesOutTheChanges() {
        let annotations = [(start: 0.0, end: 4.0, label: "a"), (start: 4.0, end: 8.0, label: "b")]
        let late = [TimelineRange(start: 0, end: 4.5, label: "a", confidence: 1), TimelineRange(start: 4.5, end: 8, label: "b", confidence: 1)]
        let (agree, seconds) = TimelineAgreement.compute(late, annotations: annotations)
        XCTAssertEqual(agree, 1, accuracy: 1e-9)
        XCTAssertEqual(seconds, 6, accuracy: 0.06, "8 s less 2 s around the change")
        let wrong = [TimelineRange(start: 0, end: 8, label: "a", confidence: 1)]
        XCTAssertEqual(TimelineAgreement.compute(wrong, annotations: annotations).agreement, 0.5, accuracy: 0.01)
    }

    /// A stand-in model (random weights, 2 labels): predictions come every `stride` frames
    /// from the first that can pass the pose-share rule (60 % of 32 frames: the 24th),
    /// "no person" without people, a label or "low confidence" with one.
    func testRecognizerStates() {
        var config = TrainingConfig()
        config.model.channels = 8
        config.model.dilations = [1]
        let arch = Architecture(config: config, classes: 2)
        let classifier = ActionClassifier(labels: ["a", "b"], spec: config.preprocessing, architecture: arch)
        let recognizer = ActionRecognizer(classifier: classifier, minConfidence: 0.6)
        var out: [Prediction] = []
        for i in 1...40 { if let p = recognizer.push(persons: [], width: 640, height: 480, time: Double(i) / 30) { out.append(p) } }
        XCTAssertEqual(out.map(\.frame), [23, 31, 39], "every 8th frame from the 24th")
        XCTAssertTrue(out.allSatisfy { $0.state == .noPerson })

        let landmarks = (0..<33).map { j in Landmark(x: 300 + Float(j % 5) * 10, y: 100 + Float(j) * 8, visibility: 0.9) }
        let person = Person(id: 3, box: Box(x: 280, y: 90, width: 80, height: 280), landmarks: landmarks,
                            worldLandmarks: [SIMD3<Float>](repeating: .zero, count: 33), presence: 1, isProminent: true)
        recognizer.reset()
        out = []
        for i in 1...32 { if let p = recognizer.push(persons: [person], width: 640, height: 480, time: Double(i) / 30) { out.append(p) } }
        XCTAssertEqual(out.count, 2, "frames 24 and 32")
        let last = out.last!
        XCTAssertEqual(last.personID, 3)
        XCTAssertEqual(last.probabilities.reduce(0, +), 1, accuracy: 1e-5)
        let top = last.probabilities.max()!
        let label = last.probabilities[0] >= last.probabilities[1] ? "a" : "b"
        XCTAssertEqual(last.state, top < 0.6 ? .lowConfidence(label: label, confidence: top) : .action(label: label, confidence: top))
        // The first prediction already has a window: 24 of 32 frames hold a pose.
        XCTAssertNotEqual(out.first?.state, .noPerson, "24 of 32 frames")
        // A person who leaves: "no person" once fewer than 60 % of the window's frames hold one.
        out = []
        for i in 33...56 { if let p = recognizer.push(persons: [], width: 640, height: 480, time: Double(i) / 30) { out.append(p) } }
        XCTAssertEqual(out.map { $0.state == .noPerson }, [false, true, true], "24, 16 and 8 of 32 frames with a pose")
        recognizer.minConfidence = 1.01
        recognizer.reset()
        var lastState: ActionState?
        for i in 1...32 { if let p = recognizer.push(persons: [person], width: 640, height: 480, time: Double(i) / 30) { lastState = p.state } }
        XCTAssertEqual(lastState?.name, "low confidence")
    }

    /// `preprocessing.keypoint_filter: one_euro` is step 0 in live as in training: a noisy,
    /// moving person pushed frame by frame gives the last prediction the probabilities the
    /// model gives the training window of the same frames (to 1e-6: the same code on the same
    /// numbers), and the filter changes them (the test would see a live path that skipped it).
    func testLiveFiltersKeypointsAsTrainingDid() throws {
        var config = TrainingConfig()
        config.model.channels = 8
        config.model.dilations = [1]
        config.preprocessing.features = [.position, .velocity]
        // Deterministic noise of about 2 px.
        func noise(_ k: Int) -> Float { 2 * sinf(Float(k) * 12.9898 + 78.233 * sinf(Float(k))) }
        let frames = 40
        let people: [Person] = (0..<frames).map { t in
            let landmarks = (0..<33).map { j in
                Landmark(x: 300 + Float(j % 5) * 10 + 40 * sinf(Float(t) * 0.2) + noise(t * 66 + j),
                         y: 100 + Float(j) * 8 + noise(t * 66 + 33 + j), visibility: 0.9)
            }
            return Person(id: 1, box: Box(x: 280, y: 90, width: 80, height: 280), landmarks: landmarks,
                          worldLandmarks: [SIMD3<Float>](repeating: .zero, count: 33), presence: 1, isProminent: true)
        }
        let rows = people.flatMap { ClipKeypoints.row($0.landmarks, width: 640, height: 480) }
        let clip = ClipKeypoints(id: "c", label: "a", split: "train", source: "test", start: nil, end: nil, fps: 30, width: 640, height: 480,
                                 jointNames: Skeleton.blazePoseNames, keypoints: rows, times: (0..<frames).map { Double($0) / 30 },
                                 estimator: "test")
        var last: [String: [Float]] = [:]
        for filter in [KeypointFilter.oneEuro, .none] {
            config.preprocessing.keypointFilter = filter
            let classifier = ActionClassifier(labels: ["a", "b"], spec: config.preprocessing,
                                              architecture: Architecture(config: config, classes: 2))
            let recognizer = ActionRecognizer(classifier: classifier, minConfidence: 0)
            var probabilities: [Float] = []
            for t in 0..<frames {
                if let p = recognizer.push(persons: [people[t]], width: 640, height: 480, time: Double(t) / 30) { probabilities = p.probabilities }
            }
            let training = try XCTUnwrap(Preprocessing.windows(of: clip, spec: config.preprocessing).last)
            XCTAssertEqual(training.start, frames - 32)
            let want = classifier.probabilities(values: [training.values], masks: [training.mask])[0]
            XCTAssertEqual(probabilities.count, 2)
            for (a, b) in zip(probabilities, want) { XCTAssertEqual(a, b, accuracy: 1e-6, "\(filter)") }
            last[filter.rawValue] = probabilities
        }
        XCTAssertNotEqual(last["one_euro"], last["none"], "the filter changed nothing")
    }

    /// Two people in view, one doing push-up-like repetitions (the shoulders and head going
    /// down and up), one standing still: each gets predictions of their own, under their id;
    /// the first one's repetitions are theirs alone; the second, gone, is closed once unseen
    /// for a window and a second. `.prominent` follows one of them only.
    func testEveryoneInViewHasTheirOwnWindowAndCount() throws {
        let classifier = Self.standIn()
        func person(_ id: Int, x: Float, dip: Float, prominent: Bool) -> Person {
            // A standing figure's 33 joints; `dip` lowers the upper body (joints 0–16) by up to 60 px.
            let landmarks = (0..<33).map { j in
                Landmark(x: x + Float(j % 5) * 12, y: 100 + Float(j) * 8 + (j <= 16 ? 60 * dip : 0), visibility: 0.9)
            }
            return Person(id: id, box: Box(x: x - 10, y: 90, width: 80, height: 300), landmarks: landmarks,
                          worldLandmarks: [SIMD3<Float>](repeating: .zero, count: 33), presence: 1, isProminent: prominent)
        }
        var options = CoachOptions()
        options.angles = [try JointAngle.named("left_elbow", jointNames: Skeleton.blazePoseNames)]
        let coach = PeopleCoach(classifier: classifier, options: options)
        var predictions: [Int: Int] = [:], reps: [RepetitionReport] = [], angleFrames = 0
        func take(_ events: [CoachEvent]) {
            for e in events {
                switch e {
                case .prediction(let p): predictions[p.personID ?? -1, default: 0] += 1
                case .repetition(let r): reps.append(r)
                case .angles: angleFrames += 1
                case .occurrence: break
                }
            }
        }
        // 6 s: person 1 does 5 repetitions of 1 s after a second's rest; person 2 stands
        // still for the first 3 s, then leaves.
        for f in 0..<180 {
            let t = Double(f) / 30
            let dip = t < 1 ? 0 : Float(1 - cos(2 * Double.pi * (t - 1))) / 2
            var people = [person(1, x: 200, dip: dip, prominent: true)]
            if t < 3 { people.append(person(2, x: 450, dip: 0, prominent: false)) }
            take(coach.push(persons: people, width: 640, height: 480, time: t + 1.0 / 30))
        }
        XCTAssertEqual(coach.views.map(\.id), [1], "person 2 closed: unseen for more than 32 frames and a second")
        take(coach.finish(at: 6))
        XCTAssertEqual(reps.count, 5, "person 1's five repetitions")
        XCTAssertTrue(reps.allSatisfy { $0.person == 1 })
        XCTAssertNotNil(reps.first?.angles["left_elbow"], "each repetition's angle range")
        XCTAssertEqual(angleFrames, 180 + 90, "an angle line per person per frame they are in")
        // Person 1: a prediction every 8 frames from the 24th (20); person 2: from the 24th until
        // gone, then "no person" until closed.
        XCTAssertEqual(predictions[1], 20)
        XCTAssertGreaterThanOrEqual(predictions[2] ?? 0, 8)
        XCTAssertEqual(coach.summaries.map(\.person), [1, 2])
        XCTAssertEqual(coach.summaries.map(\.repetitions), [5, 0])

        options.people = .prominent
        let one = PeopleCoach(classifier: classifier, options: options)
        predictions = [:]; reps = []
        for f in 0..<90 {
            let t = Double(f) / 30
            take(one.push(persons: [person(1, x: 200, dip: 0, prominent: false), person(2, x: 450, dip: 0, prominent: true)],
                          width: 640, height: 480, time: t))
        }
        XCTAssertEqual(predictions.keys.sorted(), [2], "the prominent person only")
    }

    /// A slow consumer on a fast source: processing takes its first frame, then nothing until the
    /// source has ended, so every frame but the newest is dropped in the capture's mailbox, and
    /// that one count is what the stats and the prediction events report.
    func testSlowProcessingCountsTheDroppedFrames() throws {
        let pipeline = try PosePipeline(detectorPath: try TestData.model("pose_detection.tflite").path,
                                        landmarkPath: try TestData.model("pose_landmark_full.tflite").path,
                                        options: PipelineOptions(maxPeople: 1, threads: 1))
        let classifier = Self.standIn()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID().uuidString).mp4").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try VideoWriter(path: path, width: 64, height: 48, fps: 30)
        for _ in 0..<30 { try writer.write(RGBImage(width: 64, height: 48)) }
        try writer.finish()

        let reader = try VideoReader(path, options: ReaderOptions(targetFPS: 30, live: true))
        defer { reader.close() }
        let live = LivePipeline(pipeline: pipeline, coach: PeopleCoach(classifier: classifier, options: CoachOptions()))
        var frames = 0
        let stats = try live.run(reader: reader) { event in
            guard case .frame = event else { return }
            frames += 1
            if frames == 1 { reader.waitForEndOfInput() }
        }
        XCTAssertEqual(stats.frames, 2, "the first frame, then the newest")
        XCTAssertEqual(frames, 2)
        XCTAssertEqual(stats.dropped, 28, "30 frames, 2 processed, none above the 30 fps cap")
        XCTAssertEqual(stats.dropped, reader.droppedFrames)
        XCTAssertEqual(reader.skippedFrames, 0)
        XCTAssertNil(stats.error)
    }
}
