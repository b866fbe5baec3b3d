import Basics
import CHDF5
import Foundation
import Keypoints
import XCTest

/// Files another tool (or a stranger) wrote, made here with libhdf5's C API so that poseact's
/// writer has no say in them: what `HDF5File.open` copies faithfully, and what it refuses
/// (data stored in other files, declared data far beyond the file's size).
final class HDF5ForeignFileTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-foreign-h5-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: folder) }

    private func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// A file made with the C API alone; `body` gets the root group's id.
    private func foreignFile(_ name: String, _ body: (hid_t) throws -> Void) throws -> String {
        _ = H5open()
        H5Eset_auto2(0, nil, nil)
        let p = path(name)
        let file = H5Fcreate(p, 0x0002, 0, 0)
        XCTAssertGreaterThanOrEqual(file, 0)
        try body(file)
        XCTAssertGreaterThanOrEqual(H5Fclose(file), 0)
        return p
    }

    private func openError(_ p: String) -> String {
        do {
            _ = try HDF5File.open(p)
            return "opened"
        } catch {
            return "\(error)"
        }
    }

    /// The 6 floats 1…6, as float32 little endian: a "secret" another file points at.
    private func secret() throws -> String {
        let p = path("secret.bin")
        let values: [Float] = [1, 2, 3, 4, 5, 6]
        try values.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: p))
        return p
    }

    /// A float32 dataset "weight" of `dims` whose storage `configure` sets (given the
    /// creation properties and the dataspace; it returns HDF5's status).
    private func weight(in file: hid_t, dims: [hsize_t], configure: (hid_t, hid_t) -> herr_t) {
        var dims = dims
        let space = H5Screate_simple(Int32(dims.count), &dims, nil)
        let dcpl = H5Pcreate(H5P_CLS_DATASET_CREATE_ID_g)
        XCTAssertGreaterThanOrEqual(configure(dcpl, space), 0)
        let d = H5Dcreate2(file, "weight", H5T_IEEE_F32LE_g, space, 0, dcpl, 0)
        XCTAssertGreaterThanOrEqual(d, 0)
        H5Dclose(d); H5Pclose(dcpl); H5Sclose(space)
    }

    func testExternalStorageIsRefused() throws {
        let secretPath = try secret()
        let p = try foreignFile("external.h5") { file in
            weight(in: file, dims: [2, 3]) { dcpl, _ in H5Pset_external(dcpl, secretPath, 0, 24) }
        }
        // Without the rule, the file would read as [1…6] from secret.bin.
        XCTAssertEqual(openError(p), "\(p): /weight: its data is stored in another file (HDF5 external storage); poseact reads only what a file holds itself")
    }

    func testVirtualDatasetIsRefused() throws {
        let source = try foreignFile("source.h5") { file in
            var dims: [hsize_t] = [6]
            let space = H5Screate_simple(1, &dims, nil)
            let d = H5Dcreate2(file, "data", H5T_IEEE_F32LE_g, space, 0, 0, 0)
            let values: [Float] = [1, 2, 3, 4, 5, 6]
            H5Dwrite(d, H5T_NATIVE_FLOAT_g, 0, 0, 0, values)
            H5Dclose(d); H5Sclose(space)
        }
        let p = try foreignFile("virtual.h5") { file in
            weight(in: file, dims: [6]) { dcpl, space in H5Pset_virtual(dcpl, space, source, "/data", space) }
        }
        XCTAssertEqual(openError(p), "\(p): /weight: a virtual dataset, whose data comes from other files; poseact reads only what a file holds itself")
    }

    func testExternalLinkIsRefused() throws {
        let other = try foreignFile("other.h5") { file in
            let g = H5Gcreate2(file, "clips", 0, 0, 0)
            H5Gclose(g)
        }
        let p = try foreignFile("linked.h5") { file in
            XCTAssertGreaterThanOrEqual(H5Lcreate_external(other, "/clips", file, "clips", 0, 0), 0)
        }
        XCTAssertEqual(openError(p), "\(p): clips is a link to another file (an HDF5 external link); poseact reads only what a file holds itself")
    }

    /// 64 MiB of zeros, deflated to about 64 kB and linked under 8 names: 512 MiB declared
    /// by a file of 64 kB, over the bound of what a file of its size may declare, so refused
    /// before a reader allocates it.
    func testDeclaredDataFarBeyondTheFileIsRefused() throws {
        let count = 16 << 20
        let p = try foreignFile("zeros.h5") { file in
            var dims: [hsize_t] = [hsize_t(count)]
            let space = H5Screate_simple(1, &dims, nil)
            let dcpl = H5Pcreate(H5P_CLS_DATASET_CREATE_ID_g)
            var chunk: [hsize_t] = [1 << 18]
            H5Pset_chunk(dcpl, 1, &chunk)
            H5Pset_deflate(dcpl, 9)
            let d = H5Dcreate2(file, "zeros", H5T_IEEE_F32LE_g, space, 0, dcpl, 0)
            let zeros = [Float](repeating: 0, count: count)
            H5Dwrite(d, H5T_NATIVE_FLOAT_g, 0, 0, 0, zeros)
            for i in 1..<8 { H5Lcreate_hard(file, "zeros", file, "zeros\(i)", 0, 0) }
            H5Dclose(d); H5Pclose(dcpl); H5Sclose(space)
        }
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: p)[.size] as? Int)
        XCTAssertLessThan(size, 1 << 20, "the test file is small")
        XCTAssertEqual(openError(p), "\(p): its datasets declare more data than a file of its size holds (over 64 times its size, or 256 MiB); damaged or hostile file?")
    }

    /// What another tool wrote reads back the same through the copy: integers, float64, a
    /// scalar, four dimensions, attributes of every kind, a nested group.
    func testAnotherToolsFileReadsTheSame() throws {
        let p = try foreignFile("h5py-like.h5") { file in
            let g = H5Gcreate2(file, "clips", 0, 0, 0)
            var dims: [hsize_t] = [2, 1, 3, 2]
            let space = H5Screate_simple(4, &dims, nil)
            let ints = H5Dcreate2(g, "frames", H5T_STD_I32LE_g, space, 0, 0, 0)
            let intValues: [Int32] = Array(0..<12).map { Int32($0 * 1000 - 5) }
            H5Dwrite(ints, H5T_NATIVE_INT32_g, 0, 0, 0, intValues)
            H5Dclose(ints)
            let doubles = H5Dcreate2(g, "times", H5T_IEEE_F64LE_g, space, 0, 0, 0)
            let doubleValues: [Double] = Array(0..<12).map { Double($0) / 3 }
            H5Dwrite(doubles, H5T_NATIVE_DOUBLE_g, 0, 0, 0, doubleValues)
            H5Dclose(doubles)
            H5Sclose(space)
            let scalarSpace = H5Screate(H5S_SCALAR)
            let scalar = H5Dcreate2(file, "fps", H5T_IEEE_F32LE_g, scalarSpace, 0, 0, 0)
            var fps: Float = 29.97
            H5Dwrite(scalar, H5T_NATIVE_FLOAT_g, 0, 0, 0, &fps)
            let attribute = H5Acreate2(scalar, "unit", H5T_STD_I16LE_g, scalarSpace, 0, 0)
            var unit: Int16 = -7
            H5Awrite(attribute, H5T_NATIVE_INT16_g, &unit)
            H5Aclose(attribute); H5Dclose(scalar); H5Sclose(scalarSpace)
            H5Gclose(g)
        }
        // Attributes through the wrapper (a file it writes is as foreign to a fresh reader).
        let file = try HDF5File.open(p)
        let clips = try file.group("/clips")
        let frames = try clips.read("frames", as: Double.self)
        XCTAssertEqual(frames.shape, [2, 1, 3, 2])
        XCTAssertEqual(frames.values, Array(0..<12).map { Double($0 * 1000 - 5) })
        let times = try clips.read("times", as: Double.self)
        XCTAssertEqual(times.values, Array(0..<12).map { Double($0) / 3 }, "float64 kept bit for bit")
        let fps = try file.root().dataset("fps")
        XCTAssertEqual(try fps.shape(), [])
        XCTAssertEqual(try fps.read(as: Float.self).values, [29.97])
        XCTAssertEqual(try fps.attribute("unit"), .int(-7))
        try file.close()
        // Nothing of this process's copies is left in the temporary folder.
        let left = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix("poseact-hdf5-\(Leftovers.tag)-") }
        XCTAssertEqual(left, [])
    }
}
