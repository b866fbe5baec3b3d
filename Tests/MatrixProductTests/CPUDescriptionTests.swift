import MatrixProduct
import XCTest

/// What a speed figure names: the CPU, read from /proc/cpuinfo's first entry.
final class CPUDescriptionTests: XCTestCase {
    func testAnAMDZen4() {
        let text = """
            processor\t: 0
            vendor_id\t: AuthenticAMD
            cpu family\t: 25
            model\t\t: 17
            model name\t: AMD EPYC 9B14
            flags\t\t: fpu sse2 avx fma avx2 avx512f avx512dq avx512_bf16 avx512_vnni

            processor\t: 1
            vendor_id\t: SomethingElse
            """
        let cpu = CPUDescription(cpuinfo: text, cores: 2)
        XCTAssertEqual(cpu.name, "AMD EPYC 9B14")
        XCTAssertEqual(cpu.vendor, "AuthenticAMD")
        XCTAssertEqual(cpu.family, 25)
        XCTAssertEqual(cpu.model, 17)
        XCTAssertEqual(cpu.flags, ["avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni"])
        XCTAssertEqual(cpu.generation, "Zen 4")
        XCTAssertEqual(cpu.summary, "AMD EPYC 9B14 (family 25, Zen 4; avx2 fma avx512f avx512_bf16 avx512_vnni), 2 cores")
    }

    func testGenerationsAndOtherCPUs() {
        XCTAssertEqual(CPUDescription(cpuinfo: "vendor_id : AuthenticAMD\ncpu family : 26\nflags : avx2 avx512f\n").generation, "Zen 5")
        XCTAssertEqual(CPUDescription(cpuinfo: "vendor_id : AuthenticAMD\ncpu family : 25\nflags : avx2 fma\n").generation, "Zen 3")
        XCTAssertNil(CPUDescription(cpuinfo: "vendor_id : GenuineIntel\ncpu family : 6\nflags : avx2\n").generation)
        // ARM64's /proc/cpuinfo: Features, no model name.
        let arm = CPUDescription(cpuinfo: "processor : 0\nFeatures : fp asimd fphp asimdhp bf16\nCPU implementer : 0x41\nCPU part : 0xd0b\n", cores: 4)
        XCTAssertEqual(arm.name, "ARM part 0xd0b")
        XCTAssertEqual(arm.flags, ["asimd", "fphp", "asimdhp", "bf16"])
        XCTAssertNil(arm.family)
        XCTAssertEqual(CPUDescription(cpuinfo: "", cores: 1).summary, "an unnamed CPU, 1 core")
    }

    /// The peak each path measures is positive; bfloat16 only on the path that does it.
    func testPeaks() {
        for path in KernelPath.supported {
            let fp32 = ArithmeticPeak.gflops(.fp32, path: path, threads: 1, seconds: 0.01, rounds: 1)
            let bf16 = ArithmeticPeak.gflops(.bf16, path: path, threads: 1, seconds: 0.01, rounds: 1)
            XCTAssertGreaterThan(fp32 ?? 0, 0, "\(path)")
            XCTAssertEqual(bf16 != nil, path.roundsToBFloat16, "\(path)")
        }
    }
}
