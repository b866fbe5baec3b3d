#!/usr/bin/env bash
# Training speed of poseact's own trainer against the same model in PyTorch (CPU), on the
# Penn Action windows, measured side by side on this machine. The model is the config's
# model.type: the TCN, or ST-GCN / ST-GCN++ (pytorch_tcn.py with pytorch_stgcn.py).
# PyTorch lives in a throw-away venv: it is a yardstick only, never a dependency of poseact.
#
#   notebooks-free-scripts/compare-pytorch.sh [--epochs N] [--rounds R] [--config FILE] [--threads T]
#
# Defaults: 3 epochs, 3 rounds, configs/penn-action.yaml, 2 threads. Each round runs
# `poseact bench train` then pytorch_tcn.py, N epochs each, on one windows file cut with the
# config's window and stride; both train on every training window (no validation split,
# no early stopping) and time the training pass alone (forward, backward, optimiser step);
# then each times the trained model on one window at a time, as live asks (ms per window).
# Shared machines drift, so the two alternate; the table gives the median over rounds.
# For accuracy, run pytorch_tcn.py alone with the full config (see its --help).
# Env: POSEACT_BIN (a poseact binary to use instead of building one),
#      POSEACT_PENN_CSV (default <repo>/../shared/data/penn-action/keypoints.csv),
#      POSEACT_COMPARE_DIR (work dir, default ${TMPDIR:-/tmp}/poseact-compare-pytorch),
#      POSEACT_TORCH_VENV (default ${TMPDIR:-/tmp}/poseact-torch-venv, reused if present).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HERE="$ROOT/notebooks-free-scripts"
CSV="${POSEACT_PENN_CSV:-$ROOT/../shared/data/penn-action/keypoints.csv}"
WORK="${POSEACT_COMPARE_DIR:-${TMPDIR:-/tmp}/poseact-compare-pytorch}"
VENV="${POSEACT_TORCH_VENV:-${TMPDIR:-/tmp}/poseact-torch-venv}"
EPOCHS=3
ROUNDS=3
THREADS=2
CONFIG="$ROOT/configs/penn-action.yaml"

while (($#)); do
    case "$1" in
        --epochs) EPOCHS="${2:?--epochs needs a number}"; shift 2 ;;
        --rounds) ROUNDS="${2:?--rounds needs a number}"; shift 2 ;;
        --config) CONFIG="${2:?--config needs a file}"; shift 2 ;;
        --threads) THREADS="${2:?--threads needs a number}"; shift 2 ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        *) echo "unknown option: $1" >&2; exit 2 ;;
    esac
done
[[ -f "$CONFIG" ]] || { echo "no such config: $CONFIG" >&2; exit 1; }
CONFIG="$(cd "$(dirname "$CONFIG")" && pwd)/$(basename "$CONFIG")"
[[ -f "$CSV" ]] || { echo "missing $CSV (the Penn Action keypoints; set POSEACT_PENN_CSV)" >&2; exit 1; }

# ---- poseact, built fresh (an old binary would give old numbers; incremental) ----------
if [[ -n "${POSEACT_BIN:-}" ]]; then
    BIN="$POSEACT_BIN"
else
    command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
    echo "building poseact (release)"
    (cd "$ROOT" && swift build -c release --product poseact) >&2 || { echo "poseact could not be built" >&2; exit 1; }
    BIN="$ROOT/.build/release/poseact"
    sleep 3   # let the build's stray processes finish before timing
fi
[[ -x "$BIN" ]] || { echo "no poseact binary at $BIN" >&2; exit 1; }
if ! "$BIN" bench train --help >/dev/null 2>&1; then
    echo "'poseact bench train' is not in this poseact ($BIN): nothing to compare PyTorch with." >&2
    echo "Run notebooks-free-scripts/pytorch_tcn.py alone for the PyTorch figures." >&2
    exit 1
fi

