import Basics
import Foundation

extension KeypointCSV {
    /// A keypoint store back into the keypoint CSV `read` takes (`poseact dataset export
    /// --csv`): one row per frame, `clip,label,split,frame,width,height,time`, then
    /// `NAME_x,NAME_y,NAME_c` per joint in pixels from the top-left corner, empty x and y
    /// for a missing joint. `time` is seconds in the clip's source (its `start` added), so
    /// that importing the file again gives the same clips, frames, times and keypoints
    /// (to the 4 decimals written: 1e-4 px). Written to a temporary file and renamed.
    /// Returns the clips and rows written.
    @discardableResult
    public static func export(_ store: KeypointStore, to path: String, progress: ((Int) -> Void)? = nil) throws -> (clips: Int, rows: Int) {
        guard let first = store.entries.first else { throw DatasetError("\(store.path): no clips to export") }
        let joints = try store.read(first.id).jointNames
        var rows = 0
        let out = try AtomicFile(path)
        do {
            var text = CSV.row(["clip", "label", "split", "frame", "width", "height", "time"] + joints.flatMap { ["\($0)_x", "\($0)_y", "\($0)_c"] })
            // Through AtomicFile's descriptor: a full disk is its one line, not Foundation's.
            func flush() throws { try Data(text.utf8).withUnsafeBytes { try out.append($0) }; text = "" }
            for (n, entry) in store.entries.enumerated() {
                let clip = try store.read(entry.id)
                guard clip.jointNames == joints else {
                    throw DatasetError("\(store.path): clip \(entry.id) has other joints (\(clip.jointNames.count)) than clip \(first.id) (\(joints.count)); a CSV holds one skeleton: export them apart")
                }
                let w = Float(clip.width), h = Float(clip.height), j = joints.count
                let head = [clip.id, clip.label, clip.split ?? ""]
                for f in 0..<clip.frameCount {
                    var fields = head + ["\(f)", "\(clip.width)", "\(clip.height)", format(clip.times[f] + (clip.start ?? 0))]
                    for k in 0..<j {
                        let x = clip.keypoints[(f * j + k) * 3], y = clip.keypoints[(f * j + k) * 3 + 1], c = clip.keypoints[(f * j + k) * 3 + 2]
                        fields += x.isFinite && y.isFinite ? [format(Double(x * w)), format(Double(y * h)), format(Double(c))] : ["", "", "0"]
                    }
                    text += CSV.row(fields)
                    rows += 1
                }
                if text.utf8.count > 1 << 20 { try flush() }
                progress?(n + 1)
            }
            try flush()
        } catch {
            out.discard()
            throw error
        }
        try out.commit()
        return (store.entries.count, rows)
    }

    /// Up to 4 decimals, trailing zeros dropped.
    static func format(_ x: Double) -> String {
        var s = String(format: "%.4f", x)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s == "-0" ? "0" : s
    }
}
