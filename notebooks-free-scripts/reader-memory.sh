#!/usr/bin/env bash
# Peak memory of poseact's readers on files at (or near) their size limits: each file is
# made here, read by the command a user would run on it, and the command's peak resident
# memory (GNU time's %M, the largest of the process and the children it waited for: the
# HDF5 copy is made in one) is printed beside the file's size, as a ratio. The baseline is
# the same command on a tiny file of the kind, so the ratio is what the file itself costs.
#
#   bash notebooks-free-scripts/reader-memory.sh [BINARY]   (default .build/release/poseact)
#
# Needs python3 (to write the files) and GNU time (/usr/bin/time, Debian's `time`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${1:-$ROOT/.build/release/poseact}"
[[ -x "$BIN" ]] || { echo "reader-memory: no binary at $BIN (swift build -c release, or give its path)" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "reader-memory: needs GNU time (apt-get install time)" >&2; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/poseact-reader-memory.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work"

python3 - <<'EOF'
import json, random
random.seed(7)
def landmarks():
    return [{"x": round(random.random(), 6), "y": round(random.random(), 6), "z": round(random.random(), 6),
             "visibility": round(random.random(), 4)} for _ in range(33)]
def mediapipe(frames):
    return {"width": 640, "height": 480, "frames": [{"time": i / 30, "landmarks": landmarks()} for i in range(frames)]}
def coco(frames):
    images = [{"id": i, "file_name": "f%06d.jpg" % i, "width": 640, "height": 480} for i in range(frames)]
    annotations = [{"image_id": i, "keypoints": [round(random.uniform(0, 400), 2) if k % 3 < 2 else 2 for k in range(51)]}
                   for i in range(frames) for _ in range(2)]
    return {"images": images, "annotations": annotations}
def ntu(frames):
    out = [str(frames)]
    for _ in range(frames):
        out += ["1", "72057594037931101 0 1 1 1 1 0 0.02 0.1 2", "25"]
        out += [" ".join(["0.1", "0.2", "3.1", "250.1", "200.2", "%.4f" % random.uniform(0, 1900), "%.4f" % random.uniform(0, 1000),
                          "0.1", "0.2", "0.3", "0.9", "2"]) for _ in range(25)]
    return "\n".join(out) + "\n"
def csv(frames, clips):
    names = ["nose", "left_shoulder", "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist",
             "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle"]
    head = "clip,label,split,frame,width,height," + ",".join("%s_x,%s_y,%s_c" % (n, n, n) for n in names)
    rows = [head]
    for c in range(clips):
        for f in range(frames):
            rows.append("c%d,%s,train,%d,640,480," % (c, "ab"[c % 2], f) +
                        ",".join("%.2f,%.2f,1" % (random.uniform(0, 640), random.uniform(0, 480)) for _ in names))
    return "\n".join(rows) + "\n"
for name, frames in [("big", 24000), ("tiny", 2)]:
    json.dump(mediapipe(frames), open("mediapipe-%s.json" % name, "w"))
    with open("mediapipe-%s.jsonl" % name, "w") as f:
        for fr in mediapipe(frames)["frames"]:
            f.write(json.dumps(fr) + "\n")
    json.dump(coco(frames * 2 if name == "big" else frames), open("coco-%s.json" % name, "w"))
    open("ntu-%s.skeleton" % name, "w").write(ntu(frames // 3 if name == "big" else frames))
    open("keypoints-%s.csv" % name, "w").write(csv(2000 if name == "big" else 3, 300 if name == "big" else 2))
EOF

peak() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }
row() {   # what, big file, tiny file, command with {} for the file
    local what="$1" big="$2" tiny="$3"; shift 3
    local bigArgs=("${@//\{\}/$big}") tinyArgs=("${@//\{\}/$tiny}")
    local base top size
    base="$(peak "${tinyArgs[@]}")"; top="$(peak "${bigArgs[@]}")"
    size="$(stat -c %s "$big")"
    awk -v w="$what" -v s="$size" -v b="$base" -v t="$top" 'BEGIN {
        printf "%-34s %8.1f MB  peak %7.0f MB (%5.0f MB above a tiny file)  %5.1f x the file\n", w, s / 1e6, t / 1e3, (t - b) / 1e3, (t - b) * 1e3 / s }'
}
echo "reader-memory: poseact $("$BIN" --version), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), cpu family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')"
row "import MediaPipe JSON" mediapipe-big.json mediapipe-tiny.json "$BIN" import {} --label a --output out.h5
row "import MediaPipe JSON Lines" mediapipe-big.jsonl mediapipe-tiny.jsonl "$BIN" import {} --format mediapipe --label a --size 640x480 --output out.h5
row "import COCO JSON" coco-big.json coco-tiny.json "$BIN" import {} --label a --output out.h5
row "import NTU .skeleton" ntu-big.skeleton ntu-tiny.skeleton "$BIN" import {} --label a --output out.h5
row "import keypoint CSV" keypoints-big.csv keypoints-tiny.csv "$BIN" import {} --output out.h5
"$BIN" import keypoints-big.csv --output store-big.h5 >/dev/null 2>&1
"$BIN" import keypoints-tiny.csv --output store-tiny.h5 >/dev/null 2>&1
row "dataset inspect (a store)" store-big.h5 store-tiny.h5 "$BIN" dataset inspect {}
row "dataset export (a store)" store-big.h5 store-tiny.h5 "$BIN" dataset export {} --csv out.csv
# A sparse file past a limit costs nothing on disk and must cost nothing in memory.
truncate -s 3G sparse.tflite
printf '%-34s %8s     refused: %s\n' "model inspect (3 GB sparse .tflite)" "3000.0 MB" \
    "$(/usr/bin/time -f 'peak %M kB' "$BIN" model inspect sparse.tflite 2>&1 | tr '\n' ' ')"
