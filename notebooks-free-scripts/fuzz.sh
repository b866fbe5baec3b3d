#!/usr/bin/env bash
# Fuzz every reader of files from strangers under AddressSanitizer: poseact-fuzz alone is
# built with --sanitize=address (in .build-asan, beside the normal build), writes its good
# seed files (a store, weights, a checkpoint, windows, a keypoint CSV, annotation files, a
# config, the foreign samples, the pose models), then runs seeded, bounded cases per reader.
#
#   bash notebooks-free-scripts/fuzz.sh [--iterations N] [--seed S] [--reader NAME]... [--verbose]
#
# A crash, a wild read or write, or a Swift check that traps ends it with ASan's report
# (non-zero exit); an error that is not one short line fails it too. Needs the shared data
# (POSEACT_SHARED, default ../shared) and, for the TFLite readers, the models (setup.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SHARED="${POSEACT_SHARED:-$ROOT/../shared}"
MODELS="${POSEACT_MODELS_DIR:-$ROOT/models}"
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
cd "$ROOT"
build=(swift build --sanitize=address --product poseact-fuzz --scratch-path "$ROOT/.build-asan")
echo "fuzz: building poseact-fuzz with AddressSanitizer in .build-asan"
"${build[@]}" 2>&1 | grep -E "error:|Build complete" || true
"${build[@]}" >/dev/null 2>&1 || { echo "fuzz: the AddressSanitizer build failed" >&2; exit 1; }
bin="$("${build[@]}" --show-bin-path 2>/dev/null)/poseact-fuzz"
seeds="$(mktemp -d "${TMPDIR:-/tmp}/poseact-fuzz-seeds.XXXXXX")"
trap 'rm -rf "$seeds"' EXIT
# Leaks are not what this looks for (the Swift runtime keeps some on purpose).
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:${ASAN_OPTIONS:-}"
models=(); [[ -f "$MODELS/pose_landmark_full.tflite" ]] && models=(--models "$MODELS")
"$bin" seeds --out "$seeds" --keypoints "$SHARED/data/penn-action/keypoints.csv" \
    --samples "$ROOT/Tests/KeypointsTests/Samples" --config "$ROOT/configs/penn-action.yaml" "${models[@]}"
"$bin" run --seeds "$seeds" "$@"
