/// Gives the people of a video stable ids from frame to frame, and chooses the prominent
/// person — the one an action classifier should watch.
///
/// **Ids.** A box may come with the id it had on the frame before (the pose pipeline's
/// track went on from it, or started again from a fresh detection of the same person): it
/// keeps that id while its track lives. The other boxes are matched to the tracks greedily
/// by intersection over union: all (track, box) pairs with IoU ≥ `minIoU` are taken from
/// the highest IoU down, each track and box used once. A matched box takes the track's id
/// (and the track takes the box); an unmatched box starts a new track. A track survives up
/// to `maxMissedFrames` consecutive frames without a match — a person hidden for a few
/// frames, or missed by the detector, keeps the id — and is dropped on the next miss.
///
/// **Newcomers.** A new track is a person, with the next id (1, 2, 3, …; an id is never
/// reused, even after its track is dropped), at once when nobody else is followed and it is
/// the frame's largest newcomer: the person at the start of a video or after a cut.
/// Otherwise it must be matched on `confirmFrames` frames in a row first, and has no id
/// until then; one that misses a frame before is dropped. A detection beside someone, or
/// right after a person was lost, is often a part of a body or a bad pose held for one frame
/// (the push-up montages: a hand, a head at the frame's edge), and with an id of its own it
/// would be someone who was never there.
///
/// **Prominent person.** The largest box, kept stable: once chosen, a person stays
/// prominent while present, unless another person's box is at least `switchAreaRatio`
/// times larger for `switchAfterFrames` consecutive frames. This follows the advice of
/// Apple's "Detecting human actions in a live video feed" sample to keep classifying one
/// stable subject: an action classifier reads a window of frames (typically 1–2 s), and a
/// window that mixes two people is noise, so flipping between two similar-sized people on
/// every frame would be worse than sticking with a slightly smaller one. When the
/// prominent person is absent, the largest present person becomes prominent at once.
public final class PersonTracker {
    /// One person followed over frames, or a newcomer not yet taken for one.
    public struct Track: Sendable {
        /// nil while the track is a newcomer not yet confirmed.
        public var id: Int?
        /// The box of the last frame the person was seen in.
        public var box: Box
        /// Time (seconds) of that frame.
        public var lastSeen: Double
        /// Consecutive frames since then without a match (0: matched in the last frame).
        public var missedFrames: Int
        /// Consecutive frames matched since the track started (counted until confirmed).
        public var hits = 1
    }

    public var minIoU: Float
    public var maxMissedFrames: Int
    /// Frames in a row a newcomer beside others must be seen on to be a person (1: at once).
    public var confirmFrames: Int
    public var switchAreaRatio: Float
    public var switchAfterFrames: Int

    /// The live tracks, oldest first.
    public private(set) var tracks: [Track] = []
    /// The id of the current prominent person (after the last `prominent(_:)`).
    public private(set) var prominentID: Int?

    private var nextID = 1
    private var challengerID: Int?
    private var challengerFrames = 0

    public init(minIoU: Float = 0.3, maxMissedFrames: Int = 5, confirmFrames: Int = 1,
                switchAreaRatio: Float = 1.5, switchAfterFrames: Int = 10) {
        self.minIoU = minIoU; self.maxMissedFrames = maxMissedFrames; self.confirmFrames = confirmFrames
        self.switchAreaRatio = switchAreaRatio; self.switchAfterFrames = switchAfterFrames
    }

    /// Forgets all tracks and the prominent choice. Ids keep counting up (never reused).
    public func reset() {
        tracks = []; prominentID = nil; challengerID = nil; challengerFrames = 0
    }

