# Sourced by the scripts that change this machine or enter another Debian root: the two things
# they all do, said once.
#
#   need_packages PKG...
#       Installs those of the Debian packages PKG that are not installed (as root, or through
#       sudo), quietly. The package lists are refreshed only when the first attempt fails, so a
#       machine that has them all costs nothing and an old image still gets what it lacks; that
#       first attempt's errors are not shown (on a fresh image they only say the lists are empty).
#
#   in_root [--no-dev] [--sys] [--tmp] [--bind DIR[:INSIDE]]... [--bind-ro DIR[:INSIDE]]... ROOT [VAR=VALUE]... COMMAND...
#       Runs COMMAND inside the Debian root ROOT with chroot, with a cleared environment (a
#       plain PATH, HOME=/root, LANG=C.UTF-8, TERM=dumb, and the VAR=VALUE given), its own /proc
#       and the host's /dev (--no-dev: the root's own, for debootstrap's second stage, which
#       makes its device nodes there); --sys adds the host's /sys, --tmp a fresh tmpfs on /tmp,
#       --bind a host folder (at the same path inside unless INSIDE is given). Everything is
#       mounted in a mount namespace of its own, so the mounts end with COMMAND, whatever way
#       it ends.

need_packages() {
    local missing=() p sudo=""
    for p in "$@"; do
        # dpkg-query succeeds for removed-but-configured packages too, so read the status text.
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    ((${#missing[@]})) || return 0
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    echo "installing ${missing[*]} (apt-get)" >&2
    # The first attempt's complaints stay unprinted: on a fresh image they are only "Unable to
    # locate package" for lists never fetched; a second failure prints its own.
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
        || { echo "refreshing the package lists (apt-get update), then installing again" >&2
             $sudo apt-get update -qq \
             && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
}

in_root() {
    local mounts=() dev=dev
    while (($#)); do
        case "$1" in
            --no-dev) dev=""; shift ;;
            --sys) mounts+=(sys); shift ;;
            --tmp) mounts+=(tmp); shift ;;
            --bind|--bind-ro) mounts+=("${1#--}=$2"); shift 2 ;;
            *) break ;;
        esac
    done
    local root="$1"; shift
    [[ -z "$dev" ]] || mounts=("$dev" "${mounts[@]}")
    unshare --mount --propagation private bash -euo pipefail -c '
        R="$1"; shift
        mount -t proc proc "$R/proc"
        while [[ "$1" != -- ]]; do
            case "$1" in
                dev) mount --rbind /dev "$R/dev" ;;
                sys) mount --rbind /sys "$R/sys" ;;
                tmp) mount -t tmpfs tmpfs "$R/tmp" ;;
                bind=*|bind-ro=*)
                    spec="${1#*=}"; host="${spec%%:*}"; inside="${spec#*:}"
                    mkdir -p "$R$inside"; mount --bind "$host" "$R$inside"
                    [[ "$1" == bind-ro=* ]] && mount -o remount,bind,ro "$R$inside" ;;
            esac
            shift
        done
        shift
        exec chroot "$R" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            HOME=/root LANG=C.UTF-8 TERM=dumb "$@"
    ' in_root "$root" "${mounts[@]}" -- "$@"
}
