# Sourced by the comparison scripts: a throw-away venv holding a reference runtime
# (LiteRT, MediaPipe) used as a yardstick only, never a dependency of poseact.
#
#   yardstick_venv DIR "import check" PACKAGE...   # sets PY to the venv's python
yardstick_venv() {
    local venv="$1" check="$2"; shift 2
    if [[ ! -x "$venv/bin/python" ]]; then
        echo "creating venv $venv"
        python3 -m venv "$venv" || { echo "python3 -m venv failed (on Debian: apt-get install python3-venv)" >&2; exit 1; }
    fi
    PY="$venv/bin/python"
    if ! "$PY" -c "$check" 2>/dev/null; then
        echo "installing $* into $venv"
        "$PY" -m pip install --quiet --disable-pip-version-check "$@"
    fi
}
