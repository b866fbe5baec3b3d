#!/usr/bin/env bash
# poseact's landmarks against MediaPipe 0.10.14's own, on push-up video frames that are
# NOT the fixtures (goal: within 2 px median and 5 px at the 95th percentile), plus the
# fixture images as a sanity check (expected within 0.5 px), reported separately.
#
#   notebooks-free-scripts/compare-mediapipe.sh [--every K] [--videos N] [--work DIR]
#
#   --every K   take every K-th frame of each video (default 15: frames 0, 15, 30, ...)
#   --videos N  only the first N test videos, name-sorted (default: all 45)
#   --work DIR  where frames and JSON lines go (default ${TMPDIR:-/tmp}/poseact-mediapipe-compare,
#               emptied first); kept afterwards so single frames can be looked at again
#
# Both sides get the very same PNGs (ffmpeg CLI, RGB24) and treat each one as a still
# image: detector + landmarks, no tracking (MediaPipe's static_image_mode=True).
# MediaPipe lives in a throw-away venv: a yardstick only, never a dependency of poseact.
# Env: POSEACT_MEDIAPIPE_VENV (default ${TMPDIR:-/tmp}/poseact-mediapipe-venv, reused),
#      POSEACT_MODELS_DIR (default <repo>/models, filled by setup.sh), SHARED (default <repo>/../shared).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HERE="$ROOT/notebooks-free-scripts"
SHARED="$(cd "${SHARED:-$ROOT/../shared}" && pwd)"
VENV="${POSEACT_MEDIAPIPE_VENV:-${TMPDIR:-/tmp}/poseact-mediapipe-venv}"
WORK="${TMPDIR:-/tmp}/poseact-mediapipe-compare"
EVERY=15
NVIDEOS=0

while (($#)); do
    case "$1" in
        --every) EVERY="${2:?--every needs a number}"; shift 2 ;;
        --videos) NVIDEOS="${2:?--videos needs a number}"; shift 2 ;;
        --work) WORK="${2:?--work needs a folder}"; shift 2 ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "unknown option: $1" >&2; exit 2 ;;
    esac
done

# ---- MediaPipe in its venv ------------------------------------------------------------
# mediapipe 0.10.14 pulls numpy 2.x today, and its legacy pose solution works with it
# (it reproduces the fixtures' stored MediaPipe answers exactly), so numpy is not pinned.
source "$(dirname "${BASH_SOURCE[0]}")/lib/venv.sh"
yardstick_venv "$VENV" 'import mediapipe, PIL' mediapipe==0.10.14 pillow

# ---- the ffmpeg CLI, to cut frames. Installed here only for this comparison script:
# ---- poseact itself links the FFmpeg libraries and does not need the command. ----------
source "$(dirname "${BASH_SOURCE[0]}")/lib/system.sh"
command -v ffmpeg >/dev/null 2>&1 || need_packages ffmpeg

# ---- poseact, built fresh (incremental) -----------------------------------------------
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
echo "building poseact (release)"
(cd "$ROOT" && swift build -c release --product poseact) >&2
BIN="$ROOT/.build/release/poseact"

