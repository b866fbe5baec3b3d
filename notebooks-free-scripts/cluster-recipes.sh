#!/usr/bin/env bash
# The cluster recipes of docs/recipes, run as their array tasks would be, as local processes
# with the very variables each scheduler sets, then checked against one machine's run:
#   - extraction, 8 tasks (extract.sbatch with SLURM_ARRAY_TASK_*, extract-job.yaml's command
#     with JOB_COMPLETION_INDEX, parallel.sh with GNU parallel's own PARALLEL_SEQ), merged:
#     the same clips and keypoints, bit for bit, as `poseact extract` on one machine;
#   - extraction again from the shared cache: seconds, the same store;
#   - cross-validation, 5 folds × 2 seeds as 10 tasks per recipe, pooled: the same summary,
#     byte for byte, as `poseact crossval` on one machine.
# The tasks of a recipe run at once. Slurm's array starts at 1 here (--array=1-8 in effect)
# to check that the index is counted from SLURM_ARRAY_TASK_MIN.
#   cluster-recipes.sh [POSEACT [CONFIGS_DIR]]   (default: poseact on PATH, the repo's configs/)
# Env: POSEACT_SHARED (the shared data folder, default ../shared beside the checkout),
#      RECIPES_CLIPS (clips per label in train/, default 25: the fewest that fill 5 folds),
#      RECIPES_EPOCHS (default 3). Needs GNU parallel and python3.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
POSEACT="$(command -v "${1:-poseact}")" || { echo "cluster-recipes: no poseact (give its path)" >&2; exit 1; }
CONFIGS="$(cd "${2:-$ROOT/configs}" && pwd)"
SHARED="${POSEACT_SHARED:-$ROOT/../shared}"
PUSHUPS="$SHARED/data/pushups"
CLIPS="${RECIPES_CLIPS:-25}"
EPOCHS="${RECIPES_EPOCHS:-3}"
RECIPES="$ROOT/docs/recipes"
say() { echo "cluster-recipes: $*"; }
die() { echo "cluster-recipes: FAILED: $*" >&2; exit 1; }
[[ -d "$PUSHUPS/train" ]] || die "no push-up videos in $PUSHUPS (set POSEACT_SHARED)"
command -v parallel >/dev/null || die "GNU parallel is not installed (apt-get install parallel)"
export PATH="$(dirname "$POSEACT"):$PATH"
export CONFIG="$CONFIGS/pushups.yaml" EPOCHS
unset SLURM_ARRAY_TASK_ID JOB_COMPLETION_INDEX PARALLEL_SEQ

