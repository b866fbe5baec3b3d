#!/usr/bin/env python3
"""Hand-made baselines for few clips a label: joint angles, then clip statistics and logistic
regression, or the nearest drawn clip by dynamic time warping (`--method dtw`). A yardstick for issue 52's learning curves (what a fitness-app recipe without a
net gets from the same keypoints and the same draws), never a part of poseact.

    python angle_baseline.py STORE.h5 [--method lr|dtw] [--clips 5,10,20] [--draws 1,2,3] [--l2 0.01]
                             [--length 64] [--band 16] [--dev N] [--json]

STORE.h5 is a `poseact extract` store of BlazePose's 33 landmarks with a train and a test
split (the push-up recipe's). Per frame, six angles, each on the side whose three joints are
surer: elbow (shoulder–elbow–wrist), hip (shoulder–hip–knee), knee (hip–knee–ankle),
shoulder (elbow–shoulder–hip), body line (shoulder–hip–ankle), neck (nose–shoulder–hip);
per clip their mean, standard deviation and 10th and 90th percentiles over the frames where
that side's joints are above 0.3. The draws are poseact's (`data.clips_per_label`, `data.draw`:
per label, sorted, its clips shuffled by one SplitMix64 stream seeded draw + 0xD4A3, the first
N kept), so each row is beside the learning curve's on the same clips. Features are
standardised on the drawn clips; the regression is gradient descent on the mean log-loss plus
l2 · |w|² / 2 (the 0.01 default was chosen on the push-up dev split). `dtw`: the angle series,
standardised on the drawn clips and resampled to --length frames, and the label of the drawn
clip nearest by DTW within a Sakoe-Chiba band of --band frames. `--dev N` holds N train clips
a label out (SplitMix64 seed 52) and scores them instead of the test split. Prints the clip
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


def surer_side(kp, triple):
    """One of ANGLES per frame, on the side whose three joints are surer, and whether that
    side's joints are above 0.3."""
    left, sure_l = angle(kp, [t.format("left") for t in triple])
    right, sure_r = angle(kp, [t.format("right") for t in triple])
    a = np.where(sure_l >= sure_r, left, right)
    return a, np.isfinite(a) & (np.maximum(sure_l, sure_r) > 0.3)


def angle_series(kp):
    """Per frame, the six angles on the surer side; a frame whose side is unsure takes the
    nearest sure frame's value (the whole clip's median if none is sure)."""
    out = []
    for triple in ANGLES:
        a, ok = surer_side(kp, triple)
        if ok.sum() == 0:
            a = np.full(len(a), np.nanmedian(a) if np.isfinite(a).any() else 90.0)
        else:
            sure = np.flatnonzero(ok)
            a = np.interp(np.arange(len(a)), sure, a[sure])
        out.append(a)
    return np.stack(out, 1)


def resampled(series, length):
    t = np.linspace(0, len(series) - 1, length)
    return np.stack([np.interp(t, np.arange(len(series)), series[:, j]) for j in range(series.shape[1])], 1)


def dtw_distances(a, b, band):
    """DTW distance between every sequence of a (P, L, F) and its partner in b (P, L, F),
    all pairs at once; squared Euclidean cost a frame, steps (1,1), (1,0), (0,1), within a
    Sakoe-Chiba band of `band` frames."""
    P, L, _ = a.shape
    cost = ((a[:, :, None, :] - b[:, None, :, :]) ** 2).sum(-1)
    D = np.full((P, L + 1, L + 1), np.inf)
    D[:, 0, 0] = 0
    for i in range(1, L + 1):
        for j in range(max(1, i - band), min(L, i + band) + 1):
            D[:, i, j] = cost[:, i - 1, j - 1] + np.minimum(np.minimum(D[:, i - 1, j - 1], D[:, i - 1, j]), D[:, i, j - 1])
    return D[:, L, L]


def features(kp):
    out = []
    for triple in ANGLES:
        a, ok = surer_side(kp, triple)
        a = a[ok] if ok.sum() > 3 else np.nan_to_num(a)
        out += [a.mean(), a.std(), np.percentile(a, 10), np.percentile(a, 90)]
    return np.array(out)


