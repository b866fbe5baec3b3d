import Foundation

/// SplitMix64: a tiny, seedable, reproducible random number generator (Steele, Lea and
/// Flood, 2014). Same seed, same sequence on every machine: for weight initialisation,
/// shuffling, augmentation and fuzz tests.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in 0..<n (0 when n ≤ 0).
    public mutating func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(next() % UInt64(n)) }
    /// One element of a non-empty array, uniformly.
    public mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
    /// Uniform in [0, 1), 53 random bits.
    public mutating func uniform() -> Double { Double(next() >> 11) / Double(1 << 53) }
    /// Standard normal (Box–Muller).
    public mutating func gaussian() -> Double {
        let u1 = max(uniform(), 1e-300), u2 = uniform()
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
    /// Gamma(shape, 1), shape > 0 (Marsaglia and Tsang's squeeze; below 1 through
    /// Gamma(shape + 1)·U^(1/shape)).
    public mutating func gamma(_ shape: Double) -> Double {
        precondition(shape > 0)
        if shape < 1 { return gamma(shape + 1) * pow(max(uniform(), 1e-300), 1 / shape) }
        let d = shape - 1.0 / 3, c = 1 / (9 * d).squareRoot()
        while true {
            let x = gaussian(), v0 = 1 + c * x
            guard v0 > 0 else { continue }
            let v = v0 * v0 * v0, u = uniform()
            if log(max(u, 1e-300)) < 0.5 * x * x + d - d * v + d * log(v) { return d * v }
        }
    }
    /// Beta(a, b), a, b > 0, as X / (X + Y) of two gamma variates.
    public mutating func beta(_ a: Double, _ b: Double) -> Double {
        let x = gamma(a), y = gamma(b)
        return x + y > 0 ? x / (x + y) : 0.5
    }
}
