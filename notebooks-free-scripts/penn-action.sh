#!/usr/bin/env bash
# Penn Action, end to end: import the shared keypoints (2,326 clips, 15 actions, the official
# train/test split), train with configs/penn-action.yaml, export the best model, and
# evaluate it on the test split. Progress goes to stderr; the last line on stdout is the
# `poseact evaluate --json` object (clip_accuracy, window_accuracy, per_class, confusion).
#
#   notebooks-free-scripts/penn-action.sh [WORK]      (default WORK: out/penn-action)
#
# Running it again resumes an interrupted training, or skips a finished one (delete
# WORK/run to train anew). Figures of a run on the reference machine are in the README.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${POSEACT_SHARED:-../shared}
WORK=${1:-out/penn-action}
CSV=$SHARED/data/penn-action/keypoints.csv
[ -f "$CSV" ] || { echo "penn-action.sh: $CSV not found: set POSEACT_SHARED to the shared folder" >&2; exit 1; }

swift build -c release --product poseact >&2
BIN=.build/release/poseact
mkdir -p "$WORK"
[ -f "$WORK/penn.h5" ] || "$BIN" import "$CSV" --output "$WORK/penn.h5" >&2
"$BIN" train --config configs/penn-action.yaml --data "$WORK/penn.h5" --output "$WORK/run"
"$BIN" export "$WORK/run" --output "$WORK/penn-action.poseact.h5"
"$BIN" model inspect "$WORK/penn-action.poseact.h5" >&2
"$BIN" evaluate "$WORK/penn-action.poseact.h5" --data "$WORK/penn.h5" --split test --report "$WORK/report" --json
