import Classifier
import Foundation
import Images
import Keypoints
import Media
import Movement
import Pose

/// The overlay of live and annotate: every person's wireframe with, at their box, their id,
/// action, confidence, repetitions and angles; and a banner with the prominent person's
/// action and confidence (and the fps).
public enum Overlay {
    public static func draw(_ image: inout RGBImage, persons: [Person], people: [PersonView], angleNames: [String] = [],
                            following: PeopleChoice = .all, fps: Double? = nil) {
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
        _ = image.drawText(text, at: (x: 8 * scale, y: 8 * scale), color: color, scale: scale, background: .black)
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
