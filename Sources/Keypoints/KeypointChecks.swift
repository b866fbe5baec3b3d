import Basics
import Foundation

/// The checks every keypoint import makes of what a file says, the keypoint CSV and the
/// other tools' formats alike (`KeypointCSVImporter`, `ForeignKeypoints`), with their bounds.
/// The bounds are far beyond real data and low enough that a typo, an overflow or a hostile
/// file is a line naming it, never a crash, a NaN model or gigabytes further down
/// (`windows`, `train` and `evaluate` trust a store's clips).
public enum KeypointChecks {
    /// Frame numbers up to a million (9 hours at 30 fps: a clip's frames are allocated from
    /// its first to its last number), and as many frames at most in a clip; pictures up to
    /// 100,000 pixels a side; joints within 100 picture sizes of the picture (a typo or an
    /// overflow, not a pose).
    public static let maxFrame = 1_000_000, maxPixels = 100_000
    public static let farOutside = 100.0
    /// Seconds between two frames next to each other (per frame number where a file numbers
    /// them): a 0.1 fps time-lapse. A clip's span in seconds is allocated as frames by the
    /// resampler, so one absurd time (1e12, or milliseconds read as seconds) must not pass.
    public static let maxFrameGap = 10.0
    /// The other tools' files are read whole, and their parsed JSON peaks at about 9 times
    /// a file's size (`ForeignJSON`; notebooks-free-scripts/reader-memory.sh): 64 MiB is
    /// about 600 MB at worst, and far more than one clip's keypoints (MediaPipe's 33
    /// landmarks are about 3 kB a frame: 64 MiB is 10 minutes at 30 fps).
    public static let maxFileBytes = 64 << 20

    /// What a file gives for one joint, checked.
    enum Joint: Equatable {
        /// x, y normalised to the picture, c in 0…1.
        case present(x: Float, y: Float, c: Float)
        /// The file says the joint is missing (NaN): nothing to report.
        case missing
        /// Missing in this frame because the value is unusable; `kind`/`summary` group the
        /// problem in a `ProblemLog`.
        case bad(kind: String, summary: String, message: String)
    }

    /// A joint as a file gives it: x, y in pixels of a `width` × `height` picture and its
    /// confidence `c`. NaN for both x and y is a missing joint, as files write one; an infinite
    /// value, a point far outside the picture or a confidence outside 0…1 (1e30 trains into
    /// a NaN model) is missing, with why.
    static func joint(_ name: String, x: Double, y: Double, c: Double, width: Int, height: Int) -> Joint {
        // Both coordinates NaN is how files write a missing joint; NaN beside a number (an x
        // without its y, a position with a NaN confidence) is no joint either, and said.
        if x.isNaN && y.isNaN { return .missing }
        if x.isNaN || y.isNaN || c.isNaN {
            return .bad(kind: "nan", summary: "joints with NaN beside numbers",
                        message: "\(name) is (\(x), \(y)) with confidence \(c): NaN beside a number is no position; the joint is missing in this frame")
        }
        for (axis, v) in [("x", x), ("y", y), ("c", c)] where !v.isFinite {
            return .bad(kind: "number", summary: "values that are not numbers",
                        message: "\(name)_\(axis) '\(v)' is not a number: the joint is missing in this frame")
        }
        if abs(x) > farOutside * Double(width) || abs(y) > farOutside * Double(height) {
            return .bad(kind: "far", summary: "joints far outside the picture",
                        message: "\(name) at (\(x), \(y)) is over \(Int(farOutside)) frame widths outside the \(width)×\(height) picture: "
                            + "the joint is missing in this frame")
        }
        guard (0...1).contains(c) else {
            return .bad(kind: "confidence", summary: "confidences outside 0…1",
                        message: "\(name)_c \(c) is not a confidence in 0…1: the joint is missing in this frame")
        }
        return .present(x: Float(x / Double(width)), y: Float(y / Double(height)), c: Float(c))
    }

    /// A picture's width or height as a whole number of pixels in 1…`maxPixels`, or nil.
    static func pixels(_ v: Double) -> Int? {
        guard v.isFinite, v == v.rounded(), v >= 1, v <= Double(maxPixels) else { return nil }
        return Int(v)
    }

    /// What a size is when `pixels` refuses it: "width '1e+30' is not a whole number of pixels in 1…100000".
    static func sizeProblem(_ name: String, _ shown: String) -> String {
        "\(name) '\(OneLine.excerpt(shown))' is not a whole number of pixels in 1…\(maxPixels)"
    }

    /// Why a label cannot be a clip's (a store refuses a clip without one), or nil.
    /// Labels appear in tables, pages, file names and every message: printable, and short.
    public static let maxLabelLength = 200

    public static func labelProblem(_ label: String) -> String? {
        if label.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return "an empty label" }
        if label.unicodeScalars.contains(where: { $0.properties.generalCategory.isControlOrUnassigned }) {
            return "a label with control characters (line breaks, escapes): '\(OneLine.excerpt(label))'"
        }
        if label.count > maxLabelLength { return "a label of \(label.count) characters (at most \(maxLabelLength)): '\(OneLine.excerpt(label))'" }
        return nil
    }

    /// Why a clip of another tool's format is left out, or nil: no frame has a person, not
    /// one joint with a position (a joint of confidence 0 with one counts: Penn Action's
    /// hidden joints), so it would give no window. (A keypoint CSV's clip keeps its rows: each
    /// value that made a joint missing is reported already; a file of frames where the tool
    /// found nobody says nothing else.)
    static func personProblem(_ clip: ClipKeypoints) -> String? {
        let anyJoint = stride(from: 0, to: clip.keypoints.count, by: 3).contains { clip.keypoints[$0].isFinite }
        return anyJoint ? nil : "clip '\(OneLine.excerpt(clip.id))': no frame has a person (every joint missing): not imported"
    }

    /// Why a clip's times are not usable, with the index of the frame that breaks the rule,
    /// or nil: every time finite, each after the one before, and at most `maxFrameGap` s a
    /// frame after it (per frame number, with `frames`: the file's frame numbers).
    public static func timesProblem(_ times: [Double], frames: [Int]? = nil) -> (index: Int, reason: String)? {
        for (i, t) in times.enumerated() {
            guard t.isFinite else { return (i, "time \(t) is not a number of seconds") }
            guard i > 0 else { continue }
            let step = t - times[i - 1]
            guard step > 0 else { return (i, "time \(t) is not after the frame before's \(times[i - 1])") }
            let numbers = frames.map { Double($0[i] - $0[i - 1]) } ?? 1
            if step > maxFrameGap * numbers {
                return (i, "time \(t) is \(step) s after the frame before's (at most \(Int(maxFrameGap)) s a frame)")
            }
        }
        return nil
    }

    /// Refuses a file over `maxFileBytes` before it is read.
    static func checkFileSize(_ path: String, what: String) throws {
        let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
        guard size <= maxFileBytes else {
            throw DatasetError("\(path): " + String(format: "%.1f", Double(size) / 1048576) + " MiB, over the \(maxFileBytes >> 20) MiB poseact reads of \(what) "
                + "(one clip's keypoints are far less): split it into clips")
        }
    }
}

extension Sequence where Element: Hashable {
    /// The first element that comes again, or nil. Names read from a file (joints, labels)
    /// index something: one given twice is refused with a line, before a
    /// `Dictionary(uniqueKeysWithValues:)` traps on it.
    public var firstRepeated: Element? {
        var seen = Set<Element>()
        return first { !seen.insert($0).inserted }
    }
}
