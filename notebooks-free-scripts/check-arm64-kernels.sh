#!/usr/bin/env bash
# Builds the pose engine's C kernels (Sources/CPUKernels) for aarch64 and checks them
# against the definition under qemu-user, on a CPU with FEAT_BF16 (`-cpu max`): the NEON path
# that Raspberry Pi 5, Graviton and Jetson boards run, and neonbf16, the bfloat16 products
# (BFDOT) of Graviton 3 and 4, Neoverse V1/V2/N2 and Cortex-A710 and later. Emulating the
# Raspberry Pi 5's Cortex-A76, which has no BF16, the kernels must find only the NEON path.
# Then the same check natively, on every x86-64 path this CPU has.
#
#   notebooks-free-scripts/check-arm64-kernels.sh
#
# What this does not check: the Swift around the kernels on aarch64 (no Swift toolchain
# for aarch64 is installable here), and speed (qemu emulates; its times mean nothing).
# Needs Debian's gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user (.ci/run
# installs them) and clang (the Swift toolchain's).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/Sources/CPUKernels"
CHECK="$ROOT/notebooks-free-scripts/arm64/check_kernels.c"
command -v clang >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
for tool in clang aarch64-linux-gnu-gcc qemu-aarch64; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "check-arm64-kernels: $tool not found: apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user" >&2
        exit 2
    }
done
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

build() {   # build NAME TARGET-FLAGS...: the kernels and the check, -O3 as Package.swift builds them
    local name="$1"; shift
    local objects=()
    for c in "$SRC"/*.c "$CHECK"; do
        local o="$OUT/$name-$(basename "$c" .c).o"
        clang "$@" -O3 -std=c11 -I "$SRC/include" -I "$SRC" -c "$c" -o "$o"
        objects+=("$o")
    done
    echo "${objects[@]}"
}

echo "== aarch64 (portable path: NEON; neonbf16: BFDOT), under qemu-aarch64 -cpu max"
objects=$(build arm64 --target=aarch64-linux-gnu -isystem /usr/aarch64-linux-gnu/include)
# shellcheck disable=SC2086
aarch64-linux-gnu-gcc -o "$OUT/check-arm64" $objects -lm
file "$OUT/check-arm64" | sed 's/^[^:]*: /built: /'
# The vector code really is NEON: fmla on 4 floats.
fmla=$(aarch64-linux-gnu-objdump -d "$OUT/arm64-Portable.o" | grep -c "fmla.*\.4s" || true)
if ((fmla == 0)); then
    echo "check-arm64-kernels: the aarch64 portable kernels hold no 4-float fmla (NEON) instruction" >&2
    exit 1
fi
echo "NEON: the portable kernels hold $fmla fmla instructions on 4 floats"
bfdot=$(aarch64-linux-gnu-objdump -d "$OUT/arm64-NEONBF16.o" | grep -c "bfdot.*\.4s" || true)
if ((bfdot == 0)); then
    echo "check-arm64-kernels: the neonbf16 kernels hold no bfdot instruction" >&2
    exit 1
fi
echo "BF16: the neonbf16 kernels hold $bfdot bfdot instructions"
arm64() { qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu "$@"; }
# Which paths the kernels find (AT_HWCAP2's BF16 bit): both with BF16, NEON alone without.
for cpu_paths in "max:portable neonbf16" "cortex-a76:portable"; do
    found=$(arm64 "${cpu_paths%%:*}" "$OUT/check-arm64" --paths)
    echo "-cpu ${cpu_paths%%:*}: $found"
    if [[ "$found" != "paths: ${cpu_paths#*:}" ]]; then
        echo "check-arm64-kernels: under -cpu ${cpu_paths%%:*} the kernels should find ${cpu_paths#*:}" >&2
        exit 1
    fi
done
arm64 max "$OUT/check-arm64" | tee "$OUT/arm64.txt" | grep -v "^ok" || true
arm=$(tail -1 "$OUT/arm64.txt")

echo "== x86-64, every path this CPU runs"
objects=$(build x86)
# shellcheck disable=SC2086
clang -o "$OUT/check-x86" $objects -lm
"$OUT/check-x86" | tee "$OUT/x86.txt" | grep -v "^ok" || true
x86=$(tail -1 "$OUT/x86.txt")

echo "aarch64: $arm"
echo "x86-64: $x86"
grep -q " 0 failed" <<<"$arm" && grep -q " 0 failed" <<<"$x86"
