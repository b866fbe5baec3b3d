import Foundation

/// A value stored as a mapping of named keys: a section of the training config, in its YAML
/// file and in the JSON records of weights files, checkpoints and windows files. Each key is
/// named once, in `keys`, beside the property that holds it, whose initial value is the
/// key's default. Decoding starts from `init()` (a nested section from the value its
/// container gives it), so a key the input lacks keeps its default.
public protocol ConfigSection: Codable {
    init()
    static var keys: [ConfigKey<Self>] { get }
}

extension CodingUserInfoKey {
    /// Set while a config file someone writes is read or written, as opposed to a stored
    /// record: there a missing key is today's default, and record-only keys are left out.
    public static let configFile = CodingUserInfoKey(rawValue: "poseact.configFile")!
}

extension ConfigSection {
    public init(from decoder: Decoder) throws {
        self.init()
        try update(from: decoder)
    }

    /// Sets the keys the decoder's mapping has; the others keep their values.
    public mutating func update(from decoder: Decoder) throws {
        let mapping = try decoder.container(keyedBy: KeyName.self)
        let isRecord = decoder.userInfo[.configFile] == nil
        for key in Self.keys { try key.update(&self, mapping, isRecord) }
    }

    public func encode(to encoder: Encoder) throws {
        var mapping = encoder.container(keyedBy: KeyName.self)
        let isConfigFile = encoder.userInfo[.configFile] != nil
        for key in Self.keys where key.inConfigFiles || !isConfigFile { try key.encode(self, &mapping) }
    }

    /// The names of the keys a config file may give.
    public static var configFileKeys: [String] { keys.filter(\.inConfigFiles).map(\.name) }

    /// Every key's value against its bound (sections' keys within), in the keys' order, each
    /// problem naming its key after `prefix`.
    public func keyProblems(prefix: String = "") -> [String] { Self.keys.flatMap { $0.problems(self, prefix: prefix) } }
}

/// A range a key's value must be in, declared with the key, and how a value outside it is
/// said: "<key> must <requirement>", with the value when `showsValue`.
public struct Bound<Value>: Sendable {
    let holds: @Sendable (Value) -> Bool
    let message: @Sendable (_ key: String, _ value: Value) -> String

    /// "<key> must <requirement>", then " (got <value>)" when `showsValue`.
    public init(_ requirement: String, showsValue: Bool = false, holds: @escaping @Sendable (Value) -> Bool) {
        self.holds = holds
        message = { key, value in "\(key) must \(requirement)" + (showsValue ? " (got \(value))" : "") }
    }

    /// A message of its own, for a requirement that holds the value in its middle.
    public init(holds: @escaping @Sendable (Value) -> Bool, message: @escaping @Sendable (_ key: String, _ value: Value) -> String) {
        self.holds = holds; self.message = message
    }

    public func problem(_ key: String, _ value: Value) -> String? { holds(value) ? nil : message(key, value) }
}

extension Bound where Value == Int {
    public static func within(_ r: ClosedRange<Int>) -> Bound {
        Bound("be in \(r.lowerBound)…\(r.upperBound)", showsValue: true) { r.contains($0) }
    }
}

extension Bound where Value == Double {
    public static func within(_ r: Range<Double>) -> Bound {
        Bound("be in [\(shortest(r.lowerBound)), \(shortest(r.upperBound)))") { r.contains($0) }
    }

    public static func within(_ r: ClosedRange<Double>) -> Bound {
        Bound("be in [\(shortest(r.lowerBound)), \(shortest(r.upperBound))]") { r.contains($0) }
    }

    /// 0 or more; `note` says what 0 means.
    public static func notNegative(_ note: String? = nil) -> Bound {
        Bound("not be negative" + (note.map { " (\($0))" } ?? "")) { $0 >= 0 }
    }

    public static var positive: Bound { Bound("be positive") { $0 > 0 } }
}

extension Bound where Value == [Int] {
    public static func list(count: ClosedRange<Int>, each: ClosedRange<Int>) -> Bound {
        Bound("list \(count.lowerBound) to \(count.upperBound) values, each in \(each.lowerBound)…\(each.upperBound)", showsValue: true) {
            count.contains($0.count) && $0.allSatisfy(each.contains)
        }
    }
}

extension Bound where Value == [Double] {
    /// Every value positive and finite.
    public static var positive: Bound { Bound("be positive") { $0.allSatisfy { $0 > 0 && $0.isFinite } } }
}

extension Bound where Value == ClosedRange<Double> {
    /// Both ends positive.
    public static var positive: Bound { Bound("be positive") { $0.lowerBound > 0 } }
}

/// 0 as "0", 0.5 as "0.5".
private func shortest(_ x: Double) -> String { x == x.rounded() ? String(Int(x)) : String(x) }

/// One key of a `ConfigSection`: its name, and how it reads and writes its property.
public struct ConfigKey<Section> {
    public let name: String
    /// false: a key of stored records only, which a config file neither gives nor shows.
    public let inConfigFiles: Bool
    /// The config-file keys of the section this key holds; nil when it holds a value.
    public let sectionKeys: [String]?
    let update: (inout Section, KeyedDecodingContainer<KeyName>, _ isRecord: Bool) throws -> Void
    let encode: (Section, inout KeyedEncodingContainer<KeyName>) throws -> Void
    /// What is wrong with the key's value against its bound, named after the prefix
    /// ("optimizer."); a section's key, its own keys' problems.
    let check: (Section, _ prefix: String) -> [String]

