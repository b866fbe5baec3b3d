#!/usr/bin/env bash
# package.sh's files on a system they were not built on: a bare Debian 13 root made with
# `debootstrap --variant=minbase` (no FFmpeg, HDF5, OpenBLAS, X11 or Python in it), entered
# with chroot in a mount namespace of its own:
#   1. the tarball: ldd shows only the C library, libgcc_s and libstdc++; `poseact demo`; push-up
#      clips through extract, train and `live --input --serve` (the page, its state and a frame
#      fetched while it runs); a clip in each container and codec cameras and phones make
#      (HEVC in MOV with a rotation, read upright; H.264 in MP4, VP9 in WebM, AV1, MJPEG in
#      AVI) extracts;
#   2. the .deb: apt-get installs it there (it needs libc6, libgcc-s1 and libstdc++6 only);
#   3. the wheel: pip installs it into a venv there, and its poseact poses a clip.
#   4. with an aarch64 tarball in DIST_DIR: on a bare arm64 Debian 13 root, under qemu-user
#      (binfmt), ldd shows only the C library's parts; the fixture pictures' poses match the
#      x86-64 binary's within 0.5 px; train, evaluate and export run (and, with
#      POSEACT_QEMU_DEMO=1, `poseact demo`: over an hour emulated).
# The bare roots are made once and kept (POSEACT_ROOTS, default /var/cache/poseact/roots);
# every run works in a fresh copy of it.
#   portable-check.sh [DIST_DIR]   (default dist/; root)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIST="$(cd "${1:-$ROOT/dist}" && pwd)"
SHARED="${POSEACT_SHARED:-$ROOT/../shared}"
ROOTS="${POSEACT_ROOTS:-/var/cache/poseact/roots}"
SUITE=trixie
say() { echo "portable-check: $*"; }
die() { echo "portable-check: FAILED: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "run it as root (debootstrap, chroot)"
newest() { ls $1 2>/dev/null | tail -n 1 || true; }
TARBALL="$(newest "$DIST/poseact-*-linux-x86_64.tar.gz")"
DEB="$(newest "$DIST/poseact_*_amd64.deb")"
WHEEL="$(newest "$DIST/poseact-*-manylinux_*_x86_64.whl")"
[[ -n "$TARBALL" && -n "$DEB" && -n "$WHEEL" ]] || die "$DIST lacks the x86-64 tarball, .deb or wheel: run package.sh first"
PUSHUPS="$SHARED/data/pushups"
[[ -d "$PUSHUPS/train/correct" ]] || die "no push-up videos in $PUSHUPS"
source "$ROOT/notebooks-free-scripts/lib/system.sh"
# debootstrap makes the root; FFmpeg's command line makes the codec clips (on the host only).
need_packages debootstrap ffmpeg

# ---- The bare root, made once --------------------------------------------------
PRISTINE="$ROOTS/$SUITE-amd64-minbase"
if [[ ! -f "$PRISTINE/.complete" ]]; then
    say "debootstrap --variant=minbase $SUITE (once; kept in $PRISTINE)"
    rm -rf "$PRISTINE" "$PRISTINE.partial"; mkdir -p "$ROOTS"
    start=$(date +%s)
    debootstrap --variant=minbase "$SUITE" "$PRISTINE.partial" http://deb.debian.org/debian >"$ROOTS/debootstrap-$SUITE.log" 2>&1 \
        || { tail -n 20 "$ROOTS/debootstrap-$SUITE.log" >&2; die "debootstrap $SUITE failed"; }
    touch "$PRISTINE.partial/.complete"
    mv "$PRISTINE.partial" "$PRISTINE"
    say "made in $(( $(date +%s) - start )) s"
fi
WORK="$(mktemp -d "${TMPDIR:-/tmp}/poseact-portable-check.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
R="$WORK/root"
cp -a "$PRISTINE" "$R"
say "a fresh copy of the bare Debian $(cat "$R/etc/debian_version") root: $(du -sh "$R" | cut -f1)"
mkdir -p "$R/check/clips/correct" "$R/check/clips/wrong" "$R/check/codecs/correct"
cp "$TARBALL" "$DEB" "$WHEEL" "$R/check/"
# The three shortest training clips of each label; the shortest test clip for live.
for label in correct wrong; do
    for f in $(ls -S "$PUSHUPS/train/$label" | tail -n 3); do cp "$PUSHUPS/train/$label/$f" "$R/check/clips/$label/"; done
done
LIVE_CLIP="$(ls -S "$PUSHUPS"/test/correct/*.mp4 | tail -n 1)"
cp "$LIVE_CLIP" "$R/check/live.mp4"
# A clip in each container and codec a camera or phone makes, from one push-up clip.
SOURCE_CLIP="$(ls -S "$PUSHUPS"/train/correct/*.mp4 | tail -n 4 | head -n 1)"
enc() { ffmpeg -nostdin -loglevel error -y -i "$SOURCE_CLIP" -t 3 -an "$@" || die "ffmpeg $* failed"; }
C="$R/check/codecs/correct"
# A phone stores the sensor's frames turned and says so in the display matrix: the frames
# turned 90° clockwise, then, on stream copy, a matrix that turns them back 90°
# counter-clockwise as FFmpeg's own players do. FFmpeg 6.1 and later write it from the input
# option -display_rotation 90; FFmpeg 5.1 (Debian 12's) has no such option and writes it from
# the rotate=90 tag, which the later ones ignore (a clip made so is not turned at all). The
# matrix is then read back with ffprobe, so a machine whose ffmpeg wrote none says so here.
# The same seconds upright in H.264 are the reference: read with its rotation, the phone
# clip's person is where the reference's is; without, the clip is taller than wide; turned
# wrongly, elsewhere.
enc -vf "transpose=1,scale=-2:480" -c:v libx265 -preset ultrafast -x265-params log-level=error -tag:v hvc1 "$WORK/phone.mov"
PHONE="$C/phone-hevc-rotated.mov"
ffmpeg -nostdin -loglevel error -y -display_rotation:v:0 90 -i "$WORK/phone.mov" -c copy "$PHONE" 2>/dev/null \
    || ffmpeg -nostdin -loglevel error -y -i "$WORK/phone.mov" -c copy -metadata:s:v:0 rotate=90 "$PHONE" \
    || die "the phone clip could not be remuxed with its rotation"
rotation="$(ffprobe -v error -select_streams v:0 -show_streams "$PHONE" | sed -n 's/^rotation=//p' | head -n 1)"
[[ "$rotation" == 90 || "$rotation" == 90.0* ]] \
    || die "the host's $(ffmpeg -version | head -n 1 | cut -d' ' -f1-3) wrote the phone clip with rotation '${rotation:-none}', not 90: the check needs a clip that says how to turn it"
say "the phone clip's display matrix: $rotation° counter-clockwise ($(command -v ffmpeg): $(ffmpeg -version | head -n 1 | cut -d' ' -f3))"
enc -vf scale=480:-2 -c:v libx264 -preset ultrafast "$C/upright-h264.mp4"
enc -vf scale=-2:360 -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 800k "$C/vp9.webm"
enc -vf scale=-2:360 -c:v libaom-av1 -cpu-used 8 -crf 40 -b:v 0 "$C/av1.mkv"
enc -vf scale=-2:360 -c:v mjpeg -q:v 4 "$C/mjpeg.avi"
cat >"$R/check/run.sh" <<'SCRIPT'
#!/bin/bash
set -euo pipefail
say() { echo "portable-check (Debian $(cat /etc/debian_version)): $*"; }
die() { echo "portable-check: FAILED: $*" >&2; exit 1; }
cd /check
for lib in libavformat libhdf5 libopenblas libX11 libswift; do
    [[ "$(ldconfig -p)" != *"$lib"* ]] || die "the root is not bare: it has $lib"
done
command -v python3 >/dev/null && die "the root is not bare: it has python3"
say "bare: no FFmpeg, HDF5, OpenBLAS, X11, Swift or Python"

# 1. The tarball.
mkdir -p /opt && tar -xzf poseact-*-linux-x86_64.tar.gz -C /opt
P="$(ls -d /opt/poseact-*/bin)/poseact"
deps="$(ldd "$P")"
say "ldd $P:"; echo "$deps" | sed 's/^/    /'
while read -r lib _; do
    case "$lib" in linux-vdso.so.1|libc.so.6|libm.so.6|libgcc_s.so.1|libstdc++.so.6|/lib64/ld-linux-x86-64.so.2) ;;
        *) die "the binary loads $lib" ;; esac
