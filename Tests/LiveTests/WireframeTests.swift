import Foundation
import Pose
import PoseFixtures
import XCTest
@testable import Images
@testable import Live

private extension RGBImage {
    func rgb(_ x: Int, _ y: Int) -> RGB { let p = pixel(x, y); return RGB(p.r, p.g, p.b) }
    /// Pixels differing from black.
    var paintedCount: Int {
        var n = 0
        for i in stride(from: 0, to: pixels.count, by: 3) where pixels[i] != 0 || pixels[i + 1] != 0 || pixels[i + 2] != 0 { n += 1 }
        return n
    }
    func writePPM(_ path: String) throws {
        var data = Data("P6\n\(width) \(height)\n255\n".utf8)
        data.append(contentsOf: pixels)
        try data.write(to: URL(fileURLWithPath: path))
    }
}

final class WireframeTests: XCTestCase {
    private func person(id: Int, pose: [Landmark], prominent: Bool) -> Person {
        Person(id: id, box: Box.enclosing(pose.map { ($0.x, $0.y) }), landmarks: pose,
               worldLandmarks: [], presence: 1, isProminent: prominent)
    }

    func testWireframeDrawsVisibleEdgesOnly() {
        var pose = makeStandingPose(offsetX: 60, offsetY: 10)
        pose[13].visibility = 0.3     // left elbow hidden: upper arm and forearm not drawn
        let p = person(id: 3, pose: pose, prominent: true)
        var img = RGBImage(width: 320, height: 320)
        img.drawWireframe([p])
        // Shoulder line (11–12) midpoint and hip line midpoint: bright green.
        XCTAssertEqual(img.rgb(Int((pose[11].x + pose[12].x) / 2), Int(pose[11].y)), .brightGreen)
        XCTAssertEqual(img.rgb(Int((pose[23].x + pose[24].x) / 2), Int(pose[23].y)), .brightGreen)
        // Right forearm (14–16) is drawn; left forearm (13–15) is not, nor the elbow joint.
        let mid = { (a: Landmark, b: Landmark) in (Int((a.x + b.x) / 2), Int((a.y + b.y) / 2)) }
        let r = mid(pose[14], pose[16]), l = mid(pose[13], pose[15])
        XCTAssertEqual(img.rgb(r.0, r.1), .brightGreen)
        XCTAssertEqual(img.rgb(l.0, l.1), .black)
        XCTAssertEqual(img.rgb(Int(pose[13].x), Int(pose[13].y)), .black)
        XCTAssertEqual(img.rgb(Int(pose[15].x), Int(pose[15].y)), .white, "wrist itself is visible")
        // Joint circles are white on the prominent person; a far corner is untouched.
        XCTAssertEqual(img.rgb(Int(pose[25].x), Int(pose[25].y)), .white)
        XCTAssertEqual(img.rgb(315, 315), .black)
        // The label is above the box: something drawn there.
        let box = p.box
        var labelPixels = 0
        for y in max(0, Int(box.y) - 12)..<Int(box.y) { for x in Int(box.x)..<Int(box.x) + 30 where img.rgb(x, y) != .black { labelPixels += 1 } }
        XCTAssertGreaterThan(labelPixels, 20)

        // A non-prominent person is drawn in the secondary colour; a nil label draws no text.
        var other = RGBImage(width: 320, height: 320)
        other.drawWireframe([person(id: 4, pose: pose, prominent: false)], label: { _ in nil })
        XCTAssertEqual(other.rgb(r.0, r.1), .steelBlue)
        XCTAssertEqual(other.rgb(Int(p.box.x) + 10, Int(p.box.y) - 6), .black)
    }

    /// Four skeletons on a 640×480 frame, timed; and one picture for a human to look at.
    func testWireframeSpeedAndPicture() throws {
        var persons: [Person] = []
        for k in 0..<4 {
            var pose = makeStandingPose(offsetX: 20 + Float(k) * 150, offsetY: 40 + Float(k % 2) * 30, scale: 1.2 - Float(k) * 0.1)
            if k == 1 { for i in [14, 16, 18, 20, 22] { pose[i].visibility = 0.2 } }     // right arm hidden
            if k == 2 { for i in [25, 27, 29, 31] { pose[i].visibility = 0.1 } }         // left leg hidden
            persons.append(person(id: k + 1, pose: pose, prominent: k == 0))
        }
        var px = [UInt8](repeating: 60, count: 640 * 480 * 3)
        for y in 0..<480 { for x in 0..<640 { px[(y * 640 + x) * 3] = UInt8(30 + y / 12); px[(y * 640 + x) * 3 + 1] = UInt8(30 + x / 24) } }
        let background = RGBImage(width: 640, height: 480, pixels: px)
        var times: [Double] = []
        var img = background
        for _ in 0..<50 {
            img = background
            let t0 = DispatchTime.now().uptimeNanoseconds
            img.drawWireframe(persons, label: { p in p.isProminent ? "id \(p.id) walking 93%" : nil })
            times.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
        }
        times.sort()
        let median = times[times.count / 2]
        print(String(format: "drawWireframe, 4 people on 640x480: median %.3f ms, min %.3f ms", median, times[0]))
        XCTAssertLessThan(median, 1.0)
        img.drawText("POSEACT 0.1 - ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 %.:-_!?()/", at: (6, 462), color: .white, scale: 1, background: .black)
        try img.writePPM("/tmp/poseact-wireframe.ppm")
        XCTAssertNotEqual(img, background)
    }
}
