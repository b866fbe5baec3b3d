import Foundation

/// A one-item mailbox between a producer thread and a consumer thread in which the newest
/// item wins: an item put while another still waits replaces it, and the replaced ones are
/// counted (`dropped`). Nothing queues up, so a slow consumer always gets the freshest item
/// and memory stays flat. Live capture hands frames to the frame loop through one; the
/// classifier worker takes its windows from one.
///
/// The item taken last counts as in hand until the taker calls `doneWithTaken()`, so that
/// `waitUntilIdle()` can wait for the consumer to finish too, not only for the slot to empty.
public final class NewestItemSlot<Item>: @unchecked Sendable {
    private let condition = NSCondition()
    private var item: Item?
    private var inHand = false
    private var closed = false
    private var droppedCount = 0

    public init() {}

    /// What became of a put item.
    public enum PutResult {
        /// In the slot; nothing was waiting.
        case put
        /// In the slot, in place of this unread item (counted in `dropped`).
        case replaced(Item)
        /// Not put: the slot is closed. The item is given back.
        case refused(Item)
    }

    /// Items replaced before anyone took them.
    public var dropped: Int { condition.lock(); defer { condition.unlock() }; return droppedCount }

    public func put(_ newItem: Item) -> PutResult {
        condition.lock(); defer { condition.unlock() }
        guard !closed else { return .refused(newItem) }
        let old = item
        item = newItem
        condition.broadcast()
        guard let old else { return .put }
        droppedCount += 1
        return .replaced(old)
    }

    /// Waits for an item and takes it; nil once the slot is closed and empty.
    public func take() -> Item? {
        condition.lock(); defer { condition.unlock() }
        while item == nil && !closed { condition.wait() }
        guard let taken = item else { return nil }
        item = nil
        inHand = true
        condition.broadcast()
        return taken
    }

    /// The consumer is done with the item it took last (see `waitUntilIdle`).
    public func doneWithTaken() {
        condition.lock(); inHand = false; condition.broadcast(); condition.unlock()
    }

    /// Waits until no item waits and the one taken last is done with.
    public func waitUntilIdle() {
        condition.lock(); defer { condition.unlock() }
        while item != nil || inHand { condition.wait() }
    }

    /// Closes the slot: later puts are refused and a waiting `take` wakes. An unread item is
    /// still taken after this, unless `discarding`: then it is removed and returned (not counted
    /// as dropped: it was not replaced).
    @discardableResult
    public func close(discarding: Bool = false) -> Item? {
        condition.lock(); defer { condition.unlock() }
        closed = true
        condition.broadcast()
        guard discarding else { return nil }
        let left = item
        item = nil
        return left
    }
}
