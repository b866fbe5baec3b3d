import Images
import Keypoints
import Pose

extension RGBImage {
    /// Draws people's skeletons (BlazePose's `Skeleton.edges`), joints, boxes and labels.
    ///
    /// An edge is drawn only when both its landmarks have visibility ≥ `minVisibility`,
    /// and a joint only when its landmark does (0.5 is the gate Apple's Vision body-pose
    /// tutorial uses before drawing a point). Sizes follow the image: line thickness
    /// `t = max(2, min(width, height) / 240)`, joints of radius 1.25·t, text scale
    /// `max(1, min(width, height) / 240)`.
    ///
    /// The prominent person (`isProminent`) is drawn in bright green with white joints at
    /// full thickness; the others in steel blue with light-grey joints, thinner (0.6·t).
    /// Each person's box is outlined in its colour, with its label at the box's top-left
    /// (above the box when there is room, else just inside): "id N" by default, or
    /// `label(person)` when given (a nil result draws no label).
    public mutating func drawWireframe(_ persons: [Person], minVisibility: Float = 0.5, label: ((Person) -> String?)? = nil) {
        let short = Float(min(width, height))
        let t = max(2, short / 240)
        let textScale = max(1, Int(short / 240))
        // Others first, so the prominent person is drawn on top.
        let order = persons.filter { !$0.isProminent } + persons.filter { $0.isProminent }
        for person in order {
            let prominent = person.isProminent
            let lineColor: RGB = prominent ? .brightGreen : .steelBlue
            let jointColor: RGB = prominent ? .white : .lightGray
            let thickness = prominent ? t : max(1, 0.6 * t)
            let radius = 1.25 * thickness
            let lm = person.landmarks
            let seen = lm.map { $0.visibility >= minVisibility && $0.x.isFinite && $0.y.isFinite }

            // Box and label.
            let box = person.box
            strokeRect((box.x, box.y, box.width, box.height), color: lineColor, thickness: max(1, thickness / 2))
            let text = label.map { $0(person) } ?? "id \(person.id)"
            if let text, !text.isEmpty {
                let size = RGBImage.textSize(text, scale: textScale)
                let pad = textScale
                var ty = Int(box.y.rounded()) - size.height - 2 * pad - Int(thickness / 2)
                if ty < pad { ty = Int(box.y.rounded()) + pad + Int(thickness / 2) }
                let tx = Int(box.x.rounded()) + pad
                drawText(text, at: (tx, ty), color: prominent ? .black : .white, scale: textScale, background: lineColor)
            }

            // Edges, then joints on top.
            for (i, j) in Skeleton.edges where i < lm.count && j < lm.count && seen[i] && seen[j] {
                drawLine(from: (lm[i].x, lm[i].y), to: (lm[j].x, lm[j].y), color: lineColor, thickness: thickness)
            }
            for (i, l) in lm.enumerated() where seen[i] {
                fillCircle(center: (l.x, l.y), radius: radius, color: jointColor)
            }
        }
    }
}