# ---- frames: every K-th frame of each test video, as RGB24 PNG -------------------------
rm -rf "$WORK"; mkdir -p "$WORK/frames"
mapfile -t videos < <(ls "$SHARED"/data/pushups/test/*/*.mp4 | sort)
((NVIDEOS > 0)) && videos=("${videos[@]:0:NVIDEOS}")
echo "extracting every ${EVERY}th frame of ${#videos[@]} videos into $WORK/frames"
for v in "${videos[@]}"; do
    out="$WORK/frames/$(basename "$(dirname "$v")")_$(basename "$v" .mp4)"   # e.g. correct_correct39
    mkdir -p "$out"
    ffmpeg -nostdin -loglevel error -i "$v" -vf "select=not(mod(n\,$EVERY))" -fps_mode passthrough \
        -pix_fmt rgb24 "$out/%04d.png"
    # Rename output number i (1-based) to the video's 0-based frame index: f0000, f0015, ...
    for f in "$out"/[0-9]*.png; do
        i=$((10#$(basename "$f" .png) - 1))
        mv "$f" "$out/$(printf 'f%04d' $((i * EVERY))).png"
    done
done
mapfile -t frames < <(ls "$WORK"/frames/*/*.png)
# The fixtures' PNGs (for the two JPEGs, the .decoded.png that holds their exact pixels).
mapfile -t fixtures < <(ls "$SHARED"/fixtures/blazepose/images/*.png)
echo "${#frames[@]} frames + ${#fixtures[@]} fixture images"

# ---- landmarks from both ----------------------------------------------------------------
echo "running MediaPipe"
"$PY" "$HERE/mediapipe_landmarks.py" "${fixtures[@]}" "${frames[@]}" > "$WORK/mediapipe.jsonl" 2> "$WORK/mediapipe.log"
echo "running poseact"
(cd "$ROOT" && "$BIN" pose "${fixtures[@]}" "${frames[@]}" --max-people 1) > "$WORK/poseact.jsonl" 2> "$WORK/poseact.log"

# ---- compare ----------------------------------------------------------------------------
echo
"$PY" - "$WORK/mediapipe.jsonl" "$WORK/poseact.jsonl" "$SHARED/fixtures/" <<'PYEOF'
import json, sys
import numpy as np

def load(p):
    return {r["input"]: r for r in map(json.loads, open(p)) if r.get("input")}

mp_rows, pa_rows, fixture_dir = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]

def compare(inputs):
    """Distances (px) of the 33 landmarks on every image where both found a person."""
    s = dict(frames=len(inputs), both=0)
    d_all, d_vis, per_frame, only = [], [], [], {"only_mediapipe": [], "only_poseact": []}
    for k in inputs:
        m, p = mp_rows[k]["persons"], pa_rows[k]["persons"]
        if m and not p: only["only_mediapipe"].append(k)
        if p and not m: only["only_poseact"].append(k)
        if not (m and p): continue
        s["both"] += 1
        a = np.array([[l["x"], l["y"]] for l in m[0]["landmarks"]])
        b = np.array([[l["x"], l["y"]] for l in p[0]["landmarks"]])
        d = np.hypot(*(a - b).T)
        vis = np.array([l["visibility"] for l in m[0]["landmarks"]]) > 0.5   # MediaPipe's visibility
        d_all.append(d); d_vis.append(d[vis])
        per_frame.append((float(d.max()), k, m[0]["landmarks"][int(d.argmax())]["name"]))
    A = np.concatenate(d_all) if d_all else np.array([np.nan])
    V = np.concatenate(d_vis) if d_vis and sum(map(len, d_vis)) else np.array([np.nan])
    r = lambda x: round(float(x), 3)
    s.update({side: len(ks) for side, ks in only.items()})
    s.update(median_px=r(np.median(A)), p95_px=r(np.percentile(A, 95)), max_px=r(A.max()),
             median_px_visible=r(np.median(V)), p95_px_visible=r(np.percentile(V, 95)),
             max_px_visible=r(V.max()))
    return s, sorted(per_frame, reverse=True), d_all, only

keys = sorted(set(mp_rows) & set(pa_rows))
missing = set(mp_rows) ^ set(pa_rows)
if missing: print(f"warning: {len(missing)} images answered by one side only: {sorted(missing)[:3]} ...")
fix = [k for k in keys if k.startswith(fixture_dir)]
other = [k for k in keys if not k.startswith(fixture_dir)]
sf, _, _, only_fix = compare(fix)
so, worst, d_all, only = compare(other)

cols = ["frames", "both", "only_mediapipe", "only_poseact", "median_px", "p95_px", "max_px",
        "median_px_visible", "p95_px_visible", "max_px_visible"]
print(f"{'':<22}{'fixtures':>12}{'other frames':>14}")
for c in cols:
    print(f"{c:<22}{sf[c]:>12}{so[c]:>14}")
ok = so["median_px"] <= 2 and so["p95_px"] <= 5
print(f"\nother frames, goal median <= 2 px and p95 <= 5 px: {'met' if ok else 'NOT met'}")
print(f"fixtures, sanity max <= 0.5 px: {'ok' if sf['max_px'] <= 0.5 else 'NOT ok'}"
      f" ({sf['only_mediapipe'] + sf['only_poseact']} disagree on whether there is a person)")

print("\nworst 5 other frames (max over the 33 landmarks, and which landmark):")
for mx, k, name in worst[:5]:
    print(f"  {mx:9.2f} px  {name:<18} {k}")
if d_all:  # which landmarks are off most, over all compared frames
    D = np.vstack(d_all)
    names = [l["name"] for l in next(iter(mp_rows[k] for k in other if mp_rows[k]["persons"]))["persons"][0]["landmarks"]]
    p95 = np.percentile(D, 95, axis=0)
    print("landmarks with the largest p95 over other frames:",
          ", ".join(f"{names[i]} {p95[i]:.2f}" for i in np.argsort(-p95)[:5]))
for side, ks in list(only.items()) + [(f"{s} (fixtures)", ks) for s, ks in only_fix.items()]:
    if ks: print(f"{side} found a person in: " + " ".join(ks[:10]) + (" ..." if len(ks) > 10 else ""))

print()
print(json.dumps({**{c: so[c] for c in cols[:9]}, "fixtures": sf}))
PYEOF
echo "frames and JSON lines kept in $WORK"
