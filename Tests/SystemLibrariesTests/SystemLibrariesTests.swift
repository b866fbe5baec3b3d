import CBLAS
import CFFmpeg
import CHDF5
import CLapacke
import XCTest

/// The system libraries the package is built on link and answer (Debian's -dev packages,
/// found by pkg-config). Later issues use them for real; this catches a broken install.
final class SystemLibrariesTests: XCTestCase {
    func testLapackeSolvesALinearSystem() {
        // [2 1; 1 3] x = [3; 5]  →  x = [0.8, 1.4]
        var a: [Float] = [2, 1, 1, 3], b: [Float] = [3, 5]
        var pivots = [Int32](repeating: 0, count: 2)
        let info = LAPACKE_sgesv(LAPACK_ROW_MAJOR, 2, 1, &a, 2, &pivots, &b, 1)
        XCTAssertEqual(info, 0)
        XCTAssertEqual(b[0], 0.8, accuracy: 1e-6)
        XCTAssertEqual(b[1], 1.4, accuracy: 1e-6)
    }

    func testHDF5ReportsItsVersion() {
        var major: UInt32 = 0, minor: UInt32 = 0, release: UInt32 = 0
        XCTAssertGreaterThanOrEqual(H5get_libversion(&major, &minor, &release), 0)
        XCTAssertTrue(major > 1 || (major == 1 && minor >= 10), "HDF5 \(major).\(minor).\(release)")
    }

    func testFFmpegLibrariesLoad() {
        // LIBAVFORMAT_VERSION_MAJOR 59 is FFmpeg 5 (Debian 12); major version sits in bits 16+.
        XCTAssertGreaterThanOrEqual(avformat_version() >> 16, 58)
        XCTAssertGreaterThanOrEqual(avcodec_version() >> 16, 58)
        XCTAssertGreaterThanOrEqual(swscale_version() >> 16, 5)
        XCTAssertNotNil(avcodec_find_decoder(AV_CODEC_ID_H264), "FFmpeg has no H.264 decoder")
    }

    func testOpenBLASThreadControl() {
        openblas_set_num_threads(1)
        XCTAssertEqual(openblas_get_num_threads(), 1)
    }
}