    /// The key's problems in `section`, each naming the key after `prefix`.
    public func problems(_ section: Section, prefix: String) -> [String] { check(section, prefix) }

    /// A key holding a value. `before`: the value of a record written before the key
    /// existed, when that is not today's default.
    public static func value<Value: Codable>(_ name: String, _ property: WritableKeyPath<Section, Value>, _ bound: Bound<Value>? = nil,
                                             before: Value? = nil, inConfigFiles: Bool = true) -> ConfigKey {
        ConfigKey(name: name, inConfigFiles: inConfigFiles, sectionKeys: nil, update: { section, mapping, isRecord in
            guard let key = mapping.key(name) else {
                if isRecord, let before { section[keyPath: property] = before }
                return
            }
            // YAML reads a plain null as the text "null": only an optional may be null.
            if !(Value.self is ExpressibleByNilLiteral.Type), try mapping.decodeNil(forKey: key) {
                throw DecodingError.typeMismatch(Value.self, .init(codingPath: mapping.codingPath + [key], debugDescription: "null"))
            }
            section[keyPath: property] = try mapping.decode(Value.self, forKey: key)
        }, encode: { section, mapping in try mapping.encode(section[keyPath: property], forKey: KeyName(name)) },
        check: { section, prefix in bound?.problem(prefix + name, section[keyPath: property]).map { [$0] } ?? [] })
    }

    /// A range: [low, high], or one number x for x…x.
    public static func range<End: Codable & Comparable>(_ name: String, _ property: WritableKeyPath<Section, ClosedRange<End>>,
                                                        _ bound: Bound<ClosedRange<End>>? = nil) -> ConfigKey {
        ConfigKey(name: name, inConfigFiles: true, sectionKeys: nil, update: { section, mapping, _ in
            guard let key = mapping.key(name) else { return }
            if let x = try? mapping.decode(End.self, forKey: key) {
                section[keyPath: property] = x...x
                return
            }
            guard let ends = try? mapping.decode([End].self, forKey: key), ends.count == 2, ends[0] <= ends[1] else {
                throw DecodingError.typeMismatch(ClosedRange<End>.self, .init(codingPath: mapping.codingPath + [key],
                                                                                debugDescription: "not [low, high]"))
            }
            section[keyPath: property] = ends[0]...ends[1]
        }, encode: { section, mapping in try mapping.encode(section[keyPath: property], forKey: KeyName(name)) },
        check: { section, prefix in bound?.problem(prefix + name, section[keyPath: property]).map { [$0] } ?? [] })
    }

    /// This key as a key of `Outer`, whose value at `path` holds this key's section: the
    /// inner section's keys stored flat beside the outer's own.
    public func lifted<Outer>(_ path: WritableKeyPath<Outer, Section>) -> ConfigKey<Outer> {
        let (update, encode, check) = (self.update, self.encode, self.check)
        return ConfigKey<Outer>(name: name, inConfigFiles: inConfigFiles, sectionKeys: sectionKeys,
                                update: { outer, mapping, isRecord in try update(&outer[keyPath: path], mapping, isRecord) },
                                encode: { outer, mapping in try encode(outer[keyPath: path], &mapping) },
                                check: { outer, prefix in check(outer[keyPath: path], prefix) })
    }

    /// A key holding a section, whose missing keys keep the values this one gives them.
    public static func section<Value: ConfigSection>(_ name: String, _ property: WritableKeyPath<Section, Value>) -> ConfigKey {
        ConfigKey(name: name, inConfigFiles: true, sectionKeys: Value.configFileKeys, update: { section, mapping, _ in
            guard let key = mapping.key(name) else { return }
            try section[keyPath: property].update(from: mapping.superDecoder(forKey: key))
        }, encode: { section, mapping in try mapping.encode(section[keyPath: property], forKey: KeyName(name)) },
        check: { section, prefix in section[keyPath: property].keyProblems(prefix: prefix + name + ".") })
    }
}

/// A key of a stored mapping, by name.
public struct KeyName: CodingKey {
    public let stringValue: String
    public init(_ name: String) { stringValue = name }
    public init?(stringValue: String) { self.init(stringValue) }
    public var intValue: Int? { nil }
    public init?(intValue: Int) { nil }
}

extension KeyedDecodingContainer<KeyName> {
    /// The key `name` is stored under: itself, or its camelCase form, which is how
    /// `JSONLines`' decoder hands a snake_case key over (and how a record written before every
    /// key was snake_case spelled it: augmentation's keys were `rotationDegrees`, …).
    public func key(_ name: String) -> KeyName? {
        let parts = name.split(separator: "_")
        let camel = parts.prefix(1).joined() + parts.dropFirst().map(\.capitalized).joined()
        return [name, camel].map(KeyName.init).first(where: contains)
    }
}

/// A setting chosen by name among its cases; decoding another name is a type mismatch of
/// this type, so that the error can list the names.
public protocol ConfigChoice: RawRepresentable<String>, CaseIterable, Codable {}

extension ConfigChoice {
    public static var names: [String] { allCases.map(\.rawValue) }

    public init(from decoder: Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let value = Self(rawValue: name) else {
            throw DecodingError.typeMismatch(Self.self, .init(codingPath: decoder.codingPath, debugDescription: "no case \(name)"))
        }
        self = value
    }
}
