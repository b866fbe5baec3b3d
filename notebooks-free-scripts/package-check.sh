#!/usr/bin/env bash
# What a user without a Swift toolchain gets from package.sh's two files, checked on this
# machine with the toolchain hidden: a mount namespace of its own in which every folder of the
# toolchain's Swift libraries is an empty tmpfs and PATH holds only the system's folders.
#   1. apt-get install ./poseact_<version>_amd64.deb (it depends on libc6, libgcc-s1 and libstdc++6 alone);
#   2. ldd /usr/bin/poseact lists no Swift library; `poseact pose` runs from an empty folder on a
#      picture, finding its models in /usr/share/poseact/models; the man page and completions
#      are there. (`poseact demo` runs from the tarball on a bare Debian 13 root:
#      portable-check.sh.)
#   3. with --recipes: the tarball, unpacked anywhere, runs the cluster recipes
#      (cluster-recipes.sh, about 5 min on a 2-core Zen 3), finding its models in
#      share/poseact/models beside bin/.
#   package-check.sh [--recipes] [DIST_DIR]   (default dist/; root, or sudo)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RECIPES=0
if [[ "${1:-}" == --recipes ]]; then RECIPES=1; shift; fi
DIST="$(cd "${1:-$ROOT/dist}" && pwd)"
say() { echo "package-check: $*"; }
die() { echo "package-check: FAILED: $*" >&2; exit 1; }
DEB="$(ls "$DIST"/poseact_*_amd64.deb | tail -n 1)"
TARBALL="$(ls "$DIST"/poseact-*-linux-x86_64.tar.gz | tail -n 1)"
SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"

say "$(basename "$DEB"): $(du -h "$DEB" | cut -f1); $(basename "$TARBALL"): $(du -h "$TARBALL" | cut -f1)"
# (GNU parallel: for the recipes' test only.)
source "$ROOT/notebooks-free-scripts/lib/system.sh"
need_packages parallel
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$DEB" >/dev/null \
    || die "apt-get install $DEB failed"
say "installed: $(dpkg-query -W -f='${Package} ${Version}, ${Installed-Size} kB' poseact)"

# The toolchain's library folders (wherever it is installed) and its bin folder.
hide=()
swift_bin="$(command -v swift || true)"
[[ -z "$swift_bin" && -x /opt/swift/usr/bin/swift ]] && swift_bin=/opt/swift/usr/bin/swift
if [[ -n "$swift_bin" ]]; then
    toolchain="$(dirname "$(dirname "$(readlink -f "$swift_bin")")")"
    while IFS= read -r lib; do hide+=("$(dirname "$lib")"); done < <(find "$toolchain/lib" -name 'libswiftCore.so' 2>/dev/null)
    [[ "$(dirname "$(readlink -f "$swift_bin")")" != /usr/bin ]] && hide+=("$(dirname "$(readlink -f "$swift_bin")")")
fi
say "hiding ${hide[*]:-nothing (no Swift toolchain here)}"
SYSTEM_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR="$(mktemp -d "${TMPDIR:-/tmp}/poseact-package-check.XXXXXX")"
trap 'rm -rf "$WORKDIR"' EXIT
tar -xzf "$TARBALL" -C "$WORKDIR"
UNPACKED="$(ls -d "$WORKDIR"/poseact-*/)"
chmod -R a+rX "$WORKDIR"

# A mount namespace hides the toolchain from this check alone. Where none can be made (a
# container without CAP_SYS_ADMIN), its folders are renamed for the check and renamed back.
if $SUDO unshare --mount --propagation private true 2>/dev/null; then
    ISOLATE=($SUDO unshare --mount --propagation private); MOUNT_HIDE=1
else
    say "no mount namespace here: renaming the toolchain's folders during the check"
    ISOLATE=($SUDO); MOUNT_HIDE=0
    restore() { for d in "${hide[@]}"; do if [[ -e "$d.hidden-by-package-check" ]]; then $SUDO rmdir "$d"; $SUDO mv "$d.hidden-by-package-check" "$d"; fi; done; rm -rf "$WORKDIR"; }
    trap restore EXIT
    for d in "${hide[@]}"; do $SUDO mv "$d" "$d.hidden-by-package-check" && $SUDO mkdir "$d"; done
