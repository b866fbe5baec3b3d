#!/usr/bin/env bash
# Builds poseact for people without a Swift toolchain: a release build with the Swift runtime
# linked in (--static-swift-stdlib), packed twice from one staged tree:
#   dist/poseact_<version>_amd64.deb            (Depends: the runtime libraries it links, by dpkg-shlibdeps)
#   dist/poseact-<version>-linux-x86_64.tar.gz  (the same files under bin/ and share/, for other distributions)
# with the two BlazePose models (checked by sha256), the shipped configs, shell completions
# and man pages generated from the commands' --help (swift-argument-parser's generate-manual).
# Needs what setup.sh installs, plus dpkg-dev (installed here if missing).
#   package.sh [OUT_DIR]      (default dist/)
# Env: POSEACT_MODELS_DIR (where the models are, default <repo>/models),
#      POSEACT_PACKAGE_BUILD (the build folder, default <repo>/.build/package).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="$(mkdir -p "${1:-dist}" && cd "${1:-dist}" && pwd)"
BUILD="${POSEACT_PACKAGE_BUILD:-$ROOT/.build/package}"
MODELS_DIR="${POSEACT_MODELS_DIR:-$ROOT/models}"
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
source notebooks-free-scripts/lib/models.sh
say() { echo "package: $*"; }
die() { echo "package: ERROR: $*" >&2; exit 1; }

VERSION="$(sed -n 's/^let poseactVersion = "\(.*\)"$/\1/p' Sources/poseact/Version.swift)"
[[ -n "$VERSION" ]] || die "no version in Sources/poseact/Version.swift"
ARCH="$(dpkg --print-architecture)"
[[ "$ARCH" == amd64 ]] || die "this script packs amd64 only (this machine: $ARCH)"
models_ok "$MODELS_DIR" || die "the BlazePose models in $MODELS_DIR are missing or not the expected files: run notebooks-free-scripts/setup.sh"
if ! command -v dpkg-shlibdeps >/dev/null 2>&1; then
    SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    say "installing dpkg-dev (dpkg-shlibdeps)"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dpkg-dev >/dev/null \
        || { $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dpkg-dev >/dev/null; }
fi

# ---- 1. The binary, with the Swift runtime inside ---------------------------
say "building poseact $VERSION (release, Swift runtime linked statically) in $BUILD"
mkdir -p "$BUILD"
LOG="$BUILD/package-build.log"
build() { swift build -c release --scratch-path "$BUILD" "$@" >"$LOG" 2>&1 || { tail -n 30 "$LOG" >&2; die "swift build $* failed (the whole log: $LOG)"; }; }
build --static-swift-stdlib --product poseact
BIN="$BUILD/release/poseact"
# (Whole outputs, never `cmd | grep -q`: with pipefail, grep leaving early can fail the pipe.)
LIBS="$(ldd "$BIN")"
if [[ "${LIBS,,}" == *swift* ]]; then
    grep -i swift <<<"$LIBS" >&2
    die "$BIN still loads a Swift library"
fi
# generate-manual: swift-argument-parser's own tool, which reads a command's --help as JSON.
build --product generate-manual
MANUAL="$BUILD/release/generate-manual"

# ---- 2. One staged tree -----------------------------------------------------
STAGE="$(mktemp -d "${TMPDIR:-/tmp}/poseact-package.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
ROOTFS="$STAGE/deb"
SHARE="$ROOTFS/usr/share"
install -D -m 0755 "$BIN" "$ROOTFS/usr/bin/poseact"
strip --strip-unneeded "$ROOTFS/usr/bin/poseact"
install -d "$SHARE/poseact/models" "$SHARE/poseact/configs" "$SHARE/man/man1" "$SHARE/doc/poseact"
for m in "${MODELS[@]}"; do
    IFS='|' read -r name _ sum <<<"$m"
    install -m 0644 "$MODELS_DIR/$name" "$SHARE/poseact/models/$name"
    echo "$sum  $name" >>"$SHARE/poseact/models/SHA256SUMS"
