#!/usr/bin/env bash
# The C libraries of the portable poseact, as static archives in one prefix, so that the
# binary needs nothing of the system but the C library (and libgcc_s, libstdc++):
#   FFmpeg  built from Debian's source package, LGPL, with only what poseact reads and writes:
#           MP4/MOV, Matroska/WebM, AVI, MPEG-TS, FLV, raw streams, MJPEG over HTTP, pictures;
#           H.264, HEVC, VP8, VP9, AV1 (dav1d), MJPEG, MPEG-4, MPEG-1/2, H.263, PNG, raw video;
#           RTSP/RTP/UDP/TCP/HTTP; V4L2 capture; swscale; the encoders poseact writes with
#           (MPEG-4 part 2 for --record, MJPEG for the live page, PNG). No GPL part, no TLS.
#   dav1d   (AV1) built from Debian's source package.
#   HDF5    built from Debian's source package: the C library alone, thread-safe, zlib, no
#           network driver (Debian's own static libhdf5 needs libcurl and OpenSSL).
#   OpenBLAS, zlib, libgfortran (and libquadmath on x86-64): Debian's own static archives of
#           the target architecture (OpenBLAS chooses its kernels for the CPU at run time).
# and pkg-config files whose Libs name everything each needs, for SwiftPM's system libraries.
#   portable-libs.sh [x86_64|aarch64]   prints the prefix (built on first use, then reused)
# x86_64 is built natively on x86-64; aarch64 is cross-built on x86-64 with Debian's
# gcc-aarch64-linux-gnu (HDF5's configure runs its probes under qemu-user through binfmt).
# Env: POSEACT_PORTABLE_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/poseact/portable): the
# prefix lives in a folder named by the target, the recipe's hash and the source versions,
# so a changed recipe builds anew and an unchanged one is reused (CI on one machine builds it
# once). Sources and archives come only from the Debian archive (apt-get source and apt-get
# download: signed, hash-checked); their versions are written to PREFIX/SOURCES.
set -euo pipefail
say() { echo "portable-libs: $*" >&2; }
die() { echo "portable-libs: ERROR: $*" >&2; exit 1; }
SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
source "$(dirname "${BASH_SOURCE[0]}")/lib/system.sh"
[[ "$(uname -m)" == x86_64 ]] || die "this script runs on x86-64 (this machine: $(uname -m))"
# Debian 12 (bookworm) is the build host: its gcc 12, its source packages, and its glibc 2.36,
# whose static archives run on glibc 2.35 and newer (Ubuntu 22.04 too).
SUITE=bookworm
[[ "$(. /etc/os-release && echo "${VERSION_CODENAME:-}")" == "$SUITE" ]] \
    || die "this script builds on Debian 12 (bookworm), as CI does (this machine: $(. /etc/os-release && echo "$PRETTY_NAME"))"
TARGET="${1:-x86_64}"
case "$TARGET" in
    x86_64) MULTIARCH=x86_64-linux-gnu; DEBARCH=amd64; CROSS="" ;;
    aarch64) MULTIARCH=aarch64-linux-gnu; DEBARCH=arm64; CROSS=aarch64-linux-gnu- ;;
    *) die "no such target '$TARGET' (x86_64 or aarch64)" ;;
esac

# ---- What it needs: build tools, and deb-src entries for apt-get source ------------
need=(nasm meson ninja-build dpkg-dev pkg-config libopenblas-dev libopenblas-pthread-dev zlib1g-dev libx11-dev gfortran-12)
[[ -n "$CROSS" ]] && need+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static binfmt-support)
need_packages "${need[@]}"
if [[ -z "$(apt-cache showsrc ffmpeg 2>/dev/null)" ]]; then
    # The machine's own Debian entries, as source entries (deb822 or one-line lists).
    say "adding deb-src entries for the machine's Debian archive"
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -f "$f" ]] && grep -q '^Types: deb$' "$f" && grep -qi 'debian' "$f" \
            && sed 's/^Types: deb$/Types: deb-src/' "$f" | $SUDO tee "/etc/apt/sources.list.d/poseact-src-$(basename "$f")" >/dev/null
    done
    if [[ -f /etc/apt/sources.list ]] && grep -q '^deb ' /etc/apt/sources.list; then
        sed -n 's/^deb /deb-src /p' /etc/apt/sources.list | $SUDO tee /etc/apt/sources.list.d/poseact-src.list >/dev/null
    fi
    $SUDO apt-get update -qq
