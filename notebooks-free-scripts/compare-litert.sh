#!/usr/bin/env bash
# Speed of poseact's own TFLite engine against Google's LiteRT (XNNPACK) on the two
# BlazePose models, at 1 and 2 threads, measured side by side on this machine.
# LiteRT lives in a throw-away venv: it is a yardstick only, never a dependency of poseact.
#
#   notebooks-free-scripts/compare-litert.sh [--runs N] [--rounds R] [--kernels A,B] [--litert-only]
#
# --kernels: poseact's kernel paths to time, each in every round (POSEACT_KERNELS; default:
# the one poseact picks), e.g. avx512,avx512bf16 for the FP32 and bfloat16 paths side by side.
# Shared machines drift by ±20% over a minute, so the two runtimes alternate: each round
# times LiteRT then poseact (N runs each, after warm-up), and the table gives the median
# over rounds of each round's median. Raw JSON lines go to stdout as they come.
# Env: POSEACT_MODELS_DIR (default <repo>/models, filled by setup.sh),
#      POSEACT_LITERT_VENV (default ${TMPDIR:-/tmp}/poseact-litert-venv, reused if present).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HERE="$ROOT/notebooks-free-scripts"
MODELS_DIR="${POSEACT_MODELS_DIR:-$ROOT/models}"
VENV="${POSEACT_LITERT_VENV:-${TMPDIR:-/tmp}/poseact-litert-venv}"
RUNS=50
ROUNDS=3
POSEACT=1
THREADS=(1 2)
MODELS=(pose_detection pose_landmark_full)
KERNELS=("")

while (($#)); do
    case "$1" in
        --runs) RUNS="${2:?--runs needs a number}"; shift 2 ;;
        --rounds) ROUNDS="${2:?--rounds needs a number}"; shift 2 ;;
        --kernels) IFS=, read -r -a KERNELS <<<"${2:?--kernels needs a list}"; shift 2 ;;
        --litert-only) POSEACT=0; shift ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "unknown option: $1" >&2; exit 2 ;;
    esac
done

for m in "${MODELS[@]}"; do
    [[ -f "$MODELS_DIR/$m.tflite" ]] || { echo "missing $MODELS_DIR/$m.tflite: run notebooks-free-scripts/setup.sh first" >&2; exit 1; }
done

# ---- LiteRT in its venv ----------------------------------------------------------
source "$(dirname "${BASH_SOURCE[0]}")/lib/venv.sh"
yardstick_venv "$VENV" 'import ai_edge_litert, numpy' ai-edge-litert numpy
echo "LiteRT $("$PY" -c 'import importlib.metadata as m; print(m.version("ai-edge-litert"))'), $ROUNDS rounds of $RUNS runs"

# ---- poseact, built fresh (an old binary would give old numbers; incremental) ----
note=""
BIN="$ROOT/.build/release/poseact"
if ((POSEACT)); then
    command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
    echo "building poseact (release)"
    if ! (cd "$ROOT" && swift build -c release --product poseact) >&2; then
        POSEACT=0; note="poseact could not be built: LiteRT figures only"
    fi
    sleep 3   # let the build's stray processes finish before timing
else
    note="--litert-only: poseact not run"
fi

results="$(mktemp)"
trap 'rm -f "$results"' EXIT
for ((round = 1; round <= ROUNDS; round++)); do
    for t in "${THREADS[@]}"; do
        for m in "${MODELS[@]}"; do
            "$PY" "$HERE/litert_bench.py" --model "$MODELS_DIR/$m.tflite" --runs "$RUNS" --threads "$t" | tee -a "$results"
        done
        for k in "${KERNELS[@]}"; do
            ((POSEACT)) || break
            # Only the JSON lines of stdout are results; anything else is chatter.
            if ! out="$(cd "$ROOT" && POSEACT_MODELS_DIR="$MODELS_DIR" POSEACT_KERNELS="$k" "$BIN" bench pose --runs "$RUNS" --threads "$t")"; then
                POSEACT=0; note="'poseact bench pose' failed${k:+ with POSEACT_KERNELS=$k}: LiteRT figures only"; continue
            fi
            grep '^{' <<<"$out" | tee -a "$results" || true
        done
    done
done

# ---- table ---------------------------------------------------------------------------
echo
"$PY" - "$results" <<'PYEOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def medians(pick):
    out = {}
    for r in rows:
        if pick(r): out.setdefault((r["model"], r["threads"]), []).append(r["median_ms"])
    return {k: statistics.median(v) for k, v in out.items()}
lite = medians(lambda r: r.get("runtime") == "litert")
paths = sorted({r.get("kernels", "") for r in rows if r.get("runtime", "poseact") != "litert"})
ours = {k: medians(lambda r, k=k: r.get("runtime", "poseact") != "litert" and r.get("kernels", "") == k) for k in paths}
cpu = next((r["cpu"] for r in rows if "cpu" in r), None)
if cpu: print(f"CPU: {cpu}")
print(f"{'model':<20} {'threads':>7} {'litert ms':>10}" + "".join(f" {k + ' ms':>16} {'/ litert':>9}" for k in paths))
for (model, t), ms in sorted(lite.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    line = f"{model:<20} {t:>7} {ms:>10.2f}"
    for k in paths:
        p = ours[k].get((model, t))
        line += f" {p:>16.2f} {p / ms:>9.2f}" if p is not None else f" {'-':>16} {'-':>9}"
    print(line)
PYEOF
if [[ -n "$note" ]]; then echo "note: $note"; fi
