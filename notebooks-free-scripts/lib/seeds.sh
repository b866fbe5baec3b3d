#!/usr/bin/env bash
# Trains CONFIG on STORE once per seed in SEEDS (WORK/run-seed-S, resumable), exports each to
# WORK/NAME-seed-S.poseact.h5 (the first seed's also to WORK/NAME.poseact.h5), evaluates each
# on the test split (WORK/report-seed-S), prints one line per seed, their mean and spread
# (sample standard deviation), and last one JSON object. Used by pushups.sh and penn-action.sh.
set -euo pipefail
: "${CONFIG:?} ${WORK:?} ${BIN:?} ${STORE:?} ${NAME:?} ${SEEDS:?}"
clips=(); windows=(); first=""
for s in $SEEDS; do
    "$BIN" train --config "$CONFIG" --data "$STORE" --output "$WORK/run-seed-$s" --seed "$s" >&2
    "$BIN" export "$WORK/run-seed-$s" --output "$WORK/$NAME-seed-$s.poseact.h5" >&2
    [ -n "$first" ] || { first=$s; cp "$WORK/$NAME-seed-$s.poseact.h5" "$WORK/$NAME.poseact.h5.tmp"
                         mv "$WORK/$NAME.poseact.h5.tmp" "$WORK/$NAME.poseact.h5"; }
    json=$("$BIN" evaluate "$WORK/$NAME-seed-$s.poseact.h5" --data "$STORE" --split test \
           --report "$WORK/report-seed-$s" --json | tail -1)
    c=$(grep -o '"clip_accuracy" *: *[0-9.e-]*' <<<"$json" | head -1 | sed 's/.*: *//')
    w=$(grep -o '"window_accuracy" *: *[0-9.e-]*' <<<"$json" | head -1 | sed 's/.*: *//')
    [[ $c =~ ^[0-9.e-]+$ && $w =~ ^[0-9.e-]+$ ]] || { echo "seeds.sh: no accuracy in evaluate's output for seed $s" >&2; exit 1; }
    clips+=("$c"); windows+=("$w")
    awk -v s="$s" -v c="$c" -v w="$w" 'BEGIN { printf "seed %s: clip accuracy %.1f %%, window accuracy %.1f %%\n", s, 100 * c, 100 * w }'
done
# (m = m / NF, not m /= NF: mawk, Debian's awk, reads "/=" as the start of a pattern)
stats() { awk '{ m = 0; v = 0; for (i = 1; i <= NF; i++) { x[i] = 100 * $i; m += x[i] }; m = m / NF
                for (i = 1; i <= NF; i++) v += (x[i] - m) ^ 2
                sd = NF > 1 ? sqrt(v / (NF - 1)) : 0; printf "%.2f %.2f\n", m, sd }' <<<"$*"; }
read -r cm cs <<<"$(stats "${clips[@]}")"
read -r wm ws <<<"$(stats "${windows[@]}")"
echo "mean of ${#clips[@]} seeds: clip accuracy $cm % ± $cs (sd), window accuracy $wm % ± $ws"
list() { local IFS=,; echo "$*"; }
echo "{\"config\":\"$CONFIG\",\"seeds\":[$(list $SEEDS)],\"clip_accuracy\":[$(list "${clips[@]}")],\"window_accuracy\":[$(list "${windows[@]}")],\"clip_accuracy_mean\":$(awk -v m="$cm" 'BEGIN{print m/100}'),\"window_accuracy_mean\":$(awk -v m="$wm" 'BEGIN{print m/100}')}"