done <<<"$deps"
mkdir demo && cd demo
start=$EPOCHREALTIME
"$P" demo >demo.log 2>&1 || { tail -n 20 demo.log >&2; die "poseact demo failed"; }
say "poseact demo: exit 0 in $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s; last line: $(tail -n 1 demo.log)"
cd /check
start=$(date +%s)
"$P" extract clips --output pushups.h5 >extract.log 2>&1 || { cat extract.log >&2; die "extract failed"; }
say "extract: $(tail -n 1 extract.log)"
"$P" train --config "$(dirname "$P")/../share/poseact/configs/pushups.yaml" --data pushups.h5 --output run --epochs 3 >train.log 2>&1 \
    || { tail -n 20 train.log >&2; die "train failed"; }
say "train: $(tail -n 1 train.log)"
"$P" live --model run --input live.mp4 --serve 18471 >live.log 2>&1 &
live=$!
trap 'kill "$live" 2>/dev/null || true' EXIT
kill -0 "$live" 2>/dev/null || { cat live.log >&2; die "live --serve did not start"; }
get() {   # get PATH: the body of http://127.0.0.1:18471/PATH (bash's own TCP; the root has no curl)
    exec 3<>/dev/tcp/127.0.0.1/18471 || return 1
    printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1:18471\r\nConnection: close\r\n\r\n' "$1" >&3
    cat <&3 >"response"; exec 3<&-
}
page=""
for _ in $(seq 1 100); do
    if get / 2>/dev/null && [[ "$(head -n 1 response)" == *" 200 "* ]]; then page=ok; break; fi
    sleep 0.2
