#!/usr/bin/env bash
# Builds poseact for people without a Swift toolchain: one portable binary that needs nothing
# of the system but the C library (and libgcc_s, libstdc++): the Swift runtime inside
# (--static-swift-stdlib); FFmpeg, dav1d, HDF5, OpenBLAS and zlib inside as static archives
# (portable-libs.sh builds them from Debian's source packages); X11 loaded only by --window.
# For x86-64 (built natively) or aarch64 (cross-built on x86-64 with Debian's swiftlang:
# cross-aarch64.sh). Packed three ways from one staged tree:
#   dist/poseact_<version>_<amd64|arm64>.deb          Depends: libc6, libgcc-s1, libstdc++6 only,
#                                                     so it installs on Debian 12 and 13, Ubuntu
#   dist/poseact-<version>-linux-<x86_64|aarch64>.tar.gz   the same files under bin/ and share/
#   dist/poseact-<version>-py3-none-manylinux_<glibc>_<arch>.whl   pip install: poseact on the venv's PATH
# with the two BlazePose models (checked by sha256), the shipped configs, shell completions,
# man pages generated from the commands' --help (swift-argument-parser's generate-manual),
# and in share/doc/poseact the licence of every part inside and the versions built.
#   package.sh [--arch x86_64|aarch64|all] [OUT_DIR]      (default: all, into dist/)
# On Debian 12 x86-64 (as CI), as root for aarch64 (its build root is entered with chroot).
# Env: POSEACT_MODELS_DIR (where the models are, default <repo>/models),
#      POSEACT_PACKAGE_BUILD (the build folder, default <repo>/.build/portable-<arch>),
#      POSEACT_PORTABLE_CACHE (where portable-libs.sh keeps the static libraries),
#      POSEACT_ROOTS (where cross-aarch64.sh keeps its build root and sysroot).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET=all
if [[ "${1:-}" == --arch ]]; then TARGET="${2:-}"; shift 2; fi
if [[ "$TARGET" == all ]]; then
    bash "${BASH_SOURCE[0]}" --arch x86_64 "$@" || exit $?
    exec bash "${BASH_SOURCE[0]}" --arch aarch64 "$@"
fi
case "$TARGET" in
    x86_64) DEBARCH=amd64; BINUTILS="" ;;
    aarch64) DEBARCH=arm64; BINUTILS=aarch64-linux-gnu- ;;
    *) echo "package: ERROR: --arch takes x86_64, aarch64 or all, not '$TARGET'" >&2; exit 2 ;;
esac
OUT="$(mkdir -p "${1:-dist}" && cd "${1:-dist}" && pwd)"
BUILD="${POSEACT_PACKAGE_BUILD:-$ROOT/.build/portable-$TARGET}"
MODELS_DIR="${POSEACT_MODELS_DIR:-$ROOT/models}"
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
source notebooks-free-scripts/lib/models.sh
source notebooks-free-scripts/lib/system.sh
say() { echo "package: $*"; }
die() { echo "package: ERROR: $*" >&2; exit 1; }

VERSION="$(sed -n 's/^let poseactVersion = "\(.*\)"$/\1/p' Sources/poseact/Version.swift)"
[[ -n "$VERSION" ]] || die "no version in Sources/poseact/Version.swift"
[[ "$(uname -m)" == x86_64 ]] || die "this script runs on x86-64 (this machine: $(uname -m)); --arch aarch64 cross-builds"
models_ok "$MODELS_DIR" || die "the BlazePose models in $MODELS_DIR are missing or not the expected files: run notebooks-free-scripts/setup.sh"
need_packages dpkg-dev   # dpkg-shlibdeps

# ---- 1. The binary: the Swift runtime and the C libraries inside ----------------
PREFIX="$(bash "$ROOT/notebooks-free-scripts/portable-libs.sh" "$TARGET")" || die "the static C libraries could not be built"
say "building poseact $VERSION for $TARGET (release; the Swift runtime and $PREFIX's libraries linked in) in $BUILD"
mkdir -p "$BUILD"
LOG="$BUILD/package-build.log"
# SwiftPM's system libraries read the prefix's pkg-config files first: every -l is an archive.
if [[ "$TARGET" == x86_64 ]]; then
    PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" swift build -c release --scratch-path "$BUILD" --static-swift-stdlib --product poseact >"$LOG" 2>&1 \
        || { tail -n 30 "$LOG" >&2; die "swift build failed (the whole log: $LOG)"; }
    RUN_TARGET=()
    TOOLCHAIN="$(swift --version 2>&1 | sed -n 1p)"
    RESOLVED="$ROOT/Package.resolved"