def logistic_regression(x, train, test, y, l2):
    mu, sd = x[train].mean(0), x[train].std(0) + 1e-6
    z, t = (x[train] - mu) / sd, y[train].astype(float)
    w, b = np.zeros(z.shape[1]), 0.0
    for _ in range(2000):
        g = 1 / (1 + np.exp(-(z @ w + b))) - t
        w -= 0.1 * (z.T @ g / len(t) + l2 * w)
        b -= 0.1 * g.mean()
    return (((x[test] - mu) / sd) @ w + b) > 0


def nearest_by_dtw(series, train, test, y, length, band):
    """1-nearest-neighbour by DTW on the angle series, each angle standardised on the drawn clips."""
    drawn = np.concatenate([series[i] for i in train])
    mu, sd = drawn.mean(0), drawn.std(0) + 1e-6
    z = {i: resampled((series[i] - mu) / sd, length) for i in list(train) + list(test)}
    pairs = [(i, j) for i in test for j in train]
    d = dtw_distances(np.stack([z[i] for i, _ in pairs]), np.stack([z[j] for _, j in pairs]), band)
    d = d.reshape(len(test), len(train))
    return y[np.array(train)][d.argmin(1)] == 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("store")
    p.add_argument("--clips", default="5,10,20")
    p.add_argument("--draws", default="1,2,3")
    p.add_argument("--method", choices=["lr", "dtw"], default="lr",
                   help="lr: clip statistics and logistic regression; dtw: the nearest drawn clip by dynamic time warping")
    p.add_argument("--l2", type=float, default=0.01)
    p.add_argument("--length", type=int, default=64, help="dtw: frames each clip is resampled to")
    p.add_argument("--band", type=int, default=16, help="dtw: the Sakoe-Chiba band, in resampled frames")
    p.add_argument("--dev", type=int, default=0,
                   help="score on a dev split instead of test: N train clips a label held out (seed 52), the draws from the rest")
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
    series = [angle_series(c[3]) for c in clips]
    y = np.array([labels.index(c[1]) if c[1] in labels else -1 for c in clips])
    test = [i for i, c in enumerate(clips) if c[2] == "test" and y[i] >= 0]
    if args.dev:
        rng = SplitMix64(52)
        held = set()
        for label in labels:
            held |= set(shuffled(sorted(ids[i] for i, c in enumerate(clips) if c[1] == label and c[2] == "train"), rng)[:args.dev])
        test = [ids.index(k) for k in sorted(held)]
        clips = [(c[0], c[1], "dev-test" if c[0] in held else c[2], c[3]) for c in clips]
    results = []
    for n in (int(v) for v in args.clips.split(",")):
        accuracies = []
        for d in (int(v) for v in args.draws.split(",")):
            rng = SplitMix64(d + 0xD4A3)
            kept = []
            for label in labels:
                kept += shuffled(sorted(ids[i] for i, c in enumerate(clips) if c[1] == label and c[2] == "train"), rng)[:n]
            train = [ids.index(k) for k in kept]
            if args.method == "dtw":
                predicted = nearest_by_dtw(series, train, test, y, args.length, args.band)
            else:
                predicted = logistic_regression(x, train, test, y, args.l2)
            accuracies.append(float((predicted == (y[test] == 1)).mean()))
        results.append({"clips_per_label": n, "clip_accuracy": accuracies, "mean": float(np.mean(accuracies)),
                        "sd": float(np.std(accuracies, ddof=1)) if len(accuracies) > 1 else 0.0})
        if not args.json:
            print(f"{n} clips a label: test clip accuracy " + ", ".join(f"{100 * a:.1f}" for a in accuracies)
                  + f" %; mean {100 * results[-1]['mean']:.1f} ± {100 * results[-1]['sd']:.1f}")
    if args.json:
        print(json.dumps({"store": args.store, "method": args.method, "l2": args.l2, "results": results}))


if __name__ == "__main__":
    main()
