import CHDF5
import Foundation
import XCTest
@testable import Keypoints

/// Sizes read from a file are bounded before anything is allocated, and two runs on one
/// output are refused: the readers' answers to hostile or damaged input.
final class BoundsTests: XCTestCase {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-bounds-\(getpid())")
    override func setUpWithError() throws { try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true) }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    /// A 2e9-element float dataset declared (compressed, never written) in a file of a few
    /// kB: reading it would ask for 8 GB. It is refused with the sizes, before allocating.
    func testDeclaredSizeBeyondTheFileIsRefused() throws {
        let p = dir.appendingPathComponent("huge.h5").path
        HDF5.ready()
        let file = H5Fcreate(p, HDF5.F_ACC_TRUNC, HDF5.P_DEFAULT, HDF5.P_DEFAULT)
        XCTAssertGreaterThanOrEqual(file, 0)
        var dims: [hsize_t] = [2_000_000_000], chunk: [hsize_t] = [1 << 18]
        let space = H5Screate_simple(1, &dims, nil)
        let dcpl = H5Pcreate(H5P_CLS_DATASET_CREATE_ID_g)
        H5Pset_chunk(dcpl, 1, &chunk); H5Pset_deflate(dcpl, 4)
        let d = H5Dcreate2(file, "huge", H5T_IEEE_F32LE_g, space, HDF5.P_DEFAULT, dcpl, HDF5.P_DEFAULT)
        XCTAssertGreaterThanOrEqual(d, 0)
        H5Dclose(d); H5Pclose(dcpl); H5Sclose(space); H5Fclose(file)
        XCTAssertLessThan(try FileManager.default.attributesOfItem(atPath: p)[.size] as! Int, 100_000)

        // Refused on open: the child that copies another tool's file reads every dataset.
        XCTAssertThrowsError(try HDF5File.open(p)) { error in
            XCTAssertTrue("\(error)".contains("needs 8000000000 bytes but the file stores 0"), "\(error)")
        }
    }

    /// A file poseact wrote carries a checksum in its user block: one flipped bit anywhere
    /// after it, or a cut, is refused before libhdf5 reads the file; reopened for writing and
    /// closed, the file gets a new checksum.
    func testChecksumCatchesAnyChange() throws {
        let p = dir.appendingPathComponent("sum.h5").path
        let f = try HDF5File.create(p)
        try f.root().write("x", (0..<1000).map(Float.init), shape: [1000])
        try f.close()
        XCTAssertEqual(FileChecksum.verify(p), true)
        let good = try Data(contentsOf: URL(fileURLWithPath: p))
        for (i, at) in [512, 600, good.count / 2, good.count - 1].enumerated() {
            var bad = good
            bad[at] ^= UInt8(1 << (i % 8))
            try bad.write(to: URL(fileURLWithPath: p))
            XCTAssertThrowsError(try HDF5File.open(p)) { error in
                XCTAssertTrue("\(error)".contains(at == 512 ? "(or damaged)" : "damaged: its contents do not match the checksum"), "\(error)")
            }
        }
        try good.prefix(good.count - 100).write(to: URL(fileURLWithPath: p))
        XCTAssertThrowsError(try HDF5File.open(p))
        try good.write(to: URL(fileURLWithPath: p))
        let g = try HDF5File.open(p, writable: true)
        try g.root().setAttribute("note", "changed")
        try g.close()
        XCTAssertEqual(FileChecksum.verify(p), true, "renewed at close")
        XCTAssertNotEqual(try Data(contentsOf: URL(fileURLWithPath: p)), good)
    }

    /// What the check lets through: real data, compressed or not, and empty datasets.
    func testRealDatasetsStillRead() throws {
        let p = dir.appendingPathComponent("ok.h5").path
        let f = try HDF5File.create(p)
        let root = try f.root()
        let noise = (0..<50_000).map { _ in Float.random(in: -1...1) }
        try root.write("noise", noise, shape: [50_000])                             // deflate, ~1:1
        try root.write("zeros", [Float](repeating: 0, count: 400_000), shape: [400_000])  // deflate, ~1000:1
        try root.write("small", [1, 2, 3] as [Float], shape: [3])                  // contiguous
        try root.write("empty", [Float](), shape: [0])
        try f.close()
        let g = try HDF5File.open(p)
        XCTAssertEqual(try g.root().dataset("noise").read(as: Float.self).values, noise)
        XCTAssertEqual(try g.root().dataset("zeros").read(as: Float.self).values.count, 400_000)
        XCTAssertEqual(try g.root().dataset("small").read(as: Float.self).values, [1, 2, 3])
        XCTAssertEqual(try g.root().dataset("empty").read(as: Float.self).values, [])
        try g.close()
    }

    /// A second holder of one lock is refused with the first one's pid; once the first lets
    /// go (or its process ends: the kernel drops a flock), the lock can be taken again.
    func testFileLockRefusesASecondHolder() throws {
        let p = dir.appendingPathComponent("run.lock").path
        var first: FileLock? = try FileLock(p, what: "the run folder r")
        XCTAssertThrowsError(try FileLock(p, what: "the run folder r")) { error in
            XCTAssertEqual("\(error)", "the run folder r is in use by another poseact (pid \(getpid())); wait for it to end, or stop it")
        }
        withExtendedLifetime(first) {}
        first = nil
        XCTAssertNoThrow(try FileLock(p, what: "the run folder r"))
    }

    /// Rows that ask for absurd sizes or hold absurd values are data problems naming the row,
    /// never an allocation: a frame number of 2e9 (312 GB of frames), a 3e38 coordinate,
    /// an infinite confidence, a picture a million pixels wide.
    func testAbsurdRowsAreDataProblems() throws {
        let url = dir.appendingPathComponent("absurd.csv")
        try """
            clip,label,split,frame,width,height,nose_x,nose_y,nose_c
            a,l,train,2000000000,10,10,1,1,1
            a,l,train,1,10,10,3e38,1,1
            a,l,train,2,10,10,1,1,inf
            a,l,train,3,1000000,10,1,1,1
            a,l,train,4,10,10,1,1,1
            """.write(to: url, atomically: true, encoding: .utf8)
        let result = try KeypointCSV.read(url.path)
        let lines = result.problems.map(\.description)
        XCTAssertEqual(result.clips.count, 1)
        XCTAssertEqual(result.clips[0].frameCount, 4, "frames 1 to 4, the skipped 3 filled as a gap: \(lines)")
        XCTAssertTrue(lines.contains { $0.contains(":2:") && $0.contains("frame '2000000000' is not a whole number in 0…1000000") }, "\(lines)")
        XCTAssertTrue(lines.contains { $0.contains(":3:") && $0.contains("over 100 frame widths outside") }, "\(lines)")
        XCTAssertTrue(lines.contains { $0.contains(":4:") && $0.contains("nose_c") }, "\(lines)")
        XCTAssertTrue(lines.contains { $0.contains(":5:") && $0.contains("width '1000000'") }, "\(lines)")
        XCTAssertTrue(result.clips[0].keypoints.allSatisfy { $0.isNaN || abs($0) <= 100 }, "no absurd value stored")
    }
}
