#!/usr/bin/env python3
"""PyTorch reference for poseact's training: the same model (model.type tcn, or the graph
models stgcn and stgcn++ of pytorch_stgcn.py), data split, optimiser, schedule and
augmentation, to compare training speed and accuracy. A yardstick only, never a
dependency of poseact.

    python pytorch_tcn.py --config configs/penn-action.yaml --data WINDOWS.h5 \
        [--epochs N] [--threads T] [--seed S] [--patience P] [--validation-share F] [--json]
    python pytorch_tcn.py --print-defaults    # DEFAULTS as JSON (standard library only)
    python pytorch_tcn.py --print-parents     # PARENT_NAMES as JSON (standard library only)

WINDOWS.h5 is a `poseact windows` file (format "poseact-windows"). One line per epoch:
train loss/accuracy, validation loss/accuracy, and the seconds of the training pass alone
(batch assembly, augmentation, forward, backward, clipping, step over every training
window; validation excluded). Then test window and clip accuracy of the best-validation-
loss weights, the parameter count, the median seconds per epoch and windows per second.
With --json the last stdout line is one JSON object.

The config takes every key poseact's does (configs/penn-action.yaml; DEFAULTS are its
built-in defaults, and Tests/ClassifierTests/MirrorTests.swift fails when they drift).
Mirrored: the features position, confidence, presence, velocity, bone, bone_velocity and
world (the flip negates the x channels of position, velocity, bone, bone_velocity and world;
rotation and scale turn position, velocity, bone and bone_velocity); model.type (tcn: the
keys channels, dilations, kernel; stgcn, stgcn++: model.blocks, the skeleton graph of the
windows file's joints); model.input_norm (a BatchNorm over the input channels before
the first layer); cross-validation (data.folds, data.fold: the train split's clips dealt
into folds as TrainingData.foldGroups does, the test split unused); augmentation.occlude;
augmentation.mixup (the batch mixed with a shuffled copy of itself, λ ~ Beta(α, α) drawn
from the same stream as poseact's); training.ema_epochs (the model is the moving average
of the weights and batch-norm statistics, WeightAverage.swift's rule).
The preprocessing section is accepted but not applied: the spec stored in the windows file
is what counts, as in poseact. Refused at anything but the default: model.pooling other
than mean, training.window_weighting clip, augmentation.turn_degrees (a windows file
has no depth; poseact refuses it on one too), model.pretrained and training.freeze_epochs
(the mirror is the from-random-weights yardstick), and model.streams (poseact trains one
net per stream; here run once per stream, on a windows file with that stream's features).

What mirrors poseact bit for bit (same SplitMix64 streams): the TCN's initial weights, the
validation clips, the cross-validation folds, each epoch's shuffle and every augmentation
draw. What cannot: dropout masks (torch's generator) and float summation order (MKL/oneDNN
vs OpenBLAS), so runs diverge after the first step and agree in distribution only; the
graph models therefore start from PyTorch's default initialisation, not poseact's weights.
"""
import argparse
import copy
import functools
import json
import math
import os
import statistics
import sys
import time
import unicodedata

# ---- config ----------------------------------------------------------------------------
# poseact's built-in defaults (TrainingConfig(), written out in configs/penn-action.yaml),
# every key poseact's config has, section by section in the order of TrainingConfig.yaml().
# MirrorTests.swift compares them with poseact's at test time: keep them in step.
DEFAULTS = {
    "data": {"store": None, "train_split": "train", "test_split": "test", "validation_share": 0.1,
             "validation_group": "source", "folds": 0, "fold": 1,
             "clips_per_label": 0, "draw": 1},
    "preprocessing": {"joints": "vision", "fps": 30, "window": 32, "stride": 8, "min_pose_share": 0.6,
                      "min_confidence": 0.2, "min_joint_share": 0.25, "normalization": "root_torso",
                      "outside_frame": "keep", "centre": "window", "torso": "mean",
                      "keypoint_filter": "none", "features": ["position", "confidence", "velocity"]},
    "model": {"type": "tcn", "channels": 128, "dilations": [1, 2, 4, 8], "kernel": 5, "blocks": [64, 64, 128, 128],
              "streams": [], "stream_weights": [], "dropout": 0.1, "pooling": "mean", "flip_average": True,
              "input_norm": False, "pretrained": "auto"},
    "optimizer": {"name": "adamw", "learning_rate": 0.001, "min_learning_rate": 0.00001, "warmup_epochs": 1,
                  "weight_decay": 0.01, "gradient_clip": 5, "batch_size": 32},
    "training": {"epochs": 40, "patience": 0, "keep": "last", "class_weighting": "none", "window_weighting": "window",
                 "label_smoothing": 0, "ema_epochs": 5, "freeze_epochs": 0, "seed": 1, "threads": 0},
    "augmentation": {"flip": True, "rotation_degrees": 0, "scale": [1, 1], "translation": 0, "jitter": 0,
                     "time_stretch": [1, 1], "drop_frames": 0, "occlude": 0, "turn_degrees": 0, "mixup": 0},
}

# Skeleton.parentNames: a tree rooted at root (mid-hips), the spine through neck, limbs outwards.
# MirrorTests.swift compares the two (--print-parents).
PARENT_NAMES = {
    "neck": "root", "head": "neck", "nose": "neck",
    "left_eye_inner": "nose", "left_eye": "nose", "left_eye_outer": "left_eye", "left_ear": "left_eye",
    "right_eye_inner": "nose", "right_eye": "nose", "right_eye_outer": "right_eye", "right_ear": "right_eye",
    "mouth_left": "nose", "mouth_right": "nose",
    "left_shoulder": "neck", "left_elbow": "left_shoulder", "left_wrist": "left_elbow",
    "left_pinky": "left_wrist", "left_index": "left_wrist", "left_thumb": "left_wrist",
    "right_shoulder": "neck", "right_elbow": "right_shoulder", "right_wrist": "right_elbow",
    "right_pinky": "right_wrist", "right_index": "right_wrist", "right_thumb": "right_wrist",
    "left_hip": "root", "left_knee": "left_hip", "left_ankle": "left_knee",
    "left_heel": "left_ankle", "left_foot_index": "left_ankle",
    "right_hip": "root", "right_knee": "right_hip", "right_ankle": "right_knee",
    "right_heel": "right_ankle", "right_foot_index": "right_ankle",
}

