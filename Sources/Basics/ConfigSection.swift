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
}

/// One key of a `ConfigSection`: its name, and how it reads and writes its property.
public struct ConfigKey<Section> {
    public let name: String
    /// false: a key of stored records only, which a config file neither gives nor shows.
    public let inConfigFiles: Bool
    /// The config-file keys of the section this key holds; nil when it holds a value.
    public let sectionKeys: [String]?
    let update: (inout Section, KeyedDecodingContainer<KeyName>, _ isRecord: Bool) throws -> Void
    let encode: (Section, inout KeyedEncodingContainer<KeyName>) throws -> Void

    /// A key holding a value. `before`: the value of a record written before the key
    /// existed, when that is not today's default.
    public static func value<Value: Codable>(_ name: String, _ property: WritableKeyPath<Section, Value>,
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
        }, encode: { section, mapping in try mapping.encode(section[keyPath: property], forKey: KeyName(name)) })
    }

    /// A range: [low, high], or one number x for x…x.
    public static func range<Bound: Codable & Comparable>(_ name: String,
                                                          _ property: WritableKeyPath<Section, ClosedRange<Bound>>) -> ConfigKey {
        ConfigKey(name: name, inConfigFiles: true, sectionKeys: nil, update: { section, mapping, _ in
            guard let key = mapping.key(name) else { return }
            if let x = try? mapping.decode(Bound.self, forKey: key) {
                section[keyPath: property] = x...x
                return
            }
            guard let ends = try? mapping.decode([Bound].self, forKey: key), ends.count == 2, ends[0] <= ends[1] else {
                throw DecodingError.typeMismatch(ClosedRange<Bound>.self, .init(codingPath: mapping.codingPath + [key],
                                                                                debugDescription: "not [low, high]"))
            }
            section[keyPath: property] = ends[0]...ends[1]
        }, encode: { section, mapping in try mapping.encode(section[keyPath: property], forKey: KeyName(name)) })
    }

    /// This key as a key of `Outer`, whose value at `path` holds this key's section: the
    /// inner section's keys stored flat beside the outer's own.
    public func lifted<Outer>(_ path: WritableKeyPath<Outer, Section>) -> ConfigKey<Outer> {
        let (update, encode) = (self.update, self.encode)
        return ConfigKey<Outer>(name: name, inConfigFiles: inConfigFiles, sectionKeys: sectionKeys,
                                update: { outer, mapping, isRecord in try update(&outer[keyPath: path], mapping, isRecord) },
                                encode: { outer, mapping in try encode(outer[keyPath: path], &mapping) })
    }

    /// A key holding a section, whose missing keys keep the values this one gives them.
    public static func section<Value: ConfigSection>(_ name: String, _ property: WritableKeyPath<Section, Value>) -> ConfigKey {
        ConfigKey(name: name, inConfigFiles: true, sectionKeys: Value.configFileKeys, update: { section, mapping, _ in
            guard let key = mapping.key(name) else { return }
            try section[keyPath: property].update(from: mapping.superDecoder(forKey: key))
        }, encode: { section, mapping in try mapping.encode(section[keyPath: property], forKey: KeyName(name)) })
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
