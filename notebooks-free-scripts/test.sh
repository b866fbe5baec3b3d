#!/usr/bin/env bash
# The test suite, as CI runs it: every file reader fuzzed under AddressSanitizer (a seeded,
# bounded run: fuzz.sh), then the XCTest suite, its test classes run two (or more) at a time.
# Its last line is the suite's summary.
#   POSEACT_ASAN_FUZZ_CASES   cases per reader in the ASan fuzz run (default 100; 0 skips it)
#   POSEACT_TEST_JOBS         test classes at a time (default: the cores, at least 2, at most 4)
#   POSEACT_TEST_FILTER       run only the test classes whose names match this regex
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
iterations="${POSEACT_ASAN_FUZZ_CASES:-100}"
if [[ "$iterations" != 0 ]]; then
    bash notebooks-free-scripts/fuzz.sh --iterations "$iterations" --seed 34
fi

swift build --build-tests --disable-swift-testing
bundle="$(swift build --show-bin-path)/poseactPackageTests.xctest"
[[ -x "$bundle" ]] || { echo "test.sh: no test bundle at $bundle after the build" >&2; exit 1; }

# One process a test class, several at a time. Much of the suite starts a poseact process, a
# browser or a server and waits for it: one class at a time kept two cores 63 % busy (on a
# 2-core Zen 3: 19.4 min one at a time, 15.7 two at a time, 16.5 with a process a test;
# docs/tests.md). The tests share no files or ports: each names its own after its process.
# The classes that took 40 s or more (on a 2-core Zen 3) go first, so that the workers end together.
if [[ -n "${POSEACT_TEST_JOBS:-}" ]]; then
    jobs="$POSEACT_TEST_JOBS"
    [[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "test.sh: POSEACT_TEST_JOBS must be a whole number of 1 or more, not '$jobs'" >&2; exit 2; }
else
    jobs=$(nproc); ((jobs >= 2)) || jobs=2; ((jobs <= 4)) || jobs=4
fi
long=(PoseactCLITests.PoseactCLITests PoseactCLITests.RepetitionCountTests PoseactCLITests.ONNXExportTests
      TrajectoriesTests.TrajectoryDetectorTests PoseactCLITests.StudioCommandTests PoseactCLITests.LiveCommandTests
      PoseTests.VideoTrackingTests PoseactCLITests.HostileFilesTests TFLiteTests.ARM64KernelTests
      PoseactCLITests.ExtractCommandTests PoseactCLITests.TrainCommandTests)
mapfile -t listed < <("$bundle" --list-tests 2>/dev/null | grep / | sed 's|/.*||' | awk '!seen[$0]++')
((${#listed[@]} > 0)) || { echo "test.sh: $bundle lists no tests" >&2; exit 1; }
declare -A isListed=() isLong=()
for c in "${listed[@]}"; do isListed[$c]=1; done
classes=()
for c in "${long[@]}"; do isLong[$c]=1; [[ -z "${isListed[$c]:-}" ]] || classes+=("$c"); done
for c in "${listed[@]}"; do [[ -n "${isLong[$c]:-}" ]] || classes+=("$c"); done
if [[ -n "${POSEACT_TEST_FILTER:-}" ]]; then
    mapfile -t classes < <(printf '%s\n' "${classes[@]}" | grep -E -- "$POSEACT_TEST_FILTER" || true)
    ((${#classes[@]} > 0)) || { echo "test.sh: no test class matches POSEACT_TEST_FILTER='$POSEACT_TEST_FILTER'" >&2; exit 2; }
fi

logs="$(mktemp -d /tmp/poseact-tests.XXXXXX)"
trap 'rm -rf "$logs"' EXIT
# A class's output is printed whole when it ends (under a lock, so two never interleave); a
# class whose process fails (a test failed, or it crashed) is named in "failed".
run_class() {
    local class="$1" status=0
    "$bundle" "$class" >"$logs/$class.log" 2>&1 || status=$?
    ((status == 0)) || echo "$class (exit status $status)" >>"$logs/failed"
    flock "$logs/lock" cat "$logs/$class.log"
}
export -f run_class
export bundle logs
printf '%s\n' "${classes[@]}" >"$logs/classes"
start=$SECONDS
# The classes run in a process group of their own, so that an interrupt or a TERM given to
# this script reaches every test process (what a test started ends with it), then ends it.
setsid xargs -a "$logs/classes" -P "$jobs" -I{} bash -c 'run_class "$1"' _ {} &
group=$!
stop() { kill -TERM -- -"$group" 2>/dev/null || true; wait "$group" 2>/dev/null || true; echo "test.sh: stopped by $1" >&2; exit "$2"; }
trap 'stop SIGINT 130' INT
trap 'stop SIGTERM 143' TERM
wait "$group" || true
trap - INT TERM

count() { cat "$logs"/*.log 2>/dev/null | grep -c "^Test Case '.*' $1 (" || true; }
passed=$(count passed) skipped=$(count skipped) failed=$(count failed)
n=${#classes[@]}; ((n == 1)) && noun=class || noun=classes
summary="$((passed + skipped + failed)) tests in $n $noun, $jobs at a time, $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s"
if [[ -s "$logs/failed" ]]; then
    echo "test.sh: these test classes failed:" >&2
    sed 's/^/  /' "$logs/failed" >&2
    echo "test.sh: FAILED: $summary: $passed passed, $skipped skipped, $failed failed"
    exit 1
fi
echo "test.sh: passed: $summary: $passed passed, $skipped skipped, 0 failed"
