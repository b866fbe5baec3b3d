import Foundation

/// Which CPU this is, from /proc/cpuinfo: what every speed figure names. Machines of one
/// kind differ by generation (an AMD EPYC of family 25 with AVX-512 is a Zen 4, of family
/// 26 a Zen 5), and the generation decides what an instruction costs.
public struct CPUDescription: Sendable, Encodable, Equatable {
    /// "model name", e.g. "AMD EPYC".
    public var name: String
    /// "vendor_id", e.g. "AuthenticAMD".
    public var vendor: String
    /// "cpu family" and "model", as numbers.
    public var family: Int?, model: Int?
    /// The vector extensions the kernels care about that the CPU lists, in this order:
    /// avx2, fma, avx512f, avx512_bf16, avx512_vnni, and on ARM64 asimd, fphp, asimdhp, bf16.
    public var flags: [String]
    /// Cores this process may use.
    public var cores: Int
    /// AMD's generation where family and flags say it (Zen 5: family 26; Zen 4: family 25
    /// with AVX-512; Zen 3: family 25 without), else nil.
    public var generation: String?

    static let interesting = ["avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "asimd", "fphp", "asimdhp", "bf16"]

    /// This machine's (the fields /proc/cpuinfo lacks are empty or nil).
    public static let current = CPUDescription(cpuinfo: (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? "")

    /// The first processor's entry of a /proc/cpuinfo text.
    public init(cpuinfo: String, cores: Int = ProcessInfo.processInfo.activeProcessorCount) {
        var fields: [String: String] = [:]
        for line in cpuinfo.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).isEmpty, !fields.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces)
            if fields[key] == nil { fields[key] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces) }
        }
        name = fields["model name"] ?? fields["CPU part"].map { "ARM part \($0)" } ?? ""
        vendor = fields["vendor_id"] ?? fields["CPU implementer"].map { "ARM implementer \($0)" } ?? ""
        family = fields["cpu family"].flatMap { Int($0) }
        model = fields["model"].flatMap { Int($0) }
        let listed = Set((fields["flags"] ?? fields["Features"] ?? "").split(separator: " ").map(String.init))
        flags = Self.interesting.filter(listed.contains)
        self.cores = cores
        generation = Self.generation(vendor: vendor, family: family, flags: flags)
    }

    static func generation(vendor: String, family: Int?, flags: [String]) -> String? {
        guard vendor == "AuthenticAMD", let family else { return nil }
        switch family {
        case 26: return "Zen 5"
        case 25: return flags.contains("avx512f") ? "Zen 4" : "Zen 3"
        case 23: return "Zen 2 or earlier"
        default: return nil
        }
    }

    /// One line for a figure: "AMD EPYC (family 25, Zen 4; avx2 fma avx512f avx512_bf16), 2 cores".
    public var summary: String {
        var inner: [String] = []
        if let family { inner.append("family \(family)\(generation.map { ", \($0)" } ?? "")") }
        if !flags.isEmpty { inner.append(flags.joined(separator: " ")) }
        return "\(name.isEmpty ? "an unnamed CPU" : name)\(inner.isEmpty ? "" : " (\(inner.joined(separator: "; ")))"), \(cores) core\(cores == 1 ? "" : "s")"
    }
}
