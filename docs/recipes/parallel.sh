#!/bin/bash
# The same with GNU parallel, on this machine or over ssh (add --sshloginfile nodes.txt and a
# shared WORK): 8 extraction tasks, then the merge; 10 cross-validation tasks, then the pool.
# -N0 runs the command once per input without appending it; GNU parallel numbers the jobs
# from 1 in PARALLEL_SEQ ({#}), which --shard auto/8 and --task auto/10 read.
set -euo pipefail
DATA=${DATA:-$HOME/videos}
WORK=${WORK:-$HOME/poseact-work}
CONFIG=${CONFIG:-/usr/share/poseact/configs/pushups.yaml}
EPOCHS=${EPOCHS:-60}
JOBS=${JOBS:-8}
mkdir -p "$WORK/parts"
seq 8 | parallel -N0 -j "$JOBS" --halt now,fail=1 \
    poseact extract "$DATA" --shard auto/8 --cache "$WORK/cache" --output "$WORK/parts/part-{#}.h5"
poseact merge "$WORK"/parts/part-*.h5 --output "$WORK/videos.h5"
seq 10 | parallel -N0 -j "$JOBS" --halt now,fail=1 \
    poseact crossval --config "$CONFIG" --data "$WORK/videos.h5" --epochs "$EPOCHS" --folds 5 --seeds 1,2 \
    --output "$WORK/crossval" --jobs 1 --task auto/10
poseact crossval --config "$CONFIG" --data "$WORK/videos.h5" --epochs "$EPOCHS" --folds 5 --seeds 1,2 \
    --output "$WORK/crossval" --pool