if __name__ == "__main__" and ("--print-defaults" in sys.argv[1:] or "--print-parents" in sys.argv[1:]):
    # Before the heavy imports: this needs nothing beyond the standard library.
    print(json.dumps(DEFAULTS if "--print-defaults" in sys.argv[1:] else PARENT_NAMES))
    sys.exit(0)

# libgomp's default wait policy spins at every parallel region; when another process holds
# a core (a shared machine) a 2-thread step then takes ~40× longer (measured here: 970 ms
# against 40 ms). PASSIVE costs a few % on an idle machine. Set OMP_WAIT_POLICY to override.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import h5py
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml

from pytorch_stgcn import GraphNet, skeleton_partitions

MASK64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


# ---- SplitMix64, as Sources/Tensor/SplitMix64.swift ------------------------------------
class SplitMix64:
    """Counter-based: the i-th draw (1-based) is mix(seed + i·γ), so n draws vectorise."""

    def __init__(self, seed):
        self.state = seed & MASK64

    @staticmethod
    def _mix(z):
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 & MASK64
        z = (z ^ (z >> 27)) * 0x94D049BB133111EB & MASK64
        return z ^ (z >> 31)

    def next(self):
        self.state = (self.state + GAMMA) & MASK64
        return self._mix(self.state)

    def below(self, n):
        return 0 if n <= 0 else self.next() % n

    def uniform(self):
        return (self.next() >> 11) / float(1 << 53)

    def gaussian(self):
        u1 = max(self.uniform(), 1e-300)
        u2 = self.uniform()
        return math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)

    def gamma(self, shape):
        """Marsaglia and Tsang, as SplitMix64.gamma in poseact (the same draws)."""
        if shape < 1:
            return self.gamma(shape + 1) * max(self.uniform(), 1e-300) ** (1 / shape)
        d = shape - 1.0 / 3
        c = 1 / math.sqrt(9 * d)
        while True:
            x = self.gaussian()
            v0 = 1 + c * x
            if v0 <= 0:
                continue
            v, u = v0 * v0 * v0, self.uniform()
            if math.log(max(u, 1e-300)) < 0.5 * x * x + d - d * v + d * math.log(v):
                return d * v

    def beta(self, a, b):
        x, y = self.gamma(a), self.gamma(b)
        return x / (x + y) if x + y > 0 else 0.5

    def next_array(self, n):
        """The next n draws as uint64 (numpy wraps array arithmetic mod 2^64)."""
        i = np.arange(1, n + 1, dtype=np.uint64)
        with np.errstate(over="ignore"):
            z = np.uint64(self.state) + i * np.uint64(GAMMA)
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            z = z ^ (z >> np.uint64(31))
        self.state = (self.state + n * GAMMA) & MASK64
        return z

    def uniforms(self, n):
        return (self.next_array(n) >> np.uint64(11)).astype(np.float64) / float(1 << 53)

    def gaussians(self, n):
        u = self.uniforms(2 * n).reshape(n, 2)
        u1 = np.maximum(u[:, 0], 1e-300)
        return np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u[:, 1])


def shuffled(items, rng):
    """Fisher–Yates as Array.shuffledDeterministically (Trainer's data split and epochs)."""
    a = list(items)
    for i in range(len(a) - 1, 0, -1):
        j = rng.below(i + 1)
        a[i], a[j] = a[j], a[i]
    return a


