import Config
import KeypointWindows

/// One input stream of a multi-stream ensemble (PYSKL's j, b, jm, bm): a net of its own on
/// its own features, its probabilities averaged with the others'. On 2-D keypoints the bone
/// stream is usually the best single one, and the four together add 1 to 3 points (PYSKL's
/// NTU RGB+D 60 figures).
public enum Stream: String, ConfigChoice, Sendable {
    case joint
    case bone
    case jointMotion = "joint_motion"
    case boneMotion = "bone_motion"

    /// Each stream's features; the confidence lets a net tell a missing joint from one at 0.
    public var features: [Feature] {
        switch self {
        case .joint: return [.position, .confidence]
        case .bone: return [.bone, .confidence]
        case .jointMotion: return [.velocity, .confidence]
        case .boneMotion: return [.boneVelocity, .confidence]
        }
    }
}
