/// A web page poseact writes or serves (the evaluation report, the live page), kept as an
/// HTML file beside its CSS and JavaScript in its target's Resources/, so that each can be
/// linted as what it is (notebooks-free-scripts/lint_page.py). The files are embedded in
/// the binary at build time (`.embedInCode` in Package.swift: a byte array each, no
/// resource bundle to install beside it).
///
/// In the HTML, `{{name}}` stands for a value; each value says how it is escaped.
/// `{{style}}` and `{{script}}` are the CSS and the JavaScript, which have no placeholders:
/// the script reads its data from a `<script type="application/json">` element of the page.
public struct PageTemplate: Sendable {
    /// What goes in a placeholder.
    public enum Value {
        /// Text, in an element or a quoted attribute: & < > " escaped.
        case text(String)
        /// Markup poseact made itself (table rows, an SVG, the page's CSS and script).
        case markup(String)
        /// A value as JSON inside a `<script>` element: "<" written as \u003c, so that no
        /// string in it can end the script.
        case json(any Encodable)
    }

    public let html: String
    public let style: String
    public let script: String

    public init(html: [UInt8], style: [UInt8], script: [UInt8]) {
        self.html = String(decoding: html, as: UTF8.self)
        self.style = String(decoding: style, as: UTF8.self)
        self.script = String(decoding: script, as: UTF8.self)
    }

    /// The page: every placeholder replaced in one pass (a value is not searched for
    /// placeholders). A placeholder without a value, or a value without a placeholder, is
    /// a mistake in poseact, not in its input.
    public func filled(_ data: [String: Value]) -> String {
        let values = data.merging(["style": .markup(style), "script": .markup(script)]) { _, _ in
            preconditionFailure("{{style}} and {{script}} are the page's CSS and JavaScript")
        }
        var page = "", rest = Substring(html), used = Set<String>()
        while let open = rest.range(of: "{{") {
            page += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "}}") else { preconditionFailure("an unclosed {{ in a page template") }
            let name = String(rest[open.upperBound..<close.lowerBound])
            guard let value = values[name] else { preconditionFailure("no value for {{\(name)}} in a page template") }
            page += Self.written(value)
            used.insert(name)
            rest = rest[close.upperBound...]
        }
        precondition(used == Set(values.keys), "values without a placeholder: \(Set(values.keys).subtracting(used).sorted())")
        return page + rest
    }

    /// Text escaped for HTML.
    public static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    private static func written(_ value: Value) -> String {
        switch value {
        case .text(let text): return escaped(text)
        case .markup(let markup): return markup
        case .json(let data): return JSONLines.encode(data).replacingOccurrences(of: "<", with: "\\u003c")
        }
    }
}
