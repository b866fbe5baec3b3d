#!/usr/bin/env bash
# Preprocessing parity: the windows poseact cuts from a keypoint CSV against those of
# preprocess_reference.py (numpy only, the reference for apps that run exported models
# elsewhere), for one model or spec. Imports the CSV into a store, cuts it with `poseact
# windows`, runs the reference on the CSV itself, and prints one JSON line: windows compared,
# the largest absolute difference of a value, whether the masks are equal, and any clip/start
# only one of them has. Exits non-zero when they differ (a value by more than 1e-5).
#
#   notebooks-free-scripts/preprocess-parity.sh KEYPOINTS.csv MODEL|CONFIG.yaml|SPEC.json [--fps N]
#
# MODEL: a weights file (NAME.poseact.h5) or run folder; the reference reads the spec from it.
# CONFIG.yaml: a training config (its preprocessing section). SPEC.json: a preprocessing spec
# as a model's metadata holds it, given to poseact as a config, so its velocities must be per
# second (a config cannot ask for per frame). For these two the reference reads the spec that
# poseact stored in its windows file.
# --fps N: the CSV's frame rate when it has no time column (as poseact import --fps; 30).
# POSEACT_BIN: a poseact binary to use as it is (default: build .build/release/poseact).
# PREP_VENV: a venv with numpy and h5py (default /tmp/poseact-prep-venv, made if missing).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/venv.sh"
usage() { echo "usage: preprocess-parity.sh KEYPOINTS.csv MODEL|CONFIG.yaml|SPEC.json [--fps N]" >&2; exit 2; }
[ $# -eq 2 ] || { [ $# -eq 4 ] && [ "$3" = --fps ]; } || usage
CSV=$1 SPEC=$2 FPS=${4:-30}
if [ -n "${POSEACT_BIN:-}" ]; then BIN=$POSEACT_BIN
else (cd "$HERE/.." && swift build -c release --product poseact >&2); BIN=$HERE/../.build/release/poseact; fi
yardstick_venv "${PREP_VENV:-/tmp/poseact-prep-venv}" "import numpy, h5py" numpy h5py >&2
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
REFERENCE_SPEC=$WORK/windows.h5
case "$SPEC" in
    *.yaml|*.yml) FROM=(--config "$SPEC") ;;
    *.json)
        # The spec as a config (JSON is YAML): its keys in snake case, velocity_unit left out.
        PYTHONPATH=$HERE "$PY" - "$SPEC" >"$WORK/config.yaml" <<'EOF'
import json, sys
from preprocess_reference import read_spec
spec = read_spec(sys.argv[1])
if spec.pop("velocity_unit") != "per_second" and {"velocity", "bone_velocity"} & set(spec["features"]):
    sys.exit(f"preprocess-parity: {sys.argv[1]}: velocities per frame (velocity_unit per_frame, or no "
             "velocity_unit) cannot be given to poseact windows as a config; give a model with that spec")
spec["min_confidence"] = float(spec["min_confidence"])
print(json.dumps({"preprocessing": spec}))
EOF
        FROM=(--config "$WORK/config.yaml") ;;
    *) FROM=(--model "$SPEC"); REFERENCE_SPEC=$SPEC ;;
esac
"$BIN" import "$CSV" --fps "$FPS" --output "$WORK/store.h5" >&2
"$BIN" windows "$WORK/store.h5" "${FROM[@]}" --output "$WORK/windows.h5" >/dev/null
"$PY" "$HERE/preprocess_reference.py" "$CSV" "$REFERENCE_SPEC" --fps "$FPS" --compare "$WORK/windows.h5"