# ---- PyTorch (CPU) in its venv -----------------------------------------------------------
source "$HERE/lib/venv.sh"
yardstick_venv "$VENV" 'import h5py, yaml, numpy' h5py pyyaml numpy
if ! "$PY" -c 'import torch' 2>/dev/null; then
    pipq=("$PY" -m pip install --quiet --disable-pip-version-check)
    echo "installing torch (CPU build) into $VENV"
    if ! "${pipq[@]}" --retries 1 --timeout 30 torch --index-url https://download.pytorch.org/whl/cpu 2>/dev/null; then
        # No CPU index here: a torch wheel from pip's find-links (if any), else PyPI's
        # torch (the CUDA-bundled build: several GB, but it runs on the CPU the same way).
        echo "PyTorch's CPU index is unreachable: trying a local wheel, then the default index" >&2
        { "${pipq[@]}" --no-index --no-deps torch 2>/dev/null && "${pipq[@]}" torch; } || "${pipq[@]}" torch
    fi
fi
TORCH="$("$PY" -c 'import torch; print(torch.__version__)')"

# ---- data: the Penn Action store and its windows, cut as the config says -----------------
mkdir -p "$WORK"
read -r WINDOW STRIDE < <("$PY" - "$CONFIG" <<'PYEOF'
import sys, yaml
p = (yaml.safe_load(open(sys.argv[1])) or {}).get("preprocessing") or {}
print(p.get("window", 32), p.get("stride", 8))
PYEOF
)
STORE="$WORK/penn.h5"
DATA="$WORK/penn-windows.h5"
if [[ ! -f "$STORE" || "$CSV" -nt "$STORE" ]]; then
    "$BIN" import "$CSV" --output "$STORE" >&2
fi
# The config's whole preprocessing section (features and normalisation included).
"$BIN" windows "$STORE" --config "$CONFIG" --output "$DATA" >/dev/null
echo "poseact $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "?")$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo "+changes"), torch $TORCH; $ROUNDS rounds of $EPOCHS epochs, $THREADS threads;" \
     "windows of $WINDOW frames every $STRIDE ($DATA)"

# ---- alternating rounds --------------------------------------------------------------------
results="$(mktemp)"
trap 'rm -f "$results"' EXIT
for ((round = 1; round <= ROUNDS; round++)); do
    # Only the last JSON line of stdout is the result; the rest is chatter.
    if ! out="$("$BIN" bench train --config "$CONFIG" --data "$DATA" --epochs "$EPOCHS" --threads "$THREADS")"; then
        echo "'poseact bench train' failed (round $round)" >&2; exit 1
    fi
    line="$(grep '^{' <<<"$out" | tail -n 1)" || { echo "'poseact bench train' printed no JSON line" >&2; exit 1; }
    echo "poseact $line" | tee -a "$results"
    if ! out="$("$PY" "$HERE/pytorch_tcn.py" --config "$CONFIG" --data "$DATA" --epochs "$EPOCHS" --threads "$THREADS" \
                --validation-share 0 --patience 0 --json)"; then
        echo "pytorch_tcn.py failed (round $round)" >&2; exit 1
    fi
    line="$(grep '^{' <<<"$out" | tail -n 1)" || { echo "pytorch_tcn.py printed no JSON line" >&2; exit 1; }
    echo "pytorch $line" | tee -a "$results"
done

# ---- table ----------------------------------------------------------------------------------
echo
"$PY" - "$results" <<'PYEOF'
import json, statistics, sys
runs = {"poseact": [], "pytorch": []}
for l in open(sys.argv[1]):
    name, _, text = l.partition(" ")
    runs[name].append(json.loads(text))
def med(name, key):
    v = [r[key] for r in runs[name] if r.get(key) is not None]
    return statistics.median(v) if v else None
def fmt(v, spec):
    return "-" if v is None else format(v, spec)
rows = [("seconds/epoch (median)", "seconds_per_epoch", ".3f"), ("windows/s", "windows_per_second", ".0f"),
        ("ms per window (median)", "ms_per_window", ".3f"), ("parameters", "parameters", ".0f")]
print(f"{'':<24} {'poseact':>10} {'pytorch':>10} {'poseact/pytorch':>16}")
for title, key, spec in rows:
    p, t = med("poseact", key), med("pytorch", key)
    ratio = f"{p / t:.2f}" if p is not None and t else "-"
    print(f"{title:<24} {fmt(p, spec):>10} {fmt(t, spec):>10} {ratio:>16}")
wp = {r.get("windows") for r in runs["poseact"]}
wt = {r.get("train_windows") for r in runs["pytorch"]}
if wp != wt:
    print(f"note: poseact trained on {sorted(map(str, wp))} windows per epoch, pytorch on {sorted(map(str, wt))}")
PYEOF
