#!/usr/bin/env bash
# What Swift's checks cost: the same commit built with -O (as shipped) and with -Ounchecked
# (a throw-away worktree whose Package.swift says so), then both timed alternately:
# `bench pose` (1 thread), `bench pose-video`, `bench train` and `windows` on a store.
#   bash notebooks-free-scripts/bench-checks.sh STORE.h5 VIDEO [ROUNDS]
# Prints each round's figures, then the medians and their ratio (checked / unchecked).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
store="$(realpath "$1")"; video="$(realpath "$2")"; rounds="${3:-5}"
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
work="$(mktemp -d)"; trap 'git -C "$ROOT" worktree remove --force "$work/unchecked" 2>/dev/null; rm -rf "$work"' EXIT
git -C "$ROOT" worktree add --detach "$work/unchecked" HEAD >/dev/null 2>&1
sed -i 's/.unsafeFlags(\["-O"\])/.unsafeFlags(["-Ounchecked"])/' "$work/unchecked/Package.swift"
grep -q 'unsafeFlags(\["-Ounchecked"\])' "$work/unchecked/Package.swift"
build() { (cd "$1" && swift build -c release --product poseact --scratch-path "$2" >"$work/build.log" 2>&1) || { cat "$work/build.log"; exit 1; }; }
build "$ROOT" "$ROOT/.build-checked"
build "$work/unchecked" "$ROOT/.build-unchecked"
C="$ROOT/.build-checked/release/poseact"; U="$ROOT/.build-unchecked/release/poseact"
models=(--models "${POSEACT_MODELS_DIR:-$ROOT/models}")
out="$work/bench.out"
for ((round = 1; round <= rounds; round++)); do
  for v in C U; do
    bin=${!v}
    "$bin" bench pose "${models[@]}" --runs 40 --threads 1 2>/dev/null | sed "s/^/$v pose /"
    "$bin" bench pose-video "$video" "${models[@]}" 2>/dev/null | tail -1 | sed "s/^/$v video /"
    "$bin" bench train --config "$ROOT/configs/penn-action.yaml" --data "$store" --epochs 2 --threads 1 2>/dev/null | tail -1 | sed "s/^/$v train /"
    s=$(date +%s.%N); "$bin" windows "$store" --output "$work/w-$v.h5" >/dev/null 2>&1; e=$(date +%s.%N)
    echo "$v windows {\"seconds\": $(python3 -c "print($e - $s)")}"
  done
done | tee "$out"
python3 - "$out" <<'PY'
import collections, json, statistics, sys
d = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    v, kind, text = line.split(" ", 2)
    o = json.loads(text)
    if kind == "pose": d[o["model"] + " ms"][v].append(o["median_ms"])
    elif kind == "video": d["pose-video ms a frame"][v].append(o["pipeline_ms"])
    elif kind == "train": d["train s an epoch"][v].append(o["seconds_per_epoch"]); d["model ms a window"][v].append(o["ms_per_window"])
    else: d["windows s"][v].append(o["seconds"])
for k, vv in d.items():
    c, u = statistics.median(vv["C"]), statistics.median(vv["U"])
    print(f"{k:24s} checked {c:8.3f}  unchecked {u:8.3f}  checked/unchecked {c / u:.2f}")
PY
