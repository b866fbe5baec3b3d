import Basics
import Foundation
import Keypoints
import TestData
import XCTest

/// The HDF5 keypoint store: round trips, atomic writing, errors, merging, the layout
/// h5py/h5dump users see, the dataset report, and speed at Penn Action size.
final class KeypointStoreTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("poseact-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    private func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    // MARK: helpers

    private static let joints = ["nose", "left_shoulder", "right_shoulder", "left_hip", "right_hip"]

    /// A clip with a deterministic pattern; `missing` frames have no person.
    private func clip(_ id: String, label: String = "squat", split: String? = "train", frames: Int = 40,
                      joints: [String] = KeypointStoreTests.joints, seed: Float = 0, missing: Set<Int> = [],
                      source: String? = nil, start: Double? = nil, end: Double? = nil,
                      estimator: String = "blazepose-full mediapipe-0.10.14", modelHash: String? = "ab12") -> ClipKeypoints {
        var kp: [Float] = []
        for f in 0..<frames {
            for j in joints.indices {
                if missing.contains(f) || (j == 1 && f % 7 == 3) {
                    kp += [.nan, .nan, 0]
                } else {
                    kp += [Float(f) * 0.01 + Float(j) * 0.1 + seed, 0.5 - Float(j) * 0.05 + seed / 3, 0.9]
                }
            }
        }
        return ClipKeypoints(id: id, label: label, split: split, source: source ?? "videos/\(id).mp4", start: start, end: end,
                             fps: 30, width: 640, height: 480, jointNames: joints, keypoints: kp,
                             times: (0..<frames).map { Double($0) / 30 }, estimator: estimator, modelHash: modelHash)
    }

    /// Bit-for-bit equality (NaN == NaN, -0 != +0).
    private func assertIdentical(_ a: ClipKeypoints, _ b: ClipKeypoints, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.id, b.id, file: file, line: line)
        XCTAssertEqual(a.label, b.label, file: file, line: line)
        XCTAssertEqual(a.split, b.split, file: file, line: line)
        XCTAssertEqual(a.source, b.source, file: file, line: line)
        XCTAssertEqual(a.start?.bitPattern, b.start?.bitPattern, file: file, line: line)
        XCTAssertEqual(a.end?.bitPattern, b.end?.bitPattern, file: file, line: line)
        XCTAssertEqual(a.fps.bitPattern, b.fps.bitPattern, file: file, line: line)
        XCTAssertEqual(a.width, b.width, file: file, line: line)
        XCTAssertEqual(a.height, b.height, file: file, line: line)
        XCTAssertEqual(a.jointNames, b.jointNames, file: file, line: line)
        XCTAssertEqual(a.estimator, b.estimator, file: file, line: line)
        XCTAssertEqual(a.modelHash, b.modelHash, file: file, line: line)
        XCTAssertEqual(a.keypoints.map(\.bitPattern), b.keypoints.map(\.bitPattern), file: file, line: line)
        XCTAssertEqual(a.times.map(\.bitPattern), b.times.map(\.bitPattern), file: file, line: line)
        XCTAssertEqual(a.world?.map(\.bitPattern), b.world?.map(\.bitPattern), file: file, line: line)
    }

    private func write(_ clips: [ClipKeypoints], to name: String, attributes: [String: String] = [:]) throws -> String {
        let p = path(name)
        let writer = try KeypointStoreWriter(path: p, attributes: attributes)
        for c in clips { try writer.append(c) }
        try writer.finish()
        return p
    }

    /// The StoreError `body` throws (failing the test when it throws nothing or something else).
    private func storeError(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            try body()
            XCTFail("no error thrown", file: file, line: line)
        } catch let e as StoreError {
            XCTAssertFalse(e.message.contains("\n"), "not one line: \(e.message)", file: file, line: line)
            return e.message
        } catch {
            XCTFail("not a StoreError: \(type(of: error)) \(error)", file: file, line: line)
        }
        return ""
    }

    /// What `body` writes to the process's stderr (fd 2).
    private func stderrOutput(_ body: () -> Void) -> String {
        fflush(stderr)
        let saved = dup(2)
        let capture = path("stderr-\(UUID().uuidString).txt")
        let fd = open(capture, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        dup2(fd, 2)
        body()
        fflush(stderr)
        dup2(saved, 2)
        close(saved)
        close(fd)
        return (try? String(contentsOfFile: capture, encoding: .utf8)) ?? ""
    }

    // MARK: round trip

    func testRoundTripIsBitExact() throws {
        var withNaNs = clip("a/b.mp4@1.00-2.50", label: "приседание 🏋️", split: "test", frames: 33, seed: 0.2,
                            missing: [0, 5, 32], start: 1.0, end: 2.5)
        withNaNs.keypoints[4] = -0.0                              // signed zero survives
        withNaNs.keypoints[7] = Float(bitPattern: 0x7FC0_1234)    // so does a NaN payload
        let empty = clip("nothing decoded@3.00-4.00", frames: 0, estimator: "blazepose-full mediapipe-0.10.14")
        var plain = clip("zz/plain", label: "squat", split: nil, frames: 120, seed: 0.1, modelHash: nil)
        // World landmarks, with the NaN rows of a frame without a person.
        plain.world = (0..<plain.keypoints.count).map { $0 / (KeypointStoreTests.joints.count * 3) == 7 ? .nan : Float($0) * 1e-3 - 0.2 }
        let noJoints = ClipKeypoints(id: "no joints", label: "squat", split: "train", source: "x.csv", start: nil, end: nil,
                                     fps: 25, width: 0, height: 0, jointNames: [], keypoints: [], times: [0, 0.04],
                                     estimator: "import")
        let input = [plain, withNaNs, empty, noJoints]
        let p = try write(input, to: "round.h5", attributes: ["created_by": "poseact test", "poseact_version": "0.1.0"])

        let store = try KeypointStore(path: p)
        XCTAssertEqual(store.path, p)
        XCTAssertEqual(store.attributes, ["created_by": "poseact test", "poseact_version": "0.1.0"])
        XCTAssertEqual(store.entries.map(\.id), input.map(\.id).sorted())
        for c in input { assertIdentical(try store.read(c.id), c) }
        let all = try store.readAll()
        XCTAssertEqual(all.map(\.id), input.map(\.id).sorted())

        let e = try XCTUnwrap(store.entries.first { $0.id == withNaNs.id })
        XCTAssertEqual(e.label, "приседание 🏋️")
        XCTAssertEqual(e.split, "test")
        XCTAssertEqual(e.frames, 33)
        XCTAssertEqual(e.framesWithPerson, 30)
        XCTAssertEqual(e.framesWithPerson, withNaNs.framesWithPerson)
        XCTAssertEqual(e.start, 1.0)
        XCTAssertEqual(e.end, 2.5)
        XCTAssertEqual(e.fps, 30)
        XCTAssertEqual(e.width, 640)
        XCTAssertEqual(e.height, 480)
        XCTAssertEqual(e.source, "videos/a/b.mp4@1.00-2.50.mp4")
        let z = try XCTUnwrap(store.entries.first { $0.id == empty.id })
        XCTAssertEqual(z.frames, 0)
        XCTAssertEqual(z.framesWithPerson, 0)
        let pl = try XCTUnwrap(store.entries.first { $0.id == plain.id })
        XCTAssertNil(pl.split)
        XCTAssertNil(pl.start)
        XCTAssertNil(pl.end)
        XCTAssertThrowsError(try store.read("not there")) { XCTAssertEqual(($0 as? StoreError)?.message, "\(p): no clip 'not there'") }
    }

    func testFinishLeavesNoTempFileAndAbandonLeavesNothing() throws {
        let p = path("atomic.h5")
        let writer = try KeypointStoreWriter(path: p)
        try writer.append(clip("one"))
        XCTAssertTrue(TestData.hasTemporaryFile(p), "writes go to the temporary file")
        XCTAssertFalse(FileManager.default.fileExists(atPath: p), "no store before finish()")
        try writer.finish()
        XCTAssertTrue(FileManager.default.fileExists(atPath: p))
        XCTAssertFalse(TestData.hasTemporaryFile(p))
        XCTAssertThrowsError(try writer.append(clip("two")), "a finished writer takes no more clips")

        let q = path("abandoned.h5")
        let other = try KeypointStoreWriter(path: q)
        try other.append(clip("one"))
        other.abandon()
        XCTAssertFalse(FileManager.default.fileExists(atPath: q))
        XCTAssertFalse(TestData.hasTemporaryFile(q))

        // A writer dropped without finish() cleans up too; an existing store is untouched.
        do {
            let dropped = try KeypointStoreWriter(path: p)
            try dropped.append(clip("three"))
        }
        XCTAssertFalse(TestData.hasTemporaryFile(p))
        XCTAssertEqual(try KeypointStore(path: p).entries.map(\.id), ["one"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted(), ["atomic.h5"])
    }

    /// An HDF5 file written in one go (the windows file, the weights) whose writing fails
    /// leaves no file and no temporary file; an older file under the name stays.
    func testHDF5WriteThatFailsLeavesNothing() throws {
        struct Interrupted: Error {}
        let p = path("one-go.h5")
        XCTAssertThrowsError(try HDF5File.writeAtomically(p) { root in
            try root.setAttribute("format", "test")
            throw Interrupted()
        }) { XCTAssertTrue($0 is Interrupted) }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [])

        try HDF5File.writeAtomically(p) { try $0.setAttribute("format", "old") }
        XCTAssertThrowsError(try HDF5File.writeAtomically(p) { _ in throw Interrupted() })
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["one-go.h5"])
        let file = try HDF5File.open(p)
        defer { try? file.close() }
        XCTAssertEqual(try file.root().stringAttribute("format"), "old")
    }

    func testDuplicateIdIsRefused() throws {
        let p = path("dup.h5")
        let writer = try KeypointStoreWriter(path: p)
        try writer.append(clip("same"))
        let message = storeError { try writer.append(clip("same", seed: 0.3)) }
        XCTAssertEqual(message, "\(p): clip 'same' is already in the store (ids must be unique)")
        try writer.append(clip("other"))
        try writer.finish()
        XCTAssertEqual(try KeypointStore(path: p).entries.map(\.id), ["other", "same"])

        // Bad shapes and reserved attributes are refused too.
        let w2 = try KeypointStoreWriter(path: path("bad.h5"))
        var bad = clip("bad")
        bad.keypoints.removeLast()
        XCTAssertTrue(storeError { try w2.append(bad) }.contains("keypoint values"))
        w2.abandon()
        XCTAssertTrue(storeError { _ = try KeypointStoreWriter(path: self.path("r.h5"), attributes: ["format": "x"]) }.contains("reserved"))
    }

    // MARK: errors

    func testUnreadableFilesGiveOneLineErrors() throws {
        let missing = path("missing.h5")
        XCTAssertEqual(storeError { _ = try KeypointStore(path: missing) }, "\(missing): no such file")

        let text = path("notes.h5")
        try "not hdf5 at all\n".write(toFile: text, atomically: true, encoding: .utf8)
        XCTAssertEqual(storeError { _ = try KeypointStore(path: text) }, "\(text): not an HDF5 file (or damaged)")

        let plain = path("plain.h5")
        do {
            let f = try HDF5File.create(plain)
            try f.root().createGroup("something")
            try f.close()
        }
        XCTAssertEqual(storeError { _ = try KeypointStore(path: plain) },
                       "\(plain): not a poseact keypoint store (no 'format' attribute)")

        let other = path("other.h5")
        do {
            let f = try HDF5File.create(other)
            try f.root().setAttribute("format", "poseact-weights")
            try f.close()
        }
        XCTAssertEqual(storeError { _ = try KeypointStore(path: other) },
                       "\(other): not a poseact keypoint store (its format is 'poseact-weights', not 'poseact-keypoints')")

        // A store from a newer poseact.
        let newer = try write([clip("x")], to: "newer.h5")
        do {
            let f = try HDF5File.open(newer, writable: true)
            try f.root().setAttribute("format_version", 2)
            try f.close()
        }
        XCTAssertTrue(storeError { _ = try KeypointStore(path: newer) }.contains("format_version 2 is newer"))

        // A damaged store: the signature is there, the rest is cut off.
        let full = try write([clip("x", frames: 200), clip("y", frames: 200)], to: "full.h5")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
        let cut = path("cut.h5")
        try bytes.prefix(bytes.count / 3).write(to: URL(fileURLWithPath: cut))
        let cutMessage = storeError { _ = try KeypointStore(path: cut) }
        XCTAssertTrue(cutMessage.hasPrefix("\(cut): "), cutMessage)

        // A clip group missing its keypoints: the message names file, group and dataset.
        let holed = try write([clip("x")], to: "holed.h5")
        do {
            let f = try HDF5File.open(holed, writable: true)
            try f.group("/clips/000000").remove("keypoints")
            try f.close()
        }
        let store = try KeypointStore(path: holed)
        XCTAssertEqual(storeError { _ = try store.read("x") }, "\(holed): /clips/000000: dataset keypoints missing")

        // The folder is not a file; nothing of HDF5's own error stack reaches stderr.
        XCTAssertTrue(storeError { _ = try KeypointStore(path: self.folder.path) }.contains("folder"))
        let printed = stderrOutput {
            _ = try? KeypointStore(path: text)
            _ = try? KeypointStore(path: cut)
            _ = try? KeypointStore(path: plain)
            _ = try? store.read("x")
            _ = try? HDF5File.create(self.path("no/such/folder/x.h5"))
        }
        XCTAssertEqual(printed, "", "HDF5 printed its error stack")
    }

    // MARK: merge

    func testMergeJoinsShardsAndChecksDuplicates() throws {
        let shared = clip("shared", label: "jump", seed: 0.4, missing: [2])
        let a = try write([clip("a1"), clip("a2", label: "jump"), shared], to: "shard-a.h5",
                          attributes: ["created_by": "poseact", "shard": "1/2"])
        let b = try write([clip("b1", frames: 0), shared], to: "shard-b.h5",
                          attributes: ["created_by": "poseact", "shard": "2/2"])
        let out = path("merged.h5")
        XCTAssertEqual(try KeypointStore.merge([a, b], into: out), 4)
        let merged = try KeypointStore(path: out)
        XCTAssertEqual(merged.entries.map(\.id), ["a1", "a2", "b1", "shared"])
        XCTAssertEqual(merged.attributes, ["created_by": "poseact"], "only attributes all shards agree on")
        assertIdentical(try merged.read("shared"), shared)
        assertIdentical(try merged.read("b1"), clip("b1", frames: 0))
        XCTAssertFalse(TestData.hasTemporaryFile(out))

        // The same id with other keypoints: refused, naming both files; no output left.
        let c = try write([clip("shared", label: "jump", seed: 0.5)], to: "shard-c.h5")
        let bad = path("bad-merge.h5")
        let message = storeError { _ = try KeypointStore.merge([a, c], into: bad) }
        XCTAssertTrue(message.contains(a) && message.contains(c) && message.contains("'shared'"), message)
        XCTAssertFalse(FileManager.default.fileExists(atPath: bad))
        XCTAssertFalse(TestData.hasTemporaryFile(bad))

        // Merging into one of the inputs works (reads finish before the rename).
        XCTAssertEqual(try KeypointStore.merge([a, b], into: a), 4)
        XCTAssertEqual(try KeypointStore(path: a).entries.count, 4)
    }

    // MARK: layout, as h5py / h5dump users see it

    func testLayoutIsAsDocumented() throws {
        let clips = (0..<12).map { i in clip(String(format: "clip-%02d", 11 - i), frames: i == 3 ? 0 : 80 + i) }
        let p = try write(clips, to: "layout.h5", attributes: ["created_by": "test"])
        let f = try HDF5File.open(p)
        let root = try f.root()
        XCTAssertEqual(try root.attribute("format"), .string("poseact-keypoints"))
        XCTAssertEqual(try root.attribute("format_version"), .int(1))
        XCTAssertEqual(try root.attribute("created_by"), .string("test"))
        XCTAssertEqual(try root.children(), ["clips"])
        let group = try root.group("clips")
        let names = try group.children()
        XCTAssertEqual(names, (0..<12).map { String(format: "%06d", $0) })
        // Sequence numbers follow id order.
        XCTAssertEqual(try names.map { try group.group($0).stringAttribute("id") }, clips.map(\.id).sorted())

        let g = try group.group("000000")   // "clip-00", the 12th written, 91 frames
        XCTAssertEqual(try g.children(), ["keypoints", "times"])
        XCTAssertEqual(try g.kind(of: "keypoints"), .dataset)
        XCTAssertEqual(try g.attributeNames(), ["end", "estimator", "fps", "frames_with_person", "height", "id", "joint_names",
                                               "label", "model_hash", "source", "split", "start", "width"])
        let kp = try g.dataset("keypoints")
        let times = try g.dataset("times")
        XCTAssertEqual(try kp.shape(), [91, 5, 3])
        XCTAssertEqual(try kp.elementSize(), 4, "float32")
        XCTAssertEqual(try kp.filters(), ["shuffle", "deflate"], "91×5×3×4 B > 4 KiB: compressed")
        XCTAssertEqual(try times.filters(), [], "728 B: contiguous")
        XCTAssertEqual(try times.shape(), [91])
        XCTAssertEqual(try times.elementSize(), 8, "float64")
        XCTAssertEqual(try g.attribute("id"), .string("clip-00"))
        XCTAssertEqual(try g.attribute("label"), .string("squat"))
        XCTAssertEqual(try g.attribute("split"), .string("train"))
        XCTAssertEqual(try g.attribute("source"), .string("videos/clip-00.mp4"))
        XCTAssertTrue(try g.doubleAttribute("start").isNaN)
        XCTAssertTrue(try g.doubleAttribute("end").isNaN)
        XCTAssertEqual(try g.attribute("fps"), .double(30))
        XCTAssertEqual(try g.attribute("width"), .int(640))
        XCTAssertEqual(try g.attribute("height"), .int(480))
        XCTAssertEqual(try g.attribute("joint_names"), .strings(Self.joints))
        XCTAssertEqual(try g.attribute("estimator"), .string("blazepose-full mediapipe-0.10.14"))
        XCTAssertEqual(try g.attribute("model_hash"), .string("ab12"))
        XCTAssertEqual(try g.attribute("frames_with_person"), .int(91))
        let (values, shape) = try g.read("keypoints", as: Float.self)
        XCTAssertEqual(shape, [91, 5, 3])
        XCTAssertEqual(values.map(\.bitPattern), clips[11].keypoints.map(\.bitPattern))

        // The 0-frame clip ("clip-08") has [0, 5, 3] keypoints, contiguous.
        let empty = try group.group("000008")
        XCTAssertEqual(try empty.stringAttribute("id"), "clip-08")
        XCTAssertEqual(try empty.dataset("keypoints").shape(), [0, 5, 3])
        XCTAssertEqual(try empty.dataset("keypoints").filters(), [])
        XCTAssertEqual(try empty.dataset("times").shape(), [0])
    }

    func testHDF5WrapperBasics() throws {
        let p = path("raw.h5")
        do {
            let f = try HDF5File.create(p)
            let root = try f.root()
            let g = try root.createGroup("g")
            try g.setAttribute("i", -42)
            try g.setAttribute("d", 2.5)
            try g.setAttribute("s", "naïve ✓")
            try g.setAttribute("empty", "")
            try g.setAttribute("list", ["a", "", "ü"])
            try g.setAttribute("none", [String]())
            try g.setAttribute("i", 7)                       // replaced
            try g.write("one", [1.5, 2.5] as [Double], shape: [2])
            try g.write("two", (0..<6).map(Float.init), shape: [2, 3])
            let big = (0..<30_000).map { Float($0 % 97) }
            try g.write("big", big, shape: [100, 100, 3])
            try g.write("zero", [Float](), shape: [0])
            XCTAssertThrowsError(try g.write("bad", [Float](repeating: 0, count: 5), shape: [2, 3]))
            XCTAssertThrowsError(try g.write("four", [Float](repeating: 0, count: 1), shape: [1, 1, 1, 1]))
            XCTAssertThrowsError(try g.write("one", [1.0] as [Double], shape: [1])) { error in
                XCTAssertTrue("\(error)".hasPrefix("\(p): /g: cannot create dataset one"), "\(error)")
            }
            try f.close()
        }
        let f = try HDF5File.open(p)
        let g = try f.group("/g")
        XCTAssertEqual(try g.children(), ["big", "one", "two", "zero"])
        XCTAssertEqual(try g.intAttribute("i"), 7)
        XCTAssertEqual(try g.doubleAttribute("d"), 2.5)
        XCTAssertEqual(try g.stringAttribute("s"), "naïve ✓")
        XCTAssertEqual(try g.stringAttribute("empty"), "")
        XCTAssertEqual(try g.stringArrayAttribute("list"), ["a", "", "ü"])
        XCTAssertEqual(try g.stringArrayAttribute("none"), [])
        XCTAssertEqual(try g.read("one", as: Double.self).values, [1.5, 2.5])
        XCTAssertEqual(try g.read("one", as: Float.self).values, [1.5, 2.5], "converted on read")
        XCTAssertEqual(try g.read("two", as: Float.self).shape, [2, 3])
        let big = try g.read("big", as: Float.self)
        XCTAssertEqual(big.shape, [100, 100, 3])
        XCTAssertEqual(big.values, (0..<30_000).map { Float($0 % 97) })
        XCTAssertEqual(try g.dataset("big").filters(), ["shuffle", "deflate"])
        XCTAssertEqual(try g.dataset("one").filters(), [])
        XCTAssertEqual(try g.read("zero", as: Float.self).values, [])
        XCTAssertThrowsError(try g.stringAttribute("i")) { XCTAssertEqual("\($0)", "\(p): /g: attribute i is not a string") }
        XCTAssertThrowsError(try g.read("nope", as: Float.self)) { XCTAssertEqual("\($0)", "\(p): /g: dataset nope missing") }
        XCTAssertThrowsError(try g.attribute("nope")) { XCTAssertEqual("\($0)", "\(p): /g: attribute nope missing") }
        XCTAssertThrowsError(try f.group("/nope")) { XCTAssertEqual("\($0)", "\(p): group nope missing") }
    }

    // MARK: the report

    func testDatasetReportOnAHandMadeStore() throws {
        let clips = [
            clip("c1", label: "correct", split: "train", frames: 40),
            clip("c2", label: "correct", split: "train", frames: 50, seed: 0.1),
            clip("c3", label: "correct", split: "train", frames: 20, seed: 0.2),                  // short
            clip("c4", label: "correct", split: "test", frames: 40, seed: 0.3),
            clip("c5", label: "correct", split: "test", frames: 10, seed: 0.4, missing: Set(0..<10)),  // short, empty
            clip("c6", label: "correct", split: "train", frames: 40),                             // same keypoints as c1
            clip("w1", label: "wrong", split: "train", frames: 36, seed: 0.5, source: "v.mp4", start: 1, end: 2),
            clip("w2", label: "wrong", split: "train", frames: 33, seed: 0.6, source: "v.mp4", start: 1, end: 2),  // same range
            clip("e0", label: "wrong", split: "train", frames: 0),                               // short, empty
        ]
        let store = try KeypointStore(path: try write(clips, to: "report.h5"))
        let report = try DatasetReport(store: store, window: 32)
        XCTAssertEqual(report.clips, 9)
        XCTAssertEqual(report.frames, 40 + 50 + 20 + 40 + 10 + 40 + 36 + 33)
        XCTAssertEqual(report.framesWithPerson, report.frames - 10)
        XCTAssertEqual(report.labels["correct"]?.clips, 6)
        XCTAssertEqual(report.labels["correct"]?.frames, 200)
        XCTAssertEqual(report.labels["correct"]?.framesWithPerson, 190)
        XCTAssertEqual(report.labels["correct"]?.bySplit["train"], .init(clips: 4, frames: 150))
        XCTAssertEqual(report.labels["correct"]?.bySplit["test"], .init(clips: 2, frames: 50))
        XCTAssertEqual(report.labels["wrong"]?.clips, 3)
        XCTAssertEqual(report.labels["wrong"]?.frames, 69)
        XCTAssertEqual(report.labels["wrong"]?.bySplit["train"], .init(clips: 3, frames: 69))
        XCTAssertNil(report.labels["wrong"]?.bySplit["test"])
        XCTAssertEqual(report.splits, ["train": 7, "test": 2])
        XCTAssertEqual(report.shortClips, [.init(id: "c3", frames: 20), .init(id: "c5", frames: 10), .init(id: "e0", frames: 0)])
        XCTAssertEqual(report.emptyClips, ["c5", "e0"])
        XCTAssertEqual(report.imbalance, 2.0)
        XCTAssertEqual(report.duplicates, [["c1", "c6"], ["w1", "w2"]])
        XCTAssertTrue(report.warnings.contains("label 'wrong' has 2.0× fewer clips than 'correct' (3 vs 6)"), "\(report.warnings)")
        XCTAssertTrue(report.warnings.contains("3 clips are shorter than the 32-frame window"), "\(report.warnings)")
        XCTAssertTrue(report.warnings.contains("clip c5 has no person in any frame"), "\(report.warnings)")
        XCTAssertTrue(report.warnings.contains("split 'test' has no clips of label 'wrong'"), "\(report.warnings)")
        XCTAssertTrue(report.warnings.contains { $0.hasPrefix("clips c1, c6 are duplicates") }, "\(report.warnings)")
        XCTAssertFalse(report.warnings.contains { $0.contains("only one label") })

        let text = report.text()
        XCTAssertTrue(text.contains("9 clips, 269 frames"), text)
        XCTAssertTrue(text.contains("train clips/frames"), text)
        XCTAssertTrue(text.contains("Warnings:"), text)

        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(JSONLines.encode(report).utf8)) as? [String: Any])
        for key in ["clips", "frames", "labels", "splits", "frames_with_person", "short_clips", "empty_clips", "imbalance",
                    "duplicates", "warnings"] {
            XCTAssertNotNil(object[key], "json has no \(key)")
        }
        XCTAssertEqual(object["clips"] as? Int, 9)
        let labels = try XCTUnwrap(object["labels"] as? [String: [String: Any]])
        XCTAssertEqual(labels["correct"]?["clips"] as? Int, 6)
        XCTAssertEqual(labels["wrong"]?["frames"] as? Int, 69)
        XCTAssertEqual(object["imbalance"] as? Double, 2.0)
        XCTAssertEqual(object["duplicates"] as? [[String]], [["c1", "c6"], ["w1", "w2"]])

        // One label, no splits.
        let one = try KeypointStore(path: try write([clip("x", split: nil), clip("y", split: nil, seed: 1)], to: "one.h5"))
        let r1 = try DatasetReport(store: one)
        XCTAssertEqual(r1.splits, ["none": 2])
        XCTAssertEqual(r1.imbalance, 1)
        XCTAssertTrue(r1.warnings.contains("only one label ('squat'): a classifier needs at least two"), "\(r1.warnings)")
        XCTAssertEqual(r1.duplicates, [])
    }

    // MARK: speed at Penn Action size

    func testPennActionSizeIsFast() throws {
        let clipCount = 2_326, joints = (0..<13).map { "j\($0)" }
        // Smooth random walks (like real motion), a joint missing now and then; a cheap
        // generator, because a debug build of Float.random would take longer than the store.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Float {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(state >> 40) / Float(1 << 24)
        }
        var clips: [ClipKeypoints] = []
        clips.reserveCapacity(clipCount)
        for i in 0..<clipCount {
            let frames = 50 + i % 41   // ~70 on average
            let j = joints.count
            var kp = [Float](repeating: 0, count: frames * j * 3)
            for joint in 0..<j {
                var x = 0.3 + 0.4 * next(), y = 0.3 + 0.4 * next()
                for f in 0..<frames {
                    let k = (f * j + joint) * 3
                    x += (next() - 0.5) * 0.01; y += (next() - 0.5) * 0.01
                    if next() < 0.05 {
                        kp[k] = .nan; kp[k + 1] = .nan; kp[k + 2] = 0
                    } else {
                        kp[k] = x; kp[k + 1] = y; kp[k + 2] = 0.5 + 0.5 * next()
                    }
                }
            }
            clips.append(ClipKeypoints(
                id: "\(["baseball_pitch", "bench_press", "jumping_jacks"][i % 3])/\(String(format: "%04d", i)).mp4",
                label: ["baseball_pitch", "bench_press", "jumping_jacks"][i % 3], split: i % 2 == 0 ? "train" : "test",
                source: "frames/\(i)", start: nil, end: nil, fps: 30, width: 480, height: 270, jointNames: joints,
                keypoints: kp, times: (0..<frames).map { Double($0) / 30 }, estimator: "import"))
        }
        let p = path("penn.h5")
        let t0 = Date()
        let writer = try KeypointStoreWriter(path: p, attributes: ["created_by": "speed test"])
        for c in clips { try writer.append(c) }
        try writer.finish()
        let write = Date().timeIntervalSince(t0)
        let t1 = Date()
        let store = try KeypointStore(path: p)
        let open = Date().timeIntervalSince(t1)
        let t2 = Date()
        let back = try store.readAll()
        let read = Date().timeIntervalSince(t2)
        let t3 = Date()
        let report = try DatasetReport(store: store)
        let inspect = Date().timeIntervalSince(t3)
        let size = (try FileManager.default.attributesOfItem(atPath: p)[.size] as? Int) ?? 0
        let frames = clips.reduce(0) { $0 + $1.frameCount }
        print(String(format: "keypoint store, %d clips, %d frames × 13 joints: write %.2f s, open (entries) %.2f s, readAll %.2f s, report %.2f s, %.1f MB (raw %.1f MB)",
                     clipCount, frames, write, open, read, inspect, Double(size) / 1e6, Double(frames * 13 * 3 * 4 + frames * 8) / 1e6))
        XCTAssertEqual(back.count, clipCount)
        XCTAssertEqual(report.clips, clipCount)
        XCTAssertEqual(back[17].keypoints.map(\.bitPattern), clips.first { $0.id == back[17].id }!.keypoints.map(\.bitPattern))
        XCTAssertLessThan(write, 30, "writing took \(write) s")
        XCTAssertLessThan(open + read, 30, "reading took \(open + read) s")
    }
}
