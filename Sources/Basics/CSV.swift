/// The one CSV writer: every CSV poseact writes (keypoint export, metrics, timelines,
/// occurrences, probabilities) is made of these rows, so that a label or a joint name with
/// a comma, a quote or a line break stays one field (RFC 4180) and the columns after it do
/// not shift. The reader is `Dataset`'s `CSVCursor`. (Here, beside `AtomicFile`, because
/// every target that writes a CSV already depends on Media.)
public enum CSV {
    /// A field: as is, or in double quotes (with `""` for a quote) when it holds a comma, a
    /// quote or a line break.
    public static func field(_ s: String) -> String {
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// One record and its line break.
    public static func row(_ fields: [String]) -> String { fields.map(field).joined(separator: ",") + "\n" }

    /// A whole file: the header, then the rows.
    public static func text(header: [String], rows: [[String]]) -> String { ([header] + rows).map(row).joined() }
}