done
[[ -n "$page" ]] || { cat live.log >&2; die "the live page did not answer"; }
grep -qi "<html" response || die "the live page is not a page"
sleep 2
get /state.json && grep -q '"' response || die "no state.json"
get /frame.jpg && [[ "$(head -n 1 response)" == *" 200 "* ]] || die "no frame.jpg"
kill -0 "$live" 2>/dev/null || { cat live.log >&2; die "live --serve ended while its page was read"; }
kill -INT "$live"; wait "$live" || true; trap - EXIT
say "live --input --serve: the page, state.json and frame.jpg answered; $(grep -m1 '^summary' live.log || tail -n 1 live.log)"
say "push-up clips through extract, train and live: $(( $(date +%s) - start )) s"
"$P" extract codecs --output codecs.h5 >codecs.log 2>&1 || { cat codecs.log >&2; die "extract of the codec clips failed"; }
"$P" dataset export codecs.h5 --csv codecs.csv >/dev/null
for f in phone-hevc-rotated.mov upright-h264.mp4 vp9.webm av1.mkv mjpeg.avi; do
    [[ "$(<codecs.csv)" == *"$f"* ]] || die "$f was not extracted"
done
# The phone clip read with its rotation: as wide as the source (columns 5 and 6: width, height).
awk -F, '$1 ~ /phone-hevc-rotated/ && $5 != "" { if ($5 + 0 <= $6 + 0) bad = 1; n++ } END { exit (n == 0 || bad) }' codecs.csv \
    || die "phone-hevc-rotated.mov was not turned by its display rotation (its frames are taller than wide)"
# and turned the right way: its first frame's nose where the upright reference's is (columns 8
# and 9: nose_x, nose_y), within 5 % of the width (the two encoders' losses move it a little).
awk -F, '$4 == "0" && $1 ~ /phone-hevc-rotated/ { px = $8; py = $9; w = $5 } $4 == "0" && $1 ~ /upright-h264/ { rx = $8; ry = $9 }
    END { d = sqrt((px - rx) ^ 2 + (py - ry) ^ 2); printf "    phone clip: nose %.0f,%.0f; upright reference %.0f,%.0f (%.1f px apart)\n", px, py, rx, ry, d
          exit (w == "" || d > 0.05 * w) }' codecs.csv \
    || die "phone-hevc-rotated.mov was turned the wrong way: its person is not where the upright reference's is"
say "codecs: $(tail -n 1 codecs.log)"
"$P" dataset inspect codecs.h5 >inspect.txt
cat inspect.txt | sed -n '1,4p' | sed 's/^/    /'

# 2. The Debian package.
apt-get update -qq >/dev/null 2>&1
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ./poseact_*_amd64.deb >apt.log 2>&1 \
    || { tail -n 20 apt.log >&2; die "apt-get install of the .deb failed"; }
say ".deb installed: $(dpkg-query -W -f='${Package} ${Version}, Depends: ${Depends}' poseact); $(poseact --version)"
for lib in libavformat libhdf5 libopenblas libX11; do
    [[ "$(ldconfig -p)" != *"$lib"* ]] || die "installing the .deb brought $lib"
done
poseact model inspect /usr/share/poseact/models/pose_landmark_full.tflite >/dev/null || die "the installed poseact cannot read its model"

