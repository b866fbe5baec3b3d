import Foundation

extension DatasetSources {
    /// The labeled time ranges (seconds) an annotation file (CSV or JSON:
    /// video,label,start,end) gives one video, matched by file name, so that the file's paths
    /// need not be the ones the video was given by. None is an error.
    public static func annotatedRanges(ofVideo video: String, in annotations: String) throws
        -> [(start: Double, end: Double, label: String)] {
        let name = URL(fileURLWithPath: video).lastPathComponent
        let root = URL(fileURLWithPath: annotations).deletingLastPathComponent().path
        let ranges = try scan(root, annotations: annotations).clips
            .filter { URL(fileURLWithPath: $0.video).lastPathComponent == name }
            .compactMap { c in c.start.flatMap { s in c.end.map { (start: s, end: $0, label: c.label) } } }
        guard !ranges.isEmpty else { throw DatasetError("\(annotations): no time ranges for \(name)") }
        return ranges
    }
}