else
    [[ $(id -u) -eq 0 ]] || die "--arch aarch64 runs as root (debootstrap, chroot): sudo bash $0 --arch aarch64"
    CROSS_PATHS="$(bash "$ROOT/notebooks-free-scripts/cross-aarch64.sh")" || die "no aarch64 cross toolchain"
    mapfile -t CROSS <<<"$CROSS_PATHS"
    BUILD_ROOT="${CROSS[0]}"; SYSROOT="${CROSS[1]}"; SDKS="${CROSS[2]}"
    # The eight glibc 2.38 functions Debian's aarch64 Swift runtime calls, on top of glibc 2.36.
    aarch64-linux-gnu-gcc --sysroot="$SYSROOT" -O2 -fPIC -c notebooks-free-scripts/portable/glibc_compat.c -o "$BUILD/glibc_compat.o"
    # The sources are built from a copy (this checkout's Package.resolved is the host
    # toolchain's), in the build root: this checkout, the prefix and the build folder at their
    # own paths, the sysroot and the SDK where the SDK says, git's copy of the Swift packages if
    # the machine has one.
    rm -rf "$BUILD/source"; mkdir -p "$BUILD/source"
    tar -C "$ROOT" --exclude=./.build --exclude=./dist --exclude=./models --exclude=./Package.resolved -cf - . | tar -C "$BUILD/source" -xf -
    cross_build() {
        [[ -f /etc/gitconfig ]] && cp /etc/gitconfig "$BUILD_ROOT/etc/gitconfig"
        cp /etc/resolv.conf "$BUILD_ROOT/etc/resolv.conf"
        local packages=()
        [[ -d /opt/swift-packages ]] && packages=(--bind-ro /opt/swift-packages)
        in_root --bind "$ROOT" --bind "$PREFIX" --bind "$BUILD" --bind "$SYSROOT:/poseact-sysroot" --bind "$SDKS:/poseact-sdks" \
            "${packages[@]}" "$BUILD_ROOT" PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" \
            bash -c "cd \"\$1/source\" && swift build -c release --scratch-path \"\$1\" --static-swift-stdlib --swift-sdks-path /poseact-sdks \
                --swift-sdk poseact-aarch64 --product poseact -Xlinker \"\$1/glibc_compat.o\"" build "$BUILD" >"$LOG" 2>&1
    }
    # swiftlang 6.2's SwiftPM loads the package graph wrongly most of the time (here 15 of 21
    # loads) when a dependency is declared with its traits off (Hummingbird's
    # swift-configuration): "product 'Configuration' required by package 'hummingbird' … not
    # found"; its hash order is random per process (hummingbird-project/hummingbird#769). Only
    # that error, at planning (10–15 s), is tried again from a fresh resolution, at most 40
    # times (all 40 failing, at 71 % each: about one build in a million).
    for attempt in $(seq 1 40); do
        rm -f "$BUILD/workspace-state.json" "$BUILD/source/Package.resolved"
        if cross_build; then break; fi
        grep -q "product 'Configuration' required by package 'hummingbird'" "$LOG" && ((attempt < 40)) \
            || { tail -n 30 "$LOG" >&2; die "swift build for aarch64 failed (the whole log: $LOG)"; }
        say "swiftlang's SwiftPM misread the package graph (attempt $attempt); resolving again"
    done
    # The aarch64 binary runs here under qemu-user (binfmt) for its completions and man pages.
    RUN_TARGET=(env QEMU_LD_PREFIX="$SYSROOT")
    RESOLVED="$BUILD/source/Package.resolved"
    TOOLCHAIN="Debian's swiftlang $(chroot "$BUILD_ROOT" dpkg-query -W -f='${Version}' swiftlang), cross-compiling"