def swift_round(x):
    """Swift's .rounded(): half away from zero."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


# ---- config checks, as TrainingConfig.parse and .problems ------------------------------
CHOICES = {
    ("data", "validation_group"): ("source", "clip"),
    ("preprocessing", "normalization"): ("none", "root_torso"),
    ("preprocessing", "outside_frame"): ("keep", "missing"),
    ("preprocessing", "centre"): ("window", "frame"),
    ("preprocessing", "torso"): ("mean", "median"),
    ("preprocessing", "keypoint_filter"): ("none", "one_euro"),
    ("model", "type"): ("tcn", "stgcn", "stgcn++"),
    ("model", "pooling"): ("mean", "max", "mean_max"),
    ("optimizer", "name"): ("adamw", "adam"),
    ("training", "keep"): ("last", "best"),
    ("training", "class_weighting"): ("none", "balanced"),
    ("training", "window_weighting"): ("window", "clip"),
}


def read_config_file(path, chain=()):
    """The file's sections over its base's (`base:`, a path relative to the file's folder),
    key by key, as poseact's TrainingConfig.load reads them."""
    with open(path) as f:
        doc = yaml.safe_load(f) or {}
    if not isinstance(doc, dict) or "base" not in doc:
        return doc
    base = doc.pop("base")
    base_path = base if os.path.isabs(base) else os.path.join(os.path.dirname(path), base)
    if os.path.realpath(base_path) in [os.path.realpath(p) for p in (*chain, path)]:
        sys.exit(f"{path}: base: '{base}' makes a cycle ({' → '.join((*chain, path, base_path))}); remove one base")
    if not os.path.isfile(base_path):
        sys.exit(f"{path}: base: cannot read '{base_path}' (the path is relative to this file's folder)")
    merged = read_config_file(base_path, (*chain, path))
    for section, values in doc.items():
        both = isinstance(values, dict) and isinstance(merged.get(section), dict)
        merged[section] = {**merged[section], **values} if both else values
    return merged


def load_config(path):
    cfg = copy.deepcopy(DEFAULTS)
    doc = read_config_file(path) if path else {}
    for section, values in doc.items():
        if section not in cfg:
            sys.exit(f"{path}: unknown section '{section}' (known: {', '.join(cfg)})")
        for k, v in (values or {}).items():
            if k not in cfg[section]:
                sys.exit(f"{path}: unknown key {section}.{k} (known here: {', '.join(cfg[section])})")
            cfg[section][k] = v
    for (section, key), known in CHOICES.items():
        if cfg[section][key] not in known:
            sys.exit(f"{path}: {section}.{key} must be one of {', '.join(known)}, not {cfg[section][key]!r}")
    features = cfg["preprocessing"]["features"]
    if not isinstance(features, list) or not features or any(f not in FEATURE_WIDTH for f in features):
        sys.exit(f"{path}: preprocessing.features must be a list of {', '.join(FEATURE_WIDTH)}, not {features!r}")
    d = cfg["data"]
    folds, fold = d["folds"], d["fold"]
    if not isinstance(folds, int) or folds == 1 or folds < 0:
        sys.exit(f"{path}: data.folds must be 0 (no cross-validation) or at least 2, not {folds!r}")
    if folds >= 2 and not (isinstance(fold, int) and 1 <= fold <= folds):
        sys.exit(f"{path}: data.fold must be in 1…{folds}, not {fold!r}")
    if cfg["model"]["pooling"] != "mean":
        sys.exit(f"model.pooling {cfg['model']['pooling']!r}: only mean is mirrored")
    if cfg["training"]["window_weighting"] != "window":
        sys.exit(f"training.window_weighting {cfg['training']['window_weighting']!r}: only window is mirrored")
    m = cfg["model"]
    if m["streams"] or m["stream_weights"]:
        sys.exit(f"model.streams {m['streams']!r}, model.stream_weights {m['stream_weights']!r}: poseact trains one "
                 "net per stream, this mirror one net; run it once per stream instead, on a windows file cut with "
                 "that stream's features, with both lists empty")
    blocks = m["blocks"]
    if m["type"] != "tcn" and (not isinstance(blocks, list) or not blocks
                               or any(not isinstance(b, int) or b < 1 for b in blocks)):
        sys.exit(f"{path}: model.blocks must be a list of channel counts (one block each), not {blocks!r}")
    if m["type"] == "stgcn++" and min(blocks) < 5:
        sys.exit(f"{path}: model.blocks {blocks}: stgcn++ needs at least 5 channels a block (five temporal branches)")
    occlude = float(cfg["augmentation"]["occlude"] or 0)
    if not 0 <= occlude <= 1:
        sys.exit(f"{path}: augmentation.occlude must be in [0, 1], not {occlude}")
    if cfg["model"]["pretrained"] not in ("none", "auto") or int(cfg["training"]["freeze_epochs"] or 0) != 0:
        sys.exit("model.pretrained / training.freeze_epochs: the mirror trains from random weights only (the yardstick "
                 "beside a pretrained run); set model.pretrained: none and training.freeze_epochs: 0")
    if float(cfg["augmentation"]["turn_degrees"] or 0) != 0:
        sys.exit(f"augmentation.turn_degrees {cfg['augmentation']['turn_degrees']}: a windows file has no depth, which "
                 "the turn needs (poseact refuses it on a windows file too); set it to 0")
    return cfg


def as_range(v):
    """scale / time_stretch: [low, high], a single number (both), or false/0 (off)."""
    if v is False or v is None or v == 0:
        return (1.0, 1.0)
    if isinstance(v, (int, float)):
        return (float(v), float(v))
    return (float(v[0]), float(v[1]))


# ---- data ------------------------------------------------------------------------------
def canonical_name(name):
    out, prev_lower = [], False
    for ch in name:
        if ch in " -.":
            if out and out[-1] != "_":
                out.append("_")
            prev_lower = False
        elif ch.isupper():
            if prev_lower and out and out[-1] != "_":
                out.append("_")
            out.append(ch.lower())
            prev_lower = False
        else:
            out.append(ch)
            prev_lower = ch.islower() or ch.isdigit()
    return "".join(out)


def layout_index(name, layout):
    """Skeleton.index(of:in:): the exact name, else the first of the same canonical spelling."""
    if name in layout:
        return layout.index(name)
    c = canonical_name(name)
    return next((i for i, n in enumerate(layout) if canonical_name(n) == c), None)


def mirror_permutation(layout):
    """For each joint, the index of its left/right partner (itself for centre joints or
    when the partner is missing), as Skeleton.mirrorPermutation + the flip's fallback."""
    perm = []
    for j, name in enumerate(layout):
        words = canonical_name(name).split("_")
        i = layout_index("_".join({"left": "right", "right": "left"}.get(w, w) for w in words), layout)
        perm.append(j if i is None else i)
    return perm




def parent_positions(layout):
    """Skeleton.parentPositions: each joint's parent in the layout, else the parent's parent
    and so on; None for root, unknown names, and where no ancestor is in the layout."""
    out = []
    for name in layout:
        p, found = PARENT_NAMES.get(canonical_name(name)), None
        while p is not None and found is None:
            found = layout_index(p, layout)
            p = PARENT_NAMES.get(p)
        out.append(found)
    return out


# Per-joint channels, as Sources/KeypointWindows/Preprocessing.swift's Feature.width. bone_velocity:
# dx, dy of the bone (joint minus parent) from the previous frame, per second.
FEATURE_WIDTH = {"position": 2, "confidence": 1, "presence": 1, "velocity": 2, "bone": 2, "bone_velocity": 2,
                 "world": 3}
# Features whose first channel is an x (Augmentation.swift's xChannels): the flip negates it.
X_FEATURES = ("position", "velocity", "bone", "bone_velocity", "world")


def feature_offset(features, feature):
    o = 0
    for f in features:
        if f == feature:
            return o
        o += FEATURE_WIDTH[f]
    return None


def numeric_compare(a, b):
    """Swift's a.compare(b, options: .numeric): runs of digits compare as numbers ("clip7"
    before "clip12", "a01" the same as "a1"), other characters one by one (decomposed, as
    Foundation's non-literal compare)."""
    a, b = unicodedata.normalize("NFD", a), unicodedata.normalize("NFD", b)
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] in "0123456789" and b[j] in "0123456789":
            i0, j0 = i, j
            while i < len(a) and a[i] in "0123456789":
                i += 1
            while j < len(b) and b[j] in "0123456789":
                j += 1
            x, y = int(a[i0:i]), int(b[j0:j])
            if x != y:
                return -1 if x < y else 1
        else:
            if a[i] != b[j]:
                return -1 if a[i] < b[j] else 1
            i += 1
            j += 1
    rest_a, rest_b = len(a) - i, len(b) - j
    return (rest_a > rest_b) - (rest_a < rest_b)


