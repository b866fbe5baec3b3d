# Penn Action's shared keypoints imported once into WORK/penn.h5, with a release poseact:
# sourced by penn-action.sh and backbones.sh (from the checkout's root) after setting WORK.
# Sets BIN (the poseact built) and STORE.
SHARED=${POSEACT_SHARED:-../shared}
CSV=$SHARED/data/penn-action/keypoints.csv
[ -f "$CSV" ] || { echo "$(basename "$0"): $CSV not found: set POSEACT_SHARED to the shared folder" >&2; exit 1; }
swift build -c release --product poseact >&2
BIN=.build/release/poseact
STORE=$WORK/penn.h5
mkdir -p "$WORK"
[ -f "$STORE" ] || "$BIN" import "$CSV" --output "$STORE" >&2
