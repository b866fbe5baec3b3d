import Foundation
import Images
import Pose
import Trajectories

/// The overlay of live and annotate: every person's wireframe with, at their box, their id,
/// action, confidence, repetitions and angles; and a banner with the prominent person's
/// action and confidence (and the fps).
public enum Overlay {
    public static func draw(_ image: inout RGBImage, persons: [Person], people: [PersonView], angleNames: [String] = [],
                            following: PeopleChoice = .all, fps: Double? = nil, note: String? = nil) {
        let byID = Dictionary(people.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        image.drawWireframe(persons) { p in
            guard let v = byID[p.id] else { return p.isProminent ? "#\(p.id)" : nil }
            return label(v, id: p.id, angleNames: angleNames)
        }
        let scale = max(1, image.height / 240)
        // The banner: the prominent person's state, or (nobody in view) the last one's.
        let state = persons.first(where: \.isProminent).flatMap { byID[$0.id] }?.state
            ?? (persons.isEmpty ? people.last?.state : nil)
        var text: String
        switch state {
        case .none: text = "…"
        case .noPerson?: text = "no person"
        case .lowConfidence(let label, let c)?: text = String(format: "low confidence (%@ %.0f%%)", label, c * 100)
        case .action(let label, let c)?: text = String(format: "%@ %.0f%%", label, c * 100)
        }
        if following == .all && persons.count > 1 { text += "   \(persons.count) people" }
        if let fps { text += String(format: "   %.0f fps", fps) }
        let color: RGB = { if case .action? = state { return .brightGreen }; return .yellow }()
        let banner = image.drawText(text, at: (x: 8 * scale, y: 8 * scale), color: color, scale: scale, background: .black)
        if let note { _ = image.drawText(note, at: (x: 8 * scale, y: 12 * scale + banner.height), color: .orange, scale: scale, background: .black) }
    }

    /// The colour of a throw's type: its label's place among the model's labels (white: no type).
    public static func color(type: String?, labels: [String]) -> RGB {
        let palette: [RGB] = [.cyan, .magenta, .orange, .brightGreen, .yellow, .red, .blue, .lightGray]
        guard let type, let k = labels.firstIndex(of: type) else { return .white }
        return palette[k % palette.count]
    }

    /// The trajectories that ended in the last seconds (their fitted paths, in their throw
    /// type's colour, with the detected points) and those under way (thin, yellow).
    public static func drawTrajectories(_ image: inout RGBImage, recent: [(trajectory: Trajectory, type: String?)],
                                        ongoing: [Trajectory], labels: [String]) {
        let thickness = Float(max(2, image.height / 240))
        for (t, type) in recent {
            let color = color(type: type, labels: labels)
            let steps = max(2, Int((t.end - t.start) * 60))
            var last: (x: Float, y: Float)?
            for k in 0...steps {
                let q = t.motion.position(at: t.start + (t.end - t.start) * Double(k) / Double(steps))
                let p = (x: Float(q.x), y: Float(q.y))
                if let last { image.drawLine(from: last, to: p, color: color, thickness: thickness) }
                last = p
            }
            for p in t.points { image.fillCircle(center: (p.x, p.y), radius: thickness, color: .white) }
        }
        for t in ongoing {
            for (a, b) in zip(t.points, t.points.dropFirst()) {
                image.drawLine(from: (a.x, a.y), to: (b.x, b.y), color: .yellow, thickness: max(1, thickness / 2))
            }
        }
    }

    /// "#2 correct 91% 3 reps", and a line of angles ("left_elbow 92").
    static func label(_ v: PersonView, id: Int, angleNames: [String]) -> String {
        var text = "#\(id)"
        switch v.state {
        case .action(let label, let c)?: text += String(format: " %@ %.0f%%", label, c * 100)
        case .lowConfidence(let label, _)?: text += " (\(label)?)"
        default: break
        }
        if v.repetitions > 0 { text += " \(v.repetitions) rep\(v.repetitions == 1 ? "" : "s")" }
        let angles = zip(angleNames, v.angles).filter { $0.1.isFinite }.map { "\($0.0) \(Int($0.1.rounded()))" }
        if !angles.isEmpty { text += "\n" + angles.joined(separator: " ") }
        return text
    }
}
