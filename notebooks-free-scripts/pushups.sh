#!/usr/bin/env bash
# Push-ups, end to end from the videos: extract BlazePose keypoints (--redetect) from the shared push-up
# clips (correct vs wrong form, in train/ and test/ folders), train with
# configs/pushups.yaml (the default config with the changes chosen by cross-validation on the
# train clips, see docs/experiments.md), once per seed, export, and evaluate on test/.
# Prints one line per seed and their mean; the last line on stdout is one JSON object
# (seeds, clip and window accuracy per seed, their means).
# notebooks-free-scripts/montage.sh then measures a model on the three montage videos.
#
#   notebooks-free-scripts/pushups.sh [WORK]          (default WORK: out/pushups)
#
# SEEDS (default "1 2 3"): the seeds, each trained into WORK/run-seed-S and exported to
# WORK/pushups-seed-S.poseact.h5 (the first also as WORK/pushups.poseact.h5).
#
# Extraction and training are resumable: running it again goes on where it stopped (a WORK/run
# trained with another config is refused: delete it, or give another WORK).
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${POSEACT_SHARED:-../shared}
WORK=${1:-out/pushups}
DATA=$SHARED/data/pushups
[ -d "$DATA/train" ] || { echo "pushups.sh: $DATA/train not found: set POSEACT_SHARED to the shared folder" >&2; exit 1; }
[ -f models/pose_landmark_full.tflite ] || { echo "pushups.sh: models/ missing: run notebooks-free-scripts/setup.sh" >&2; exit 1; }

swift build -c release --product poseact >&2
BIN=.build/release/poseact
# The dataset folder as extract reads it: train/<label>/*.mp4 and test/<label>/*.mp4 (the
# montage videos beside them are for live and annotate, not for training).
mkdir -p "$WORK/videos"
ln -sfn "$(realpath "$DATA/train")" "$WORK/videos/train"
ln -sfn "$(realpath "$DATA/test")" "$WORK/videos/test"
# --redetect: tracks that drift are restarted from the detector (chosen by cross-validation
# with configs/pushups.yaml's keypoint filter, docs/keypoints.md); the model records it and
# live poses the same way.
[ -f "$WORK/pushups.h5" ] || "$BIN" extract "$WORK/videos" --redetect --output "$WORK/pushups.h5" >&2
"$BIN" dataset inspect "$WORK/pushups.h5" >&2
CONFIG=configs/pushups.yaml WORK=$WORK BIN=$BIN STORE=$WORK/pushups.h5 NAME=pushups \
    SEEDS=${SEEDS:-1 2 3} notebooks-free-scripts/lib/seeds.sh
