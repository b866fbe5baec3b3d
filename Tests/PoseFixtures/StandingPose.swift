import Pose


/// A hand-made standing pose, 33 landmarks at plausible pixel positions (person facing the
/// camera, so the person's left is the image's right).
public func makeStandingPose(offsetX: Float = 0, offsetY: Float = 0, scale: Float = 1) -> [Landmark] {
    let xy: [(Float, Float)] = [
        (100, 40),                                   // nose
        (104, 36), (107, 36), (110, 36),             // left eye inner, eye, outer
        (96, 36), (93, 36), (90, 36),                // right eye inner, eye, outer
        (116, 40), (84, 40),                         // left ear, right ear
        (104, 50), (96, 50),                         // mouth left, right
        (125, 70), (75, 70),                         // shoulders L, R
        (135, 110), (65, 110),                       // elbows
        (140, 150), (60, 150),                       // wrists
        (142, 158), (58, 158),                       // pinkies
        (140, 160), (60, 160),                       // index
        (136, 156), (64, 156),                       // thumbs
        (115, 160), (85, 160),                       // hips
        (117, 220), (83, 220),                       // knees
        (118, 280), (82, 280),                       // ankles
        (116, 290), (84, 290),                       // heels
        (124, 294), (76, 294),                       // foot index
    ]
    return xy.map { Landmark(x: offsetX + $0.0 * scale, y: offsetY + $0.1 * scale, z: 0, visibility: 0.9, presence: 0.95) }
}
