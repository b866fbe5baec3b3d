#!/usr/bin/env bash
# The test suite, as CI runs it: every file reader fuzzed under AddressSanitizer (a seeded,
# bounded run: fuzz.sh), then the XCTest suite. Its last lines are XCTest's summary.
#   POSEACT_ASAN_FUZZ_CASES   cases per reader in the ASan fuzz run (default 100; 0 skips it)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
iterations="${POSEACT_ASAN_FUZZ_CASES:-100}"
if [[ "$iterations" != 0 ]]; then
    bash notebooks-free-scripts/fuzz.sh --iterations "$iterations" --seed 34
fi
swift test --disable-swift-testing
