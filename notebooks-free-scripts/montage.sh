#!/usr/bin/env bash
# Push-up montages: run `poseact annotate --compare` with a model over the three montage
# videos of the shared push-up dataset (montage/montage_0{1,2,3}.mp4, each six test clips of
# alternating label joined back to back) against montage/annotations.csv, and print one line
# per montage with its agreement (the share of annotated time the timeline agrees with,
# leaving out 1 s around every change of label) and how its occurrences match the annotated
# segments (their number, labels, boundary distances), then the mean agreement (unweighted)
# and the share of all the compared time of the three (pooled).
#
#   notebooks-free-scripts/montage.sh [MODEL]   (default MODEL: out/pushups/pushups.poseact.h5,
#                                                as notebooks-free-scripts/pushups.sh makes it)
#
# POSEACT_SHARED: the shared folder (default ../shared). POSEACT_BIN: a poseact binary to use
# as it is; without it the script builds .build/release/poseact first. ANNOTATE_FLAGS: more
# flags for annotate (e.g. "--smooth 5").
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${POSEACT_SHARED:-../shared}
MODEL=${1:-out/pushups/pushups.poseact.h5}
DIR=$SHARED/data/pushups/montage
[ -f "$DIR/annotations.csv" ] || { echo "montage.sh: $DIR/annotations.csv not found: set POSEACT_SHARED to the shared folder" >&2; exit 1; }
[ -f "$MODEL" ] || [ -d "$MODEL" ] || { echo "montage.sh: $MODEL not found: run notebooks-free-scripts/pushups.sh, or give a model" >&2; exit 1; }
[ -f models/pose_landmark_full.tflite ] || { echo "montage.sh: models/ missing: run notebooks-free-scripts/setup.sh" >&2; exit 1; }

if [ -n "${POSEACT_BIN:-}" ]; then
    BIN=$POSEACT_BIN
else
    swift build -c release --product poseact >&2
    BIN=.build/release/poseact
fi
sum=0; agreed=0; total=0
for v in montage_01 montage_02 montage_03; do
    # The last line of the text output: "agreement with FILE: 88.2% of 11.9 s (...)".
    # shellcheck disable=SC2086
    out=$("$BIN" annotate --model "$MODEL" "$DIR/$v.mp4" --compare "$DIR/annotations.csv" --models models ${ANNOTATE_FLAGS:-})
    line=$(grep '^agreement with ' <<<"$out" | tail -1)
    # "occurrences against FILE: 6 for 6 annotated segments, labels the same, boundaries 0.22 s off on average, 0.67 s at most"
    occ=$(grep '^occurrences against ' <<<"$out" | tail -1 | sed -E 's/^occurrences against [^:]*: //')
    pct=$(sed -E 's/^agreement with .*: ([0-9.]+)% of ([0-9.]+) s.*/\1/' <<<"$line")
    secs=$(sed -E 's/^agreement with .*: ([0-9.]+)% of ([0-9.]+) s.*/\2/' <<<"$line")
    [[ $pct =~ ^[0-9.]+$ ]] || { echo "montage.sh: no agreement line for $v: $line" >&2; exit 1; }
    printf '%s  agreement %5.1f %%  (of %s s compared); occurrences: %s\n' "$v" "$pct" "$secs" "$occ"
    sum=$(awk -v a="$sum" -v b="$pct" 'BEGIN { print a + b }')
    agreed=$(awk -v a="$agreed" -v p="$pct" -v t="$secs" 'BEGIN { print a + p * t / 100 }')
    total=$(awk -v a="$total" -v t="$secs" 'BEGIN { print a + t }')
done
awk -v s="$sum" 'BEGIN { printf "mean        agreement %5.1f %%\n", s / 3 }'
awk -v a="$agreed" -v t="$total" 'BEGIN { printf "pooled      agreement %5.1f %%  (of %.1f s compared)\n", 100 * a / t, t }'