    /// Stable ids for one frame's boxes, in the boxes' order: nil for a newcomer not yet
    /// confirmed. `continuing[i]`, when given, is the id box i had on the frame before. Call
    /// once per frame, with an empty array for a frame without people (that counts as a
    /// miss for every track).
    public func update(_ boxes: [Box], continuing: [Int?] = [], time: Double) -> [Int?] {
        var trackOf = [Int?](repeating: nil, count: boxes.count)
        var trackTaken = [Bool](repeating: false, count: tracks.count)
        for (bi, id) in continuing.prefix(boxes.count).enumerated() {
            guard let id, let ti = tracks.firstIndex(where: { $0.id == id }), !trackTaken[ti] else { continue }
            trackTaken[ti] = true; trackOf[bi] = ti
        }
        for p in iouPairs(boxes) where !trackTaken[p.track] && trackOf[p.box] == nil {
            trackTaken[p.track] = true; trackOf[p.box] = p.track
        }
        var ids = [Int?](repeating: nil, count: boxes.count)
        var kept: [Track] = []
        kept.reserveCapacity(tracks.count + boxes.count)
        for (ti, var t) in tracks.enumerated() {
            if let bi = trackOf.firstIndex(of: ti) {
                t.box = boxes[bi]; t.lastSeen = time; t.missedFrames = 0
                if t.id == nil { t.hits += 1; if t.hits >= confirmFrames { t.id = takeID() } }
                ids[bi] = t.id
            } else {
                // A newcomer that misses a frame was not a person.
                guard t.id != nil else { continue }
                t.missedFrames += 1
            }
            if t.missedFrames <= maxMissedFrames { kept.append(t) }
        }
        let newcomers = boxes.indices.filter { trackOf[$0] == nil }
        let nobodyElse = !kept.contains { $0.id != nil }
        let largest = newcomers.max { boxes[$0].area < boxes[$1].area }
        for bi in newcomers {
            let confirmed = confirmFrames <= 1 || (nobodyElse && bi == largest)
            ids[bi] = confirmed ? takeID() : nil
            kept.append(Track(id: ids[bi], box: boxes[bi], lastSeen: time, missedFrames: 0))
        }
        tracks = kept
        return ids
    }

    private func takeID() -> Int {
        defer { nextID += 1 }
        return nextID
    }

    /// The (track, box) pairs that overlap by `minIoU` or more, highest IoU first; ties by
    /// older track, then by box order (deterministic).
    private func iouPairs(_ boxes: [Box]) -> [(iou: Float, track: Int, box: Int)] {
        var pairs: [(iou: Float, track: Int, box: Int)] = []
        for (ti, t) in tracks.enumerated() {
            for (bi, b) in boxes.enumerated() {
                let v = t.box.iou(b)
                if v >= minIoU { pairs.append((v, ti, bi)) }
            }
        }
        pairs.sort { a, b in
            if a.iou != b.iou { return a.iou > b.iou }
            if a.track != b.track { return a.track < b.track }
            return a.box < b.box
        }
        return pairs
    }

    /// The prominent person's id among this frame's persons (by `Person.id`), nil when
    /// there is nobody. Call once per frame (the hysteresis counts calls).
    public func prominent(_ persons: [Person]) -> Int? {
        guard let largest = persons.max(by: { $0.box.area < $1.box.area }) else {
            challengerID = nil; challengerFrames = 0
            return nil
        }
        guard let current = prominentID, let cur = persons.first(where: { $0.id == current }) else {
            prominentID = largest.id
            challengerID = nil; challengerFrames = 0
            return largest.id
        }
        // The largest other person challenges when clearly larger.
        let rival = persons.filter { $0.id != current }.max(by: { $0.box.area < $1.box.area })
        if let r = rival, r.box.area >= switchAreaRatio * cur.box.area {
            if challengerID == r.id { challengerFrames += 1 } else { challengerID = r.id; challengerFrames = 1 }
            if challengerFrames >= switchAfterFrames {
                prominentID = r.id
                challengerID = nil; challengerFrames = 0
            }
        } else {
            challengerID = nil; challengerFrames = 0
        }
        return prominentID
    }
}
