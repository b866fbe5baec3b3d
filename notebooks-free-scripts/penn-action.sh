#!/usr/bin/env bash
# Penn Action, end to end: import the shared keypoints (2,326 clips, 15 actions, the official
# train/test split), train with configs/penn-action.yaml (the built-in default) once per
# seed, export, and evaluate on the test split. Progress goes to stderr; one line per seed
# and their mean on stdout, the last line one JSON object (seeds, clip and window accuracy
# per seed, their means).
#
#   notebooks-free-scripts/penn-action.sh [WORK]      (default WORK: out/penn-action)
#
# SEEDS (default "1 2 3"): each seed trains into WORK/run-seed-S. Running it again resumes
# an interrupted training, or skips a finished one (delete WORK/run-seed-S to train anew).
# Figures of a run on the reference machine are in docs/train.md.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-out/penn-action}
source notebooks-free-scripts/lib/penn-store.sh
CONFIG=configs/penn-action.yaml WORK=$WORK BIN=$BIN STORE=$STORE NAME=penn-action \
    SEEDS=${SEEDS:-1 2 3} notebooks-free-scripts/lib/seeds.sh
