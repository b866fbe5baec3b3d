#!/usr/bin/env bash
# Throws (issue 36's figures): the throw-type model and `--trajectories` on rendered scenes
# never used to tune them.
#
#   notebooks-free-scripts/throws.sh [OUT]   (default OUT: out/throws)
#
# 1. Labeled clips of overhand, underhand and background (walking, waving, standing):
#    `poseact throws render --set types` (seed 3000, 40 train and 13 test clips a label),
#    extracted, trained with configs/throws.yaml for seeds 1, 2 and 3, each evaluated on the
#    test clips (mean and spread of the clip accuracy).
# 2. 200 throws in scenes of one or two (seed 17): `poseact throws score` with the seed-1
#    model: throws found, speed and angle errors, types and hits.
# 3. 12 minutes of distractor scenes, no throw (seed 18): false trajectories per 10 minutes.
# 4. 200 throws in cluttered scenes (issue 54; seed 1515, never looked at while the detector
#    was tuned, on seeds 101, 303, 202, 404, 606, 707, 808, 909, 1010, 1111, 1212, 1313 and 1414):
#    the detector alone: flights made as exactly one trajectory, false trajectories, start
#    speed errors.
#
# The seeds of 2 and 3 were never rendered while the detector was written (it was tuned
# on seeds 1000, 2000 and 2001; seeds 7 and 8 measured the version before the last rule,
# docs/experiments.md). POSEACT_BIN: a poseact binary to use as it is; without it the
# script builds .build/release/poseact first. The last line on stdout is one JSON object.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-out/throws}
if [ -n "${POSEACT_BIN:-}" ]; then
    BIN=$POSEACT_BIN
else
    swift build -c release --product poseact >&2
    BIN=.build/release/poseact
fi
mkdir -p "$OUT"
[ -d "$OUT/types" ] || "$BIN" throws render "$OUT/types" --set types --per-label 40 --seed 3000 >&2
[ -f "$OUT/types.h5" ] || "$BIN" extract "$OUT/types" --output "$OUT/types.h5" --jobs 2 --models models >&2
for seed in 1 2 3; do
    [ -f "$OUT/run-$seed/model.poseact.h5" ] || "$BIN" train --config configs/throws.yaml --data "$OUT/types.h5" \
        --output "$OUT/run-$seed" --seed "$seed" >&2
    "$BIN" evaluate "$OUT/run-$seed" --data "$OUT/types.h5" --json > "$OUT/evaluate-$seed.json"
done
[ -d "$OUT/throws" ] || "$BIN" throws render "$OUT/throws" --set throws --count 200 --seed 17 >&2
"$BIN" throws score "$OUT/throws" --model "$OUT/run-1" --json --models models > "$OUT/score-throws.json"
[ -d "$OUT/distractors" ] || "$BIN" throws render "$OUT/distractors" --set distractors --minutes 12 --seed 18 >&2
"$BIN" throws score "$OUT/distractors" --json > "$OUT/score-distractors.json"
[ -d "$OUT/clutter-1515" ] || "$BIN" throws render "$OUT/clutter-1515" --set clutter --count 200 --seed 1515 >&2
"$BIN" throws score "$OUT/clutter-1515" --json > "$OUT/score-clutter.json"
python3 - "$OUT" <<'PY'
import json, statistics, sys
out = sys.argv[1]
acc = []
for seed in (1, 2, 3):
    e = json.loads(open(f"{out}/evaluate-{seed}.json").read().strip().splitlines()[-1])
    acc.append(e["clip_accuracy"])
t = json.loads(open(f"{out}/score-throws.json").read())
d = json.loads(open(f"{out}/score-distractors.json").read())
c = json.loads(open(f"{out}/score-clutter.json").read())
result = {
    "type_clip_accuracy_mean": round(statistics.mean(acc), 4), "type_clip_accuracy_seeds": acc,
    "throws": t["throws"], "throws_found": t["throws_found"], "found_share": t["found_share"],
    "throws_during_shake": t["throws_during_shake"], "trajectories_while_shaking": t["trajectories_while_shaking"] + d["trajectories_while_shaking"],
    "speed_error_median": t["speed_error_median"], "speed_error_p95": t["speed_error_p95"],
    "release_angle_error_median": t["release_angle_error_median"], "launch_angle_error_median": t["launch_angle_error_median"],
    "type_accuracy": t["type_accuracy"], "hit_accuracy": t["hit_accuracy"],
    "false_in_throw_scenes": t["false_trajectories"],
    "distractor_minutes": d["minutes"], "false_trajectories": d["false_trajectories"], "false_per_10_minutes": d["false_per_10_minutes"],
    "clutter_flights": c["flights"], "clutter_flights_as_one": c["flights_as_one"], "clutter_one_share": c["one_trajectory_share"],
    "clutter_minutes": c["minutes"], "clutter_false": c["false_trajectories"], "clutter_false_per_10_minutes": c["false_per_10_minutes"],
    "clutter_start_speed_error_median": c.get("start_speed_error_median"), "clutter_start_speed_error_p95": c.get("start_speed_error_p95"),
    "flights_as_one": t["flights_as_one"], "start_speed_error_median": t.get("start_speed_error_median"),
}
for k, v in result.items(): print(f"{k}: {v}")
print(json.dumps(result))
PY