# 3. The wheel, into a venv.
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >>apt.log 2>&1 \
    || { tail -n 20 apt.log >&2; die "python3-venv would not install"; }
python3 -m venv /opt/venv
/opt/venv/bin/pip install --no-index --disable-pip-version-check -q ./poseact-*.whl || die "pip install of the wheel failed"
apt-get remove -y -qq poseact >/dev/null; hash -r
[[ "$(command -v poseact || true)" == "" ]] || die "a poseact is still on PATH"
PATH="/opt/venv/bin:$PATH" poseact --version >/dev/null
PATH="/opt/venv/bin:$PATH" poseact pose live.mp4 --max-people 1 >poses.jsonl 2>pose.log || { cat pose.log >&2; die "the wheel's poseact could not pose a clip"; }
say "wheel: $(PATH="/opt/venv/bin:$PATH" poseact --version) from $(command -v /opt/venv/bin/poseact), models in /opt/venv/share/poseact/models; posed $(wc -l <poses.jsonl) lines"
SCRIPT
chmod +x "$R/check/run.sh"
cp /etc/resolv.conf "$R/etc/resolv.conf"
in_root --sys --tmp "$R" /check/run.sh
# ---- The aarch64 tarball, under qemu-user, on a bare arm64 Debian 13 root ---------------
ARM_TARBALL="$(newest "$DIST/poseact-*-linux-aarch64.tar.gz")"
if [[ -n "$ARM_TARBALL" ]]; then
    need_packages qemu-user-static binfmt-support
    [[ -e /proc/sys/fs/binfmt_misc/register ]] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
    [[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]] || die "qemu-aarch64 is not registered with binfmt_misc"
    ARM_PRISTINE="$ROOTS/$SUITE-arm64-minbase"
    if [[ ! -f "$ARM_PRISTINE/.complete" ]]; then
        say "debootstrap --variant=minbase --arch=arm64 $SUITE (once, its second stage under qemu-user; kept in $ARM_PRISTINE)"
        rm -rf "$ARM_PRISTINE" "$ARM_PRISTINE.partial"; start=$(date +%s)
        debootstrap --variant=minbase --arch=arm64 --foreign "$SUITE" "$ARM_PRISTINE.partial" http://deb.debian.org/debian \
            >"$ROOTS/debootstrap-$SUITE-arm64.log" 2>&1 || { tail -n 20 "$ROOTS/debootstrap-$SUITE-arm64.log" >&2; die "debootstrap --arch=arm64 failed"; }
        in_root --no-dev "$ARM_PRISTINE.partial" /debootstrap/debootstrap --second-stage >>"$ROOTS/debootstrap-$SUITE-arm64.log" 2>&1 \
            || { tail -n 20 "$ROOTS/debootstrap-$SUITE-arm64.log" >&2; die "debootstrap's second stage for arm64 failed"; }
        touch "$ARM_PRISTINE.partial/.complete"; mv "$ARM_PRISTINE.partial" "$ARM_PRISTINE"
        say "made in $(( $(date +%s) - start )) s"
    fi
    A="$WORK/arm64-root"
    cp -a "$ARM_PRISTINE" "$A"
    mkdir -p "$A/check/fixtures" && tar -xzf "$ARM_TARBALL" -C "$A/opt"
    cp "$SHARED"/fixtures/blazepose/images/*.png "$A/check/fixtures/"
    cp "$R/check/pushups.h5" "$A/check/"
    cat >"$A/check/run.sh" <<'SCRIPT'
#!/bin/bash
set -euo pipefail
say() { echo "portable-check (Debian $(cat /etc/debian_version), $(uname -m) under qemu-user): $*"; }
die() { echo "portable-check: FAILED: $*" >&2; exit 1; }
for lib in libavformat libhdf5 libopenblas libX11 libswift; do
    [[ "$(ldconfig -p)" != *"$lib"* ]] || die "the arm64 root is not bare: it has $lib"
done
P="$(ls -d /opt/poseact-*/bin)/poseact"
say "$(file -b "$P" 2>/dev/null || echo "$P")"
deps="$(ldd "$P")"; echo "$deps" | sed 's/^/    /'
while read -r lib _; do
    case "$lib" in linux-vdso.so.1|libc.so.6|libm.so.6|libgcc_s.so.1|libstdc++.so.6|/lib/ld-linux-aarch64.so.1) ;;
        *) die "the aarch64 binary loads $lib" ;; esac
