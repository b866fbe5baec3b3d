import Foundation
import Images

/// A person-like figure (the demo's: head, torso, arms and legs as thick strokes) whose
/// arms are set by angle, so that it can throw: facing the camera, 1.75 m tall, its arms
/// swinging in the picture's plane.
///
/// Angles are in degrees in the throw's own frame: 0 points along `direction` (the way it
/// throws), 90 straight up, 180 backwards, −90 straight down.
public struct ThrowFigure: Sendable {
    /// Where the feet stand (pixels): the middle between them, on the floor.
    public var x: Float, floor: Float
    public var pixelsPerMetre: Float
    /// +1: throws towards +x (the picture's right), −1: towards −x.
    public var direction: Float
    /// Upper arm and forearm angles, the throwing arm and the other one.
    public var throwing: (upper: Float, fore: Float) = (-90, -90)
    public var other: (upper: Float, fore: Float) = (-90, -90)
    /// Which arm throws: the one on the side it throws towards (facing the camera, the
    /// person's right hand throws towards the picture's left).
    public var rightHanded: Bool { direction < 0 }
    /// Leg swing (walking), −1…1.
    public var stride: Float = 0
    public var shirt = RGB(40, 90, 170), trousers = RGB(40, 40, 60), skin = RGB(224, 172, 140)

    public init(x: Float, floor: Float, pixelsPerMetre: Float, direction: Float) {
        self.x = x; self.floor = floor; self.pixelsPerMetre = pixelsPerMetre; self.direction = direction
    }

    /// Figure units: the demo figure's, 387 from the top of the head to the soles, y down from
    /// the top of its picture; the soles at 438.
    var unit: Float { 1.75 * pixelsPerMetre / 387 }
    func point(_ ux: Float, _ uy: Float) -> (x: Float, y: Float) { (x + ux * unit, floor - (438 - uy) * unit) }

    /// The shoulder of an arm (pixels): the throwing arm's is on the side it throws towards.
    func shoulder(throwingArm: Bool) -> (x: Float, y: Float) {
        point((throwingArm ? 38 : -38) * direction, 125)
    }

    static let upperArm: Float = 62, forearm: Float = 60

    func joints(throwingArm: Bool) -> (shoulder: (x: Float, y: Float), elbow: (x: Float, y: Float), wrist: (x: Float, y: Float)) {
        let angles = throwingArm ? throwing : other
        let s = shoulder(throwingArm: throwingArm)
        func along(_ p: (x: Float, y: Float), _ degrees: Float, _ length: Float) -> (x: Float, y: Float) {
            let a = degrees * .pi / 180
            return (p.x + direction * cosf(a) * length * unit, p.y - sinf(a) * length * unit)
        }
        let e = along(s, angles.upper, Self.upperArm)
        return (s, e, along(e, angles.fore, Self.forearm))
    }

    /// The throwing hand's wrist (pixels) and the forearm's direction (a unit vector, y down).
    public var throwingWrist: (x: Float, y: Float) { joints(throwingArm: true).wrist }
    public var forearmDirection: (x: Float, y: Float) {
        let a = throwing.fore * .pi / 180
        return (direction * cosf(a), -sinf(a))
    }

    public func draw(into image: inout RGBImage) {
        let u = unit
        let shoes = RGB(20, 20, 20)
        for (side, swing) in [(Float(-1), stride * 14), (Float(1), -stride * 14)] {
            let knee = point(side * 30 + swing * 0.5, 340), ankle = point(side * 34 + swing, 430)
            image.drawLine(from: point(side * 22, 250), to: knee, color: trousers, thickness: 26 * u)
            image.drawLine(from: knee, to: ankle, color: trousers, thickness: 22 * u)
            image.drawLine(from: ankle, to: (ankle.x + side * 18 * u, ankle.y + 8 * u), color: shoes, thickness: 14 * u)
        }
        image.drawLine(from: point(0, 120), to: point(0, 250), color: shirt, thickness: 70 * u)
        for arm in [false, true] {
            let j = joints(throwingArm: arm)
            image.drawLine(from: j.shoulder, to: j.elbow, color: shirt, thickness: 20 * u)
            image.drawLine(from: j.elbow, to: j.wrist, color: skin, thickness: 16 * u)
        }
        image.drawLine(from: point(0, 92), to: point(0, 115), color: skin, thickness: 18 * u)
        image.fillCircle(center: point(0, 73), radius: 22 * u, color: skin)
        image.fillCircle(center: point(-8, 68), radius: 2.5 * u, color: RGB(40, 30, 30))
        image.fillCircle(center: point(8, 68), radius: 2.5 * u, color: RGB(40, 30, 30))
    }
}

/// How an arm swings for each type of throw: upper arm and forearm angles (the figure's
/// throw frame) at moments of the swing, from rest through the wind-up to the release (at
/// `release` of the swing) and the follow-through, back to rest. The forearm at release
/// points along the launch angle.
public enum ThrowType: String, Codable, Sendable, CaseIterable {
    case overhand, underhand

    /// Launch angles this type throws at (degrees).
    public var angles: ClosedRange<Double> {
        switch self {
        case .overhand: return 0...35
        case .underhand: return 10...50
        }
    }

    /// The share of the swing at which the object leaves the hand.
    public static let release: Float = 0.7

    /// (phase, upper, fore) keyframes for a launch angle θ, unwrapped so that the arm turns
    /// the way a throw turns it: overhand back, up over the shoulder and forward (the angles
    /// fall through −360); underhand back and down, then forward and up.
    func keyframes(angle θ: Float) -> [(Float, Float, Float)] {
        switch self {
        case .overhand:
            return [(0, -90, -90), (0.3, -210, -160), (0.5, -240, -265), (Self.release, θ + 55 - 360, θ - 360),
                    (0.85, -360, -390), (1, -450, -450)]
        case .underhand:
            return [(0, -90, -90), (0.35, -150, -140), (Self.release, -55, θ), (0.85, 20, 50), (1, -90, -90)]
        }
    }

    /// The arm's angles `phase` (0…1) of the way through the swing: a smooth step between keyframes.
    public func arm(phase: Float, angle: Float) -> (upper: Float, fore: Float) {
        let k = keyframes(angle: angle)
        let p = min(max(phase, 0), 1)
        for (a, b) in zip(k, k.dropFirst()) where p <= b.0 {
            let u = (p - a.0) / max(b.0 - a.0, 1e-6)
            let s = u * u * (3 - 2 * u)
            return (a.1 + (b.1 - a.1) * s, a.2 + (b.2 - a.2) * s)
        }
        return (k.last!.1, k.last!.2)
    }
}
