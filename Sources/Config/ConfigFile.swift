import Basics
import Foundation
import Yams

/// A config file that cannot be used: one line, file:line, key, what was expected and what
/// was found.
public enum ConfigFileFailure {}
public typealias ConfigFileError = OneLineError<ConfigFileFailure>

/// What a config file may hold: the keys of its top level and of each section, and what a
/// value at a path is checked or rewritten as beyond its type (`preprocessing.joints` given
/// by a layout name, for instance).
public struct ConfigSchema: Sendable {
    public let topKeys: [String]
    public let sectionKeys: @Sendable (_ section: String) -> [String]?
    public let value: @Sendable (_ node: Node, _ path: [String], _ file: ConfigFile) throws -> Node

    public init(topKeys: [String], sectionKeys: @escaping @Sendable (String) -> [String]?,
                value: @escaping @Sendable (Node, [String], ConfigFile) throws -> Node = { node, _, _ in node }) {
        self.topKeys = topKeys; self.sectionKeys = sectionKeys; self.value = value
    }

    /// The keys a config file may give under `path` (the sections, or a section's keys);
    /// nil where the path holds a value.
    func keys(under path: [String]) -> [String]? {
        guard let section = path.first else { return topKeys }
        return path.count == 1 ? sectionKeys(section) : nil
    }
}

/// A config file's YAML, read as a user writes it: over the file it names as its `base:` (a
/// path relative to its folder; MMAction2's `_base_`), every key known, every value finite,
/// and each error one line that names the file and line it is in.
public struct ConfigFile: Sendable {
    public let name: String
    let schema: ConfigSchema

    /// The file at `path` merged over its bases: the base is read first (and its own base
    /// before it), then each key of the file replaces the base's, a section's keys one by
    /// one. Each file is checked on its own (`check`: its decoding), so an error names the
    /// file it is in.
    public static func read(path: String, schema: ConfigSchema, check: (Node, ConfigFile) throws -> Void) throws -> (Node, ConfigFile) {
        try inherited(path: path, chain: [], schema: schema, check: check)
    }

    /// YAML text (`name` names it in errors) as a checked node (an empty file: an empty
    /// mapping). Text has no folder, so a `base:` is refused.
    public static func parse(_ text: String, name: String, schema: ConfigSchema, check: (Node, ConfigFile) throws -> Void) throws -> (Node, ConfigFile) {
        let (root, file) = try node(text, name: name, schema: schema, check: check)
        if let base = root["base"] { throw file.error(base, "base: only a config file read from its path can have a base") }
        return (root, file)
    }

    static func node(_ text: String, name: String, schema: ConfigSchema, check: (Node, ConfigFile) throws -> Void) throws -> (Node, ConfigFile) {
        let composed: Node?
        do { composed = try Yams.compose(yaml: text) } catch {
            throw ConfigFileError("\(name): not valid YAML (\(String(describing: error).split(separator: "\n").first ?? ""))")
        }
        let file = ConfigFile(name: name, schema: schema)
        guard let composed, composed.null == nil else { return (Node([(Node, Node)]()), file) }
        let root = try file.checked(composed, path: [])
        try check(root, file)
        return (root, file)
    }

    /// The file at `path` merged over its bases; `chain`: the files that inherit from it.
    static func inherited(path: String, chain: [String], schema: ConfigSchema, check: (Node, ConfigFile) throws -> Void) throws -> (Node, ConfigFile) {
        // A config is a few kB; a FIFO or a device under its name is never opened for reading.
        let data: Data
        do { data = try InputFile.read(path, limit: 1 << 20, what: "config file", allowStream: chain.isEmpty) } catch let error as InputFileError {
            throw ConfigFileError(error.message)
        }
        let (root, file) = try node(String(decoding: data, as: UTF8.self), name: path, schema: schema, check: check)
        guard let mapping = root.mapping, let baseNode = root["base"] else { return (root, file) }
        let own = Node.Mapping(mapping.filter { $0.key.string != "base" }.map { ($0.key, $0.value) }, mapping.tag, mapping.style, mapping.mark)
        let base = baseNode.string ?? ""
        let basePath = base.hasPrefix("/") ? base
            : URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(base).path
        let names = (chain + [path, basePath]).map { URL(fileURLWithPath: $0).standardizedFileURL.resolvingSymlinksInPath().path }
        if names.dropLast().contains(names.last!) {
            throw file.error(baseNode, "base: '\(base)' makes a cycle (\((chain + [path, basePath]).joined(separator: " → "))); remove one base")
        }
        // A regular file only: a device or a FIFO named as a base would never end.
        let real = URL(fileURLWithPath: basePath).resolvingSymlinksInPath().path
        let type = (try? FileManager.default.attributesOfItem(atPath: real))?[.type] as? FileAttributeType
        guard type == .typeRegular, FileManager.default.isReadableFile(atPath: basePath) else {
            throw file.error(baseNode, "base: cannot read '\(basePath)' (the path is relative to this file's folder)")
        }
        let (below, _) = try inherited(path: basePath, chain: chain + [path], schema: schema, check: check)
        return (merged(below, over: .mapping(own)), file)
    }

