#!/usr/bin/env bash
# The studio's whole path in a real browser (studio_browser.py: Playwright from PyPI in a
# throw-away venv, driving the system's chromium), on 14 push-up clips from
# ../shared/data/pushups (the 5 + 5 shortest training clips, the 2 + 2 shortest test clips)
# and a montage. Prints the script's JSON line.
#   studio-browser.sh POSEACT [SCREENSHOTS_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/notebooks-free-scripts/lib/venv.sh"
poseact="$(realpath "$1")"
shots="${2:-}"
shared="${POSEACT_SHARED:-$ROOT/../shared}"
pushups="$shared/data/pushups"
[[ -d "$pushups/train" ]] || { echo "no push-up data at $pushups (set POSEACT_SHARED)" >&2; exit 1; }
chromium="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
[[ -n "$chromium" ]] || { echo "no chromium (on Debian: apt-get install chromium)" >&2; exit 1; }
yardstick_venv "${POSEACT_PLAYWRIGHT_VENV:-/tmp/poseact-playwright-venv}" "import playwright" "playwright==1.65.2" >&2

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for split in train test; do
    count=5; [[ "$split" == test ]] && count=2
    for label in correct wrong; do
        mkdir -p "$work/clips/$split/$label"
        # The shortest clips (by size), named in a fixed order: the same data every run.
        ls -S "$pushups/$split/$label"/*.mp4 > "$work/list"
        tail -n "$count" "$work/list" | while read -r clip; do cp "$clip" "$work/clips/$split/$label/"; done
    done
done
mkdir -p "$work/run"
[[ -n "$shots" ]] && mkdir -p "$shots"
"$PY" "$ROOT/notebooks-free-scripts/studio_browser.py" "$poseact" "$chromium" "$work/clips" "$pushups/montage/montage_01.mp4" "$work/run" ${shots:+"$shots"}
