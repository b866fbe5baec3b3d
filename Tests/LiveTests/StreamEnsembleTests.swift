import Classifier
import Extraction
import Foundation
import Keypoints
import KeypointWindows
import Pose
import TestData
import XCTest
@testable import Live

/// A four-stream ensemble (joint, bone, joint motion, bone motion; two ST-GCNs, an
/// ST-GCN++ and a TCN, weighted 2:2:1:1) written to one weights file and read back, then
/// run the way `evaluate` runs it (the clip's windows) and the way `live` does (frame by
/// frame through the recognizer): the same probabilities.
final class StreamEnsembleTests: XCTestCase {
    /// A person of BlazePose's 33 landmarks (pixels of a 640×480 frame) swinging their arms
    /// and bending their knees, frame `f`.
    static func person(_ f: Int) -> Person {
        let phase = Float(f) * 0.3
        let landmarks = (0..<33).map { j -> Landmark in
            let swing = j >= 11 && j <= 22 ? 40 * sin(phase + Float(j)) : j >= 23 ? 15 * cos(phase) : 0
            return Landmark(x: 300 + Float(j % 7) * 12 + swing, y: 80 + Float(j) * 9 + swing / 2, visibility: 0.9)
        }
        return Person(id: 1, box: Box(x: 250, y: 70, width: 160, height: 320), landmarks: landmarks,
                      worldLandmarks: [SIMD3<Float>](repeating: .zero, count: 33), presence: 1, isProminent: true)
    }

    func testFourStreamFileRoundTripsAndLiveMatchesEvaluate() throws {
        let labels = ["a", "b", "c"]
        var members: [ActionClassifier] = []
        for (i, (stream, type)) in zip(Classifier.Stream.allCases, [ModelType.stgcn, .stgcn, .stgcnPlusPlus, .tcn]).enumerated() {
            var config = TrainingConfig()
            config.preprocessing.features = stream.features
            config.model.type = type
            config.model.blocks = [8, 16]
            config.model.channels = 8
            config.model.dilations = [1, 2]
            config.training.seed = UInt64(i + 1)
            let arch = Architecture(config: config, classes: labels.count)
            members.append(ActionClassifier(labels: labels, spec: config.preprocessing, architecture: arch))
        }
        let ensemble = try ActionClassifier(ensemble: members, weights: [2, 2, 1, 1], streams: Classifier.Stream.allCases)
        XCTAssertEqual(ensemble.spec.features, [.position, .confidence, .velocity, .bone, .boneVelocity])

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-streams-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("four.poseact.h5").path
        try ensemble.saveCheckingReadBack(to: file)
        let back = try ActionClassifier.load(path: file)
        XCTAssertEqual(back.members.map(\.stream), Classifier.Stream.allCases)
        XCTAssertEqual(back.members.map(\.weight), [2, 2, 1, 1])
        XCTAssertEqual(back.members.map(\.architecture.type.rawValue), ["stgcn", "stgcn", "stgcn++", "tcn"])

        // 64 frames at the model's 30 fps, as extraction stores them.
        let frames = 64, width = 640, height = 480
        let rows = (0..<frames).map { ClipKeypoints.row(Self.person($0).landmarks, width: width, height: height) }
        let clip = ClipKeypoints(id: "c", label: "a", split: "test", source: "synthetic", start: nil, end: nil, fps: 30,
                                 width: width, height: height, jointNames: Skeleton.blazePoseNames, keypoints: rows.flatMap { $0 },
                                 times: (0..<frames).map { Double($0) / 30 }, estimator: "test")
        let windows = Preprocessing.windows(of: clip, spec: back.spec)
        XCTAssertEqual(windows.map(\.start), [0, 8, 16, 24, 32])
        let evaluated = back.probabilities(windows)
        XCTAssertEqual(evaluated, ensemble.probabilities(windows), "the file gives the very nets")

        let recognizer = ActionRecognizer(classifier: back, minConfidence: 0)
        var live: [Int: [Float]] = [:]
        for f in 0..<frames {
            if let p = recognizer.push(persons: [Self.person(f)], width: width, height: height, time: Double(f) / 30) {
                live[p.frame] = p.probabilities
            }
        }
        // The prediction at frame 31 + 8k sees the window that starts at 8k.
        for (w, p) in zip(windows, evaluated) {
            let seen = try XCTUnwrap(live[w.start + 31], "no prediction at frame \(w.start + 31)")
            // Both run the same preprocessing on the same floats; the resampling of live's
            // timestamps (k/30 s) may round the last bit of a position: 1e-5 of a probability.
            for k in labels.indices { XCTAssertEqual(seen[k], p[k], accuracy: 1e-5) }
        }
        XCTAssertNotEqual(evaluated[0], evaluated[4], "the windows differ, so do their predictions")

        // With the model on its own thread (live in real time), the same predictions come out
        // of later pushes and `finish()`, in order. Frames here come far faster than the model
        // runs, so a window still waiting when the next is due gives way to it (counted); the
        // last is never skipped.
        let background = ActionRecognizer(classifier: back, minConfidence: 0, background: true)
        var later: [Prediction] = []
        for f in 0..<frames {
            if let p = background.push(persons: [Self.person(f)], width: width, height: height, time: Double(f) / 30) {
                later.append(p)
            }
        }
        later += background.finish()
        XCTAssertEqual(later.count + background.skippedWindows, live.count)
        XCTAssertEqual(later.last?.frame, live.keys.max())
        XCTAssertEqual(later.map(\.frame), later.map(\.frame).sorted())
        for p in later { XCTAssertEqual(p.probabilities, live[p.frame], "frame \(p.frame)") }
    }
}
