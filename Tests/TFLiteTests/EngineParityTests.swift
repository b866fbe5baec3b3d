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

    /// Every kernel path this CPU runs, at 1 and 2 threads, and the OpenBLAS convolutions once.
    static var configurations: [(threads: Int, convolution: ConvolutionKernels, kernels: KernelPath)] {
        KernelPath.supported.flatMap { path in [(1, ConvolutionKernels.packed, path), (2, .packed, path)] }
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
            XCTAssertEqual("\(error)", "POSEACT_KERNELS=sse9 is not a kernel path: use one of avx512, avx2, portable")
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