fi
BIN="$(ls "$BUILD"/*/release/poseact 2>/dev/null | head -n1 || true)"
[[ -x "$BIN" ]] || die "the build made no poseact binary in $BUILD"
# What it may load: the C library's parts, the loader, libgcc_s and libstdc++; nothing else.
NEEDED="$(readelf -d "$BIN" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | sort | tr '\n' ' ')"
for lib in $NEEDED; do
    case "$lib" in
        libc.so.6|libm.so.6|libpthread.so.0|libdl.so.2|librt.so.1|libutil.so.1|ld-linux-*.so.*|libgcc_s.so.1|libstdc++.so.6) ;;
        *) die "$BIN needs $lib: only the C library, libgcc_s and libstdc++ may be loaded (it needs: $NEEDED)" ;;
    esac
done
# The oldest glibc it runs on: the newest symbol version it takes from the C library.
SYMBOLS="$("${BINUTILS}objdump" -T "$BIN")"
GLIBC="$({ grep -o 'GLIBC_[0-9][0-9.]*' <<<"$SYMBOLS" || true; } | sed 's/GLIBC_//' | sort -uV | tail -n1)"
GLIBCXX="$({ grep -o 'GLIBCXX_[0-9][0-9.]*' <<<"$SYMBOLS" || true; } | sed 's/GLIBCXX_//' | sort -uV | tail -n1)"
[[ -n "$GLIBC" ]] || die "no glibc symbol version found in $BIN"
GLIBC_TAG="$(awk -F. '{ printf "%d.%d", $1, $2 }' <<<"$GLIBC")"
say "the binary loads only: $NEEDED; glibc >= $GLIBC, libstdc++ with GLIBCXX_${GLIBCXX:-none}"
# generate-manual: swift-argument-parser's own tool (built for this machine), which reads a
# command's --help as JSON.
swift build -c release --scratch-path "$ROOT/.build/portable-tools" --product generate-manual >"$LOG.tools" 2>&1 \
    || { tail -n 30 "$LOG.tools" >&2; die "swift build --product generate-manual failed"; }
MANUAL="$ROOT/.build/portable-tools/release/generate-manual"

# ---- 2. One staged tree -----------------------------------------------------
STAGE="$(mktemp -d "${TMPDIR:-/tmp}/poseact-package.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
ROOTFS="$STAGE/deb"
SHARE="$ROOTFS/usr/share"
DOC="$SHARE/doc/poseact"
install -D -m 0755 "$BIN" "$ROOTFS/usr/bin/poseact"
"${BINUTILS}strip" --strip-unneeded "$ROOTFS/usr/bin/poseact"
install -d "$SHARE/poseact/models" "$SHARE/poseact/configs" "$SHARE/poseact/backbones" "$SHARE/man/man1" "$DOC/licenses"
for m in "${MODELS[@]}"; do
    IFS='|' read -r name _ sum <<<"$m"
    install -m 0644 "$MODELS_DIR/$name" "$SHARE/poseact/models/$name"
    echo "$sum  $name" >>"$SHARE/poseact/models/SHA256SUMS"
