#!/usr/bin/env python3
"""MediaPipe 0.10.14's pose landmarks for still images, printed like `poseact pose`.

    python mediapipe_landmarks.py IMAGE.png [IMAGE2.png | DIR ...] > mediapipe.jsonl

One JSON line per image, in the order given (a DIR adds its *.png, sorted):
{"input", "frame": 0, "time": 0, "width", "height", "persons": [] or [{"id": 1, "box",
"prominent": true, "presence": null, "landmarks": [{"name", "x", "y", "z", "visibility",
"presence": null} x 33]}]}

x, y are pixels (x_norm * width, y_norm * height), z is z_norm * width (poseact's
scale), box is the smallest box around the 33 landmarks clamped to the image (as poseact
does). The legacy API of 0.10.14 gives no pose or per-landmark presence: those are null.
Runs in the throw-away venv made by compare-mediapipe.sh; never a dependency of poseact.
"""
import json
import pathlib
import sys

import mediapipe as mp
import numpy as np
from PIL import Image

# BlazePose's 33 landmark names, in model order (same as poseact's Skeleton.blazePoseNames).
NAMES = [lm.name.lower() for lm in mp.solutions.pose.PoseLandmark]


def images(args):
    for a in map(pathlib.Path, args):
        yield from (sorted(a.glob("*.png")) if a.is_dir() else [a])


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    # The settings the fixtures were made with (shared/fixtures/blazepose/README.md).
    # static_image_mode: every image gets the detector, no tracking between images.
    with mp.solutions.pose.Pose(static_image_mode=True, model_complexity=1,
                                min_detection_confidence=0.5) as pose:
        for path in images(sys.argv[1:]):
            # PIL gives the PNG's RGB pixels exactly (no BGR swap to get wrong).
            rgb = np.ascontiguousarray(np.asarray(Image.open(path).convert("RGB")))
            h, w = rgb.shape[:2]
            result = pose.process(rgb)
            persons = []
            if result.pose_landmarks:
                lms = [{"name": n, "x": l.x * w, "y": l.y * h, "z": l.z * w,
                        "visibility": l.visibility, "presence": None}
                       for n, l in zip(NAMES, result.pose_landmarks.landmark)]
                xs = [min(max(l["x"], 0), w) for l in lms]
                ys = [min(max(l["y"], 0), h) for l in lms]
                box = [min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)]
                persons.append({"id": 1, "box": box, "prominent": True, "presence": None,
                                "landmarks": lms})
            print(json.dumps({"input": str(path), "frame": 0, "time": 0, "width": w,
                              "height": h, "persons": persons}), flush=True)


if __name__ == "__main__":
    main()
