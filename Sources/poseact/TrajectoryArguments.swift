import ArgumentParser
import Live

/// `--object-size 0.003..0.04`: the object's size as a share of the frame's width.
struct ShareRange: ExpressibleByArgument {
    var range: ClosedRange<Double>

    init(_ range: ClosedRange<Double>) { self.range = range }

    init?(argument: String) {
        let parts = argument.components(separatedBy: "..")
        guard parts.count == 2, let a = Double(parts[0]), let b = Double(parts[1]), a > 0, a <= b, b <= 1 else { return nil }
        range = a...b
    }

    var defaultValueDescription: String { "\(range.lowerBound)..\(range.upperBound)" }
}

/// `--roi X,Y,W,H` in pixels.
struct PixelBox: ExpressibleByArgument {
    var x: Float, y: Float, width: Float, height: Float

    init?(argument: String) {
        let v = argument.split(separator: ",").compactMap { Float($0.trimmingCharacters(in: .whitespaces)) }
        guard v.count == 4, v.allSatisfy(\.isFinite), v[2] > 0, v[3] > 0 else { return nil }
        x = v[0]; y = v[1]; width = v[2]; height = v[3]
    }
}

/// `--target X,Y,W,H` (a box) or `X1,Y1,X2,Y2,X3,Y3,…` (a polygon of three corners or more), pixels.
struct PixelPolygon: ExpressibleByArgument {
    var corners: [(x: Float, y: Float)]

    init?(argument: String) {
        let v = argument.split(separator: ",").compactMap { Float($0.trimmingCharacters(in: .whitespaces)) }
        guard v.count == argument.split(separator: ",").count, v.allSatisfy(\.isFinite) else { return nil }
        if v.count == 4 {
            guard v[2] > 0, v[3] > 0 else { return nil }
            corners = [(v[0], v[1]), (v[0] + v[2], v[1]), (v[0] + v[2], v[1] + v[3]), (v[0], v[1] + v[3])]
        } else {
            guard v.count >= 6, v.count % 2 == 0 else { return nil }
            corners = stride(from: 0, to: v.count, by: 2).map { (v[$0], v[$0 + 1]) }
        }
    }
}

/// `--scale X1,Y1,X2,Y2=1.22m`: two points of the picture a known distance apart.
struct ReferenceLength: ExpressibleByArgument {
    var scale: MetricScale

    init?(argument: String) {
        let halves = argument.split(separator: "=")
        guard halves.count == 2, let metres = Metres(argument: String(halves[1]))?.value else { return nil }
        let v = halves[0].split(separator: ",").compactMap { Float($0.trimmingCharacters(in: .whitespaces)) }
        guard v.count == 4, v.allSatisfy(\.isFinite), v[0] != v[2] || v[1] != v[3] else { return nil }
        scale = .reference(x1: v[0], y1: v[1], x2: v[2], y2: v[3], metres: metres)
    }
}

/// `1.75m`, `175cm` or `1.75`: a length in metres.
struct Metres: ExpressibleByArgument {
    var value: Double

    init?(argument: String) {
        let s = argument.trimmingCharacters(in: .whitespaces).lowercased()
        let (number, unit) = s.hasSuffix("cm") ? (s.dropLast(2), 0.01) : s.hasSuffix("m") ? (s.dropLast(), 1.0) : (Substring(s), 1.0)
        guard let v = Double(number.trimmingCharacters(in: .whitespaces)), v.isFinite, v > 0, v * unit < 1000 else { return nil }
        value = v * unit
    }
}

/// What `--trajectories` takes, for `live` and `annotate`.
struct TrajectoryArguments: ParsableArguments {
    @Flag(help: "Find the trajectories of thrown objects, and each person's throws (type, release speed and angle, hits).")
    var trajectories = false
    @Option(help: ArgumentHelp("The thrown object's size, its box's larger side as a share of the frame's width.",
                               valueName: "min..max"))
    var objectSize = ShareRange(0.003...0.04)
    @Option(help: ArgumentHelp("Look for trajectories only here (pixels).", valueName: "x,y,w,h")) var roi: PixelBox?
    @Option(help: ArgumentHelp("Metres from two points a known distance apart (e.g. a board's ends): speeds in m/s.",
                               valueName: "x1,y1,x2,y2=1.22m"))
    var scale: ReferenceLength?
    @Option(help: ArgumentHelp("Metres from the thrower's standing height, through the pose (instead of --scale).", valueName: "1.75m"))
    var height: Metres?
    @Option(help: ArgumentHelp("A throw that ends in this box or polygon (pixels) is a hit.", valueName: "x,y,w,h|x1,y1,x2,y2,x3,y3…"))
    var target: PixelPolygon?

    func validate() throws {
        if !trajectories && (roi != nil || scale != nil || height != nil || target != nil) {
            throw ValidationError("--roi, --scale, --height and --target are for trajectories: add --trajectories")
        }
        if scale != nil && height != nil { throw ValidationError("--scale and --height are two ways to metres: give one") }
    }

    /// `backgroundLabels`: the action model's labels that are no throw's type.
    func throwCoach(labels: [String], backgroundLabels: [String]) -> ThrowCoach? {
        guard trajectories else { return nil }
        var o = ThrowOptions()
        o.detector.objectSize = objectSize.range
        o.detector.region = roi.map { ($0.x, $0.y, $0.width, $0.height) }
        o.scale = scale?.scale ?? height.map { .personHeight(metres: $0.value) }
        o.target = target?.corners
        o.backgroundLabels = Set(backgroundLabels)
        return ThrowCoach(options: o, labels: labels)
    }
}
