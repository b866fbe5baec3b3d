import Foundation

/// The JSON lines `poseact pose --json` writes (one frame a line: time, width, height, and
/// per person its landmarks in pixels), read back compact for drawing: per frame its time
/// and the prominent person's x, y (0–1 of the picture) and visibility per landmark. The
/// studio draws them; a stranger may have written the file.
public enum PoseLines {
    /// A frame of `pose` is a few kB a person; a longer line is not one (Foundation's
    /// objects take about 50 times a line, the rows kept 3 times what they hold).
    public static let longestLine = 256 << 10

    /// The rows of the lines of `data`; a line that is not a frame is skipped.
    public static func drawingRows(_ data: Data) -> [[Double]] {
        var frames: [[Double]] = []
        for line in data.split(separator: UInt8(ascii: "\n")) {
            guard line.count <= longestLine,
                  let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                  let time = number(object["time"]), let width = number(object["width"]), let height = number(object["height"]),
                  time.isFinite, width.isFinite, height.isFinite, width > 0, height > 0 else { continue }
            var row = [time]
            let persons = object["persons"] as? [[String: Any]] ?? []
            let person = persons.first { $0["prominent"] as? Bool == true } ?? persons.first
            for landmark in (person?["landmarks"] as? [[String: Any]] ?? []).prefix(Skeleton.blazePoseNames.count) {
                let x = number(landmark["x"]) ?? -1, y = number(landmark["y"]) ?? -1, v = number(landmark["visibility"]) ?? 0
                row += [(x / width * 1000).rounded() / 1000, (y / height * 1000).rounded() / 1000, (v * 100).rounded() / 100]
            }
            // A value that is no finite number would make the page's JSON invalid.
            frames.append(row.map { $0.isFinite ? $0 : -1 })
        }
        return frames
    }

    private static func number(_ value: Any?) -> Double? { value as? Double }
}
