#!/usr/bin/env bash
# The live page under a flood: `poseact live --serve` plays a video as a live 30 fps source
# while page_flood.py sends, for the length of the video and on 127.0.0.1 only, 1,000 idle
# connections, frame and state requests back to back, 1 MB URLs, 1 MB WebSocket messages and
# cross-origin upgrades. Prints the live run's summary line (fps, dropped frames, latency)
# and the flood's own line (what was sent, how the page answered).
#
#   notebooks-free-scripts/page-flood.sh MODEL [VIDEO]   (default VIDEO: montage_01 of the push-ups)
#
# FLOOD_SECONDS: how long the flood lasts (default 18, within montage_01's 21.9 s).
# FLOOD_RATE: requests a second per flooding client (default 20; 10 clients, and 1,000 idle connections).
# POSEACT_SHARED: the shared folder (default ../shared). POSEACT_BIN: a poseact binary to use
# as it is; without it the script builds .build/release/poseact first.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${POSEACT_SHARED:-../shared}
MODEL=${1:?usage: page-flood.sh MODEL [VIDEO]}
VIDEO=${2:-$SHARED/data/pushups/montage/montage_01.mp4}
[ -f "$VIDEO" ] || { echo "page-flood.sh: $VIDEO not found: set POSEACT_SHARED or give a video" >&2; exit 1; }
if [ -n "${POSEACT_BIN:-}" ]; then BIN=$POSEACT_BIN; else swift build -c release --product poseact >&2; BIN=.build/release/poseact; fi
WORK=$(mktemp -d)
trap 'kill -INT $LIVE 2>/dev/null || true; rm -rf "$WORK"' EXIT
"$BIN" live --model "$MODEL" --input "$VIDEO" --serve 0 --json > "$WORK/out" 2> "$WORK/err" &
LIVE=$!
for _ in $(seq 100); do grep -q "live page:" "$WORK/err" && break; sleep 0.1; done
PORT=$(sed -n 's|.*live page: http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$WORK/err" | head -1)
[ -n "$PORT" ] || { echo "page-flood.sh: the page did not start:" >&2; cat "$WORK/err" >&2; exit 1; }
FLOOD=${FLOOD_SECONDS:-18}   # montage_01 plays for 21.9 s
python3 notebooks-free-scripts/page_flood.py "$PORT" --seconds "$FLOOD" --rate "${FLOOD_RATE:-20}" > "$WORK/flood" &
FLOODER=$!
for _ in $(seq 600); do grep -q '"type": "summary"' "$WORK/out" && break; sleep 0.1; done
wait $FLOODER
grep '"type": "summary"' "$WORK/out"
cat "$WORK/flood"