done
(cd "$SHARE/poseact/models" && sha256sum --quiet -c SHA256SUMS) || die "a model changed while being copied"
install -m 0644 configs/*.yaml configs/README.md "$SHARE/poseact/configs/"
install -m 0644 backbones/*.poseact.h5 backbones/SHA256SUMS backbones/README.md "$SHARE/poseact/backbones/"
(cd "$SHARE/poseact/backbones" && sha256sum --quiet -c SHA256SUMS) || die "a shipped backbone is not the one backbones/SHA256SUMS names"
"${RUN_TARGET[@]}" "$ROOTFS/usr/bin/poseact" --generate-completion-script bash | install -D -m 0644 /dev/stdin "$SHARE/bash-completion/completions/poseact"
"${RUN_TARGET[@]}" "$ROOTFS/usr/bin/poseact" --generate-completion-script zsh | install -D -m 0644 /dev/stdin "$SHARE/zsh/vendor-completions/_poseact"
"${RUN_TARGET[@]}" "$ROOTFS/usr/bin/poseact" --generate-completion-script fish | install -D -m 0644 /dev/stdin "$SHARE/fish/vendor_completions.d/poseact.fish"
# One page per command (poseact.1, poseact.extract.1, …), dated by the last commit for reproducible bytes.
DATE="$(git log -1 --format=%cs 2>/dev/null || date +%F)"
"${RUN_TARGET[@]}" "$MANUAL" "$ROOTFS/usr/bin/poseact" --multi-page --date "$DATE" --authors "the poseact developers" --output-directory "$SHARE/man/man1"
ls "$SHARE/man/man1"/poseact.1 >/dev/null || die "generate-manual wrote no poseact.1"
gzip -9n "$SHARE/man/man1"/*.1
# The licences of everything inside, and which versions.
install -m 0644 README.md LICENSE THIRD-PARTY.md "$DOC/"
install -m 0644 "$PREFIX"/licenses/* "$DOC/licenses/"
install -m 0644 "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")/share/swift/LICENSE.txt" "$DOC/licenses/Swift.txt"
{
    echo "poseact $VERSION ($(git log -1 --format='commit %h of %cs' 2>/dev/null || echo 'not from a git checkout'))"
    echo "needs: glibc >= $GLIBC, libgcc_s, libstdc++ (GLIBCXX_${GLIBCXX:-none}); X11 only for --window, loaded then"
    echo "toolchain: $TOOLCHAIN"
    echo
    cat "$PREFIX/SOURCES"
    echo
    echo "# Swift packages (the resolution the build used)"
    python3 -c '
import json, sys
for pin in sorted(json.load(open(sys.argv[1]))["pins"], key=lambda p: p["identity"]):
    print(pin["identity"], pin["state"].get("version") or pin["state"].get("revision", "?"))' "$RESOLVED"
} >"$DOC/VERSIONS"
# The Swift packages' own licence and notice files (Apache-2.0 asks for NOTICE files too).
for checkout in "$BUILD"/checkouts/*/; do
    for f in "$checkout"LICENSE* "$checkout"NOTICE* "$checkout"COPYING*; do
        if [[ -f "$f" ]]; then install -m 0644 "$f" "$DOC/licenses/swift-$(basename "$checkout").$(basename "$f")"; fi
    done
done
# …and of the C code they carry inside (llhttp, LibYAML), whose notices live in its
# files' headers, or nowhere in the case of Yams's LibYAML.
python3 notebooks-free-scripts/vendored_notices.py "$BUILD/checkouts" "$DOC/licenses"
install -m 0644 notebooks-free-scripts/portable/LibYAML.License "$DOC/licenses/swift-Yams.LibYAML.License"
cat >"$DOC/copyright" <<EOF
poseact $VERSION: the Apache License 2.0 (LICENSE here, /usr/share/common-licenses/Apache-2.0).
The binary carries FFmpeg (LGPL-2.1-or-later), dav1d, HDF5, OpenBLAS, zlib, GCC's Fortran
runtime, the Swift runtime and Swift packages: THIRD-PARTY.md says what each is, under which
licence and how it is met; VERSIONS says which version; licenses/ holds their texts.
The BlazePose models in /usr/share/poseact/models are Google's, from MediaPipe
($MODELS_WHEEL), under the Apache License 2.0.
EOF

# ---- 3. The Debian package --------------------------------------------------
# Depends: the packages of the libraries the binary loads, with the versions its symbols need.
# Natively dpkg-shlibdeps reads them (it wants a debian/control beside it); for a foreign
# architecture, from the symbol versions: GLIBC_x → libc6 (>= x), GLIBCXX_3.4.30 → GCC 12's
# libstdc++6.
if [[ "$TARGET" == x86_64 ]]; then
    mkdir -p "$STAGE/shlibs/debian"
    printf 'Source: poseact\n\nPackage: poseact\nArchitecture: %s\n' "$DEBARCH" >"$STAGE/shlibs/debian/control"
    DEPENDS="$(cd "$STAGE/shlibs" && dpkg-shlibdeps -O -e "$ROOTFS/usr/bin/poseact" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')"
