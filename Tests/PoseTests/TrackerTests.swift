import XCTest
import Media
@testable import Pose

final class TrackerTests: XCTestCase {
    private func box(_ x: Float, _ y: Float, _ w: Float = 100, _ h: Float = 200) -> Box {
        Box(x: x, y: y, width: w, height: h)
    }

    private func person(_ id: Int, _ b: Box) -> Person {
        Person(id: id, box: b, landmarks: [], worldLandmarks: [], presence: 1)
    }

    func testIdsFollowMovingBoxes() {
        let tracker = PersonTracker()
        // Two people walking in opposite directions, 8 px a frame, given in varying order.
        var firstIDs: [Int?] = []
        for f in 0..<30 {
            let a = box(50 + Float(f) * 8, 100), b = box(400 - Float(f) * 8, 120)
            let swapped = f % 2 == 1
            let ids = tracker.update(swapped ? [b, a] : [a, b], time: Double(f) / 30)
            let (ia, ib) = swapped ? (ids[1], ids[0]) : (ids[0], ids[1])
            if f == 0 { firstIDs = [ia, ib]; XCTAssertEqual(firstIDs, [1, 2]) }
            // While the boxes are apart they keep their ids; when they overlap the greedy
            // IoU match still prefers each person's own previous box.
            XCTAssertEqual([ia, ib], firstIDs, "frame \(f)")
        }
        XCTAssertEqual(tracker.tracks.count, 2)
    }

    func testNewcomersGetNewIdsNeverReused() {
        let tracker = PersonTracker(maxMissedFrames: 2)
        XCTAssertEqual(tracker.update([box(0, 0)], time: 0), [1])
        XCTAssertEqual(tracker.update([box(2, 0), box(300, 0)], time: 0.1), [1, 2])
        XCTAssertEqual(tracker.update([box(600, 0), box(4, 0), box(302, 0)], time: 0.2), [3, 1, 2])
        // Everyone leaves; after the tracks are dropped, a box at an old place is new.
        for k in 0..<3 { _ = tracker.update([], time: 0.3 + Double(k) / 10) }
        XCTAssertTrue(tracker.tracks.isEmpty)
        XCTAssertEqual(tracker.update([box(4, 0)], time: 1), [4])
        tracker.reset()
        XCTAssertEqual(tracker.update([box(4, 0)], time: 2), [5], "ids keep counting after reset")
    }

    func testTracksSurviveMissesThenDrop() {
        let tracker = PersonTracker()   // maxMissedFrames 5
        XCTAssertEqual(tracker.update([box(10, 10)], time: 0), [1])
        // Missed for 5 frames: still tracked, same id when seen again.
        for k in 1...5 { _ = tracker.update([], time: Double(k)) }
        XCTAssertEqual(tracker.tracks.map(\.missedFrames), [5])
        XCTAssertEqual(tracker.update([box(12, 10)], time: 6), [1])
        // Missed for 6 frames: dropped, a new id.
        for k in 7...12 { _ = tracker.update([], time: Double(k)) }
        XCTAssertTrue(tracker.tracks.isEmpty)
        XCTAssertEqual(tracker.update([box(12, 10)], time: 13), [2])
    }

    func testLowIoUIsNotAMatch() {
        let tracker = PersonTracker()
        XCTAssertEqual(tracker.update([box(0, 0)], time: 0), [1])
        // Moved by 60 % of its width: IoU = 40/160 = 0.25 < 0.3 → new person.
        XCTAssertEqual(tracker.update([box(60, 0)], time: 0.1), [2])
        // Greedy: one box between two tracks goes to the higher IoU.
        let t2 = PersonTracker()
        _ = t2.update([box(0, 0), box(200, 0)], time: 0)
        XCTAssertEqual(t2.update([box(170, 0)], time: 0.1), [2])
    }