fi
version_of() { { apt-cache showsrc "$1" 2>/dev/null || true; } | sed -n 's/^Version: //p' | sort -V | tail -n1; }
FFMPEG_V="$(version_of ffmpeg)"; HDF5_V="$(version_of hdf5)"; DAV1D_V="$(version_of dav1d)"
[[ -n "$FFMPEG_V" && -n "$HDF5_V" && -n "$DAV1D_V" ]] || die "apt-get source finds no ffmpeg, hdf5 or dav1d source package"
# The key reads the recipe (this script from its build section on), not its preamble.
KEY="$( { sed -n '/^# ---- Build in a scratch folder/,$p' "${BASH_SOURCE[0]}"; echo "$FFMPEG_V $HDF5_V $DAV1D_V $(dpkg-query -W -f='${Version}' libopenblas-dev)"; } | sha256sum | cut -c1-16)"
CACHE="${POSEACT_PORTABLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/poseact/portable}"
PREFIX="$CACHE/$MULTIARCH-$KEY"
if [[ -f "$PREFIX/SOURCES" ]]; then echo "$PREFIX"; exit 0; fi

# ---- Build in a scratch folder, move into place when whole ------------------------
mkdir -p "$CACHE"
WORK="$(mktemp -d "$CACHE/.build.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
P="$WORK/prefix"
mkdir -p "$P/lib/pkgconfig" "$P/include" "$WORK/src" "$WORK/debs"
export CFLAGS="-O2 -fPIC" PKG_CONFIG_PATH="$P/lib/pkgconfig" PKG_CONFIG_LIBDIR="$P/lib/pkgconfig"
JOBS="$(nproc)"
LOG="$WORK/build.log"
step() { say "$1"; shift; "$@" >>"$LOG" 2>&1 || { tail -n 40 "$LOG" >&2; die "failed: $*"; }; }
fetch() {   # fetch PACKAGE VERSION: the unpacked Debian source tree, its path on stdout
    (cd "$WORK/src" && apt-get source -qq --only-source "$1=$2" >>"$LOG" 2>&1) || { tail -n 20 "$LOG" >&2; die "apt-get source $1=$2 failed"; }
    find "$WORK/src" -mindepth 1 -maxdepth 1 -type d -name "$1-*" | head -n1
}
if [[ -n "$CROSS" ]]; then
    # The target's programs (HDF5's configure probes and H5detect) run under qemu-user.
    [[ -e /proc/sys/fs/binfmt_misc/register ]] || $SUDO mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    $SUDO update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
    [[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]] || die "qemu-aarch64 is not registered with binfmt_misc"
    export QEMU_LD_PREFIX="/usr/$MULTIARCH"
    printf '[binaries]\nc = %s\nar = %s\nstrip = %s\n[host_machine]\nsystem = %s\ncpu_family = %s\ncpu = %s\nendian = %s\n' \
        "'${CROSS}gcc'" "'${CROSS}ar'" "'${CROSS}strip'" "'linux'" "'aarch64'" "'aarch64'" "'little'" >"$WORK/meson-cross.txt"
    MESON_CROSS=(--cross-file "$WORK/meson-cross.txt")
    FFMPEG_CROSS=(--enable-cross-compile --arch=aarch64 --target-os=linux --cross-prefix="$CROSS" --pkg-config=pkg-config)
    # Not --host: HDF5's configure then runs its probes (through binfmt) instead of guessing.
    HDF5_CROSS=(CC="${CROSS}gcc" AR="${CROSS}ar" RANLIB="${CROSS}ranlib")
else
    MESON_CROSS=(); FFMPEG_CROSS=(); HDF5_CROSS=()
fi

DAV1D_SRC="$(fetch dav1d "$DAV1D_V")"
step "dav1d $DAV1D_V ($TARGET)" bash -c "cd '$DAV1D_SRC' && meson setup build ${MESON_CROSS[*]} --prefix='$P' --libdir=lib --buildtype=release \
    --default-library=static -Denable_tools=false -Denable_tests=false -Denable_examples=false && ninja -C build -j$JOBS install"