done <<<"$deps"
# Under emulation a frame's pose takes seconds (about 700 times the x86-64 time), so the
# demo's thousands of frames take over an hour: it runs only when asked (POSEACT_QEMU_DEMO=1).
# Always: the pose pipeline on the fixture pictures (FFmpeg, the engine's NEON kernels, the
# decoding), compared with x86-64 below, and training, evaluation and the ONNX export on the
# push-up store the x86-64 binary extracted (HDF5, OpenBLAS, the training kernels).
start=$EPOCHREALTIME
"$P" pose /check/fixtures/*.png >/check/poses-aarch64.jsonl 2>/check/pose.log || { cat /check/pose.log >&2; die "poseact pose failed on the fixtures"; }
say "pose on $(ls /check/fixtures | wc -l) fixture pictures: $(tail -n 1 /check/pose.log) ($(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s emulated)"
say "kernels: $("$P" bench pose --runs 1 --warmup 0 --threads 1 --skip-segmentation | sed -n 's/.*"kernels" *: *"\([^"]*\)".*/\1/p' | sort -u | tr '\n' ' ')"
cd /check
"$P" train --config "$(dirname "$P")/../share/poseact/configs/pushups.yaml" --data pushups.h5 --output run --epochs 1 >train.log 2>&1 \
    || { tail -n 20 train.log >&2; die "train failed under qemu-aarch64"; }
say "train: $(tail -n 1 train.log)"
"$P" evaluate run --data pushups.h5 --split all >evaluate.log 2>&1 || { tail -n 20 evaluate.log >&2; die "evaluate failed under qemu-aarch64"; }
say "evaluate: $(grep -m1 'accuracy' evaluate.log)"
"$P" export run --output run.onnx >export.log 2>&1 || { cat export.log >&2; die "export to ONNX failed under qemu-aarch64"; }
say "export: $(tail -n 1 export.log)"
if [[ "${POSEACT_QEMU_DEMO:-0}" == 1 ]]; then
    mkdir -p /check/demo && cd /check/demo
    start=$EPOCHREALTIME
    "$P" demo >demo.log 2>&1 || { tail -n 20 demo.log >&2; die "poseact demo failed under qemu-aarch64"; }
    say "poseact demo: exit 0 in $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s (emulated)"
    sed 's/^/    /' demo.log
fi
SCRIPT
    chmod +x "$A/check/run.sh"
    in_root --tmp "$A" POSEACT_QEMU_DEMO="${POSEACT_QEMU_DEMO:-0}" /check/run.sh
    # The aarch64 poses of the fixture images against the x86-64 binary's, on the same pixels:
    # within the fixtures' end-to-end bound (0.5 px, shared/fixtures/blazepose/README.md).
    X86="$(ls -d "$R"/opt/poseact-*/bin)/poseact"
    (cd "$A/check" && "$X86" pose fixtures/*.png >"$WORK/poses-x86_64.jsonl" 2>/dev/null) || die "the x86-64 binary could not pose the fixtures"
    sed -i 's|/check/fixtures/|fixtures/|' "$A/check/poses-aarch64.jsonl"
    python3 "$ROOT/notebooks-free-scripts/compare_poses.py" "$WORK/poses-x86_64.jsonl" "$A/check/poses-aarch64.jsonl" 0.5 \
        || die "the aarch64 poses of the fixtures differ from the x86-64 ones beyond 0.5 px"
fi

# With POSEACT_REFERENCE_BINARY (a poseact built against the system's FFmpeg, as `swift build`
# makes it), the codec clips extracted here by it and by the portable binary must give the
# very same keypoints (on this machine: keypoints also follow the C library's libm).
if [[ -n "${POSEACT_REFERENCE_BINARY:-}" ]]; then
    X86="$(ls -d "$R"/opt/poseact-*/bin)/poseact"
    "$POSEACT_REFERENCE_BINARY" extract "$R/check/codecs" --output "$WORK/reference.h5" >/dev/null 2>&1 \
        || die "$POSEACT_REFERENCE_BINARY could not extract the codec clips"
    "$X86" extract "$R/check/codecs" --output "$WORK/portable.h5" >/dev/null 2>&1 || die "the portable binary could not extract the codec clips here"
    "$POSEACT_REFERENCE_BINARY" dataset compare "$WORK/reference.h5" "$WORK/portable.h5" \
        || die "the portable binary's keypoints of the codec clips differ from $POSEACT_REFERENCE_BINARY's"
fi
say "done"