fi
"${ISOLATE[@]}" env -i HOME="$WORKDIR" PATH="$SYSTEM_PATH" TERM=dumb LANG=C.UTF-8 \
    POSEACT_SHARED="${POSEACT_SHARED:-$ROOT/../shared}" HIDE="${hide[*]}" MOUNT_HIDE="$MOUNT_HIDE" ROOT="$ROOT" WORKDIR="$WORKDIR" UNPACKED="$UNPACKED" \
    RECIPES="$RECIPES" PICTURE="${POSEACT_SHARED:-$ROOT/../shared}/fixtures/blazepose/images/pose.decoded.png" \
    bash -euo pipefail -c '
say() { echo "package-check: $*"; }
die() { echo "package-check: FAILED: $*" >&2; exit 1; }
if [[ $MOUNT_HIDE == 1 ]]; then for d in $HIDE; do mount -t tmpfs -o ro,size=1k poseact-hides-swift "$d"; done; fi
for d in $HIDE; do [[ -z "$(ls -A "$d")" ]] || die "$d is not hidden"; done
if command -v swift >/dev/null && swift --version >/dev/null 2>&1; then die "a Swift toolchain still runs: $(command -v swift)"; fi
# (Whole outputs, never `cmd | grep -q`: with pipefail, grep leaving early can fail the pipe.)
cache="$(ldconfig -p)"; [[ "$cache" == *libswiftCore* ]] && die "the loader cache still has libswiftCore"
say "no Swift toolchain: swift $(command -v swift >/dev/null && echo "cannot run" || echo "not on PATH"), no libswiftCore"
ldd /usr/bin/poseact >"$WORKDIR/ldd.txt" || die "ldd /usr/bin/poseact failed"
grep -qi "not found" "$WORKDIR/ldd.txt" && { grep -i "not found" "$WORKDIR/ldd.txt" >&2; die "a library the package needs is missing"; }
grep -qi swift "$WORKDIR/ldd.txt" && { grep -i swift "$WORKDIR/ldd.txt" >&2; die "poseact loads a Swift library"; }
say "ldd /usr/bin/poseact: $(wc -l <"$WORKDIR/ldd.txt") libraries, none of them Swift; it needs: $(readelf -d /usr/bin/poseact | sed -n "s/.*Shared library: \[\(.*\)\]/\1/p" | tr "\n" " ")"
for f in /usr/share/man/man1/poseact.1.gz /usr/share/man/man1/poseact.extract.1.gz /usr/share/bash-completion/completions/poseact \
         /usr/share/zsh/vendor-completions/_poseact /usr/share/fish/vendor_completions.d/poseact.fish /usr/share/poseact/configs/pushups.yaml \
         /usr/share/poseact/backbones/penn-action.poseact.h5; do
    [[ -s "$f" ]] || die "$f is missing"
done
page="$(zcat /usr/share/man/man1/poseact.extract.1.gz)"; [[ "$page" == *shard* ]] || die "the extract man page does not describe --shard"
bash -c "source /usr/share/bash-completion/completions/poseact && complete -p poseact" >/dev/null || die "the bash completion does not load"
mkdir "$WORKDIR/empty" && cd "$WORKDIR/empty"
cp "$PICTURE" person.png
poseact pose person.png >pose.jsonl 2>pose.log || { cat pose.log >&2; die "poseact pose failed"; }
[[ "$(<pose.jsonl)" == *left_shoulder* ]] || die "poseact pose found no person in $PICTURE: $(<pose.jsonl)"
say "$(poseact --version): poseact pose, from an empty folder with the models in /usr/share/poseact/models: $(tail -n 1 pose.log)"
if [[ $RECIPES == 1 ]]; then
    say "the tarball, unpacked in $UNPACKED: the cluster recipes with its bin/poseact"
    bash "$ROOT/notebooks-free-scripts/cluster-recipes.sh" "$UNPACKED/bin/poseact" "$UNPACKED/share/poseact/configs"
fi
'
say "done"