    /// `top`'s keys over `bottom`'s; two mappings under one key are merged the same way.
    static func merged(_ bottom: Node, over top: Node) -> Node {
        guard let b = bottom.mapping, let t = top.mapping else { return top }
        var pairs: [(Node, Node)] = b.map { ($0.key, $0.value) }
        for (key, value) in t {
            if let i = pairs.firstIndex(where: { $0.0.string == key.string }) { pairs[i].1 = merged(pairs[i].1, over: value) }
            else { pairs.append((key, value)) }
        }
        return .mapping(Node.Mapping(pairs, t.tag, t.style, t.mark))
    }

    public func error(_ node: Node, _ message: String) -> ConfigFileError {
        ConfigFileError("\(name)\(node.mark.map { ":\($0.line)" } ?? ""): \(message)")
    }

    public func shown(_ node: Node) -> String {
        switch node {
        case .scalar(let s): return "'\(s.string)'"
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        }
    }

    /// `node` with every key known and every value finite, each value as the schema has it.
    func checked(_ node: Node, path: [String]) throws -> Node {
        let key = path.joined(separator: ".")
        guard let known = schema.keys(under: path) else {
            // YAML's .inf and .nan are numbers, but no setting is meant to be one.
            if node.tag == Tag(.float), let x = node.float, !x.isFinite {
                throw error(node, "\(key) must be a finite number, not \(shown(node))")
            }
            if path == ["base"], node.scalar == nil || node.null != nil {
                throw error(node, "base must be the path of a config file, not \(shown(node))")
            }
            return try schema.value(node, path, self)
        }
        guard let mapping = node.mapping else {
            throw error(node, "\(path.isEmpty ? "the config" : key) must be a mapping of keys (\(known.joined(separator: ", "))), not \(shown(node))")
        }
        let pairs = try mapping.map { k, v in
            guard let name = k.string else { throw error(k, "a key must be a name, not \(shown(k))") }
            // base: the file this one inherits from (`read(path:)`).
            guard known.contains(name) || (path.isEmpty && name == "base") else {
                let near = known.min { editDistance($0, name) < editDistance($1, name) }
                let hint = near.flatMap { editDistance($0, name) <= 3 ? " (did you mean '\($0)'?)" : nil } ?? ""
                throw error(k, "unknown key '\((path + [name]).joined(separator: "."))'\(hint); known keys here: \(known.joined(separator: ", "))")
            }
            return (k, try checked(v, path: path + [name]))
        }
        return .mapping(Node.Mapping(pairs, mapping.tag, mapping.style, mapping.mark))
    }

    /// A decoding error as one line, at the node its coding path leads to.
    public func error(_ decoding: DecodingError, in root: Node) -> ConfigFileError {
        let context: DecodingError.Context, expected: String
        switch decoding {
        case .typeMismatch(let type, let c), .valueNotFound(let type, let c): (context, expected) = (c, Self.expectation(of: type))
        case .dataCorrupted(let c), .keyNotFound(_, let c): (context, expected) = (c, "")
        @unknown default: return ConfigFileError("\(name): \(decoding)")
        }
        let node = context.codingPath.reduce(root) { node, key in (key.intValue.map { node[$0] } ?? node[key.stringValue]) ?? node }
        let key = context.codingPath.filter { $0.intValue == nil }.map(\.stringValue).joined(separator: ".")
        guard !expected.isEmpty else { return error(node, "\(key): \(context.debugDescription)") }
        // A range given as a list is refused for its ends, not for being a list.
        let found = node.sequence != nil && expected.hasPrefix("[") ? "" : ", not \(shown(node))"
        return error(node, "\(key) must be \(expected)\(found)")
    }

    /// What a value of `type` is, as a config file writes it.
    static func expectation(of type: Any.Type) -> String {
        switch type {
        case is Int.Type: return "a whole number"
        case is UInt64.Type: return "a whole number ≥ 0"
        case is Double.Type, is Float.Type: return "a number"
        case is Bool.Type: return "true or false"
        case is String.Type: return "a name"
        case is ClosedRange<Double>.Type: return "[low, high] with low ≤ high"
        case is Node.Sequence.Type: return "a list, like [a, b]"
        case is Node.Scalar.Type: return "one value"
        case let choice as any ConfigChoice.Type: return "one of " + choice.names.joined(separator: ", ")
        default: return "\(type)"
        }
    }
}

/// Levenshtein distance, for "did you mean" hints.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    var row = Array(0...b.count)
    for i in 1...max(a.count, 1) where !a.isEmpty {
        var prev = row[0]
        row[0] = i
        for j in 1...max(b.count, 1) where !b.isEmpty {
            let cur = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1))
            prev = cur
        }
    }
    return a.isEmpty ? b.count : row[b.count]
}
