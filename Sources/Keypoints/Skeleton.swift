/// Joint names and the skeleton of BlazePose, the derived joints poseact adds to it, and
/// finding a joint of one layout in another by name. How a derived joint is computed from
/// its parts is `Preprocessing.JointMapper`'s, the one place that does it.
///
/// poseact has one joint vocabulary (see ARCHITECTURE.md, "Joint names"): BlazePose's 33
/// names plus three derived joints, `head`, `neck` and `root`. A dataset or a model
/// declares the names it uses and is mapped by name, never by position.
public enum Skeleton {
    /// BlazePose's 33 landmark names, in the order of the landmark model's output.
    public static let blazePoseNames: [String] = [
        "nose",
        "left_eye_inner", "left_eye", "left_eye_outer",
        "right_eye_inner", "right_eye", "right_eye_outer",
        "left_ear", "right_ear",
        "mouth_left", "mouth_right",
        "left_shoulder", "right_shoulder",
        "left_elbow", "right_elbow",
        "left_wrist", "right_wrist",
        "left_pinky", "right_pinky",
        "left_index", "right_index",
        "left_thumb", "right_thumb",
        "left_hip", "right_hip",
        "left_knee", "right_knee",
        "left_ankle", "right_ankle",
        "left_heel", "right_heel",
        "left_foot_index", "right_foot_index",
    ]

    /// Joints computed from BlazePose's: `head` (mean of nose, eyes and ears that are
    /// present), `neck` (mid-shoulders), `root` (mid-hips). `neck` and `root` are where
    /// Apple Vision puts its joints of the same names.
    public static let derivedNames: [String] = ["head", "neck", "root"]

    /// `blazePoseNames` followed by `derivedNames`.
    public static let allNames: [String] = blazePoseNames + derivedNames

    /// BlazePose's skeleton: MediaPipe's `POSE_CONNECTIONS` (35 pairs, face and hands
    /// included) as index pairs into `blazePoseNames`, lower index first.
    public static let edges: [(Int, Int)] = [
        // face: nose → left eye → left ear, nose → right eye → right ear, mouth
        (0, 1), (1, 2), (2, 3), (3, 7), (0, 4), (4, 5), (5, 6), (6, 8), (9, 10),
        // shoulders, left arm and hand
        (11, 12), (11, 13), (13, 15), (15, 17), (15, 19), (15, 21), (17, 19),
        // right arm and hand
        (12, 14), (14, 16), (16, 18), (16, 20), (16, 22), (18, 20),
        // torso
        (11, 23), (12, 24), (23, 24),
        // legs and feet
        (23, 25), (24, 26), (25, 27), (26, 28), (27, 29), (28, 30), (29, 31), (30, 32),
        (27, 31), (28, 32),
    ]

    /// The 18-joint layout of Apple's `keypointsMultiArray` (the default model input), as
    /// reconstructed by the community — Apple does not document the order. Every name is
    /// in `allNames` (`neck` is derived).
    public static let visionLayout: [String] = [
        "nose", "neck",
        "right_shoulder", "right_elbow", "right_wrist",
        "left_shoulder", "left_elbow", "left_wrist",
        "right_hip", "right_knee", "right_ankle",
        "left_hip", "left_knee", "left_ankle",
        "right_eye", "left_eye", "right_ear", "left_ear",
    ]

    /// The parts of `head`: the joints averaged when visible enough.
    public static let headParts: [String] = ["nose", "left_eye", "right_eye", "left_ear", "right_ear"]

