#!/usr/bin/env bash
# The coach on the push-up test clips: `poseact annotate --angles body_line,left_elbow --json`
# over the 45 clips of the shared push-up test split (the live pipeline, every person),
# then, against the counts made by looking at the frames (datasets/pushups-test-repetitions.csv):
# the repetitions counted per clip (mean absolute error, within one, exact), and the body
# line (shoulder–hip–ankle, 180° = straight) at the turn of each repetition, correct against
# wrong form: the sagging or piking hips that make a push-up wrong.
#
#   notebooks-free-scripts/coach-pushups.sh [MODEL]   (default MODEL: out/pushups/pushups.poseact.h5;
#                                                      any model: counting and angles need none)
#
# POSEACT_SHARED: the shared folder (default ../shared). POSEACT_BIN: a poseact binary to use
# as it is; without it the script builds .build/release/poseact first. The last line on stdout
# is one JSON object with the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${POSEACT_SHARED:-../shared}
MODEL=${1:-out/pushups/pushups.poseact.h5}
DIR=$SHARED/data/pushups/test
[ -d "$DIR/correct" ] || { echo "coach-pushups.sh: $DIR/correct not found: set POSEACT_SHARED to the shared folder" >&2; exit 1; }
[ -f "$MODEL" ] || [ -d "$MODEL" ] || { echo "coach-pushups.sh: $MODEL not found: run notebooks-free-scripts/pushups.sh, or give a model" >&2; exit 1; }
if [ -n "${POSEACT_BIN:-}" ]; then
    BIN=$POSEACT_BIN
else
    swift build -c release --product poseact >&2
    BIN=.build/release/poseact
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for clip in "$DIR"/correct/*.mp4 "$DIR"/wrong/*.mp4; do
    name=$(basename "$(dirname "$clip")")/$(basename "$clip")
    "$BIN" annotate --model "$MODEL" "$clip" --angles body_line,left_elbow --json --models models \
        > "$OUT/$(basename "$clip").json" 2>/dev/null
    echo "$name" >> "$OUT/list"
done
python3 - "$OUT" datasets/pushups-test-repetitions.csv <<'PY'
import csv, json, os, statistics, sys
out, truth_path = sys.argv[1], sys.argv[2]
truth = {r["clip"] if "clip" in r else r[list(r)[0]]: int(r[list(r)[1]]) for r in csv.DictReader(open(truth_path))}
errors, turns = [], {"correct": [], "wrong": []}
per_clip = {"correct": [], "wrong": []}
for name in open(os.path.join(out, "list")).read().split():
    result = json.load(open(os.path.join(out, os.path.basename(name) + ".json")))
    reps = result["repetitions"]
    errors.append(len(reps) - truth[name])
    label = name.split("/")[0]
    values = [r["angles"]["body_line"]["at_turn"] for r in reps if "body_line" in r["angles"] and "at_turn" in r["angles"]["body_line"]]
    turns[label] += values
    if values:
        per_clip[label].append(statistics.median(values))
n = len(errors)
mae = sum(map(abs, errors)) / n
within = sum(abs(e) <= 1 for e in errors) / n
exact = sum(e == 0 for e in errors) / n
print(f"repetitions on {n} clips: mean absolute error {mae:.3f}, within one {within * 100:.1f} %, exact {exact * 100:.1f} %")
def q(v):
    s = sorted(v); return s[len(s) // 4], statistics.median(s), s[(3 * len(s)) // 4]
for label in ("correct", "wrong"):
    a, m, b = q(turns[label])
    print(f"body line at the turn, {label}: {len(turns[label])} repetitions, median {m:.0f}°, quartiles {a:.0f}–{b:.0f}°;"
          f" per clip (median of its repetitions) median {statistics.median(per_clip[label]):.0f}° over {len(per_clip[label])} clips")
# How well the clip's median body line alone tells the labels apart: the probability that a
# correct clip's is straighter (nearer 180°) than a wrong clip's (area under the ROC curve).
c, w = per_clip["correct"], per_clip["wrong"]
auc = sum((x > y) + 0.5 * (x == y) for x in c for y in w) / (len(c) * len(w))
print(f"a correct clip's body line straighter than a wrong clip's: {auc * 100:.1f} % of pairs (AUC)")
print(json.dumps({"clips": n, "mae": round(mae, 3), "within_one": round(within, 3), "exact": round(exact, 3),
                  "body_line_at_turn_median": {k: statistics.median(v) for k, v in turns.items()},
                  "body_line_auc": round(auc, 3)}))
PY
