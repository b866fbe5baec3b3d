import Tensor

// Scenes are drawn from `SplitMix64` (Tensor's): a seed gives the same scene on every machine.
extension SplitMix64 {
    /// Uniform in `range`.
    public mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * uniform()
    }
    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { uniform() < p }
}
