import Foundation
import Basics

/// Clips read from a keypoint file and what was wrong in it.
public struct ImportResult: Sendable {
    /// In the order the clips first appear in the file.
    public var clips: [ClipKeypoints]
    public var problems: [DataProblem]
    public init(clips: [ClipKeypoints], problems: [DataProblem]) { self.clips = clips; self.problems = problems }
}

/// Keypoint CSV, the interchange format (docs/formats.md): one row per frame,
/// `clip,label,split,frame,width,height` then `NAME_x,NAME_y,NAME_c` per joint, in pixels
/// from the top-left corner, `c` a confidence 0–1, empty x/y for a missing joint.
/// Penn Action's keypoints (datasets/README.md) come as one; docs/formats.md describes it.
public enum KeypointCSV {
    /// Columns a keypoint CSV must have (any case); `split` and `time` are optional.
    public static let requiredColumns = ["clip", "label", "frame", "width", "height"]
    /// At most this many problems of one kind are listed per file; one more line counts the rest.
    public static let problemsListedPerKind = 20

    /// The largest keypoint CSV read: it is read whole, and its clips take about as much
    /// again (Penn Action's 2,326 clips are 38 MB).
    public static let maxFileBytes = 1 << 30

    /// Reads a keypoint CSV into clips.
    ///
    /// - Columns are found by name, in any order and any case. Joint columns are
    ///   `NAME_x`, `NAME_y` and `NAME_c`; names are put in poseact's spelling
    ///   (`Skeleton.canonicalName`: `leftShoulder_x` → `left_shoulder`) and keep the
    ///   order of the header. A name outside `Skeleton.allNames` is kept and reported
    ///   once. A joint with no `_c` column has confidence 1 wherever x and y are given.
    ///   Other columns are reported once and ignored.
    /// - Rows are grouped by `clip` (text: `0001` stays `0001`), whether contiguous or
    ///   not, and sorted by `frame`. A frame number missing between the first and last
    ///   becomes a frame with no pose (NaN, NaN, 0), reported once per clip; a repeated
    ///   frame is reported and the first kept. A clip whose rows disagree on label or
    ///   split keeps its first row's, reported once.
    /// - x and y are normalised by the row's `width` and `height`. Empty x and y, or
    ///   `nan` in both, make the joint missing (NaN, NaN, 0); `nan` beside a number is a
    ///   problem, and the joint missing.
    /// - Times: frames are `1/fps` apart, from 0 at the clip's first frame. With a `time`
    ///   column (seconds), its values are used instead, shifted so the first frame is at
    ///   0; `start`/`end` then give the span in the source (`end` = last time + one
    ///   frame), and `fps` is the clip's mean frame rate.
    /// - Problems name the row (its line in the file, header = 1). A row with the wrong
    ///   number of fields, or a `frame`, `width`, `height` or `time` that is not a
    ///   number, is skipped; a joint value that is not a number makes that joint missing
    ///   in that frame.
    /// - Throws `DatasetError` if the file cannot be read, is empty, lacks a required
    ///   column, or has no joint columns.
    public static func read(_ path: String, fps: Double = 30) throws -> ImportResult {
        guard fps.isFinite && fps > 0 else { throw DatasetError("frame rate must be a positive number, not \(fps)") }
        let data: Data
        do { data = try InputFile.read(path, limit: maxFileBytes, what: "keypoint CSV") } catch let error as InputFileError {
            throw DatasetError(error.message)
        }
        return try data.withUnsafeBytes { raw in
            var importer = KeypointCSVImporter(path: path, fps: fps, bytes: raw.bindMemory(to: UInt8.self))
            return try importer.run()
        }
    }
}