done
(cd "$SHARE/poseact/models" && sha256sum --quiet -c SHA256SUMS) || die "a model changed while being copied"
install -m 0644 configs/*.yaml configs/README.md "$SHARE/poseact/configs/"
"$ROOTFS/usr/bin/poseact" --generate-completion-script bash | install -D -m 0644 /dev/stdin "$SHARE/bash-completion/completions/poseact"
"$ROOTFS/usr/bin/poseact" --generate-completion-script zsh | install -D -m 0644 /dev/stdin "$SHARE/zsh/vendor-completions/_poseact"
"$ROOTFS/usr/bin/poseact" --generate-completion-script fish | install -D -m 0644 /dev/stdin "$SHARE/fish/vendor_completions.d/poseact.fish"
# One page per command (poseact.1, poseact.extract.1, …), dated by the last commit for reproducible bytes.
DATE="$(git log -1 --format=%cs 2>/dev/null || date +%F)"
"$MANUAL" "$ROOTFS/usr/bin/poseact" --multi-page --date "$DATE" --authors "the poseact developers" --output-directory "$SHARE/man/man1"
ls "$SHARE/man/man1"/poseact.1 >/dev/null || die "generate-manual wrote no poseact.1"
gzip -9n "$SHARE/man/man1"/*.1
cp README.md "$SHARE/doc/poseact/README.md"
cat >"$SHARE/doc/poseact/copyright" <<EOF
poseact $VERSION. The BlazePose models in /usr/share/poseact/models are Google's, from
MediaPipe ($MODELS_WHEEL), under the Apache License 2.0 (/usr/share/common-licenses/Apache-2.0).
EOF

# ---- 3. The Debian package --------------------------------------------------
# dpkg-shlibdeps names the packages of the libraries the binary loads, with the versions
# their symbols need (it wants a debian/control beside it).
mkdir -p "$STAGE/shlibs/debian"
printf 'Source: poseact\n\nPackage: poseact\nArchitecture: %s\n' "$ARCH" >"$STAGE/shlibs/debian/control"
DEPENDS="$(cd "$STAGE/shlibs" && dpkg-shlibdeps -O -e "$ROOTFS/usr/bin/poseact" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')"
[[ -n "$DEPENDS" ]] || die "dpkg-shlibdeps found no dependencies"
for lib in libopenblas libhdf5 libavformat; do
    [[ "$DEPENDS" == *"$lib"* ]] || die "Depends lacks $lib: $DEPENDS"
done
install -d "$ROOTFS/DEBIAN"
cat >"$ROOTFS/DEBIAN/control" <<EOF
Package: poseact
Version: $VERSION
Architecture: $ARCH
Maintainer: poseact developers <poseact@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$ROOTFS" | cut -f1)
Depends: $DEPENDS
Section: science
Priority: optional
Description: train human-action classifiers from videos and run them live
 poseact poses people in videos with Google's BlazePose (its own TFLite engine, no ML
 runtime), trains temporal and graph networks on the keypoints, evaluates them, and runs
 them live on a camera or stream: labels, repetitions and joint angles per person, and
 the trajectories of thrown objects. Start with: poseact demo
EOF
DEB="$OUT/poseact_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group -Zxz --build "$ROOTFS" "$DEB" >/dev/null
say "$DEB: $(du -h "$DEB" | cut -f1)"

# ---- 4. The tarball: the same files, usr/ as the top folder -----------------
NAME="poseact-$VERSION-linux-x86_64"
mkdir "$STAGE/$NAME"
cp -a "$ROOTFS/usr/." "$STAGE/$NAME/"
cat >"$STAGE/$NAME/INSTALL" <<EOF
poseact $VERSION for x86-64 Linux. Unpack anywhere and run bin/poseact: it finds its models
in share/poseact/models beside it. It needs these runtime libraries (Debian/Ubuntu package
names; on other distributions, their OpenBLAS, LAPACKE, HDF5 and FFmpeg libraries):
  $DEPENDS
Shell completions are under share/bash-completion, share/zsh and share/fish, man pages
under share/man (MANPATH=\$PWD/share/man man poseact).
EOF
TARBALL="$OUT/$NAME.tar.gz"
tar --owner=0 --group=0 --numeric-owner --sort=name -C "$STAGE" -czf "$TARBALL" "$NAME"
say "$TARBALL: $(du -h "$TARBALL" | cut -f1)"
say "binary $(du -h "$ROOTFS/usr/bin/poseact" | cut -f1); Depends: $DEPENDS"
