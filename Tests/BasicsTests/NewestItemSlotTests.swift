import Foundation
import XCTest
@testable import Basics

/// The newest-wins mailbox behind live capture and the classifier worker.
final class NewestItemSlotTests: XCTestCase {
    func testNewestWinsAndTheReplacedAreCounted() {
        let slot = NewestItemSlot<Int>()
        guard case .put = slot.put(1) else { return XCTFail("an empty slot takes the item") }
        guard case .replaced(1) = slot.put(2) else { return XCTFail("2 replaces the unread 1") }
        guard case .replaced(2) = slot.put(3) else { return XCTFail("3 replaces the unread 2") }
        XCTAssertEqual(slot.dropped, 2)
        XCTAssertEqual(slot.take(), 3, "the newest")
        guard case .put = slot.put(4) else { return XCTFail("taken: nothing to replace") }
        XCTAssertEqual(slot.take(), 4)
        XCTAssertEqual(slot.dropped, 2, "taken items are not dropped")
    }

    func testCloseWakesAWaitingTaker() {
        let slot = NewestItemSlot<Int>()
        let returned = expectation(description: "take returns")
        let result = Box()
        Thread {
            result.value = slot.take()
            returned.fulfill()
        }.start()
        Thread.sleep(forTimeInterval: 0.05)   // let it wait (if it has not yet, take sees the close at once)
        slot.close()
        wait(for: [returned], timeout: 10)
        XCTAssertNil(result.value)
        guard case .refused(7) = slot.put(7) else { return XCTFail("a closed slot refuses and gives the item back") }
    }

    func testClosingKeepsOrDiscardsTheUnreadItem() {
        let kept = NewestItemSlot<Int>()
        _ = kept.put(1)
        XCTAssertNil(kept.close())
        XCTAssertEqual(kept.take(), 1, "the last item is still taken after the end")
        XCTAssertNil(kept.take())

        let discarded = NewestItemSlot<Int>()
        _ = discarded.put(1)
        XCTAssertEqual(discarded.close(discarding: true), 1)
        XCTAssertNil(discarded.take())
        XCTAssertEqual(discarded.dropped, 0, "discarded on close, not replaced")
    }

    func testIdleWaitsForTheTakerToFinish() {
        let slot = NewestItemSlot<Int>()
        let finished = Box()
        let started = DispatchSemaphore(value: 0)
        Thread {
            guard let n = slot.take() else { return }
            started.signal()
            Thread.sleep(forTimeInterval: 0.05)
            finished.value = n
            slot.doneWithTaken()
        }.start()
        _ = slot.put(5)
        started.wait()
        slot.waitUntilIdle()
        XCTAssertEqual(finished.value, 5, "idle only once the taken item is done with")
    }
}

private final class Box: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Int?
    var value: Int? {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}
