#!/usr/bin/env bash
# How many clips a user needs: clip and window accuracy on the test split with 5, 10, 20, 40
# and all training clips per label (data.clips_per_label; three random draws each,
# data.draw 1, 2, 3; "all" has no draw, so there the three are training seeds), poseact and
# the PyTorch mirror (pytorch_tcn.py) trained on the same windows file with the same draws.
# Appends one CSV row a run to WORK/learning-curve.csv (tool,clips_per_label,draw,
# clip_accuracy,window_accuracy) and skips the runs already there, so it resumes; prints the
# table of means at the end.
#
#   notebooks-free-scripts/learning-curve.sh STORE CONFIG WORK
#
# pushups: STORE out/pushups/pushups.h5 (pushups.sh), CONFIG configs/pushups.yaml;
# Penn Action: STORE out/penn/penn.h5 (penn-action.sh), CONFIG configs/penn-action.yaml.
# The mirror cannot turn the body (a windows file has no depth), so both run the config
# with augmentation.turn_degrees 0. Env: SIZES (default "5 10 20 40 0", 0 = all), DRAWS
# ("1 2 3"), TOOLS ("poseact pytorch"), POSEACT_TORCH_VENV (as compare-pytorch.sh),
# PRETRAINED (model.pretrained of poseact's runs: none, the default, for random weights as
# the mirror's; auto, or a backbone's path, with TOOLS=poseact).
set -euo pipefail
cd "$(dirname "$0")/.."
STORE=${1:?STORE}; CONFIG=${2:?CONFIG}; WORK=${3:?WORK}
SIZES=${SIZES:-5 10 20 40 0}; DRAWS=${DRAWS:-1 2 3}; TOOLS=${TOOLS:-poseact pytorch}
mkdir -p "$WORK"
WORK=$(realpath "$WORK"); CONFIG=$(realpath "$CONFIG"); STORE=$(realpath "$STORE")
BIN=${POSEACT_BIN:-}
if [[ -z "$BIN" ]]; then swift build -c release --product poseact >&2; BIN=.build/release/poseact; fi
if [[ " $TOOLS " == *" pytorch "* ]]; then
    source notebooks-free-scripts/lib/venv.sh
    VENV="${POSEACT_TORCH_VENV:-${TMPDIR:-/tmp}/poseact-torch-venv}"
    yardstick_venv "$VENV" 'import h5py, yaml, numpy, torch' h5py pyyaml numpy torch
fi
CSV=$WORK/learning-curve.csv
[[ -f $CSV ]] || echo "tool,clips_per_label,draw,clip_accuracy,window_accuracy" > "$CSV"
# One windows file for every run: the draw is made when training, the same way by both.
printf 'base: %s\naugmentation:\n  turn_degrees: 0\nmodel:\n  pretrained: %s\n' "$CONFIG" "${PRETRAINED:-none}" > "$WORK/curve.yaml"
[[ -f $WORK/windows.h5 ]] || "$BIN" windows "$STORE" --config "$WORK/curve.yaml" --output "$WORK/windows.h5" >&2
field() { grep -o "\"$1\" *: *[0-9.e-]*" | head -1 | sed 's/.*: *//'; }
for n in $SIZES; do
    for d in $DRAWS; do
        seed=1; [[ $n == 0 ]] && seed=$d
        cfg=$WORK/n$n-d$d.yaml
        printf 'base: curve.yaml\ndata:\n  clips_per_label: %s\n  draw: %s\n' "$n" "$d" > "$cfg"
        for tool in $TOOLS; do
            grep -q "^$tool,$n,$d," "$CSV" && continue
            if [[ $tool == poseact ]]; then
                "$BIN" train --config "$cfg" --data "$WORK/windows.h5" --seed "$seed" --output "$WORK/run-n$n-d$d" >&2
                json=$(cat "$WORK/run-n$n-d$d/evaluation.json")
            else
                json=$("$PY" notebooks-free-scripts/pytorch_tcn.py --config "$cfg" --data "$WORK/windows.h5" --seed "$seed" \
                       --threads 1 --json | tail -1)
            fi
            c=$(field clip_accuracy <<<"$json"); w=$(field window_accuracy <<<"$json")
            [[ $c =~ ^[0-9.e-]+$ && $w =~ ^[0-9.e-]+$ ]] || { echo "learning-curve.sh: no accuracy from $tool n=$n draw=$d" >&2; exit 1; }
            echo "$tool,$n,$d,$c,$w" >> "$CSV"
            echo "$tool, $n clips per label (0 = all), draw $d: clips $c, windows $w" >&2
        done
    done
done
awk -F, 'NR > 1 { k = $1 "," $2; c[k] += $4; w[k] += $5; c2[k] += $4 * $4; n[k]++ }
         END { print "tool,clips_per_label,runs,clip_accuracy_mean,clip_accuracy_sd,window_accuracy_mean"
               for (k in n) { m = c[k] / n[k]; v = n[k] > 1 ? (c2[k] - n[k] * m * m) / (n[k] - 1) : 0
                              printf "%s,%d,%.4f,%.4f,%.4f\n", k, n[k], m, sqrt(v > 0 ? v : 0), w[k] / n[k] } }' "$CSV" | sort -t, -k1,1 -k2,2n
