import Foundation
import TestData
import XCTest

/// The C kernels built for aarch64 and run under qemu-user against the definition
/// (notebooks-free-scripts/check-arm64-kernels.sh: the NEON path and the bfloat16 one, with
/// and without a fused residual, on BlazePose's shapes and on tails), then natively on every
/// x86-64 path. CI installs the cross compiler and qemu; elsewhere the test is skipped with
/// what to install.
final class ARM64KernelTests: XCTestCase {
    func testKernelsOnAArch64UnderQEMU() throws {
        #if !arch(x86_64)
        throw XCTSkip("cross-checks aarch64 from an x86-64 machine")
        #else
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") + ["/usr/bin"]
        for tool in ["aarch64-linux-gnu-gcc", "qemu-aarch64"]
        where !dirs.contains(where: { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }) {
            throw TestData.missing("\(tool) not found: apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user")
        }
        let script = TestData.packageRoot.appendingPathComponent("notebooks-free-scripts/check-arm64-kernels.sh")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        print(output)
        XCTAssertEqual(process.terminationStatus, 0, output)
        // Every case ran on aarch64's two paths (portable: 13 convolutions, a GEMM also split
        // as threads split it, a few-channel one also by dot products, 6 depthwise and 4
        // resizes, each plain and with a residual and clamp, and the peak loops; neonbf16: the same, and its
        // products of FP32 weights once), and the paths were found from what the emulated CPU has.
        XCTAssertTrue(output.contains("aarch64: 150 passed, 0 failed"), output)
        XCTAssertTrue(output.contains("NEON: the portable kernels hold"), output)
        XCTAssertTrue(output.contains("BF16: the neonbf16 kernels hold"), output)
        XCTAssertTrue(output.contains("-cpu cortex-a76: paths: portable\n"), output)
        #endif
    }
}
