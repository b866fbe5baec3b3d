/// One labeled clip to extract: a video (or a time range of one) and its label.
public struct ClipSource: Sendable, Equatable, Hashable {
    /// Stable and unique within a dataset: the video's path relative to the dataset root,
    /// plus "@start-end" (seconds, 2 decimals) for a range of a longer video.
    public var id: String
    /// Path of the video file.
    public var video: String
    public var label: String
    /// "train", "validation" or "test" when the dataset says; nil otherwise.
    public var split: String?
    /// Range within the video, seconds; nil for the whole video.
    public var start: Double?
    public var end: Double?

    public init(id: String, video: String, label: String, split: String? = nil, start: Double? = nil, end: Double? = nil) {
        self.id = id; self.video = video; self.label = label; self.split = split; self.start = start; self.end = end
    }
}

/// Something wrong with the input data: which file, which row (1-based, header = 1), what.
public struct DataProblem: Encodable, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var row: Int?
    public var message: String
    public init(file: String, row: Int? = nil, message: String) { self.file = file; self.row = row; self.message = message }
    public var description: String { row.map { "\(file):\($0): \(message)" } ?? "\(file): \(message)" }
}

/// The keypoints of one clip, as the keypoint store holds them.
public struct ClipKeypoints: Sendable, Equatable {
    public var id: String
    public var label: String
    public var split: String?
    /// Where it came from: a video path, or "file.csv" for imported keypoints.
    public var source: String
    public var start: Double?
    public var end: Double?
    /// Frame rate of `times` (the extraction rate, or the source's for imports).
    public var fps: Double
    public var width: Int
    public var height: Int
    /// Joint names, in the order of the keypoints' second axis.
    public var jointNames: [String]
    /// frames × joints × 3: x and y normalised to the frame (0–1, origin top-left) and a
    /// confidence 0–1. A missing joint, or every joint of a frame with no person, is NaN, NaN, 0.
    public var keypoints: [Float]
    /// Time of each frame, seconds from the start of the clip.
    public var times: [Double]
    /// frames × joints × 3, or nil: the pose model's 3-D "world" landmarks (BlazePose:
    /// metres, origin between the hips, axes as the image's: x right, y down, z away from
    /// the camera); NaN × 3 where the frame has no person. Nil for imported keypoints.
    public var world: [Float]?
    /// What produced the keypoints ("blazepose-full mediapipe-0.10.14", "import").
    public var estimator: String
    /// sha256 of the pose model files, when an estimator made them.
    public var modelHash: String?

    public init(id: String, label: String, split: String?, source: String, start: Double?, end: Double?, fps: Double,
                width: Int, height: Int, jointNames: [String], keypoints: [Float], times: [Double], estimator: String,
                modelHash: String? = nil, world: [Float]? = nil) {
        self.id = id; self.label = label; self.split = split; self.source = source; self.start = start; self.end = end
        self.fps = fps; self.width = width; self.height = height; self.jointNames = jointNames; self.keypoints = keypoints
        self.times = times; self.estimator = estimator; self.modelHash = modelHash
        self.world = world
    }

    public var frameCount: Int { times.count }
    /// Frames in which at least one joint is present.
    public var framesWithPerson: Int {
        let j = jointNames.count
        return (0..<frameCount).filter { f in (0..<j).contains { keypoints[(f * j + $0) * 3 + 2] > 0 } }.count
    }
}

extension ClipKeypoints {
    /// The same frame's world landmarks (metres) as a row of `world`: NaN × 3 per joint when
    /// there is no person, or the estimator gave none.
    public static func worldRow(_ world: [SIMD3<Float>]?) -> [Float] {
        let joints = Skeleton.blazePoseNames.count
        guard let world, world.count >= joints else { return [Float](repeating: .nan, count: joints * 3) }
        return world.prefix(joints).flatMap { [$0.x, $0.y, $0.z] }
    }
}
