import Foundation
import MatrixProduct
import TFLite
import TestData
import XCTest

/// The engine's raw outputs against LiteRT's, for every fixture in
/// `shared/fixtures/blazepose`, within the tolerances its README states (a float32 engine
/// differs from LiteRT's XNNPACK kernels by about as much as LiteRT's own two kernel sets
/// differ from each other; the README measured both).
final class EngineParityTests: XCTestCase {
    static var modelsDir: URL { TestData.modelsFolder }
    static var fixturesDir: URL { TestData.sharedFolder.appendingPathComponent("fixtures/blazepose") }

    func requireFile(_ url: URL, hint: String) throws {
        guard FileManager.default.fileExists(atPath: url.path) else { throw TestData.missing("\(url.path) not found: \(hint)") }
    }

    func readFloats(_ url: URL) throws -> [Float] {
        let data = try Data(contentsOf: url)
        return data.withUnsafeBytes { raw in (0..<data.count / 4).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) } }
    }

    func fixtureNames(withLandmarks: Bool) throws -> [String] {
        let dir = Self.fixturesDir.appendingPathComponent(withLandmarks ? "landmark" : "detector")
        try requireFile(dir, hint: "set POSEACT_SHARED to the shared folder")
        return try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { $0.hasSuffix(".input.f32") }.map { String($0.dropLast(".input.f32".count)) }.sorted()
    }

    /// Largest |a - b|, and the index where it is.
    func maxDifference(_ a: UnsafeBufferPointer<Float>, _ b: [Float]) -> (Float, Int) {
        var worst: Float = 0, at = 0
        for i in 0..<min(a.count, b.count) where abs(a[i] - b[i]) > worst || a[i].isNaN { worst = abs(a[i] - b[i]); at = i }
        return (worst, at)
    }

    func check(model file: String, fixtureDir: String, outputs: [(name: String, suffix: String, tolerance: ([Float]) -> Float)],
               threads: Int, convolution: ConvolutionKernels = .packed, kernels: KernelPath) throws {
        let modelURL = Self.modelsDir.appendingPathComponent(file)
        try requireFile(modelURL, hint: "run notebooks-free-scripts/setup.sh")
        let interpreter = try Interpreter(path: modelURL.path, options: .init(threads: threads, convolution: convolution, kernels: kernels))
        XCTAssertEqual(interpreter.kernelPath, kernels)
        let names = try fixtureNames(withLandmarks: fixtureDir == "landmark")
        XCTAssertGreaterThanOrEqual(names.count, 7, "expected the fixture images")
        for name in names {
            let base = Self.fixturesDir.appendingPathComponent(fixtureDir).appendingPathComponent(name)
            let input = try readFloats(URL(fileURLWithPath: base.path + ".input.f32"))
            XCTAssertEqual(input.count, interpreter.inputs[0].count)
            _ = interpreter.input(0).update(from: input)
            interpreter.invoke()
            for output in outputs {
                let expected = try readFloats(URL(fileURLWithPath: base.path + ".\(output.suffix).f32"))
                guard let got = interpreter.output(named: output.name) else { return XCTFail("no output \(output.name)") }
                XCTAssertEqual(got.count, expected.count, "\(name) \(output.name) size")
                let (diff, at) = maxDifference(got, expected)
                let tolerance = output.tolerance(expected)
                print("parity \(file) \(kernels) threads=\(threads) \(convolution) \(name) \(output.name): max |diff| \(diff) (tolerance \(tolerance))")
                XCTAssertLessThanOrEqual(diff, tolerance, "\(file) \(kernels) threads=\(threads) \(convolution) \(name) \(output.name): max |diff| \(diff) at \(at) (got \(got[at]), LiteRT \(expected[at]))")
            }
        }
    }

    /// Every FP32 kernel path this CPU runs, at 1 and 2 threads, and the OpenBLAS convolutions
    /// once. (The bfloat16 path has its own test below.)
    static var configurations: [(threads: Int, convolution: ConvolutionKernels, kernels: KernelPath)] {
        KernelPath.supported.filter { !$0.roundsToBFloat16 }.flatMap { path in [(1, ConvolutionKernels.packed, path), (2, .packed, path)] }
            + [(2, .blas, KernelPath.best)]
    }

    /// The paths the engine finds (CPUID and the OS's saved registers) are those the kernel
    /// lists in /proc/cpuinfo: a path found wrongly would crash, one missed would go untested.
    func testKernelPathsMatchTheCPUsFlags() throws {
        XCTAssertTrue(KernelPath.supported.contains(.portable))
        #if arch(x86_64) && os(Linux)
        let info = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let line = try XCTUnwrap(info.split(separator: "\n").first { $0.hasPrefix("flags") })
        let flags = Set(line.split(separator: " ").map(String.init))
        XCTAssertEqual(KernelPath.avx2.isSupported, flags.isSuperset(of: ["avx2", "fma"]))
        XCTAssertEqual(KernelPath.avx512.isSupported, flags.isSuperset(of: ["avx2", "fma", "avx512f", "avx512dq", "avx512bw", "avx512vl"]))
        XCTAssertEqual(KernelPath.avx512bf16.isSupported, KernelPath.avx512.isSupported && flags.contains("avx512_bf16"))
        XCTAssertFalse(KernelPath.neonbf16.isSupported)
        #elseif arch(arm64) && os(Linux)
        let info = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let line = try XCTUnwrap(info.split(separator: "\n").first { $0.hasPrefix("Features") })
        let features = Set(line.split(separator: " ").map(String.init))
        XCTAssertEqual(KernelPath.supported, features.contains("bf16") ? [.neonbf16, .portable] : [.portable])
        #else
        XCTAssertEqual(KernelPath.supported, [.portable])
        #endif
        print("kernel paths on this CPU: \(KernelPath.supported.map(\.rawValue).joined(separator: ", "))")
    }

    /// POSEACT_KERNELS picks a path; a name that is not one, or a path this CPU lacks, is one line.
    func testForcedKernelPath() throws {
        XCTAssertEqual(try KernelPath.chosen(environment: [:]), KernelPath.best)
        XCTAssertEqual(try KernelPath.chosen(environment: ["POSEACT_KERNELS": "portable"]), .portable)
        XCTAssertThrowsError(try KernelPath.chosen(environment: ["POSEACT_KERNELS": "sse9"])) { error in
            XCTAssertEqual("\(error)", "POSEACT_KERNELS=sse9 is not a kernel path: use one of avx512bf16, avx512, avx2, neonbf16, portable")
        }
        for path in KernelPath.allCases where !path.isSupported {
            XCTAssertThrowsError(try KernelPath.chosen(environment: ["POSEACT_KERNELS": path.rawValue]))
        }
    }

    func testDetectorMatchesLiteRT() throws {
        for (threads, convolution, kernels) in Self.configurations {
            try check(model: "pose_detection.tflite", fixtureDir: "detector", outputs: [
                ("Identity", "out_boxes", { _ in 1e-2 }),
                ("Identity_1", "out_scores", { _ in 1e-2 }),
            ], threads: threads, convolution: convolution, kernels: kernels)
        }
    }

    func testLandmarkMatchesLiteRT() throws {
        for (threads, convolution, kernels) in Self.configurations {
            try check(model: "pose_landmark_full.tflite", fixtureDir: "landmark", outputs: [
                ("Identity", "out_Identity", { _ in 1e-2 }),
                ("Identity_1", "out_Identity_1", { _ in 1e-4 }),
                ("Identity_2", "out_Identity_2", { e in 1e-3 * (e.map(abs).max() ?? 0) }),
                ("Identity_3", "out_Identity_3", { _ in 2e-3 }),
                ("Identity_4", "out_Identity_4", { _ in 1e-4 }),
            ], threads: threads, convolution: convolution, kernels: kernels)
        }
    }

    /// The bfloat16 path (avx512bf16, or neonbf16 on ARM64: convolutions multiplied in
    /// bfloat16, sums in FP32; the bounds were measured on avx512bf16) is
    /// not a float32 engine, so it is held to what a user sees rather than to raw tensors:
    /// the 33 body landmarks' positions in pixels of the 256-pixel crop, the pose presence
    /// score, the world landmarks, and the detector's boxes and scores where LiteRT finds a
    /// person. The bounds are a few times what this path gives on the fixtures (printed), so
    /// that a wrong product (a misplaced pair, a lost row) fails while bfloat16's own rounding
    /// passes; docs/engine.md has the figures on video.
    func testBFloat16PathStaysCloseToLiteRT() throws {
        let path = KernelPath.bfloat16
        guard path.isSupported else { throw XCTSkip("this CPU cannot run \(path)") }
        let names = try fixtureNames(withLandmarks: true)
        for threads in [1, 2] {
            let interpreter = try Interpreter(path: Self.modelsDir.appendingPathComponent("pose_landmark_full.tflite").path,
                                              options: .init(threads: threads, kernels: path))
            var distances: [Float] = [], visible: [Float] = [], presence: Float = 0, world: Float = 0
            for name in names {
                let base = Self.fixturesDir.appendingPathComponent("landmark").appendingPathComponent(name).path
                _ = interpreter.input(0).update(from: try readFloats(URL(fileURLWithPath: base + ".input.f32")))
                interpreter.invoke()
                let expected = try readFloats(URL(fileURLWithPath: base + ".out_Identity.f32"))
                let expectedPresence = try readFloats(URL(fileURLWithPath: base + ".out_Identity_1.f32"))[0]
                let got = try XCTUnwrap(interpreter.output(named: "Identity"))
                let gotPresence = try XCTUnwrap(interpreter.output(named: "Identity_1"))[0]
                if abs(gotPresence - expectedPresence) > 0.05 { print("bf16 \(name): presence \(gotPresence), LiteRT \(expectedPresence)") }
                presence = max(presence, abs(gotPresence - expectedPresence))
                guard expectedPresence > 0.5 else { continue }   // no body: its landmarks mean nothing
                for j in 0..<33 {
                    distances.append(hypotf(got[j * 5] - expected[j * 5], got[j * 5 + 1] - expected[j * 5 + 1]))
                    if expected[j * 5 + 3] > 0 { visible.append(distances.last!) }   // visibility above 0.5
                }
                let (w, _) = maxDifference(try XCTUnwrap(interpreter.output(named: "Identity_4")),
                                           try readFloats(URL(fileURLWithPath: base + ".out_Identity_4.f32")))
                world = max(world, w)
            }
            distances.sort(); visible.sort()
            func quantile(_ v: [Float], _ q: Int) -> Float { v[min(v.count - 1, v.count * q / 100)] }
            print("bf16 landmarks threads=\(threads), px of the crop: \(visible.count) visible body landmarks median \(quantile(visible, 50)), p99 \(quantile(visible, 99)), max \(visible.last!); all \(distances.count): median \(quantile(distances, 50)), p99 \(quantile(distances, 99)), max \(distances.last!); presence max |diff| \(presence); world max |diff| \(world) m")
            XCTAssertLessThanOrEqual(quantile(visible, 50), 0.6)
            XCTAssertLessThanOrEqual(visible.last!, 4)
            XCTAssertLessThanOrEqual(distances.last!, 10)   // the hidden ones: the model's guess
            XCTAssertLessThanOrEqual(presence, 0.4)
            XCTAssertLessThanOrEqual(world, 0.1)
        }
        let detector = try Interpreter(path: Self.modelsDir.appendingPathComponent("pose_detection.tflite").path,
                                       options: .init(threads: 2, kernels: path))
        var box: Float = 0, score: Float = 0, found = 0
        for name in try fixtureNames(withLandmarks: false) {
            let base = Self.fixturesDir.appendingPathComponent("detector").appendingPathComponent(name).path
            _ = detector.input(0).update(from: try readFloats(URL(fileURLWithPath: base + ".input.f32")))
            detector.invoke()
            let boxes = try readFloats(URL(fileURLWithPath: base + ".out_boxes.f32"))
            let scores = try readFloats(URL(fileURLWithPath: base + ".out_scores.f32"))
            let gotBoxes = try XCTUnwrap(detector.output(named: "Identity")), gotScores = try XCTUnwrap(detector.output(named: "Identity_1"))
            func sigmoid(_ x: Float) -> Float { 1 / (1 + expf(-x)) }
            for a in 0..<scores.count {
                score = max(score, abs(sigmoid(gotScores[a]) - sigmoid(scores[a])))
                guard sigmoid(scores[a]) > 0.5 else { continue }
                found += 1
                for v in 0..<12 { box = max(box, abs(gotBoxes[a * 12 + v] - boxes[a * 12 + v])) }
            }
        }
        print("bf16 detector: score (0…1) max |diff| \(score); \(found) anchors above 0.5, box values max |diff| \(box) px of the 224-pixel input")
        XCTAssertGreaterThan(found, 0)
        XCTAssertLessThanOrEqual(score, 0.05)
        XCTAssertLessThanOrEqual(box, 3)
    }

    /// Skipping the segmentation output must not change the others.
    func testSkippingSegmentationKeepsOtherOutputs() throws {
        let modelURL = Self.modelsDir.appendingPathComponent("pose_landmark_full.tflite")
        try requireFile(modelURL, hint: "run notebooks-free-scripts/setup.sh")
        let wanted = ["Identity", "Identity_1", "Identity_3", "Identity_4"]
        let full = try Interpreter(path: modelURL.path)
        let lean = try Interpreter(path: modelURL.path, options: .init(outputs: wanted))
        XCTAssertLessThan(lean.summary.plannedOperators, full.summary.plannedOperators)
        XCTAssertLessThan(lean.summary.flops, full.summary.flops)
        let base = Self.fixturesDir.appendingPathComponent("landmark/pose")
        try requireFile(URL(fileURLWithPath: base.path + ".input.f32"), hint: "set POSEACT_SHARED")
        let input = try readFloats(URL(fileURLWithPath: base.path + ".input.f32"))
        for interpreter in [full, lean] { _ = interpreter.input(0).update(from: input); interpreter.invoke() }
        for name in wanted {
            XCTAssertEqual(Array(full.output(named: name)!), Array(lean.output(named: name)!), name)
        }
    }

    /// The residual ADDs that follow a convolution without activation or a resize run inside
    /// it (the parity tests above check the values): 13 of the detector's 15 ADDs (the
    /// other two add a ReLU convolution's output) and all 28 of the landmark model's; 5 and 3
    /// PADs became a convolution's padding. The plans run that many fewer kernels.
    func testResidualAddsAreFused() throws {
        for (file, adds, fusedAdds, fusedPads, kernels) in [("pose_detection.tflite", 15, 13, 5, 85),
                                                             ("pose_landmark_full.tflite", 28, 28, 3, 106)] {
            let modelURL = Self.modelsDir.appendingPathComponent(file)
            try requireFile(modelURL, hint: "run notebooks-free-scripts/setup.sh")
            let plan = try Interpreter(path: modelURL.path).summary
            XCTAssertEqual(plan.operators["ADD"], adds, file)
            XCTAssertEqual(plan.fusedOperators, fusedAdds + fusedPads, file)
            XCTAssertEqual(plan.plannedOperators, kernels, file)
        }
    }

    /// Inference flushes denormals for speed, but only while it runs: the caller's thread
    /// must keep IEEE behaviour (a subnormal stays non-zero) afterwards.
    func testInvokeLeavesCallersFloatingPointStateAlone() throws {
        let modelURL = Self.modelsDir.appendingPathComponent("pose_detection.tflite")
        try requireFile(modelURL, hint: "run notebooks-free-scripts/setup.sh")
        let interpreter = try Interpreter(path: modelURL.path)
        interpreter.invoke()
        // From run-time data, so the compiler cannot fold the arithmetic away.
        let values = [Float](repeating: Float.leastNormalMagnitude, count: Int.random(in: 1...3))
        let subnormal = values[0] / 4
        XCTAssertNotEqual(subnormal * 1.5, 0, "denormals are flushed on the caller's thread after invoke()")
    }
}