    /// A name in poseact's spelling: lower-case snake case. Apple Vision's joint names
    /// (`leftShoulder`, `rightEar`, `root`, …) and spellings with spaces or hyphens
    /// (`Left Shoulder`, `left-shoulder`) become `left_shoulder` etc.; poseact's own names
    /// are returned unchanged.
    public static func canonicalName(_ name: String) -> String {
        var out = ""
        out.reserveCapacity(name.count + 4)
        var previousWasLowerOrDigit = false
        for ch in name {
            if ch == " " || ch == "-" || ch == "." {
                if !out.isEmpty && out.last != "_" { out.append("_") }
                previousWasLowerOrDigit = false
            } else if ch.isUppercase {
                if previousWasLowerOrDigit && out.last != "_" { out.append("_") }
                out.append(contentsOf: ch.lowercased())
                previousWasLowerOrDigit = false
            } else {
                out.append(ch)
                previousWasLowerOrDigit = ch.isLowercase || ch.isNumber
            }
        }
        return out
    }

    /// Each joint's parent in a tree rooted at `root` (mid-hips): the spine through `neck`,
    /// the head from the neck, limbs outwards from the torso, hands and feet from the wrists
    /// and ankles. `root` has none. For the `bone` feature (a joint minus its parent).
    static let parentNames: [String: String] = [
        "neck": "root", "head": "neck", "nose": "neck",
        "left_eye_inner": "nose", "left_eye": "nose", "left_eye_outer": "left_eye", "left_ear": "left_eye",
        "right_eye_inner": "nose", "right_eye": "nose", "right_eye_outer": "right_eye", "right_ear": "right_eye",
        "mouth_left": "nose", "mouth_right": "nose",
        "left_shoulder": "neck", "left_elbow": "left_shoulder", "left_wrist": "left_elbow",
        "left_pinky": "left_wrist", "left_index": "left_wrist", "left_thumb": "left_wrist",
        "right_shoulder": "neck", "right_elbow": "right_shoulder", "right_wrist": "right_elbow",
        "right_pinky": "right_wrist", "right_index": "right_wrist", "right_thumb": "right_wrist",
        "left_hip": "root", "left_knee": "left_hip", "left_ankle": "left_knee",
        "left_heel": "left_ankle", "left_foot_index": "left_ankle",
        "right_hip": "root", "right_knee": "right_hip", "right_ankle": "right_knee",
        "right_heel": "right_ankle", "right_foot_index": "right_ankle",
    ]

    /// For each position of `layout`, the position of its parent joint (`parentNames`);
    /// when the parent is not in the layout, its parent, and so on up to `root`. Nil for
    /// `root`, for names outside poseact's vocabulary, and where no ancestor is in the layout.
    public static func parentPositions(of layout: [String]) -> [Int?] {
        layout.map { name in
            var p = parentNames[canonicalName(name)]
            while let q = p {
                if let i = index(of: q, in: layout) { return i }
                p = parentNames[q]
            }
            return nil
        }
    }

    /// The left/right partner of a joint name (`left_wrist` ↔ `right_wrist`,
    /// `mouth_left` ↔ `mouth_right`), the name itself for centre joints (`nose`, `head`,
    /// `neck`, `root`). Works on any snake-case name by swapping whole `left`/`right`
    /// words, so other layouts' names mirror too. For horizontal-flip augmentation.
    public static func mirror(_ name: String) -> String {
        let words = canonicalName(name).split(separator: "_", omittingEmptySubsequences: false)
        return words.map { w -> String in
            switch w {
            case "left": return "right"
            case "right": return "left"
            default: return String(w)
            }
        }.joined(separator: "_")
    }

    /// For each position of `layout`, the position of its mirrored name in `layout`
    /// (itself for centre joints); nil where the partner is not in the layout.
    /// Flipping a pose horizontally is `x' = width - x` plus this permutation.
    public static func mirrorPermutation(of layout: [String]) -> [Int?] {
        layout.map { index(of: mirror($0), in: layout) }
    }

    /// Index of a name in a layout, comparing canonical spellings (`canonicalName`), for
    /// keypoint sources with layouts of their own (e.g. Penn Action's 13 joints with
    /// `head`, or Apple Vision's camel-case names). Nil when absent.
    public static func index(of name: String, in layout: [String]) -> Int? {
        if let i = layout.firstIndex(of: name) { return i }
        let c = canonicalName(name)
        return layout.firstIndex { canonicalName($0) == c }
    }
}
