import Images
import Trajectories
import XCTest

final class MovingBlobsTests: XCTestCase {
    /// A plain 1280 × 720 wall (worked on at 640 × 360, a 2 × 2 average), with `draw` on it.
    static func wall(_ draw: (inout RGBImage) -> Void = { _ in }) -> RGBImage {
        var image = RGBImage(width: 1280, height: 720)
        image.fillRect((0, 0, 1280, 720), color: RGB(150, 160, 120))
        draw(&image)
        return image
    }

    func testALineOfPixelsAlongAnEdgeIsNoObject() {
        // What a video's coding leaves along the edge of a panel: a column two frame pixels
        // (one working pixel) wide and six tall. Its box is 3:1 and its long side (6 px) is
        // within the sizes, but it is thinner than the smallest object (3.84 px, 0.3 % of
        // the width); a ball of 8 px beside it is found.
        var blobs = MovingBlobs()
        let sizes: ClosedRange<Float> = 3.84...51.2
        blobs.load(Self.wall())
        XCTAssertEqual(blobs.blobs(sizes: sizes), [], "the first frame is the background")
        blobs.load(Self.wall { image in
            image.fillRect((524, 300, 2, 6), color: RGB(60, 40, 90))
            image.fillCircle(center: (800, 300), radius: 4, color: RGB(240, 120, 20))
        })
        let found = blobs.blobs(sizes: sizes)
        XCTAssertEqual(found.count, 1, "\(found)")
        // The ball's centre to half a working pixel (1 px): the fill is symmetric about it.
        XCTAssertEqual(found.first?.x ?? 0, 800, accuracy: 1)
        XCTAssertEqual(found.first?.y ?? 0, 300, accuracy: 1)
    }
}
