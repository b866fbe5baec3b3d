#!/usr/bin/env python3
"""A hand-made baseline for few clips a label: joint angles, clip statistics, logistic
regression. A yardstick for issue 52's learning curves (what a fitness-app recipe without a
net gets from the same keypoints and the same draws), never a part of poseact.

    python angle_baseline.py STORE.h5 [--clips 5,10,20] [--draws 1,2,3] [--l2 0.01] [--json]

STORE.h5 is a `poseact extract` store of BlazePose's 33 landmarks with a train and a test
split (the push-up recipe's). Per frame, six angles, each on the side whose three joints are
surer: elbow (shoulder–elbow–wrist), hip (shoulder–hip–knee), knee (hip–knee–ankle),
shoulder (elbow–shoulder–hip), body line (shoulder–hip–ankle), neck (nose–shoulder–hip);
per clip their mean, standard deviation and 10th and 90th percentiles over the frames where
that side's joints are above 0.3. The draws are poseact's (`data.clips_per_label`, `data.draw`:
per label, sorted, its clips shuffled by one SplitMix64 stream seeded draw + 0xD4A3, the first
N kept), so each row is beside the learning curve's on the same clips. Features are
standardised on the drawn clips; the regression is gradient descent on the mean log-loss plus
l2 · |w|² / 2 (the 0.01 default was chosen on the push-up dev split). Prints the test clip
accuracy per draw and their mean.
"""
import argparse
import json
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_tcn import SplitMix64, shuffled  # noqa: E402  (the draws' random stream)

JOINTS = ["nose", "left_eye_inner", "left_eye", "left_eye_outer", "right_eye_inner", "right_eye", "right_eye_outer",
          "left_ear", "right_ear", "mouth_left", "mouth_right", "left_shoulder", "right_shoulder", "left_elbow",
          "right_elbow", "left_wrist", "right_wrist", "left_pinky", "right_pinky", "left_index", "right_index",
          "left_thumb", "right_thumb", "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle",
          "left_heel", "right_heel", "left_foot_index", "right_foot_index"]
INDEX = {n: i for i, n in enumerate(JOINTS)}
ANGLES = [("{}_shoulder", "{}_elbow", "{}_wrist"), ("{}_shoulder", "{}_hip", "{}_knee"), ("{}_hip", "{}_knee", "{}_ankle"),
          ("{}_elbow", "{}_shoulder", "{}_hip"), ("{}_shoulder", "{}_hip", "{}_ankle"), ("nose", "{}_shoulder", "{}_hip")]


def angle(kp, names):
    a, b, c = (kp[:, INDEX[n], :2] for n in names)
    u, v = a - b, c - b
    cos = (u * v).sum(1) / (np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1) + 1e-9)
    sure = np.minimum.reduce([kp[:, INDEX[n], 2] for n in names])
    return np.degrees(np.arccos(np.clip(cos, -1, 1))), sure


def features(kp):
    out = []
    for triple in ANGLES:
        left, sure_l = angle(kp, [t.format("left") for t in triple])
        right, sure_r = angle(kp, [t.format("right") for t in triple])
        a = np.where(sure_l >= sure_r, left, right)
        ok = np.isfinite(a) & (np.maximum(sure_l, sure_r) > 0.3)
        a = a[ok] if ok.sum() > 3 else np.nan_to_num(a)
        out += [a.mean(), a.std(), np.percentile(a, 10), np.percentile(a, 90)]
    return np.array(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("store")
    p.add_argument("--clips", default="5,10,20")
    p.add_argument("--draws", default="1,2,3")
    p.add_argument("--l2", type=float, default=0.01)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    with h5py.File(args.store, "r") as f:
        if f.attrs.get("format") not in ("poseact-keypoints", b"poseact-keypoints"):
            sys.exit(f"{args.store}: not a poseact keypoint store")
        clips = [(str(c.attrs["id"]), str(c.attrs["label"]), str(c.attrs["split"]), c["keypoints"][...])
                 for c in (f["clips"][k] for k in f["clips"])]
    if any(kp.shape[1] != 33 for *_, kp in clips):
        sys.exit(f"{args.store}: the baseline needs BlazePose's 33 landmarks")
    ids = [c[0] for c in clips]
    labels = sorted({c[1] for c in clips if c[2] == "train"})
    if len(labels) != 2:
        sys.exit(f"{args.store}: the baseline is a two-label regression; the train split has {labels}")
    x = np.array([features(c[3]) for c in clips])
    y = np.array([labels.index(c[1]) if c[1] in labels else -1 for c in clips])
    test = [i for i, c in enumerate(clips) if c[2] == "test" and y[i] >= 0]
    results = []
    for n in (int(v) for v in args.clips.split(",")):
        accuracies = []
        for d in (int(v) for v in args.draws.split(",")):
            rng = SplitMix64(d + 0xD4A3)
            kept = []
            for label in labels:
                kept += shuffled(sorted(ids[i] for i, c in enumerate(clips) if c[1] == label and c[2] == "train"), rng)[:n]
            train = [ids.index(k) for k in kept]
            mu, sd = x[train].mean(0), x[train].std(0) + 1e-6
            z, t = (x[train] - mu) / sd, y[train].astype(float)
            w, b = np.zeros(z.shape[1]), 0.0
            for _ in range(2000):
                g = 1 / (1 + np.exp(-(z @ w + b))) - t
                w -= 0.1 * (z.T @ g / len(t) + args.l2 * w)
                b -= 0.1 * g.mean()
            predicted = (((x[test] - mu) / sd) @ w + b) > 0
            accuracies.append(float((predicted == (y[test] == 1)).mean()))
        results.append({"clips_per_label": n, "clip_accuracy": accuracies, "mean": float(np.mean(accuracies)),
                        "sd": float(np.std(accuracies, ddof=1)) if len(accuracies) > 1 else 0.0})
        if not args.json:
            print(f"{n} clips a label: test clip accuracy " + ", ".join(f"{100 * a:.1f}" for a in accuracies)
                  + f" %; mean {100 * results[-1]['mean']:.1f} ± {100 * results[-1]['sd']:.1f}")
    if args.json:
        print(json.dumps({"store": args.store, "l2": args.l2, "results": results}))


if __name__ == "__main__":
    main()