T="$(mktemp -d "${TMPDIR:-/tmp}/poseact-recipes.XXXXXX")"
trap 'rm -rf "$T"' EXIT
# A small dataset of links: CLIPS clips per label to train on, 2 per label to test.
export DATA="$T/videos"
# (Arrays, not `ls | sort | head`: with pipefail, head leaving early can fail the pipe.)
for label in correct wrong; do
    mkdir -p "$DATA/train/$label" "$DATA/test/$label"
    mapfile -t train < <(printf '%s\n' "$PUSHUPS/train/$label"/*.mp4 | sort -V)
    mapfile -t test < <(printf '%s\n' "$PUSHUPS/test/$label"/*.mp4 | sort -V)
    ln -s "${train[@]:0:$CLIPS}" "$DATA/train/$label/"
    ln -s "${test[@]:0:2}" "$DATA/test/$label/"
done
mkdir -p "$T/cache"
work() { mkdir -p "$T/$1"; ln -sfn "$T/cache" "$T/$1/cache"; echo "$T/$1"; }
same_store() { poseact dataset compare "$1" "$2" >/dev/null || die "$3: the merged store differs from one machine's (poseact dataset compare $1 $2)"; }
same_summary() { cmp -s "$1" "$2" || { diff "$1" "$2" >&2 || true; die "$3: the pooled cross-validation differs from crossval's own"; }; }
# A Kubernetes manifest's container command, its mount paths mapped to this run's folders.
k8s_command() {
    python3 - "$1" "$2" "$CONFIGS" "$EPOCHS" <<'EOF'
import json, re, sys
manifest, work, configs, epochs = sys.argv[1:]
line = next(l for l in open(manifest) if l.strip().startswith("command:"))
command = json.loads(line.split("command:", 1)[1])
assert command[:2] == ["sh", "-c"], command
places = {"/usr/share/poseact/configs": configs, "/work": work, "/data": work + "/../videos"}
script = re.sub(r"(/usr/share/poseact/configs|/work|/data)(?=[/\s]|$)", lambda m: places[m.group(1)], command[2])
print(re.sub(r"--epochs \d+", "--epochs " + epochs, script))
EOF
}
# N tasks of an Indexed Job at once: JOB_COMPLETION_INDEX = 0…N-1.
k8s_tasks() {
    local n=$1 script=$2 pids=() i
    for ((i = 0; i < n; i++)); do JOB_COMPLETION_INDEX=$i sh -c "$script" >"$T/k8s-$i.log" 2>&1 & pids+=($!); done
    for i in "${!pids[@]}"; do wait "${pids[$i]}" || { tail -n 5 "$T/k8s-$i.log" >&2; die "Kubernetes task $i failed"; }; done
}
# N tasks of a Slurm array --array=1-N at once.
slurm_tasks() {
    local n=$1 script=$2 pids=() i
    for ((i = 1; i <= n; i++)); do
        SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=$n SLURM_ARRAY_TASK_COUNT=$n SLURM_ARRAY_TASK_STEP=1 \
            bash "$script" >"$T/slurm-$i.log" 2>&1 & pids+=($!)
    done
    for i in "${!pids[@]}"; do wait "${pids[$i]}" || { tail -n 5 "$T/slurm-$((i + 1)).log" >&2; die "Slurm task $((i + 1)) of $script failed"; }; done
}
seconds() { python3 -c 'import time; print(f"{time.monotonic():.3f}")'; }
elapsed() { python3 -c "print(f'{$(seconds) - $1:.1f}')"; }

say "$(find "$DATA" -name '*.mp4' | wc -l) clips; poseact $("$POSEACT" --version) at $POSEACT; $(nproc) cores"

# ---- Extraction -------------------------------------------------------------
t=$(seconds)
poseact extract "$DATA" --output "$T/one.h5" 2>"$T/one.log" || { cat "$T/one.log" >&2; die "one machine's extraction failed"; }
say "one machine: $(tail -n 1 "$T/one.log") ($(elapsed "$t") s)"

W=$(work slurm); t=$(seconds)
WORK="$W" slurm_tasks 8 "$RECIPES/extract.sbatch"
WORK="$W" bash "$RECIPES/merge.sbatch" 2>/dev/null
same_store "$T/one.h5" "$W/videos.h5" "extract.sbatch (8 Slurm tasks)"
say "extract.sbatch: 8 Slurm tasks then merge.sbatch: the same $(ls "$W"/parts/*.h5 | wc -l)-part store as one machine's, bit for bit ($(elapsed "$t") s)"

t=$(seconds)
poseact extract "$DATA" --cache "$T/cache" --output "$T/again.h5" 2>"$T/again.log"
took=$(elapsed "$t")
same_store "$T/one.h5" "$T/again.h5" "extraction from the cache"
grep -q "extracted now ($(( 2 * CLIPS + 4 )) from the cache)" "$T/again.log" || { cat "$T/again.log" >&2; die "the second extraction did not take every clip from the cache"; }
say "extraction again from the cache: $took s, the same store ($(tail -n 1 "$T/again.log"))"

W=$(work k8s); t=$(seconds)
k8s_tasks 8 "$(k8s_command "$RECIPES/extract-job.yaml" "$W")"
poseact merge "$W"/parts/part-*.h5 --output "$W/videos.h5" 2>/dev/null
same_store "$T/one.h5" "$W/videos.h5" "extract-job.yaml (8 Kubernetes tasks)"
say "extract-job.yaml: 8 Indexed Job tasks (from the cache) then merge: the same store ($(elapsed "$t") s)"

# ---- Cross-validation -------------------------------------------------------
t=$(seconds)
poseact crossval --config "$CONFIG" --data "$T/one.h5" --epochs "$EPOCHS" --folds 5 --seeds 1,2 --output "$T/cv-one" \
    >"$T/cv-one.log" 2>&1 || { tail -n 5 "$T/cv-one.log" >&2; die "one machine's crossval failed"; }
say "crossval on one machine: $(grep "^cross-validation" "$T/cv-one.log") ($(elapsed "$t") s)"

W="$T/slurm"; t=$(seconds)
WORK="$W" slurm_tasks 10 "$RECIPES/crossval.sbatch"
WORK="$W" bash "$RECIPES/pool.sbatch" >/dev/null
same_summary "$T/cv-one/crossval.json" "$W/crossval/crossval.json" "crossval.sbatch (10 Slurm tasks)"
say "crossval.sbatch: 10 Slurm tasks then pool.sbatch: the same summary as crossval's, byte for byte ($(elapsed "$t") s)"

W="$T/k8s"; t=$(seconds)
k8s_tasks 10 "$(k8s_command "$RECIPES/crossval-job.yaml" "$W")"
pool=$(k8s_command "$RECIPES/crossval-job.yaml" "$W" | sed 's/--jobs 1 --task auto\/10/--pool/')
sh -c "$pool" >/dev/null
same_summary "$T/cv-one/crossval.json" "$W/crossval/crossval.json" "crossval-job.yaml (10 Kubernetes tasks)"
say "crossval-job.yaml: 10 Indexed Job tasks then --pool: the same summary ($(elapsed "$t") s)"

# ---- GNU parallel: extraction (from the cache) and cross-validation --------
W=$(work parallel); t=$(seconds)
WORK="$W" JOBS=10 bash "$RECIPES/parallel.sh" >"$T/parallel.log" 2>&1 || { tail -n 5 "$T/parallel.log" >&2; die "parallel.sh failed"; }
same_store "$T/one.h5" "$W/videos.h5" "parallel.sh's extraction (8 tasks)"
same_summary "$T/cv-one/crossval.json" "$W/crossval/crossval.json" "parallel.sh's crossval (10 tasks)"
say "parallel.sh: 8 extraction tasks, merge, 10 crossval tasks, pool: the same store and summary ($(elapsed "$t") s)"
say "all recipes agree with one machine"