def fold_groups(label_of_group, folds, chunk=5):
    """TrainingData.foldGroups: within each label (labels sorted) the groups in natural
    order, dealt out in runs of `chunk`: run r to fold r mod k. One set of groups per fold."""
    out = [set() for _ in range(folds)]
    by_label = {}
    for g, l in label_of_group.items():
        by_label.setdefault(l, []).append(g)
    for label in sorted(by_label):
        # Ties (equal as numbers: "a01", "a1") are in no set order in poseact; here by name.
        groups = sorted(sorted(by_label[label]), key=functools.cmp_to_key(numeric_compare))
        for i, g in enumerate(groups):
            out[(i // chunk) % folds].add(g)
    return out


def attr_strings(a):
    return [x.decode() if isinstance(x, bytes) else str(x) for x in np.atleast_1d(a)]


def load_windows(path, cfg, seed):
    """Train / validation / test as Sources/Classifier/TrainingData.swift does for a windows
    file: validation is whole clips (a windows file has no sources to group by), chosen per
    label with the same SplitMix64 stream, so the same clips as poseact's."""
    with h5py.File(path, "r") as f:
        if f.attrs.get("format") not in ("poseact-windows", b"poseact-windows"):
            sys.exit(f"{path}: not a poseact windows file (poseact windows STORE --output FILE)")
        spec = json.loads(f.attrs["spec"])
        label_names = attr_strings(f.attrs["label_names"])
        clip_ids = attr_strings(f.attrs["clip_ids"])
        split_names = attr_strings(f.attrs["split_names"])
        values = f["values"][...].astype(np.float32)
        mask = f["mask"][...].astype(np.float32)
        labels = f["labels"][...].astype(np.int64)
        clips = f["clips"][...].astype(np.int64)
        splits = f["splits"][...].astype(np.int64)
    n = len(labels)
    if values.shape != (n, spec["window"], len(spec["joints"]) * sum(FEATURE_WIDTH[x] for x in spec["features"])):
        sys.exit(f"{path}: values {values.shape} disagree with the spec")
    split_of = np.array([split_names[s] for s in splits])
    label_of = [label_names[l] for l in labels]
    clip_of = [clip_ids[c] for c in clips]
    d = cfg["data"]
    has_splits = not (len(split_names) == 1 and split_names[0] == "")
    if has_splits:
        train_idx = [i for i in range(n) if split_of[i] == d["train_split"]]
        test_idx = [i for i in range(n) if d["test_split"] is not None and split_of[i] == d["test_split"]]
    else:
        train_idx, test_idx = list(range(n)), []
    if not train_idx:
        sys.exit(f"{path}: no windows of split '{d['train_split']}'")
    classes = sorted({label_of[i] for i in train_idx})
    folds = int(d["folds"])
    if folds >= 2:
        # Cross-validation: every clip of the train split (a windows file's group is its clip)
        # goes to a fold; fold `fold` is the test side, the test split is not used.
        clips = {clip_of[i]: label_of[i] for i in range(n) if not has_splits or split_of[i] == d["train_split"]}
        held = fold_groups(clips, folds)[int(d["fold"]) - 1]
        test_idx = [i for i in train_idx if clip_of[i] in held]
        train_idx = [i for i in train_idx if clip_of[i] not in held]
    per_label = int(d["clips_per_label"] or 0)
    if per_label > 0:
        # A learning curve's draw, as TrainingData.drawGroups: per label (sorted), its clips
        # sorted and shuffled with one SplitMix64 stream seeded draw + 0xD4A3, the first kept.
        rng = SplitMix64(int(d["draw"]) + 0xD4A3)
        by_label = {}
        for i in train_idx:
            by_label.setdefault(label_of[i], set()).add(clip_of[i])
        kept = set()
        for label in sorted(by_label):
            kept |= set(shuffled(sorted(by_label[label]), rng)[:per_label])
        train_idx = [i for i in train_idx if clip_of[i] in kept]
    test_idx = [i for i in test_idx if label_of[i] in set(classes)]
    # model.pretrained auto: poseact starts from a shipped backbone when the smallest label has
    # fewer than 10 training clips (Backbone.autoBelowClips); the mirror has none to load.
    clips_of_label = {}
    for i in train_idx:
        clips_of_label.setdefault(label_of[i], set()).add(clip_of[i])
    if cfg["model"]["pretrained"] == "auto" and min(len(c) for c in clips_of_label.values()) < 10:
        sys.exit(f"{path}: model.pretrained auto with {min(len(c) for c in clips_of_label.values())} training clips for the "
                 "smallest label: poseact may start from a shipped backbone, which the mirror cannot; set "
                 "model.pretrained: none for both")

    val_clips = set()
    share = float(d["validation_share"])
    if share > 0:
        rng = SplitMix64(seed + 0x5EED)
        clips_of = {}
        for i in train_idx:
            clips_of.setdefault(label_of[i], set()).add(clip_of[i])
        label_of_clip = {clip_of[i]: label_of[i] for i in train_idx}
        groups = shuffled(sorted({clip_of[i] for i in train_idx}), rng)
        target = {l: max(1, swift_round(share * len(c))) for l, c in clips_of.items() if len(c) >= 2}
        taken = {}
        for g in groups:
            l = label_of_clip[g]
            if taken.get(l, 0) < target.get(l, 0) and taken.get(l, 0) + 1 < len(clips_of[l]):
                val_clips.add(g)
                taken[l] = taken.get(l, 0) + 1
    val_idx = [i for i in train_idx if clip_of[i] in val_clips]
    train_idx = [i for i in train_idx if clip_of[i] not in val_clips]
    cls = {l: k for k, l in enumerate(classes)}

    def side(idx):
        idx = np.asarray(idx, dtype=np.int64)
        return {"x": torch.from_numpy(values[idx]), "mask": torch.from_numpy(mask[idx]),
                "y": torch.tensor([cls[label_of[i]] for i in idx], dtype=torch.long),
                "clips": [clip_of[i] for i in idx]}

    return spec, classes, side(train_idx), side(val_idx), side(test_idx)


# ---- model, as Sources/Classifier/Models/TCN.swift -------------------------------------
class Block(nn.Module):
    """Conv1D ('same', no bias) → BatchNorm → ReLU → Dropout (+ input when channels match)."""

    def __init__(self, cin, cout, kernel, dilation, p):
        super().__init__()
        total = dilation * (kernel - 1)
        self.pad = (total // 2, total - total // 2)   # left = d·(k−1)/2, the rest right
        symmetric = self.pad[0] == self.pad[1]
        self.conv = nn.Conv1d(cin, cout, kernel, dilation=dilation, bias=False,
                              padding=self.pad[0] if symmetric else 0)
        self.explicit_pad = not symmetric
        self.bn = nn.BatchNorm1d(cout, eps=1e-5, momentum=0.1)
        self.drop = nn.Dropout(p)
        self.residual = cin == cout

    def forward(self, x):   # (B, C, T)
        h = F.pad(x, self.pad) if self.explicit_pad else x
        h = self.drop(F.relu(self.bn(self.conv(h))))
        return x + h if self.residual else h


class TCN(nn.Module):
    def __init__(self, cin, classes, channels, dilations, kernel, dropout, input_norm=False):
        super().__init__()
        # model.input_norm: BatchNorm over the input channels before the first block; made
        # first, so that its γ, β lead the parameters as input_bn.gamma/beta do in poseact.
        self.input_bn = nn.BatchNorm1d(cin, eps=1e-5, momentum=0.1) if input_norm else None
        blocks, c = [], cin
        for d in dilations:
            blocks.append(Block(c, channels, kernel, d, dropout))
            c = channels
        self.blocks = nn.ModuleList(blocks)
        self.head = nn.Linear(c, classes)

    def forward(self, x, mask):   # x (B,T,C) channels last, mask (B,T) → logits (B,K)
        h = x.transpose(1, 2)
        if self.input_bn is not None:
            h = self.input_bn(h)
        for b in self.blocks:
            h = b(h)
        total = mask.sum(1, keepdim=True)
        pooled = torch.bmm(h, mask.unsqueeze(2)).squeeze(2)          # Σ_t mask·h, (B, C)
        pooled = pooled * torch.where(total > 0, 1 / total.clamp_min(1e-30), torch.zeros_like(total))
        return self.head(pooled)

    @torch.no_grad()
    def init_like_poseact(self, seed):
        """The very weights poseact's TCN(seed:) starts from: one SplitMix64 stream, per block
        the conv weight N(0, 2/(k·C_in)) in [oc][k][c] order then one draw for the dropout's
        seed, then the head N(0, 1/in) (gain 1/√2); biases 0, BN γ=1 β=0 (the input BN's
        too: it draws nothing from the stream)."""
        rng = SplitMix64(seed)
        if self.input_bn is not None:
            self.input_bn.reset_parameters()
        for b in self.blocks:
            oc, ic, k = b.conv.weight.shape
            w = rng.gaussians(oc * k * ic) * math.sqrt(2.0 / (k * ic))
            b.conv.weight.copy_(torch.from_numpy(w.astype(np.float32).reshape(oc, k, ic).transpose(0, 2, 1).copy()))
            rng.next()
            b.bn.reset_parameters()
        o, i = self.head.weight.shape
        w = rng.gaussians(o * i) * (math.sqrt(0.5) * math.sqrt(2.0 / i))
        self.head.weight.copy_(torch.from_numpy(w.astype(np.float32).reshape(o, i)))
        self.head.bias.zero_()


# ---- augmentation, as Sources/KeypointWindows/Augmentation.swift -------------------------------
def occlusion_parts(layout):
    """AugmentationSpec.occlusionParts: the feet, the legs (feet and knees), the head, as
    joint indices of the layout; a part the layout has none of is left out."""
    feet = {"left_ankle", "right_ankle", "left_heel", "right_heel", "left_foot_index", "right_foot_index"}
    legs = feet | {"left_knee", "right_knee"}
    head = {"head", "nose", "left_eye_inner", "left_eye", "left_eye_outer", "right_eye_inner", "right_eye",
            "right_eye_outer", "left_ear", "right_ear", "mouth_left", "mouth_right"}
    names = [canonical_name(n) for n in layout]
    parts = [[j for j, n in enumerate(names) if n in part] for part in (feet, legs, head)]
    return [p for p in parts if p]


class Augmenter:
    def __init__(self, aug, spec):
        self.flip = bool(aug["flip"])
        self.rotation = float(aug["rotation_degrees"] or 0)
        self.scale = as_range(aug["scale"])
        self.translation = float(aug["translation"] or 0)
        self.jitter = float(aug["jitter"] or 0)
        self.stretch = as_range(aug["time_stretch"])
        self.drop = float(aug["drop_frames"] or 0)
        self.occlude = float(aug["occlude"] or 0)
        feats = spec["features"]
        unknown = [f for f in feats if f not in FEATURE_WIDTH]
        if unknown:
            sys.exit(f"the windows file's features {unknown} are not known to this mirror")
        self.J = len(spec["joints"])
        self.fpj = sum(FEATURE_WIDTH[x] for x in feats)
        self.perm = torch.tensor(mirror_permutation(spec["joints"]), dtype=torch.long)
        sign = torch.ones(self.fpj)
        for f in X_FEATURES:   # the x channels change sign when mirrored
            o = feature_offset(feats, f)
            if o is not None:
                sign[o] = -1
        self.sign = sign
        self.pos = feature_offset(feats, "position")
        self.vel = feature_offset(feats, "velocity")
        self.bone = feature_offset(feats, "bone")
        self.bone_velocity = feature_offset(feats, "bone_velocity")
        self.parts = occlusion_parts(spec["joints"])
        self.only_flip = (self.rotation == 0 and self.scale == (1, 1) and self.translation == 0
                          and self.jitter == 0 and self.stretch == (1, 1) and self.drop == 0
                          and self.occlude == 0)
        self.any = self.flip or not self.only_flip

    def flip_batch(self, x, which):
        """x (B,T,C) → the windows where `which` is set mirrored (joints swapped, x negated)."""
        B, T, _ = x.shape
        v = x.view(B, T, self.J, self.fpj)
        flipped = v[:, :, self.perm, :] * self.sign
        return torch.where(which.view(B, 1, 1, 1), flipped, v).reshape(B, T, -1)

    def batch(self, x, m, rng):
        """Augments a batch (copies) with draws in poseact's per-window order."""
        if not self.any:
            return x, m
        if self.only_flip:   # one draw per window: vectorised
            which = torch.from_numpy(rng.uniforms(x.shape[0]) < 0.5)
            return self.flip_batch(x, which), m
        xs, ms = x.numpy().copy(), m.numpy().copy()
        for i in range(xs.shape[0]):
            xs[i], ms[i] = self.window(xs[i], ms[i], rng)
        return torch.from_numpy(xs), torch.from_numpy(ms)

    def window(self, values, mask, rng):
        """One window, every switch, the same draws as AugmentationSpec.augment."""
        T, J, fpj = mask.shape[0], self.J, self.fpj
        v = values.reshape(T, J, fpj).copy()
        mask = mask.copy()

        def uniform(lo, hi):
            return lo + (hi - lo) * rng.uniform()

        if self.stretch != (1, 1):
            s = uniform(*self.stretch)
            centre = (T - 1) / 2
            nv, nm = np.zeros_like(v), np.zeros_like(mask)
            for t in range(T):
                src = swift_round(centre + (t - centre) * s)
                if 0 <= src < T:
                    nm[t] = mask[src]
                    nv[t] = v[src]
            v, mask = nv, nm
        if self.drop > 0:
            dropped = (rng.uniforms(T) < self.drop) & (mask > 0)
            mask[dropped] = 0
            v[dropped] = 0
        if self.flip and rng.uniform() < 0.5:
            v = v[:, self.perm.numpy(), :] * self.sign.numpy()
        if self.occlude > 0 and rng.uniform() < self.occlude and self.parts:
            # One body part missing in every frame (its values 0, the mask as it was).
            part = self.parts[min(len(self.parts) - 1, int(rng.uniform() * len(self.parts)))]
            v[:, part, :] = 0
        present = (mask > 0)[:, None] & (v != 0).any(axis=2)
        angle = uniform(-self.rotation, self.rotation) * math.pi / 180 if self.rotation > 0 else 0.0
        k = uniform(*self.scale) if self.scale != (1, 1) else 1.0
        dx = uniform(-self.translation, self.translation) if self.translation > 0 else 0.0
        dy = uniform(-self.translation, self.translation) if self.translation > 0 else 0.0
        if angle != 0 or k != 1 or dx != 0 or dy != 0:
            c, s = np.float32(math.cos(angle) * k), np.float32(math.sin(angle) * k)
            for off, shift in ((self.pos, True), (self.vel, False), (self.bone, False), (self.bone_velocity, False)):
                if off is None:
                    continue
                x, y = v[:, :, off].copy(), v[:, :, off + 1].copy()
                nx = c * x - s * y + (np.float32(dx) if shift else np.float32(0))
                ny = s * x + c * y + (np.float32(dy) if shift else np.float32(0))
                v[:, :, off] = np.where(present, nx, x)
                v[:, :, off + 1] = np.where(present, ny, y)
        if self.jitter > 0 and self.pos is not None:
            t_idx, j_idx = np.nonzero(present)   # row-major: t, then j, as poseact's loops
            g = rng.gaussians(2 * len(t_idx)).reshape(-1, 2) * self.jitter
            v[t_idx, j_idx, self.pos] += g[:, 0].astype(np.float32)
            v[t_idx, j_idx, self.pos + 1] += g[:, 1].astype(np.float32)
        return v.reshape(T, J * fpj), mask


# ---- training, as Sources/Classifier/Trainer.swift -------------------------------------
def cosine_lr(s, base, low, warmup, total):
    if s < warmup:
        return base * (s + 1) / warmup
    if s >= total:
        return low
    progress = (s - warmup) / (total - warmup)
    return low + (base - low) * 0.5 * (1 + math.cos(math.pi * progress))


def epoch_seed(seed, epoch):
    return SplitMix64(seed ^ ((epoch + 1) * GAMMA & MASK64)).next()


@torch.no_grad()
def probabilities(model, side, batch, mirror=None):
    """Softmax of each window; with `mirror` (an Augmenter: model.flip_average), the mean
    of the window's and its mirror image's, as poseact's ActionClassifier.probabilities."""
    model.eval()
    out = []
    for s in range(0, len(side["y"]), batch):
        x, m = side["x"][s:s + batch], side["mask"][s:s + batch]
        p = torch.softmax(model(x, m), dim=1)
        if mirror is not None:
            flipped = mirror.flip_batch(x, torch.ones(len(x), dtype=torch.bool))
            p = (p + torch.softmax(model(flipped, m), dim=1)) / 2
        out.append(p)
    return torch.cat(out) if out else torch.zeros(0, model.head.out_features)


def ms_per_window(model, side, mirror=None, count=200):
    """Median milliseconds of one window's probabilities, one window at a time as live asks
    (poseact bench train's ms_per_window), over up to `count` windows."""
    times = []
    for i in range(min(count, len(side["y"]))):
        one = {"x": side["x"][i:i + 1], "mask": side["mask"][i:i + 1], "y": side["y"][i:i + 1]}
        start = time.perf_counter()
        probabilities(model, one, 1, mirror)
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 3) if times else None


def loss_and_accuracy(model, side, batch, mirror=None):
    if len(side["y"]) == 0:
        return float("nan"), float("nan")
    p = probabilities(model, side, batch, mirror)
    pt = p[torch.arange(len(side["y"])), side["y"]].double().clamp_min(1e-12)
    return float(-pt.log().mean()), float((p.argmax(1) == side["y"]).double().mean())


def clip_accuracy(probs, side):
    sums, truth = {}, {}
    for i, c in enumerate(side["clips"]):
        if c not in sums:
            sums[c] = torch.zeros(probs.shape[1], dtype=torch.float64)
            truth[c] = int(side["y"][i])
        sums[c] += probs[i].double()
    if not sums:
        return float("nan"), 0
    right = sum(int(torch.argmax(s)) == truth[c] for c, s in sums.items())
    return right / len(sums), len(sums)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", help="training config (YAML); without it poseact's defaults")
    ap.add_argument("--data", required=True, help="windows file from poseact windows")
    ap.add_argument("--epochs", type=int, help="overrides training.epochs (the cosine schedule follows)")
    ap.add_argument("--threads", type=int, help="torch threads (overrides training.threads; 0 = all cores)")
    ap.add_argument("--seed", type=int, help="overrides training.seed")
    ap.add_argument("--patience", type=int, help="overrides training.patience (0 = no early stopping)")
    ap.add_argument("--validation-share", type=float,
                    help="overrides data.validation_share (0: train on every training clip, as poseact bench train)")
    ap.add_argument("--json", action="store_true", help="end with one JSON object on the last line")
    ap.add_argument("--print-defaults", action="store_true",
                    help="print the config defaults (every key poseact's config has) as JSON and exit")
    ap.add_argument("--print-parents", action="store_true",
                    help="print the skeleton's parent of each joint name (the graph models' edges) as JSON and exit")
    a = ap.parse_args()

    cfg = load_config(a.config)
    if a.validation_share is not None:
        cfg["data"]["validation_share"] = a.validation_share
    tr, opt_cfg, mdl = cfg["training"], cfg["optimizer"], cfg["model"]
    epochs = a.epochs if a.epochs is not None else int(tr["epochs"])
    seed = a.seed if a.seed is not None else int(tr["seed"])
    patience = a.patience if a.patience is not None else int(tr["patience"])
    threads = a.threads if a.threads is not None else int(tr["threads"])
    threads = threads if threads > 0 else (os.cpu_count() or 1)
    torch.set_num_threads(threads)
    torch.manual_seed(seed)

    spec, classes, train, val, test = load_windows(a.data, cfg, seed)
    T, C, K = spec["window"], train["x"].shape[2], len(classes)
    bs = int(opt_cfg["batch_size"])
    if mdl["type"] == "tcn":
        model = TCN(C, K, int(mdl["channels"]), [int(d) for d in mdl["dilations"]], int(mdl["kernel"]),
                    float(mdl["dropout"]), input_norm=bool(mdl["input_norm"]))
        model.init_like_poseact(seed)
        shape = f"channels {mdl['channels']}, dilations {mdl['dilations']}"
    else:   # PyTorch's default initialisation, from torch.manual_seed(seed)
        joints = spec["joints"]
        M = skeleton_partitions([canonical_name(j) for j in joints], parent_positions(joints))
        model = GraphNet(len(joints), C // len(joints), K, M, [int(b) for b in mdl["blocks"]], float(mdl["dropout"]),
                         plus=mdl["type"] == "stgcn++", input_norm=bool(mdl["input_norm"]))
        shape = f"blocks {mdl['blocks']}"
    parameters = sum(p.numel() for p in model.parameters())

    # As poseact: weight decay on convolution and linear weights only (not on biases, the
    # normalisation parameters or the graph models' learnt adjacency).
    decay = [m.weight for m in model.modules() if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Linear))]
    rest = [p for p in model.parameters() if all(p is not q for q in decay)]
    wd = float(opt_cfg["weight_decay"])
    groups = [{"params": decay, "weight_decay": wd}, {"params": rest, "weight_decay": 0.0}]
    Opt = torch.optim.AdamW if opt_cfg["name"] == "adamw" else torch.optim.Adam
    optimizer = Opt(groups, lr=float(opt_cfg["learning_rate"]), betas=(0.9, 0.999), eps=1e-8)
    params = list(model.parameters())

    weights = None
    if tr["class_weighting"] == "balanced":
        counts = torch.bincount(train["y"], minlength=K).double()
        weights = torch.where(counts > 0, len(train["y"]) / (K * counts.clamp_min(1)), torch.zeros_like(counts)).float()
    elif tr["class_weighting"] != "none":
        sys.exit(f"training.class_weighting {tr['class_weighting']!r}: none or balanced")

    n = len(train["y"])
    steps = n // bs + (1 if n % bs >= 2 else 0)   # a last batch of one window is left out
    total = max(1, steps * epochs)
    warmup = min(total, swift_round(float(opt_cfg["warmup_epochs"]) * steps))
    base_lr, min_lr = float(opt_cfg["learning_rate"]), float(opt_cfg["min_learning_rate"])
    clip = float(opt_cfg["gradient_clip"])
    augmenter = Augmenter(cfg["augmentation"], spec)
    # flip_average needs the mirror permutation, which the Augmenter holds even with flip off.
    mirror = augmenter if cfg["model"]["flip_average"] else None

    folds = int(cfg["data"]["folds"])
    cv = f" (fold {cfg['data']['fold']} of {folds})" if folds >= 2 else ""
    print(f"torch {torch.__version__}, {threads} threads; {n} train / {len(val['y'])} validation / "
          f"{len(test['y'])} test{cv} windows, {K} classes, {T}×{C} input; {mdl['type']}, {shape}, "
          f"{parameters} parameters", flush=True)
    print(f"{'epoch':>5} {'train loss':>10} {'train acc':>9} {'val loss':>9} {'val acc':>8} {'lr':>9} {'seconds':>8}", flush=True)

    mixup = float(cfg["augmentation"]["mixup"] or 0)
    # The moving average of the weights (WeightAverage.swift): parameters and batch-norm statistics.
    ema_epochs = float(tr["ema_epochs"] or 0)
    ema_decay = 1 - 1 / max(1.0, ema_epochs * steps) if ema_epochs > 0 else None
    ema = {k: v.detach().clone() for k, v in model.state_dict().items() if v.is_floating_point()} if ema_decay else None

    def ema_swap():
        sd = model.state_dict()
        for k, v in ema.items():
            live = sd[k].detach().clone()
            sd[k].copy_(v)
            v.copy_(live)

    step, best_loss, best_acc, best_epoch, best_state = 0, math.inf, -1.0, 0, None
    keep_best = tr["keep"] == "best"
    history = []
    for epoch in range(1, epochs + 1):
        model.train()
        rng = SplitMix64(epoch_seed(seed, epoch))
        order = torch.tensor(shuffled(range(n), rng), dtype=torch.long)
        total_loss, correct, seen, lr = 0.0, 0, 0, 0.0
        start = time.perf_counter()
        for s in range(steps):
            idx = order[s * bs:(s + 1) * bs]
            x, m = augmenter.batch(train["x"][idx], train["mask"][idx], rng)
            y = train["y"][idx]
            smoothing = float(tr["label_smoothing"])
            if mixup > 0:   # as Trainer.mixBatch: λ, then the partners, from the epoch's stream
                lam = rng.beta(mixup, mixup)
                partners = torch.tensor(shuffled(range(len(y)), rng), dtype=torch.long)
                x = lam * x + (1 - lam) * x[partners]
                m = torch.maximum(m, m[partners])
                logits = model(x, m)
                if weights is None:
                    loss = lam * F.cross_entropy(logits, y, label_smoothing=smoothing) \
                        + (1 - lam) * F.cross_entropy(logits, y[partners], label_smoothing=smoothing)
                else:   # poseact's weighted mean: Σ (λ·w[y]·CE(y) + (1−λ)·w[y']·CE(y')) / Σ (λ·w[y] + (1−λ)·w[y'])
                    ce1 = F.cross_entropy(logits, y, reduction="none", label_smoothing=smoothing)
                    ce2 = F.cross_entropy(logits, y[partners], reduction="none", label_smoothing=smoothing)
                    w1, w2 = lam * weights[y], (1 - lam) * weights[y[partners]]
                    loss = (w1 * ce1 + w2 * ce2).sum() / (w1 + w2).sum()
            else:
                logits = model(x, m)
                loss = F.cross_entropy(logits, y, weight=weights, label_smoothing=smoothing)
            optimizer.zero_grad(set_to_none=False)
            loss.backward()
            if clip > 0:   # poseact's rule: scale by clip/norm when the norm is above clip
                norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p.grad) for p in params]))
                if norm > clip:
                    for p in params:
                        p.grad.mul_(clip / norm)
            lr = cosine_lr(step, base_lr, min_lr, warmup, total)
            for g in optimizer.param_groups:
                g["lr"] = lr
            optimizer.step()
            if ema is not None:
                with torch.no_grad():
                    d = min(ema_decay, (1 + step) / (10 + step))
                    sd = model.state_dict()
                    for k, v in ema.items():
                        v.mul_(d).add_(sd[k].detach(), alpha=1 - d)
            step += 1
            total_loss += float(loss.detach()) * len(y)
            seen += len(y)
            correct += int((logits.argmax(1) == y).sum())
        seconds = time.perf_counter() - start
        if ema is not None:
            ema_swap()   # validate and keep the averaged weights, then train on from the live ones
        vl, va = loss_and_accuracy(model, val, bs, mirror)
        # As poseact: the best epoch has the highest validation accuracy (ties: lower loss);
        # the model is the last epoch unless training.keep is best.
        if len(val["y"]) == 0:
            best_epoch = epoch
        elif va > best_acc or (va == best_acc and vl < best_loss):
            best_acc, best_loss, best_epoch = va, vl, epoch
        if not keep_best or best_epoch == epoch or len(val["y"]) == 0:
            best_state = copy.deepcopy(model.state_dict())
        if ema is not None:
            ema_swap()
        history.append(seconds)
        print(f"{epoch:>5} {total_loss / max(seen, 1):>10.4f} {correct / max(seen, 1):>9.4f} {vl:>9.4f} {va:>8.4f} "
              f"{lr:>9.2e} {seconds:>8.2f}{'  *' if best_epoch == epoch else ''}", flush=True)
        if patience > 0 and len(val["y"]) > 0 and epoch - best_epoch >= patience:
            print(f"stopped early: no better validation accuracy for {patience} epochs (best epoch {best_epoch})", flush=True)
            break

    model.load_state_dict(best_state)
    probs = probabilities(model, test, bs, mirror)
    window_acc = float((probs.argmax(1) == test["y"]).double().mean()) if len(test["y"]) else float("nan")
    clip_acc, test_clips = clip_accuracy(probs, test)
    spe = statistics.median(history)
    per_window = ms_per_window(model, test if len(test["y"]) else train, mirror)
    result = {
        "runtime": "pytorch", "torch_version": torch.__version__, "threads": threads, "model": mdl["type"],
        "seconds_per_epoch": round(spe, 4), "windows_per_second": round(n / spe, 1), "ms_per_window": per_window,
        "parameters": parameters, "epochs": len(history), "best_epoch": best_epoch,
        "validation_loss": None if math.isinf(best_loss) else round(best_loss, 5),
        "window_accuracy": None if math.isnan(window_acc) else round(window_acc, 5),
        "clip_accuracy": None if math.isnan(clip_acc) else round(clip_acc, 5),
        "folds": folds, "fold": int(cfg["data"]["fold"]) if folds >= 2 else None,
        "train_windows": n, "validation_windows": len(val["y"]), "test_windows": len(test["y"]), "test_clips": test_clips,
        "augmentation": "exact" if augmenter.any else "off", "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
    }
    print(f"best epoch {best_epoch} of {len(history)}; test: window accuracy {window_acc:.4f}, "
          f"clip accuracy {clip_acc:.4f} ({test_clips} clips); {parameters} parameters; "
          f"{spe:.2f} s/epoch (median), {result['windows_per_second']:.0f} windows/s", flush=True)
    if a.json:
        print(json.dumps(result, sort_keys=True), flush=True)


if __name__ == "__main__":
    main()