else
    GCC_S="$({ grep -o 'GCC_[0-9][0-9.]*' <<<"$SYMBOLS" || true; } | sed 's/GCC_//' | sort -uV | tail -n1)"
    [[ "$(printf '%s\n' "${GLIBCXX:-3.4}" 3.4.30 | sort -V | tail -n1)" == 3.4.30 ]] || die "the binary needs GLIBCXX_$GLIBCXX, newer than GCC 12's"
    DEPENDS="libc6 (>= $GLIBC), libgcc-s1 (>= ${GCC_S:-3.0}), libstdc++6 (>= 12)"
fi
[[ -n "$DEPENDS" ]] || die "no dependencies found"
# Only the C library, libgcc and libstdc++: the same package names on Debian 12, 13 and Ubuntu.
for dep in $(sed 's/([^)]*)//g; s/[,|]/ /g' <<<"$DEPENDS"); do
    case "$dep" in libc6|libgcc-s1|libstdc++6) ;; *) die "Depends names $dep: $DEPENDS" ;; esac
done
install -d "$ROOTFS/DEBIAN"
cat >"$ROOTFS/DEBIAN/control" <<EOF
Package: poseact
Version: $VERSION
Architecture: $DEBARCH
Maintainer: poseact developers <poseact@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$ROOTFS" | cut -f1)
Depends: $DEPENDS
Suggests: libx11-6
Section: science
Priority: optional
Description: train human-action classifiers from videos and run them live
 poseact poses people in videos with Google's BlazePose (its own TFLite engine, no ML
 runtime), trains temporal and graph networks on the keypoints, evaluates them, and runs
 them live on a camera or stream: labels, repetitions and joint angles per person, and
 the trajectories of thrown objects. Start with: poseact demo
EOF
DEB="$OUT/poseact_${VERSION}_${DEBARCH}.deb"
dpkg-deb --root-owner-group -Zxz --build "$ROOTFS" "$DEB" >/dev/null
say "$DEB: $(du -h "$DEB" | cut -f1)"

# ---- 4. The tarball: the same files, usr/ as the top folder -----------------
NAME="poseact-$VERSION-linux-$TARGET"
mkdir "$STAGE/$NAME"
cp -a "$ROOTFS/usr/." "$STAGE/$NAME/"
cat >"$STAGE/$NAME/INSTALL" <<EOF
poseact $VERSION for $TARGET Linux with glibc $GLIBC or newer and GCC 12's libstdc++ or newer. Unpack anywhere and run bin/poseact: it needs no other library (FFmpeg,
HDF5 and OpenBLAS are inside it; libX11 is loaded only for --window) and finds its models in
share/poseact/models beside it. Shell completions are under share/bash-completion,
share/zsh and share/fish, man pages under share/man (MANPATH=\$PWD/share/man man poseact),
licences under share/doc/poseact.
EOF
TARBALL="$OUT/$NAME.tar.gz"
tar --owner=0 --group=0 --numeric-owner --sort=name -C "$STAGE" -czf "$TARBALL" "$NAME"
say "$TARBALL: $(du -h "$TARBALL" | cut -f1)"

# ---- 5. The wheel: the same files, for pip ----------------------------------
WHEEL="$(python3 notebooks-free-scripts/make_wheel.py "$STAGE/$NAME" "$VERSION" "$TARGET" "$GLIBC_TAG" "$OUT")" \
    || die "the wheel could not be made"
say "$WHEEL: $(du -h "$WHEEL" | cut -f1)"

# ---- 6. FFmpeg's source, to publish beside the packages (the LGPL asks for it) -----
FFMPEG_V="$(sed -n 's/^ffmpeg \([^ ]*\) .*/\1/p' "$PREFIX/SOURCES")"
mkdir -p "$OUT/sources"
(cd "$OUT/sources" && apt-get source -qq --download-only "ffmpeg=$FFMPEG_V" >/dev/null 2>&1) \
    || die "the source of ffmpeg $FFMPEG_V could not be fetched into $OUT/sources"
say "$OUT/sources: Debian's ffmpeg $FFMPEG_V source package (the FFmpeg inside the binaries)"
say "binary $(du -h "$ROOTFS/usr/bin/poseact" | cut -f1); Depends: $DEPENDS"
