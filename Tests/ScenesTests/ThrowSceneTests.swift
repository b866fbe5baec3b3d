import Foundation
import Images
import Scenes
import Tensor
import XCTest

/// The rendered scenes hold what their truth says: the ball where the flight puts it, the
/// forearm along the launch angle at release, the same pictures from the same seed.
final class ThrowSceneTests: XCTestCase {
    func quietScene(seed: UInt64) -> ThrowScene {
        var r = SplitMix64(seed: seed)
        var s = ThrowScenes.scene(&r, throwCount: 1)
        s.noise = 0; s.shakes = []; s.walker = nil; s.leaves = []; s.shadow = false
        s.throwsPlanned[0].ballColor = [255, 0, 255]   // a colour nothing else has
        return s
    }

    func testTheBallIsWhereTheTruthSays() throws {
        for seed in [1, 2, 3] as [UInt64] {
            let s = quietScene(seed: seed)
            let truth = try XCTUnwrap(ThrowSceneTruth(scene: s, clip: "x.mp4").throwsMade.first)
            let renderer = ThrowSceneRenderer(scene: s)
            let first = Int((truth.releaseTime * s.fps).rounded(.up)) + 2
            for i in stride(from: first, to: min(first + 12, Int(truth.endTime * s.fps)), by: 3) {
                let image = renderer.frame(i)
                var sx = 0.0, sy = 0.0, n = 0.0
                for y in 0..<image.height {
                    for x in 0..<image.width where image.pixel(x, y) == (255, 0, 255) {
                        sx += Double(x) + 0.5; sy += Double(y) + 0.5; n += 1
                    }
                }
                guard n > 8 else { continue }   // hidden behind the figure
                let t = Double(i) / s.fps, u = t - truth.releaseTime, a = truth.angle * .pi / 180
                let x = truth.releaseX + truth.direction * truth.speedPixelsPerSecond * cos(a) * u
                let y = truth.releaseY - truth.speedPixelsPerSecond * sin(a) * u + truth.gravity * u * u / 2
                // A disc's pixel centres average to its centre within a fraction of a pixel
                // (a 5-pixel disc: about 0.1 px; 0.35 px allows for the smallest).
                XCTAssertEqual(sx / n, x, accuracy: 0.35, "seed \(seed) frame \(i)")
                XCTAssertEqual(sy / n, y, accuracy: 0.35, "seed \(seed) frame \(i)")
            }
        }
    }

    func testTheForearmPointsAlongTheLaunchAngleAtRelease() {
        for type in ThrowType.allCases {
            for angle in [0.0, 20, 35] where type.angles.contains(angle) {
                let arm = type.arm(phase: ThrowType.release, angle: Float(angle))
                let difference = (Double(arm.fore) - angle).truncatingRemainder(dividingBy: 360)
                XCTAssertEqual(difference, 0, accuracy: 0.01, "\(type) at \(angle)°")
            }
        }
    }

    func testTheSameSeedRendersTheSamePictures() {
        let a = ThrowScenes.throwSet(throwCount: 2, seed: 9), b = ThrowScenes.throwSet(throwCount: 2, seed: 9)
        XCTAssertEqual(a.count, b.count)
        let ra = ThrowSceneRenderer(scene: a[0]), rb = ThrowSceneRenderer(scene: b[0])
        for i in [0, 20, 40] { XCTAssertEqual(ra.frame(i), rb.frame(i)) }
        XCTAssertNotEqual(ThrowSceneRenderer(scene: ThrowScenes.throwSet(throwCount: 2, seed: 10)[0]).frame(20), ra.frame(20))
    }

    /// In a cluttered scene, while the truth says a throw's ball is hidden, none of its
    /// colour shows where the flight puts it; in the frames around that, it shows.
    func testACluttersHiddenStretchIsHiddenInThePicture() throws {
        var checked = 0
        for seed in 1...20 as ClosedRange<UInt64> {
            var s = ThrowScenes.clutterSet(throwCount: 1, seed: seed)[0]
            s.noise = 0; s.shadow = false
            s.throwsPlanned[0].ballColor = [255, 0, 255]
            s.clutter?.lookalikes = []; s.clutter?.strays = []
            let truth = try XCTUnwrap(ThrowSceneTruth(scene: s, clip: "x.mp4").throwsMade.first)
            guard let hidden = truth.hidden?.first(where: { $0.end - $0.start >= 0.1 }) else { continue }
            let renderer = ThrowSceneRenderer(scene: s)
            func magenta(at t: Double) -> Int {
                let image = renderer.frame(Int((t * s.fps).rounded()))
                let u = t - truth.releaseTime, a = truth.angle * .pi / 180
                let x = Int(truth.releaseX + truth.direction * truth.speedPixelsPerSecond * cos(a) * u)
                let y = Int(truth.releaseY - truth.speedPixelsPerSecond * sin(a) * u + truth.gravity * u * u / 2)
                var n = 0
                for yy in max(0, y - 3)...min(image.height - 1, y + 3) {
                    for xx in max(0, x - 3)...min(image.width - 1, x + 3) where image.pixel(xx, yy) == (255, 0, 255) { n += 1 }
                }
                return n
            }
            XCTAssertEqual(magenta(at: (hidden.start + hidden.end) / 2), 0, "seed \(seed): hidden mid-way")
            checked += 1
        }
        XCTAssertGreaterThanOrEqual(checked, 5, "scenes with a hidden stretch among 20")
        // The same seed, the same scenes.
        let a = ThrowScenes.clutterSet(throwCount: 3, seed: 7), b = ThrowScenes.clutterSet(throwCount: 3, seed: 7)
        XCTAssertEqual(ThrowSceneRenderer(scene: a[0]).frame(30), ThrowSceneRenderer(scene: b[0]).frame(30))
    }
}
