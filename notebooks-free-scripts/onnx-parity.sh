#!/usr/bin/env bash
# ONNX parity: exports MODEL (a weights file or run folder; several make an ensemble) as ONNX,
# cuts STORE's windows exactly as the model sees them, and compares onnxruntime's
# probabilities (in a throw-away venv, never a dependency of poseact) with poseact's on the
# same windows. Prints one JSON object: windows compared, the largest absolute difference,
# whether every predicted label agrees, and the .onnx file's size.
#
#   notebooks-free-scripts/onnx-parity.sh STORE MODEL [MODEL…]
#
# POSEACT_BIN: a poseact binary to use as it is (default: build .build/release/poseact).
# ONNX_VENV: the venv (default /tmp/poseact-onnx-venv).
set -euo pipefail
cd "$(dirname "$0")/.."
source notebooks-free-scripts/lib/venv.sh
STORE=$1; shift
[ $# -ge 1 ] || { echo "usage: onnx-parity.sh STORE MODEL [MODEL…]" >&2; exit 2; }
if [ -n "${POSEACT_BIN:-}" ]; then BIN=$POSEACT_BIN; else swift build -c release --product poseact >&2; BIN=.build/release/poseact; fi
yardstick_venv "${ONNX_VENV:-/tmp/poseact-onnx-venv}" "import onnxruntime, h5py, numpy" onnxruntime h5py numpy >&2
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
"$BIN" export "$@" --output "$WORK/model.onnx" >&2
"$BIN" export "$@" --output "$WORK/model.poseact.h5" >&2
"$BIN" windows "$STORE" --model "$WORK/model.poseact.h5" --output "$WORK/windows.h5" >&2
"$BIN" evaluate "$WORK/model.poseact.h5" --data "$WORK/windows.h5" --split all --probabilities "$WORK/p.csv" >/dev/null
"$PY" notebooks-free-scripts/onnx_parity.py "$WORK/model.onnx" "$WORK/windows.h5" "$WORK/p.csv" 2>/dev/null \
    | "$PY" -c "import json, os, sys; d = json.load(sys.stdin); d['onnx_bytes'] = os.path.getsize('$WORK/model.onnx'); print(json.dumps(d))"
