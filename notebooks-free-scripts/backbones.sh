#!/usr/bin/env bash
# The backbones poseact ships (backbones/NAME.poseact.h5, what model.pretrained: auto starts
# small runs from), made again from the shared data: for each config NAME of BACKBONES
# (default: penn-action, the one shipped), its net and preprocessing trained with labels on
# Penn Action's train split (15 actions; turn_degrees 0, Penn's keypoints have no depth), seed
# 1. Prints each file's weights digest (`model inspect`'s weights_sha256) beside the shipped
# file's: the same on a CPU of the same kind (the training kernels and OpenBLAS choose their
# instructions by the CPU, and float sums in another order differ in the last bits).
#
#   notebooks-free-scripts/backbones.sh [WORK]     (default WORK: out/backbones)
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-out/backbones}
source notebooks-free-scripts/lib/penn-store.sh
digest() { "$BIN" model inspect "$1" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["weights_sha256"])'; }
for name in ${BACKBONES:-penn-action}; do
    printf 'base: %s\naugmentation:\n  turn_degrees: 0\nmodel:\n  pretrained: none\n' "$PWD/configs/$name.yaml" > "$WORK/$name.yaml"
    "$BIN" train --config "$WORK/$name.yaml" --data "$STORE" --output "$WORK/run-$name" >&2
    shipped="none shipped"; [ -f "backbones/$name.poseact.h5" ] && shipped="shipped $(digest "backbones/$name.poseact.h5")"
    echo "$name: made $(digest "$WORK/run-$name/model.poseact.h5"), $shipped"
done
