/// Gives the people of a video stable ids from frame to frame, and chooses the prominent
/// person — the one an action classifier should watch.
///
/// **Ids.** Each frame's boxes are matched to the tracks of the previous frames greedily
/// by intersection over union: all (track, box) pairs with IoU ≥ `minIoU` are taken from
/// the highest IoU down, each track and box used once. A matched box takes the track's id
/// (and the track takes the box); an unmatched box starts a new track with the next id
/// (1, 2, 3, …; an id is never reused, even after its track is dropped). A track survives
/// up to `maxMissedFrames` consecutive frames without a match — a person hidden for a few
/// frames, or missed by the detector, keeps the id — and is dropped on the next miss.
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
    /// One person followed over frames.
    public struct Track: Sendable {
        public let id: Int
        /// The box of the last frame the person was seen in.
        public var box: Box
        /// Time (seconds) of that frame.
        public var lastSeen: Double
        /// Consecutive frames since then without a match (0: matched in the last frame).
        public var missedFrames: Int
    }

    public var minIoU: Float
    public var maxMissedFrames: Int
    public var switchAreaRatio: Float
    public var switchAfterFrames: Int

    /// The live tracks, oldest first.
    public private(set) var tracks: [Track] = []
    /// The id of the current prominent person (after the last `prominent(_:)`).
    public private(set) var prominentID: Int?

    private var nextID = 1
    private var challengerID: Int?
    private var challengerFrames = 0

    public init(minIoU: Float = 0.3, maxMissedFrames: Int = 5, switchAreaRatio: Float = 1.5, switchAfterFrames: Int = 10) {
        self.minIoU = minIoU; self.maxMissedFrames = maxMissedFrames
        self.switchAreaRatio = switchAreaRatio; self.switchAfterFrames = switchAfterFrames
    }

    /// Forgets all tracks and the prominent choice. Ids keep counting up (never reused).
    public func reset() {
        tracks = []; prominentID = nil; challengerID = nil; challengerFrames = 0
    }

    /// Stable ids for one frame's boxes, in the boxes' order. Call once per frame, with an
    /// empty array for a frame without people (that counts as a miss for every track).
    public func update(_ boxes: [Box], time: Double) -> [Int] {
        var pairs: [(iou: Float, track: Int, box: Int)] = []
        for (ti, t) in tracks.enumerated() {
            for (bi, b) in boxes.enumerated() {
                let v = t.box.iou(b)
                if v >= minIoU { pairs.append((v, ti, bi)) }
            }
        }
        // Highest IoU first; ties by older track, then by box order (deterministic).
        pairs.sort { a, b in
            if a.iou != b.iou { return a.iou > b.iou }
            if a.track != b.track { return a.track < b.track }
            return a.box < b.box
        }
        var trackTaken = [Bool](repeating: false, count: tracks.count)
        var ids = [Int?](repeating: nil, count: boxes.count)
        for p in pairs where !trackTaken[p.track] && ids[p.box] == nil {
            trackTaken[p.track] = true
            ids[p.box] = tracks[p.track].id
            tracks[p.track].box = boxes[p.box]
            tracks[p.track].lastSeen = time
            tracks[p.track].missedFrames = 0
        }
        // Unmatched tracks miss a frame; those past the limit go.
        var kept: [Track] = []
        kept.reserveCapacity(tracks.count + boxes.count)
        for (ti, var t) in tracks.enumerated() {
            if !trackTaken[ti] { t.missedFrames += 1 }
            if t.missedFrames <= maxMissedFrames { kept.append(t) }
        }
        // Newcomers.
        for bi in boxes.indices where ids[bi] == nil {
            let id = nextID
            nextID += 1
            ids[bi] = id
            kept.append(Track(id: id, box: boxes[bi], lastSeen: time, missedFrames: 0))
        }
        tracks = kept
        return ids.map { $0! }
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