FFMPEG_SRC="$(fetch ffmpeg "$FFMPEG_V")"
ffmpeg_config=(
    --prefix="$P" --enable-static --disable-shared --enable-pic
    --disable-programs --disable-doc --disable-debug --disable-autodetect --disable-everything
    --disable-avfilter --disable-swresample --disable-postproc --enable-network
    --enable-zlib --enable-libdav1d --enable-swscale --enable-pthreads
    --enable-demuxer=mov,matroska,avi,mpegts,flv,h264,hevc,m4v,mjpeg,mpjpeg,ivf,rtsp,rtp,sdp,hls,image2,image_jpeg_pipe,image_png_pipe,rawvideo,mpegps,mpegvideo,obu
    --enable-decoder=h264,hevc,vp8,vp9,libdav1d,mjpeg,mpeg4,mpeg1video,mpeg2video,h263,png,rawvideo,msmpeg4v3
    --enable-parser=h264,hevc,vp8,vp9,av1,mjpeg,mpeg4video,mpegvideo,h263,png
    --enable-bsf=h264_mp4toannexb,hevc_mp4toannexb,vp9_superframe_split,extract_extradata,av1_frame_split,av1_frame_merge
    --enable-protocol=file,pipe,tcp,udp,rtp,http,httpproxy,hls,crypto,data
    --enable-indev=v4l2
    --enable-muxer=mp4,mov,matroska,webm,avi,image2,mjpeg
    --enable-encoder=mpeg4,mjpeg,png
)
# zlib's headers and archive come first, so FFmpeg and HDF5 find the target's.
cp /usr/include/zlib.h /usr/include/zconf.h "$P/include/"
if [[ -n "$CROSS" ]]; then
    # The target's static archives, from Debian's packages of that architecture (apt-get
    # download with a state of its own: the machine's apt and dpkg are left as they are).
    A="$WORK/apt"; mkdir -p "$A/lists/partial" "$A/cache/archives/partial"
    echo "deb [arch=$DEBARCH] http://deb.debian.org/debian $SUITE main" >"$A/sources.list"
    APT_TARGET=(-o Dir::Etc::SourceList="$A/sources.list" -o Dir::Etc::SourceParts=/nonexistent -o Dir::State::Lists="$A/lists"
                -o Dir::Cache="$A/cache" -o APT::Architectures::="$DEBARCH" -o APT::Architecture="$DEBARCH")
    step "the $DEBARCH archives' index" apt-get "${APT_TARGET[@]}" update
    step "OpenBLAS, zlib and libgfortran for $DEBARCH" bash -c "cd '$WORK/debs' && apt-get ${APT_TARGET[*]} download \
        libopenblas-pthread-dev:$DEBARCH zlib1g-dev:$DEBARCH libgfortran-12-dev:$DEBARCH"
    for d in "$WORK"/debs/*.deb; do dpkg-deb -x "$d" "$WORK/target"; done
    deb_version() { dpkg-deb -f "$(ls "$WORK"/debs/"$1"_*.deb)" Version; }
    OPENBLAS_V="$(deb_version libopenblas-pthread-dev)"; ZLIB_V="$(deb_version zlib1g-dev)"; GFORTRAN_V="$(deb_version libgfortran-12-dev)"
    TARGET_ROOT="$WORK/target"
else
    TARGET_ROOT=""
    OPENBLAS_V="$(dpkg-query -W -f='${Version}' libopenblas-pthread-dev)"; ZLIB_V="$(dpkg-query -W -f='${Version}' zlib1g-dev)"
    GFORTRAN_V="$(dpkg-query -W -f='${Version}' gfortran-12)"
fi
cp "$TARGET_ROOT/usr/lib/$MULTIARCH/libz.a" "$P/lib/"
step "FFmpeg $FFMPEG_V ($TARGET, configure)" bash -c "cd '$FFMPEG_SRC' && ./configure ${FFMPEG_CROSS[*]} ${ffmpeg_config[*]} \
    --extra-cflags='-I$P/include' --extra-ldflags='-L$P/lib'"
grep -q '^CONFIG_GPL=no' "$FFMPEG_SRC/ffbuild/config.mak" 2>/dev/null || grep -q '^!CONFIG_GPL=yes' "$FFMPEG_SRC/ffbuild/config.mak" \
    || die "FFmpeg was not configured as LGPL"
step "FFmpeg $FFMPEG_V ($TARGET, make -j$JOBS)" make -C "$FFMPEG_SRC" -j"$JOBS"
step "FFmpeg $FFMPEG_V ($TARGET, install)" make -C "$FFMPEG_SRC" install

HDF5_SRC="$(fetch hdf5 "$HDF5_V")"
step "HDF5 $HDF5_V ($TARGET, configure)" bash -c "cd '$HDF5_SRC' && ./configure ${HDF5_CROSS[*]} --prefix='$P' --disable-shared --enable-static --with-pic \
    --enable-threadsafe --disable-hl --disable-fortran --disable-cxx --disable-java --with-zlib='$P/include,$P/lib' --without-szlib \
    --disable-ros3-vfd --disable-hdfs --enable-build-mode=production"
step "HDF5 $HDF5_V ($TARGET, make -j$JOBS, the library only)" make -C "$HDF5_SRC/src" -j"$JOBS"
step "HDF5 $HDF5_V ($TARGET, install)" make -C "$HDF5_SRC/src" install

# Debian's static archives: OpenBLAS (its pthread build, every CPU's kernels) and the Fortran
# runtime its LAPACK needs (GCC's runtime library exception; libquadmath exists on x86 only).
OPENBLAS_A="$TARGET_ROOT/usr/lib/$MULTIARCH/openblas-pthread/libopenblas.a"
if [[ -n "$CROSS" ]]; then GCC_LIB="$TARGET_ROOT/usr/lib/gcc/$MULTIARCH/12"; else GCC_LIB="$(dirname "$(gcc -print-libgcc-file-name)")"; fi
FORTRAN_LIBS="-lgfortran"
cp "$OPENBLAS_A" "$GCC_LIB/libgfortran.a" "$P/lib/" || die "OpenBLAS or libgfortran is missing ($OPENBLAS_A, $GCC_LIB)"
if [[ -f "$GCC_LIB/libquadmath.a" ]]; then cp "$GCC_LIB/libquadmath.a" "$P/lib/"; FORTRAN_LIBS="-lgfortran -lquadmath"; fi
mkdir -p "$P/include/openblas"
cp /usr/include/x86_64-linux-gnu/openblas-pthread/*.h "$P/include/openblas/"
[[ -n "$CROSS" ]] && cp "$TARGET_ROOT/usr/include/$MULTIARCH/openblas-pthread/openblas_config.h" "$P/include/openblas/"

# ---- pkg-config files: every library each needs, in Libs (SwiftPM reads no Libs.private) --
pc() {   # pc NAME CFLAGS LIBS
    printf 'prefix=%s\nName: %s\nDescription: %s for the portable poseact\nVersion: 0\nCflags: %s\nLibs: %s\n' \
        "$PREFIX" "$1" "$1" "$2" "$3" >"$P/lib/pkgconfig/$1.pc"
}
rm -f "$P/lib/pkgconfig"/*.pc
# Only static archives in $PREFIX/lib, and -L to it first: each -l resolves to an archive.
find "$P/lib" -maxdepth 1 \( -name '*.so*' -o -name '*.la' \) -delete
pc zlib '-I${prefix}/include' '-L${prefix}/lib -lz'
pc openblas '-I${prefix}/include/openblas' "-L\${prefix}/lib -lopenblas $FORTRAN_LIBS -lm -lpthread"
pc lapacke '-I${prefix}/include/openblas' "-L\${prefix}/lib -lopenblas $FORTRAN_LIBS -lm -lpthread"
pc hdf5 '-I${prefix}/include' '-L${prefix}/lib -lhdf5 -lz -lm -lpthread'
for lib in libavutil libswscale libavcodec libavformat libavdevice; do
    pc "$lib" '-I${prefix}/include' '-L${prefix}/lib -lavdevice -lavformat -lavcodec -lswscale -lavutil -ldav1d -lz -lm -lpthread'
done

# Each part's licence and Debian's copyright file, for the packages' share/doc/poseact/licenses.
mkdir -p "$P/licenses"
cp "$FFMPEG_SRC/COPYING.LGPLv2.1" "$P/licenses/FFmpeg.LGPL-2.1.txt"
cp "$FFMPEG_SRC/debian/copyright" "$P/licenses/FFmpeg.debian-copyright.txt"
cp "$DAV1D_SRC/COPYING" "$P/licenses/dav1d.txt"
cp "$HDF5_SRC/COPYING" "$P/licenses/HDF5.txt"
cp /usr/share/doc/libopenblas-dev/copyright "$P/licenses/OpenBLAS.debian-copyright.txt"
cp /usr/share/doc/zlib1g-dev/copyright "$P/licenses/zlib.debian-copyright.txt"
cp /usr/share/doc/gcc-12-base/copyright "$P/licenses/GCC-runtime.debian-copyright.txt"
{
    echo "# Debian source packages built into this prefix (apt-get source NAME=VERSION) for $TARGET, and static archives from Debian's $DEBARCH packages"
    echo "ffmpeg $FFMPEG_V LGPL-2.1-or-later (configured without GPL or nonfree parts)"
    echo "dav1d $DAV1D_V BSD-2-Clause"
    echo "hdf5 $HDF5_V BSD-3-Clause-like (HDF5 licence)"
    echo "openblas $OPENBLAS_V BSD-3-Clause (libopenblas-pthread-dev:$DEBARCH's static archive)"
    echo "zlib $ZLIB_V Zlib (zlib1g-dev:$DEBARCH's static archive)"
    echo "libgfortran $GFORTRAN_V GPL-3.0-or-later WITH GCC-exception-3.1 (GCC 12's static runtime for $DEBARCH$([[ $FORTRAN_LIBS == *quadmath* ]] && echo ', with libquadmath, LGPL-2.1-or-later'))"
    echo "ffmpeg-configure ${FFMPEG_CROSS[*]} ${ffmpeg_config[*]}" | sed "s|$P|PREFIX|g"
} >"$P/SOURCES"
# Move into place whole (the .pc files already name the final path).
rm -rf "$PREFIX"
mv "$P" "$PREFIX"
echo "$PREFIX"
