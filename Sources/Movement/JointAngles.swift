import Foundation

/// A joint angle by name: the angle at `vertex` between the segments to `from` and `to`, in
/// degrees (0–180) in the image plane. Each end is one joint, or the midpoint of two (the
/// body line runs through the middle of the shoulders, the hips and the ankles).
public struct JointAngle: Sendable, Equatable {
    public var name: String
    public var from: [Int], vertex: [Int], to: [Int]

    /// The names `named(_:jointNames:)` knows, with what they measure.
    public static let builtIn: [(name: String, from: [String], vertex: [String], to: [String])] = {
        var out: [(String, [String], [String], [String])] = []
        for side in ["left", "right"] {
            out.append(("\(side)_elbow", ["\(side)_shoulder"], ["\(side)_elbow"], ["\(side)_wrist"]))
            out.append(("\(side)_shoulder", ["\(side)_elbow"], ["\(side)_shoulder"], ["\(side)_hip"]))
            out.append(("\(side)_hip", ["\(side)_shoulder"], ["\(side)_hip"], ["\(side)_knee"]))
            out.append(("\(side)_knee", ["\(side)_hip"], ["\(side)_knee"], ["\(side)_ankle"]))
            out.append(("\(side)_body_line", ["\(side)_shoulder"], ["\(side)_hip"], ["\(side)_ankle"]))
        }
        out.append(("body_line", ["left_shoulder", "right_shoulder"], ["left_hip", "right_hip"], ["left_ankle", "right_ankle"]))
        return out
    }()

    /// A built-in name (`left_elbow`, `right_knee`, `body_line`…), or three joint names
    /// joined by `-` (`left_shoulder-left_hip-left_knee`: the angle at the middle one).
    /// Throws one line naming what is known when the name is not.
    public static func named(_ name: String, jointNames: [String]) throws -> JointAngle {
        func indices(_ names: [String]) throws -> [Int] {
            try names.map { joint in
                guard let i = jointNames.firstIndex(of: joint) else {
                    throw AngleError("angle \(name): the skeleton has no joint \"\(joint)\" (its joints: \(jointNames.prefix(40).joined(separator: ", ")))")
                }
                return i
            }
        }
        if let b = builtIn.first(where: { $0.name == name }) {
            return JointAngle(name: name, from: try indices(b.from), vertex: try indices(b.vertex), to: try indices(b.to))
        }
        let parts = name.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else {
            throw AngleError("angle \(name): not a known angle (\(builtIn.map(\.name).joined(separator: ", "))) nor three joints A-B-C (the angle at B)")
        }
        // An end at the vertex makes no angle: it would be NaN in every frame.
        guard parts[1] != parts[0], parts[1] != parts[2] else {
            throw AngleError("angle \(name): the vertex \(parts[1]) is also an end; give three joints A-B-C with B apart from A and C")
        }
        return JointAngle(name: name, from: try indices([parts[0]]), vertex: try indices([parts[1]]), to: try indices([parts[2]]))
    }

    /// The angle in one frame: `joints` holds (x, y) per joint in isotropic units (pixels),
    /// NaN where missing. NaN when a joint it needs is missing or two ends coincide.
    public func degrees(_ joints: [Float]) -> Float {
        func point(_ ids: [Int]) -> (Float, Float) {
            var x: Float = 0, y: Float = 0
            for i in ids {
                guard 2 * i + 1 < joints.count else { return (.nan, .nan) }
                x += joints[2 * i]; y += joints[2 * i + 1]
            }
            return (x / Float(ids.count), y / Float(ids.count))
        }
        let a = point(from), b = point(vertex), c = point(to)
        let u = (a.0 - b.0, a.1 - b.1), v = (c.0 - b.0, c.1 - b.1)
        let nu = (u.0 * u.0 + u.1 * u.1).squareRoot(), nv = (v.0 * v.0 + v.1 * v.1).squareRoot()
        guard nu > 0, nv > 0 else { return .nan }
        let cosine = max(-1, min(1, (u.0 * v.0 + u.1 * v.1) / (nu * nv)))
        return acosf(cosine) * 180 / .pi
    }
}

/// An angle name that is not known, or a joint the skeleton lacks.
public struct AngleError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One angle over a repetition: its extremes, range of motion, and its value at the
/// repetition's turning point (a push-up's or a squat's bottom).
public struct AngleRange: Codable, Equatable, Sendable {
    public var minimum: Double
    public var maximum: Double
    public var rangeOfMotion: Double { maximum - minimum }
    public var atTurn: Double?

    enum CodingKeys: String, CodingKey { case minimum = "min", maximum = "max", rangeOfMotion, atTurn = "at_turn"}

    public init(minimum: Double, maximum: Double, atTurn: Double?) {
        self.minimum = minimum; self.maximum = maximum; self.atTurn = atTurn
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(minimum, forKey: .minimum)
        try c.encode(maximum, forKey: .maximum)
        try c.encode(rangeOfMotion, forKey: .rangeOfMotion)
        try c.encodeIfPresent(atTurn, forKey: .atTurn)
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        minimum = try c.decode(Double.self, forKey: .minimum)
        maximum = try c.decode(Double.self, forKey: .maximum)
        atTurn = try c.decodeIfPresent(Double.self, forKey: .atTurn)
    }

    /// Over `values` (NaN skipped) at `times`, between `start` and `end`; `turn`: the time
    /// whose nearest value is `atTurn`. Nil when no value is finite in the span.
    public static func over(_ values: [Float], times: [Double], start: Double, end: Double, turn: Double?) -> AngleRange? {
        var lo = Float.infinity, hi = -Float.infinity
        var nearest: (distance: Double, value: Float)?
        for (v, t) in zip(values, times) where v.isFinite && t >= start - 1e-9 && t <= end + 1e-9 {
            lo = min(lo, v); hi = max(hi, v)
            if let turn, nearest == nil || abs(t - turn) < nearest!.distance { nearest = (abs(t - turn), v) }
        }
        guard lo <= hi else { return nil }
        func r(_ x: Float) -> Double { (Double(x) * 10).rounded() / 10 }
        return AngleRange(minimum: r(lo), maximum: r(hi), atTurn: nearest.map { r($0.value) })
    }
}
