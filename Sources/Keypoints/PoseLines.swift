import Basics
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
            guard line.count <= longestLine, let frame = try? JSONLines.decode(Frame.self, from: Data(line)),
                  frame.time.isFinite, frame.width.isFinite, frame.height.isFinite, frame.width > 0, frame.height > 0 else { continue }
            var row = [frame.time]
            let person = frame.persons.first { $0.prominent } ?? frame.persons.first
            for landmark in (person?.landmarks ?? []).prefix(Skeleton.blazePoseNames.count) {
                let x = landmark.x ?? -1, y = landmark.y ?? -1, v = landmark.visibility ?? 0
                row += [(x / frame.width * 1000).rounded() / 1000, (y / frame.height * 1000).rounded() / 1000, (v * 100).rounded() / 100]
            }
            // A value that is no finite number would make the page's JSON invalid.
            frames.append(row.map { $0.isFinite ? $0 : -1 })
        }
        return frames
    }

    /// What a line must hold to be a frame: its time and size as numbers. Anything else is
    /// read leniently, as a stranger's file may hold anything: a person or landmark that is
    /// not one is empty, a coordinate that is no number is missing.
    private struct Frame: Decodable {
        let time: Double, width: Double, height: Double
        let persons: [Person]

        enum CodingKeys: CodingKey { case time, width, height, persons }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            time = try c.decode(Double.self, forKey: .time)
            width = try c.decode(Double.self, forKey: .width)
            height = try c.decode(Double.self, forKey: .height)
            persons = (try? c.decode([Person].self, forKey: .persons)) ?? []
        }
    }

    private struct Person: Decodable {
        let prominent: Bool, landmarks: [Landmark]

        enum CodingKeys: CodingKey { case prominent, landmarks }
        init(from decoder: Decoder) throws {
            let c = try? decoder.container(keyedBy: CodingKeys.self)
            prominent = (try? c?.decode(Bool.self, forKey: .prominent)) == true
            landmarks = (try? c?.decode([Landmark].self, forKey: .landmarks)) ?? []
        }
    }

    private struct Landmark: Decodable {
        let x: Double?, y: Double?, visibility: Double?

        enum CodingKeys: CodingKey { case x, y, visibility }
        init(from decoder: Decoder) throws {
            let c = try? decoder.container(keyedBy: CodingKeys.self)
            x = try? c?.decode(Double.self, forKey: .x)
            y = try? c?.decode(Double.self, forKey: .y)
            visibility = try? c?.decode(Double.self, forKey: .visibility)
        }
    }
}
