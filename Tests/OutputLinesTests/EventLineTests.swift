import Basics
import Evaluation
import Foundation
import OutputLines
import XCTest

/// Each kind of line is read back as what was written, its "type" picks its kind, and a line
/// of a kind poseact does not print, or missing a field its kind has, is refused. (The
/// lines the commands really print are read with these types in PoseactCLITests.)
final class EventLineTests: XCTestCase {
    static let occurrence = OccurrenceLine(person: 1, label: "correct", start: 3.9, end: 7.1, peakConfidence: 0.98,
                                           meanConfidence: 0.912, repetitions: 4)
    static let examples: [EventLine] = [
        .prediction(PredictionLine(time: 1.25, person: 1, label: "correct", confidence: 0.875, fps: 29.9, dropped: 0)),
        .state(StateLine(time: 1.25, person: -1, from: "none", to: "correct")),
        .occurrence(occurrence),
        .repetition(RepetitionLine(person: 1, index: 3, label: nil, start: 5.4, end: 7.2, duration: 1.8, turn: 6.3,
                                   angles: ["body_line": .init(min: 160, max: 178, atTurn: 171), "left_elbow": .init(min: 80, max: 170, atTurn: nil)])),
        .angles(AnglesLine(person: 2, time: 0.5, angles: ["left_elbow": 91.5, "right_elbow": nil])),
        .trajectory(TrajectoryLine(id: 3, revision: 1, start: 1.2, end: 2.05, ending: "left_frame", confidence: 0.9, residual: 1.5,
                                   objectSize: 0.01, equation: ["a": 0.001, "b": -1, "c": 300], points: [[1.2, 10, 20]],
                                   projected: [[1.2, 10.5, 19.5]], startSpeed: 812.5, launchAngle: 31.5, speedUnit: "px/s",
                                   flightTime: 0.6, apex: [1.5, 200, 80], bounces: [[1.8, 400, 600]])),
        .throwMade(ThrowLine(person: 1, trajectory: 3, release: 1.2, releaseX: 10, releaseY: 20, throwType: "overhand",
                             typeConfidence: 0.8, arm: "right", releaseAngle: 31, launchAngle: 28.5, speed: 7.9, speedUnit: "m/s", hit: true)),
        .summary(LiveSummaryLine(frames: 300, droppedFrames: 2, fps: 29.5, latencyMsMedian: 12.5, latencyMsP95: 20.25,
                                 predictionLatencyMsP95: 30, seconds: ["correct": 9.3], people: [
                                    PersonLine(person: 1, seconds: ["correct": 9.3], repetitions: 4, occurrences: [occurrence])],
                                 trajectories: 1, trajectoryMsMedian: 2.5, trajectoryMsP95: 4, trajectoryFramesDropped: 0,
                                 throwers: [ThrowerLine(person: 1, throwCount: 1, perType: ["overhand": 1], meanSpeed: 7.9, bestSpeed: 7.9,
                                                        speedUnit: "m/s", meanAngle: 31, hitRate: 1)])),
        .epoch(EpochLine(EpochRecord(epoch: 2, trainLoss: 0.5, trainAccuracy: 0.8, learningRate: 0.001, seconds: 1.5), epochs: 20, best: true)),
    ]

    func testEveryKindIsReadBackAsWritten() throws {
        XCTAssertEqual(Self.examples.map(\.type), EventLine.types, "one example of each kind, in order")
        for line in Self.examples {
            XCTAssertEqual(try EventLine(line: line.line), line, line.line)
        }
    }

    /// The wire names the page, the studio and users' scripts read (snake_case; "throws" for
    /// a thrower's count; a joint not seen as null).
    func testTheWireNamesAreTheDocumentedOnes() throws {
        let summary = Self.examples[7].line, angles = Self.examples[4].line
        for key in ["\"latency_ms_p95\":20.25", "\"prediction_latency_ms_p95\":30", "\"trajectory_ms_median\":2.5", "\"throws\":1",
                    "\"dropped_frames\":2", "\"type\":\"summary\""] {
            XCTAssertTrue(summary.contains(key), "\(key) not in \(summary)")
        }
        XCTAssertTrue(angles.contains("\"right_elbow\":null"), angles)
        XCTAssertTrue(Self.examples[3].line.contains("\"range_of_motion\":18"), Self.examples[3].line)
        XCTAssertTrue(Self.examples[2].line.contains("\"peak_confidence\":0.98"), Self.examples[2].line)
    }

    func testAnUnknownKindOrAMissingFieldIsRefused() {
        XCTAssertThrowsError(try EventLine(line: #"{"type":"gesture","time":1}"#))
        XCTAssertThrowsError(try EventLine(line: #"{"time":1}"#))
        XCTAssertThrowsError(try EventLine(line: #"{"type":"occurrence","person":1,"label":"x","start":0}"#))
        XCTAssertThrowsError(try EventLine(line: "not json"))
    }
}
