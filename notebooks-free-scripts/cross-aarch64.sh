#!/usr/bin/env bash
# A Swift cross toolchain from x86-64 to aarch64 Linux, made of Debian's packages only, for
# package.sh --arch aarch64:
#   - a build root: Debian sid (amd64, debootstrap --variant=minbase) with `swiftlang`, the
#     Swift toolchain Debian ships (6.2 there; Debian 13's 6.0 cannot build poseact's
#     dependencies, which need Swift 6.2), lld, git and pkg-config;
#   - an aarch64 sysroot: Debian 12's C and C++ runtime for arm64 (glibc 2.36, so the binary
#     runs on Debian 12 and newer), Xlib's headers, and the static Swift runtime of `swiftlang:arm64`, the
#     very version of the build root's compiler;
#   - a Swift SDK (artifact bundle) that names them, for `swift build --swift-sdk`.
# All three are made once and kept (POSEACT_ROOTS, default /var/cache/poseact/roots).
#   cross-aarch64.sh     prints three lines: the build root, the sysroot, the SDK folder
# The sysroot and the SDK are used from inside the build root, where package.sh binds them at
# /poseact-sysroot and /poseact-sdks.
set -euo pipefail
say() { echo "cross-aarch64: $*" >&2; }
die() { echo "cross-aarch64: ERROR: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "run it as root (debootstrap, chroot)"
[[ "$(uname -m)" == x86_64 ]] || die "this makes a cross toolchain on x86-64 (this machine: $(uname -m))"
ROOTS="${POSEACT_ROOTS:-/var/cache/poseact/roots}"
MIRROR=http://deb.debian.org/debian
# Debian's unstable archive is served with a Valid-Until that a stored mirror may be past;
# its signatures are still checked.
SID_APT=(-o Acquire::Check-Valid-Until=false)
source "$(dirname "${BASH_SOURCE[0]}")/lib/system.sh"
need_packages debootstrap
mkdir -p "$ROOTS"

# ---- The build root ----------------------------------------------------------------
R="$ROOTS/sid-amd64-swiftlang"
if [[ ! -f "$R/.complete" ]]; then
    say "debootstrap sid (amd64) and swiftlang into $R (once)"
    rm -rf "$R.partial"
    debootstrap --variant=minbase sid "$R.partial" "$MIRROR" >"$ROOTS/debootstrap-sid.log" 2>&1 \
        || { tail -n 20 "$ROOTS/debootstrap-sid.log" >&2; die "debootstrap sid failed"; }
    cp /etc/resolv.conf "$R.partial/etc/resolv.conf"
    in_root --sys "$R.partial" apt-get "${SID_APT[@]}" update -qq >/dev/null || die "apt-get update in the sid root failed"
    in_root --sys "$R.partial" env DEBIAN_FRONTEND=noninteractive apt-get "${SID_APT[@]}" install -y -qq --no-install-recommends \
        swiftlang libc6-dev git pkgconf ca-certificates >"$ROOTS/swiftlang-install.log" 2>&1 \
        || { tail -n 20 "$ROOTS/swiftlang-install.log" >&2; die "swiftlang would not install in the sid root"; }
    in_root --sys "$R.partial" apt-get clean
    touch "$R.partial/.complete"
    rm -rf "$R"; mv "$R.partial" "$R"
fi
SWIFT_V="$(in_root --sys "$R" dpkg-query -W -f='${Version}' swiftlang)"
[[ -n "$SWIFT_V" ]] || die "no swiftlang in $R"

# ---- The aarch64 sysroot -------------------------------------------------------------
# (libx11-dev and x11proto-dev for Xlib's headers: live --window loads libX11 at run time.)
SYSROOT_DEBS=(libc6 libc6-dev linux-libc-dev libgcc-s1 libgcc-12-dev libstdc++6 libstdc++-12-dev libx11-dev x11proto-dev)
S="$ROOTS/aarch64-sysroot-swiftlang-${SWIFT_V//[^0-9A-Za-z.]/_}-$(echo "${SYSROOT_DEBS[*]}" | sha256sum | cut -c1-8)"
if [[ ! -f "$S/.complete" ]]; then
    say "the aarch64 sysroot (Debian 12's C runtime, swiftlang $SWIFT_V's static Swift runtime) in $S (once)"
    rm -rf "$S.partial"; mkdir -p "$S.partial/debs"
    A="$S.partial/apt"; mkdir -p "$A/lists/partial" "$A/cache/archives/partial"
    echo "deb [arch=arm64] $MIRROR bookworm main" >"$A/sources.list"
    APT_ARM64=(-o Dir::Etc::SourceList="$A/sources.list" -o Dir::Etc::SourceParts=/nonexistent -o Dir::State::Lists="$A/lists"
               -o Dir::Cache="$A/cache" -o APT::Architectures::=arm64 -o APT::Architecture=arm64)
    apt-get "${APT_ARM64[@]}" update -qq >/dev/null || die "the arm64 index of bookworm could not be read"
    (cd "$S.partial/debs" && apt-get "${APT_ARM64[@]}" download -qq "${SYSROOT_DEBS[@]}" >/dev/null 2>&1) \
        || die "the arm64 C runtime packages could not be downloaded"
    # swiftlang:arm64 of the compiler's own version, fetched by the build root's apt.
    mkdir -p "$R/tmp/swiftlang-arm64"
    in_root --sys "$R" bash -c "dpkg --add-architecture arm64 && apt-get ${SID_APT[*]} update -qq >/dev/null && cd /tmp/swiftlang-arm64 \
        && apt-get ${SID_APT[*]} download -qq swiftlang:arm64=$SWIFT_V >/dev/null" || die "swiftlang:arm64 $SWIFT_V could not be downloaded"
    for d in "$S.partial"/debs/*.deb; do dpkg-deb -x "$d" "$S.partial"; done
    dpkg-deb --fsys-tarfile "$R"/tmp/swiftlang-arm64/swiftlang_*_arm64.deb \
        | tar -x -C "$S.partial" ./usr/libexec/swift/lib/swift_static ./usr/libexec/swift/lib/clang
    rm -rf "$R/tmp/swiftlang-arm64" "$S.partial/debs" "$A"
    # The driver looks for <sdk>/usr/lib/swift_static; absolute links in the packages point
    # into the sysroot, not the build root.
    ln -s ../libexec/swift/lib/swift_static "$S.partial/usr/lib/swift_static"
    find "$S.partial" -type l | while read -r link; do
        target="$(readlink "$link")"
        if [[ "$target" == /* ]]; then ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$S.partial$target")" "$link"; fi
    done
    touch "$S.partial/.complete"
    rm -rf "$S"; mv "$S.partial" "$S"
fi

# ---- The Swift SDK -------------------------------------------------------------------
SDK="$ROOTS/swift-sdks-${SWIFT_V//[^0-9A-Za-z.]/_}"
if [[ ! -f "$SDK/poseact-aarch64.artifactbundle/info.json" ]]; then
    B="$SDK/poseact-aarch64.artifactbundle"; mkdir -p "$B/aarch64"
    cat >"$B/info.json" <<'EOF'
{ "schemaVersion": "1.0",
  "artifacts": { "poseact-aarch64": { "type": "swiftSDK", "version": "1",
    "variants": [ { "path": "aarch64", "supportedTriples": ["x86_64-pc-linux-gnu", "x86_64-unknown-linux-gnu"] } ] } } }
EOF
    cat >"$B/aarch64/swift-sdk.json" <<'EOF'
{ "schemaVersion": "4.0",
  "targetTriples": { "aarch64-unknown-linux-gnu": {
    "sdkRootPath": "/poseact-sysroot",
    "swiftResourcesPath": "/poseact-sysroot/usr/libexec/swift/lib/swift_static",
    "swiftStaticResourcesPath": "/poseact-sysroot/usr/libexec/swift/lib/swift_static",
    "toolsetPaths": ["toolset.json"] } } }
EOF
    cat >"$B/aarch64/toolset.json" <<'EOF'
{ "schemaVersion": "1.0", "rootPath": "/usr/libexec/swift/bin",
  "swiftCompiler": { "extraCLIOptions": ["-use-ld=lld"] } }
EOF
fi
printf '%s\n%s\n%s\n' "$R" "$S" "$SDK"