    /// A newcomer beside someone followed has no id until matched on `confirmFrames` frames
    /// in a row; one that misses a frame before was never a person, and uses up no id.
    func testANewcomerBesideSomeoneWaitsToBeConfirmed() {
        let tracker = PersonTracker(confirmFrames: 3)
        XCTAssertEqual(tracker.update([box(0, 0)], time: 0), [1], "alone: a person at once")
        XCTAssertEqual(tracker.update([box(2, 0), box(300, 0)], time: 0.1), [1, nil])
        XCTAssertEqual(tracker.update([box(4, 0)], time: 0.2), [1], "the newcomer gone after one frame")
        XCTAssertEqual(tracker.tracks.count, 1)
        XCTAssertEqual(tracker.update([box(4, 0), box(600, 0)], time: 0.3), [1, nil])
        XCTAssertEqual(tracker.update([box(4, 0), box(602, 0)], time: 0.4), [1, nil])
        XCTAssertEqual(tracker.update([box(4, 0), box(604, 0)], time: 0.5), [1, 2], "three frames in a row: the next id")
    }

    /// With nobody followed (a video's start, a cut) the largest newcomer is a person at
    /// once and a smaller one beside them waits; while someone just lost may come back, a
    /// newcomer waits too.
    func testOnlyTheLargestNewcomerWhenNobodyIsFollowedIsAPersonAtOnce() {
        let tracker = PersonTracker(confirmFrames: 3)
        XCTAssertEqual(tracker.update([box(0, 0)], time: 0), [1])
        tracker.reset()
        XCTAssertEqual(tracker.update([box(500, 0, 20, 40), box(0, 0, 300, 150)], time: 1), [nil, 2])
        XCTAssertEqual(tracker.update([], time: 1.1), [])
        XCTAssertEqual(tracker.update([box(200, 0, 300, 150)], time: 1.2), [nil], "person 2 may come back")
        XCTAssertEqual(tracker.update([box(10, 0, 300, 150)], time: 1.3), [2])
        XCTAssertEqual(tracker.tracks.map(\.id), [2])
    }

    /// A box given the id it had on the frame before keeps it however far it moved (the
    /// pose pipeline started the person's track again from a fresh detection).
    func testAContinuingBoxKeepsItsID() {
        let tracker = PersonTracker()
        XCTAssertEqual(tracker.update([box(0, 0), box(300, 0)], time: 0), [1, 2])
        XCTAssertEqual(tracker.update([box(150, 0), box(290, 0)], continuing: [1, nil], time: 0.1), [1, 2])
        XCTAssertEqual(tracker.update([box(0, 0), box(290, 0)], time: 0.2), [3, 2], "without it: someone new")
    }

    func testProminentIsLargestAndSticky() {
        let tracker = PersonTracker()   // ratio 1.5, 10 frames
        let small = box(0, 0, 100, 200), similar = box(300, 0, 110, 210), big = box(300, 0, 150, 300)
        // First frame: largest wins.
        XCTAssertEqual(tracker.prominent([person(1, small), person(2, similar)]), 2)
        // Person 1 grows a little past 2 (not 1.5×): 2 stays.
        for _ in 0..<30 {
            XCTAssertEqual(tracker.prominent([person(1, box(0, 0, 120, 220)), person(2, similar)]), 2)
        }
        // Person 1 becomes ≥ 1.5× larger: switch only on the 10th consecutive frame.
        let huge = box(0, 0, 200, 300)   // 60000 vs 23100
        for f in 1...9 { XCTAssertEqual(tracker.prominent([person(1, huge), person(2, similar)]), 2, "frame \(f)") }
        XCTAssertEqual(tracker.prominent([person(1, huge), person(2, similar)]), 1)
        // An interrupted challenge starts counting again.
        for _ in 0..<9 { XCTAssertEqual(tracker.prominent([person(1, small), person(2, big)]), 1) }  // 45000 ≥ 1.5 × 20000
        XCTAssertEqual(tracker.prominent([person(1, small), person(2, small)]), 1)                   // not larger: reset
        for _ in 0..<9 { XCTAssertEqual(tracker.prominent([person(1, small), person(2, big)]), 1) }
        XCTAssertEqual(tracker.prominent([person(1, small), person(2, big)]), 2)
        // Prominent person leaves: the largest present takes over at once.
        XCTAssertEqual(tracker.prominent([person(1, small), person(3, box(0, 0, 10, 10))]), 1)
        XCTAssertNil(tracker.prominent([]))
    }
}
