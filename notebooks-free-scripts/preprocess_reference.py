"""poseact's preprocessing in plain numpy: a keypoint CSV in, the windows a model eats out.

A reference for app developers who run poseact's exported models elsewhere (ONNX) and must
make the model's input themselves. It reads a keypoint CSV as `poseact import` does and cuts
it as `poseact windows STORE --model M` does (Sources/KeypointWindows/Preprocessing.swift), for the
model's preprocessing spec: the JSON in an ONNX model's metadata key `preprocessing`, in a
weights file's root attribute `preprocessing`, or in a windows file's attribute `spec`.

    python3 preprocess_reference.py KEYPOINTS.csv SPEC --output windows.npz
    python3 preprocess_reference.py KEYPOINTS.csv SPEC --compare W.h5   # against poseact's windows

SPEC: spec.json, model.poseact.h5 (or its run folder), model.onnx, or a windows file (.h5).
--fps: the CSV's frame rate when it has no `time` column (as `poseact import --fps`; 30).
Output (.npz, poseact's order: clips by id, then start): values float32 (N, window, joints x
features per joint), mask float32 (N, window; 1 = a real pose), clip, start, label, split.
--compare prints one JSON line (windows compared, largest difference, mask equal, clip/start
mismatches) and exits 1 unless they agree within 1e-5. Needs numpy; h5py only for .h5 files.

Arithmetic: the keypoints are float32 from the import on (x / width is taken in float64 and
rounded to float32, as the import does), and every step after it is float32 in the Swift's
order, sums left to right (numpy's own sum is pairwise). Float64 would not do: velocities are
differences of normalised positions times the frame rate, so one float32 rounding of a position
(~1e-6 at 10 torso lengths) becomes ~3e-5 (6e-5 on Penn Action). Times and resampling are
float64, as in the Swift. A spec without `velocity_unit` is per frame, as poseact reads it.
Differences from poseact, for malformed CSVs only: Python's csv module keeps text after a
closing quote (poseact drops it); clip ids are sorted by code point (Swift: by Unicode order,
the same for ASCII).
"""
import argparse, csv, json, math, os, sys, unicodedata
import numpy as np

F32 = np.float32

# --- Skeleton (Sources/Keypoints/Skeleton.swift) ---------------------------------------------

BLAZEPOSE = ["nose", "left_eye_inner", "left_eye", "left_eye_outer", "right_eye_inner", "right_eye",
             "right_eye_outer", "left_ear", "right_ear", "mouth_left", "mouth_right", "left_shoulder",
             "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_pinky",
             "right_pinky", "left_index", "right_index", "left_thumb", "right_thumb", "left_hip", "right_hip",
             "left_knee", "right_knee", "left_ankle", "right_ankle", "left_heel", "right_heel",
             "left_foot_index", "right_foot_index"]
VISION = ["nose", "neck", "right_shoulder", "right_elbow", "right_wrist", "left_shoulder", "left_elbow",
          "left_wrist", "right_hip", "right_knee", "right_ankle", "left_hip", "left_knee", "left_ankle",
          "right_eye", "left_eye", "right_ear", "left_ear"]
LAYOUTS = {"vision": VISION, "blazepose": BLAZEPOSE, "all": BLAZEPOSE + ["head", "neck", "root"]}
HEAD_PARTS = ["nose", "left_eye", "right_eye", "left_ear", "right_ear"]
PARENT = {"neck": "root", "head": "neck", "nose": "neck", "mouth_left": "nose", "mouth_right": "nose",
          "left_shoulder": "neck", "right_shoulder": "neck", "left_hip": "root", "right_hip": "root"}
for _s in ("left", "right"):
    PARENT.update({f"{_s}_eye_inner": "nose", f"{_s}_eye": "nose", f"{_s}_eye_outer": f"{_s}_eye",
                   f"{_s}_ear": f"{_s}_eye", f"{_s}_elbow": f"{_s}_shoulder", f"{_s}_wrist": f"{_s}_elbow",
                   f"{_s}_pinky": f"{_s}_wrist", f"{_s}_index": f"{_s}_wrist", f"{_s}_thumb": f"{_s}_wrist",
                   f"{_s}_knee": f"{_s}_hip", f"{_s}_ankle": f"{_s}_knee", f"{_s}_heel": f"{_s}_ankle",
                   f"{_s}_foot_index": f"{_s}_ankle"})


def canonical_name(name):
    """`leftShoulder`, `Left Shoulder`, `left-shoulder` -> `left_shoulder` (Skeleton.canonicalName)."""
    out, lower_before = "", False
    for ch in name:
        if ch in " -.":
            if out and out[-1] != "_":
                out += "_"
            lower_before = False
        elif ch.isupper():
            if lower_before and out[-1] != "_":
                out += "_"
            out += ch.lower()
            lower_before = False
        else:
            out += ch
            lower_before = ch.islower() or ch.isnumeric()
    return out


def index_of(name, layout):
    """Position of `name` in `layout`, by its exact spelling first, then canonically; None if absent."""
    if name in layout:
        return layout.index(name)
    c = canonical_name(name)
    return next((i for i, n in enumerate(layout) if canonical_name(n) == c), None)


def parent_positions(layout):
    """Each joint's parent in `layout` (the nearest ancestor present), for the bone features."""
    out = []
    for name in layout:
        p = PARENT.get(canonical_name(name))
        while p is not None and index_of(p, layout) is None:
            p = PARENT.get(p)
        out.append(None if p is None else index_of(p, layout))
    return out


# --- The spec ---------------------------------------------------------------------------

DEFAULTS = {"joints": VISION, "fps": 30.0, "window": 32, "stride": 8, "min_pose_share": 0.6, "min_confidence": 0.2,
            "min_joint_share": 0.5, "normalization": "root_torso", "features": ["position", "confidence"],
            # A stored spec without the key is from before it existed: per frame.
            "velocity_unit": "per_frame", "outside_frame": "keep", "centre": "window", "torso": "mean"}
CHOICES = {"normalization": ["none", "root_torso"], "velocity_unit": ["per_frame", "per_second"],
           "outside_frame": ["keep", "missing"], "centre": ["window", "frame"], "torso": ["mean", "median"]}
WIDTH = {"position": 2, "confidence": 1, "presence": 1, "velocity": 2, "bone": 2, "bone_velocity": 2, "world": 3}


def fail(message):
    sys.exit(f"preprocess_reference: {message}")


def parse_spec(text):
    """The spec JSON (PreprocessingSpec): missing keys take their defaults, camelCase keys are read too."""
    given, spec = json.loads(text), {}
    for key, default in DEFAULTS.items():
        parts = key.split("_")
        camel = parts[0] + "".join(p.capitalize() for p in parts[1:])
        spec[key] = given.get(key, given.get(camel, default))
    if isinstance(spec["joints"], str):
        spec["joints"] = LAYOUTS.get(spec["joints"], [])
    for key, names in CHOICES.items():
        if spec[key] not in names:
            fail(f"preprocessing.{key} '{spec[key]}' is not one of {', '.join(names)}")
    for f in spec["features"]:
        if f not in WIDTH:
            fail(f"preprocessing.features: no feature '{f}' ({', '.join(WIDTH)})")
    spec["fps"], spec["window"], spec["stride"] = float(spec["fps"]), int(spec["window"]), int(spec["stride"])
    spec["min_confidence"] = F32(spec["min_confidence"])   # a Float in poseact
    problems = ["no joints"] * (not spec["joints"]) + ["no features"] * (not spec["features"])
    problems += [f"fps must be in (0, 1000] (got {spec['fps']})"] * (not 0 < spec["fps"] <= 1000)
    problems += [f"{k} must be in 1…10000 frames (got {spec[k]})"
                 for k in ("window", "stride") if not 1 <= spec[k] <= 10000]
    problems += ["min confidence must be in 0…1"] * (not 0 <= spec["min_confidence"] <= 1)
    problems += ["min pose share must be in 0…1"] * (not 0 <= spec["min_pose_share"] <= 1)
    problems += ["min joint share must be in 0…1"] * (not 0 <= spec["min_joint_share"] <= 1)
    if problems:
        fail(f"preprocessing: {problems[0]}")
    if "world" in spec["features"]:
        fail("the 'world' feature needs the pose model's 3-D world landmarks, which a 2-D keypoint CSV does not have "
             "(poseact refuses imported keypoints for it too)")
    return spec


def onnx_metadata(path):
    """An ONNX model's metadata_props (ModelProto field 14: key = 1, value = 2), read without the onnx package."""
    data = open(path, "rb").read()

    def varint(i):
        value = shift = 0
        while True:
            value |= (data[i] & 0x7F) << shift
            shift += 7
            i += 1
            if data[i - 1] < 0x80:
                return value, i

    def fields(i, end):   # (field number, start, end) of each length-delimited field
        while i < end:
            key, i = varint(i)
            kind = key & 7
            if kind == 0:
                i = varint(i)[1]
            elif kind in (1, 5):
                i += 8 if kind == 1 else 4
            elif kind == 2:
                n, i = varint(i)
                yield key >> 3, i, i + n
                i += n
            else:
                raise ValueError(f"{path}: not an ONNX model (protobuf wire type {kind})")

    meta = {}
    for number, start, end in fields(0, len(data)):
        if number == 14:
            entry = {k: data[a:b].decode("utf-8") for k, a, b in fields(start, end)}
            meta[entry.get(1, "")] = entry.get(2, "")
    return meta


def read_spec(path):
    """The spec of a spec.json, model.onnx, model.poseact.h5 / run folder, or windows file."""
    if os.path.isdir(path):
        path = os.path.join(path, "model.poseact.h5")
    if path.endswith(".json"):
        return parse_spec(open(path, encoding="utf-8").read())
    if path.endswith(".onnx"):
        meta = onnx_metadata(path)
        if "preprocessing" not in meta:
            fail(f"{path}: no 'preprocessing' in the model's metadata (not exported by poseact?)")
        return parse_spec(meta["preprocessing"])
    try:
        import h5py
    except ImportError:
        fail(f"{path}: reading a .h5 file needs h5py (pip install h5py), or give the spec as .json")
    with h5py.File(path, "r") as f:
        for key in ("preprocessing", "spec"):   # a weights file's, a windows file's
            if key in f.attrs:
                text = f.attrs[key]
                return parse_spec(text.decode() if isinstance(text, bytes) else str(text))
    fail(f"{path}: no 'preprocessing' (weights file) or 'spec' (windows file) attribute")


# --- 0. Read the CSV into clips (KeypointCSV.swift, KeypointCSVImporter.swift) ------------

FAR_OUTSIDE, MAX_FRAME, MAX_PIXELS = 100.0, 1_000_000, 100_000


def trim(s):
    """Foundation's trimming of .whitespaces: tabs and Unicode space separators."""
    is_space = lambda ch: ch == "\t" or unicodedata.category(ch) == "Zs"
    a, b = 0, len(s)
    while a < b and is_space(s[a]):
        a += 1
    while b > a and is_space(s[b - 1]):
        b -= 1
    return s[a:b]


def number(s):
    """A field as a float as poseact parses it (spaces and tabs around allowed), None if not a number."""
    t = s.strip(" \t")
    if not t or "_" in t or not t.isascii() or t != t.strip():
        return None
    try:
        return float(t)
    except ValueError:
        if t.lstrip("+-")[:2].lower() == "0x":   # Swift reads hexadecimal floats too
            try:
                return float.fromhex(t)
            except ValueError:
                pass
        return None


def whole(s, low, high):
    v = number(s)
    ok = v is not None and math.isfinite(v) and v == round(v) and abs(v) < 1e15 and low <= v <= high
    return int(v) if ok else None


def read_csv(path, fps=30.0):
    """Clips as `poseact import` stores them: dicts with id, label, split, width, height (of the clip's
    first row), fps, joint_names, keypoints (frames, joints, 3: x / width, y / height, confidence; NaN,
    NaN, 0 where missing) float32, and times (seconds from the first frame) float64. Rows are grouped
    by clip and sorted by frame; a repeated frame keeps its first row; frame numbers without a row
    are frames with no pose. A bad row is skipped, a bad joint value makes the joint missing."""
    if not (math.isfinite(fps) and fps > 0):
        fail(f"frame rate must be a positive number, not {fps}")
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as f:
        records = (r for r in csv.reader(f) if r and not (len(r) == 1 and not r[0].strip(" \t")))
        header = [trim(h) for h in next(records, None) or fail(f"keypoint file {path} is empty")]
        column, joint_columns = {}, {}   # name -> index; joint -> [x, y, c] (header order)
        for i, name in enumerate(header):
            low = name.lower()
            if low in ("clip", "label", "frame", "width", "height", "split", "time"):
                column.setdefault(low, i)
            elif len(low) > 2 and low[-2] == "_" and low[-1] in "xyc":
                slots = joint_columns.setdefault(canonical_name(name[:-2]), [None, None, None])
                k = "xyc".index(low[-1])
                slots[k] = i if slots[k] is None else slots[k]
        for required in ("clip", "label", "frame", "width", "height"):
            if required not in column:
                fail(f"keypoint file {path} has no '{required}' column")
        joints = [(n, x, y, c) for n, (x, y, c) in joint_columns.items() if x is not None and y is not None]
        if not joints:
            fail(f"keypoint file {path} has no joint columns (NAME_x, NAME_y, NAME_c)")
        timed = "time" in column
        clips = {}
        for r in records:
            if len(r) != len(header):
                continue
            cid = trim(r[column["clip"]])
            frame = whole(r[column["frame"]], 0, MAX_FRAME)
            width, height = whole(r[column["width"]], 1, MAX_PIXELS), whole(r[column["height"]], 1, MAX_PIXELS)
            if not cid or frame is None or width is None or height is None:
                continue
            if cid not in clips:   # made by its first row that has a usable frame, size and label
                if not trim(r[column["label"]]):
                    continue
                split = trim(r[column["split"]]) if "split" in column else ""
                clips[cid] = dict(id=cid, label=trim(r[column["label"]]), split=split or None, width=width,
                                  height=height, frames=[], times=[], values=[])
            time = number(r[column["time"]]) if timed else 0.0
            if time is None or not math.isfinite(time):
                continue
            clip = clips[cid]
            clip["frames"].append(frame)
            clip["times"].append(time)
            row = [v for _, x, y, c in joints for v in joint_value(r, x, y, c, width, height)]
            clip["values"].append(np.array(row, F32))
    names = [n for n, *_ in joints]
    return [make_clip(c, names, fps, timed) for c in clips.values() if c["frames"]]


def joint_value(r, x, y, c, width, height):
    """(x / width, y / height, c) of one joint in one row; (NaN, NaN, 0) when missing."""
    missing = (math.nan, math.nan, 0.0)
    if not r[x].strip(" \t") or not r[y].strip(" \t"):
        return missing
    px, py = number(r[x]), number(r[y])
    pc = 1.0 if c is None or not r[c].strip(" \t") else number(r[c])   # no confidence given: 1
    if px is None or py is None or pc is None or not all(map(math.isfinite, (px, py, pc))):
        return missing
    if abs(px) > FAR_OUTSIDE * width or abs(py) > FAR_OUTSIDE * height:
        return missing
    return px / width, py / height, pc


def make_clip(acc, names, fps, timed):
    """A clip's rows sorted by frame number, repeats dropped, gaps filled, times made."""
    frames = np.array(acc["frames"])
    order = np.argsort(frames, kind="stable")
    kept = [i for k, i in enumerate(order) if k == 0 or frames[i] != frames[order[k - 1]]]
    numbers = frames[kept]
    first, count = int(numbers[0]), int(numbers[-1] - numbers[0] + 1)
    keypoints = np.tile(np.array([np.nan, np.nan, 0], F32), (count, len(names), 1))
    keypoints[numbers - first] = np.stack([acc["values"][i] for i in kept]).reshape(len(kept), -1, 3)
    times, clip_fps = np.arange(count) / fps, fps
    given = [acc["times"][i] for i in kept]
    if timed and all(a < b for a, b in zip(given, given[1:])):   # else frame / fps
        t0 = given[0]
        if len(given) > 1:
            clip_fps = float(numbers[-1] - numbers[0]) / (given[-1] - t0)
        k = 0
        for f in range(count):   # gaps: interpolated between the rows around them
            n = first + f
            while k + 1 < len(numbers) and numbers[k + 1] <= n:
                k += 1
            if numbers[k] == n:
                times[f] = given[k] - t0
            else:
                a, b = int(numbers[k]), int(numbers[k + 1])
                times[f] = given[k] + (given[k + 1] - given[k]) * float(n - a) / float(b - a) - t0
    return dict(id=acc["id"], label=acc["label"], split=acc["split"], width=acc["width"], height=acc["height"],
                fps=clip_fps, joint_names=names, keypoints=keypoints, times=times)


# --- 1. Map joints to the spec's layout, and each frame's reference points --------------

def joint_sources(layout, src):
    """For each layout joint, the source joints it is made of and whether all of them must be
    present (a head needs any one of its parts); None where the source cannot give it."""
    idx = lambda name: index_of(name, src)
    shoulders, hips = [idx("left_shoulder"), idx("right_shoulder")], [idx("left_hip"), idx("right_hip")]
    head = [idx(p) for p in HEAD_PARTS if idx(p) is not None]
    out = []
    for name in layout:
        c = canonical_name(name)
        out.append(([idx(name)], True) if idx(name) is not None
                   else (shoulders, True) if c == "neck" and None not in shoulders
                   else (hips, True) if c == "root" and None not in hips
                   else (head, False) if c == "head" and head
                   else ([idx("head")], True) if c == "nose" and idx("head") is not None   # Penn's lone head
                   else None)
    return out


def map_joints(clip, spec):
    """Frames in the spec's layout: `xyc` (frames, joints, 3; 0, 0, 0 where missing), `root` (frames, 2)
    and `torso`, `shoulders` (frames) in pixels, NaN where unknown; and how many layout joints the
    source provides. A source joint is present when its confidence is >= min_confidence and > 0 (and,
    with outside_frame: missing, x and y are in 0…1). A joint made of parts (neck, root, head) is their
    mean position and least confidence. The reference points come from the source's joints."""
    src, kp = clip["joint_names"], clip["keypoints"]
    X, Y, C = kp[..., 0], kp[..., 1], kp[..., 2]
    present = (C >= spec["min_confidence"]) & np.isfinite(X) & np.isfinite(Y) & (C > 0)
    if spec["outside_frame"] == "missing":
        present &= (X >= 0) & (X <= 1) & (Y >= 0) & (Y <= 1)
    frames, sources = len(kp), joint_sources(spec["joints"], src)
    xyc = np.zeros((frames, len(sources), 3), F32)
    for k, source in enumerate(sources):
        if source is None:
            continue
        parts, all_needed = source
        seen = present[:, parts]
        x, y, c = F32(0), F32(0), np.full(frames, np.inf, F32)
        for i, p in enumerate(parts):   # float32, summed in order (a part not seen adds 0)
            x = x + np.where(seen[:, i], X[:, p], F32(0))
            y = y + np.where(seen[:, i], Y[:, p], F32(0))
            c = np.minimum(c, np.where(seen[:, i], C[:, p], F32(np.inf)))
        n = np.maximum(seen.sum(1), 1).astype(F32)
        ok = seen.all(1) if all_needed else seen.any(1)
        xyc[ok, k] = np.stack([x / n, y / n, c], -1)[ok]
    root, torso, shoulders = reference_points(clip, present)
    frames = dict(xyc=xyc, root=root, torso=torso, shoulders=shoulders, real=np.ones(len(kp), bool))
    return frames, sum(s is not None for s in sources)


def reference_points(clip, present):
    """Per frame, in pixels, from the source's present joints: the root (its `root`, else mid-hips,
    else one hip), the torso length (|neck - root|, neck = its `neck` or mid-shoulders; else the
    shoulder-hip length of one side, or both sides' mean) and the shoulder width; NaN where unknown."""
    idx = lambda name: index_of(name, clip["joint_names"])
    X, Y, frames = clip["keypoints"][..., 0], clip["keypoints"][..., 1], len(present)
    w, h = F32(max(clip["width"], 1)), F32(max(clip["height"], 1))
    nan2 = np.full((frames, 2), np.nan, F32)

    def px(name):   # a source joint in pixels, NaN where absent
        i = idx(name)
        return nan2 if i is None else np.where(present[:, i, None], np.stack([X[:, i] * w, Y[:, i] * h], -1), nan2)

    def first(*points):   # per frame, the first point that is known
        out = points[-1]
        for p in points[-2::-1]:
            out = np.where(np.isfinite(p[:, :1]), p, out)
        return out

    dist = lambda a, b: np.sqrt((a[:, 0] - b[:, 0]) * (a[:, 0] - b[:, 0]) + (a[:, 1] - b[:, 1]) * (a[:, 1] - b[:, 1]))
    lh, rh, ls, rs = px("left_hip"), px("right_hip"), px("left_shoulder"), px("right_shoulder")
    root = first(px("root"), (lh + rh) / F32(2), lh, rh)
    neck = first(px("neck"), (ls + rs) / F32(2))
    left, right = dist(ls, lh), dist(rs, rh)
    sides = np.isfinite(left).astype(F32) + np.isfinite(right).astype(F32)
    with np.errstate(invalid="ignore", divide="ignore"):
        sides_mean = (np.where(np.isfinite(left), left, F32(0)) + np.where(np.isfinite(right), right, F32(0))) / sides
        torso = dist(neck, root)
        torso = np.where(np.isfinite(torso), torso, np.where(sides > 0, sides_mean, F32(np.nan)))
        shoulders = dist(ls, rs)
        return root, np.where(torso > 0, torso, F32(np.nan)), np.where(shoulders > 0, shoulders, F32(np.nan))


# --- 2. Resample to the spec's fps ------------------------------------------------------

def missing_frames(n, joints):
    nan = np.full(n, np.nan, F32)
    return dict(xyc=np.zeros((n, joints, 3), F32), root=np.full((n, 2), np.nan, F32), torso=nan, shoulders=nan.copy(),
                real=np.zeros(n, bool))


def take(frames, index):
    """frames[index], a missing frame where index is -1."""
    out = {k: v[np.maximum(index, 0)].copy() for k, v in frames.items()}
    gone = missing_frames(int((index < 0).sum()), frames["xyc"].shape[1])
    for k in out:
        out[k][index < 0] = gone[k]
    return out


def resample(frames, times, source_fps, fps):
    """Frames at `fps` from the first time, each the latest source frame at or before it (1e-6 s
    slack); a missing frame where that is more than 1.5 source frames earlier (a gap)."""
    count = int(math.floor((times[-1] - times[0]) * fps + 1e-6)) + 1
    t = times[0] + np.arange(count) / fps
    i = np.searchsorted(times, t + 1e-6, side="right") - 1
    max_gap = 1.5 / source_fps if source_fps > 0 else math.inf
    return take(frames, np.where(t - times[i] > max_gap + 1e-6, -1, i))


# --- 3. Mark frames with too few joints missing ------------------------------------------

def mark_missing(frames, provided, spec):
    """A frame with fewer than min_joint_share of the joints the source provides is no pose."""
    need = max(1, math.ceil(spec["min_joint_share"] * provided - 1e-9))
    present = (frames["xyc"][..., 2] > 0).sum(1)
    keep = frames["real"] & (provided > 0) & (present >= need)
    return take(frames, np.where(keep, np.arange(len(keep)), -1))


# --- 4. Cut windows (and 5. keep those with enough real poses) ----------------------------

def cut(frames, spec):
    """(start, window frames) of every window kept: starts 0, stride, … while a window fits (one
    window, padded with missing frames, for a shorter clip); kept when it has at least
    min_pose_share of real poses."""
    n, size = len(frames["real"]), spec["window"]
    starts = [0] if 0 < n <= size else list(range(0, n - size + 1, spec["stride"]))
    min_poses = max(1, math.ceil(size * spec["min_pose_share"] - 1e-9))
    for start in starts:
        index = np.arange(start, start + size)
        window = take(frames, np.where(index < n, index, -1))
        if window["real"].sum() >= min_poses:
            yield start, window


# --- 6. Normalise -----------------------------------------------------------------------

def sum32(a):
    """Left-to-right float32 sum, as Swift's reduce(0, +)."""
    a = np.asarray(a, F32).ravel()
    return np.add.accumulate(a)[-1] if a.size else F32(0)


def normalize(window, width, height, spec):
    """root_torso: present joints in pixels, minus the mean root of the real frames (else the mean of
    their present joints), divided by the mean or median torso length (else shoulder width, else
    the joints' largest extent, else 1). With centre: frame, also each frame's own root (else the
    mean of its joints), normalised, which `features` takes off the positions. Returns xyc, centre."""
    xyc, centre = window["xyc"].copy(), np.zeros((len(window["real"]), 2), F32)
    if spec["normalization"] != "root_torso":
        return xyc, centre
    real = window["real"]
    on = real[:, None] & (xyc[..., 2] > 0)
    w, h = F32(max(width, 1)), F32(max(height, 1))
    px, py = xyc[..., 0][on] * w, xyc[..., 1][on] * h   # frame by frame, joints in layout order
    roots = window["root"][real]
    roots = roots[np.isfinite(roots[:, 0])]
    mean = lambda v: sum32(v) / F32(len(v))
    cx, cy = (F32(0), F32(0)) if not len(px) else (mean(px), mean(py))   # no root: the joints' mean
    if len(roots):
        cx, cy = mean(roots[:, 0]), mean(roots[:, 1])

    def typical(v):
        if spec["torso"] == "mean":
            return mean(v)
        v, m = np.sort(v), len(v) // 2
        return v[m] if len(v) % 2 else (v[m - 1] + v[m]) / F32(2)

    torsos, shoulders = window["torso"][real], window["shoulders"][real]
    torsos, shoulders = torsos[np.isfinite(torsos)], shoulders[np.isfinite(shoulders)]
    extent = max(px.max() - px.min(), py.max() - py.min()) if len(px) else F32(0)
    scale = (typical(torsos) if len(torsos) else typical(shoulders) if len(shoulders)
             else extent if extent > 0 else F32(1))
    xyc[..., 0] = np.where(on, (xyc[..., 0] * w - cx) / scale, xyc[..., 0])
    xyc[..., 1] = np.where(on, (xyc[..., 1] * h - cy) / scale, xyc[..., 1])
    if spec["centre"] == "frame":
        own = (window["root"] - np.array([cx, cy], F32)) / scale
        count = np.maximum(on.sum(1), 1).astype(F32)
        joints = np.stack([np.add.accumulate(np.where(on, xyc[..., a], F32(0)), 1)[:, -1] / count for a in (0, 1)], -1)
        centre = np.where(np.isfinite(own[:, :1]), own, joints)
        centre[~real] = 0
    return xyc, centre


# --- 7. Features ------------------------------------------------------------------------

def features(xyc, centre, real, spec):
    """The window's values (frames, joints × features per joint), each joint's features in the
    spec's order; 0 for missing joints and frames, and for velocities and bones without both ends."""
    X, Y, C = xyc[..., 0], xyc[..., 1], xyc[..., 2]
    on = real[:, None] & (C > 0)
    was = np.zeros_like(on)              # present in the previous frame
    was[1:] = on[:-1]
    Xp, Yp = np.zeros_like(X), np.zeros_like(Y)
    Xp[1:], Yp[1:] = X[:-1], Y[:-1]
    speed = F32(spec["fps"]) if spec["velocity_unit"] == "per_second" else F32(1)
    parents = parent_positions(spec["joints"])
    has = np.array([p is not None for p in parents])
    p = np.array([0 if q is None else q for q in parents])
    zero = F32(0)
    channels = []
    for feature in spec["features"]:
        if feature == "position":
            channels += [np.where(on, X - centre[:, :1], zero), np.where(on, Y - centre[:, 1:], zero)]
        elif feature == "confidence":
            channels += [np.where(on, C, zero)]
        elif feature == "presence":
            channels += [on.astype(F32)]
        elif feature == "velocity":
            ok = on & was
            channels += [np.where(ok, speed * (X - Xp), zero), np.where(ok, speed * (Y - Yp), zero)]
        elif feature == "bone":
            ok = on & has & on[:, p]
            channels += [np.where(ok, X - X[:, p], zero), np.where(ok, Y - Y[:, p], zero)]
        elif feature == "bone_velocity":
            ok = on & has & on[:, p] & was & was[:, p]
            channels += [np.where(ok, speed * ((X - X[:, p]) - (Xp - Xp[:, p])), zero),
                         np.where(ok, speed * ((Y - Y[:, p]) - (Yp - Yp[:, p])), zero)]
    return np.stack(channels, -1).reshape(len(X), -1).astype(F32)


# --- All steps --------------------------------------------------------------------------

def windows(clips, spec):
    """Every window of every clip, clips in id order, as poseact windows cuts them."""
    out = []
    for clip in sorted(clips, key=lambda c: c["id"]):
        frames, provided = map_joints(clip, spec)
        frames = resample(frames, clip["times"], clip["fps"], spec["fps"])
        frames = mark_missing(frames, provided, spec)
        for start, window in cut(frames, spec):
            xyc, centre = normalize(window, clip["width"], clip["height"], spec)
            out.append(dict(values=features(xyc, centre, window["real"], spec), mask=window["real"].astype(F32),
                            clip=clip["id"], start=start, label=clip["label"], split=clip["split"] or ""))
    return out


def as_arrays(ws, spec):
    n, frames, channels = len(ws), spec["window"], len(spec["joints"]) * sum(WIDTH[f] for f in spec["features"])
    return dict(values=np.array([w["values"] for w in ws], F32).reshape(n, frames, channels),
                mask=np.array([w["mask"] for w in ws], F32).reshape(n, frames),
                clip=np.array([w["clip"] for w in ws], str), start=np.array([w["start"] for w in ws], np.int64),
                label=np.array([w["label"] for w in ws], str), split=np.array([w["split"] for w in ws], str))


def compare(ours, path, tolerance=1e-5):
    """Our windows against a windows file poseact wrote; one JSON line; True when they agree."""
    import h5py
    with h5py.File(path, "r") as f:
        names = lambda key: [s.decode() if isinstance(s, bytes) else str(s) for s in f.attrs[key]]
        clips, labels, splits = names("clip_ids"), names("label_names"), names("split_names")
        shapes = [list(ours["values"].shape[1:]), list(f["values"].shape[1:])]
        if shapes[0] != shapes[1]:   # not the same spec
            print(json.dumps(dict(error="windows of another shape (frames, features)",
                                  reference=shapes[0], poseact=shapes[1])))
            return False
        theirs = [(clips[int(c)], int(s)) for c, s in zip(f["clips"][:], f["starts"][:])]
        their_meta = [(labels[int(l)], splits[int(s)]) for l, s in zip(f["labels"][:], f["splits"][:])]
        keys = [(str(c), int(s)) for c, s in zip(ours["clip"], ours["start"])]
        mine = {k: i for i, k in enumerate(keys)}
        pairs = [(mine[k], j) for j, k in enumerate(theirs) if k in mine]   # (our window, theirs)
        worst, at, mask_equal = 0.0, None, True
        for s in range(0, len(pairs), 256):   # in chunks: a windows file can be large
            chunk = pairs[s:s + 256]
            j0, j1, i = chunk[0][1], chunk[-1][1] + 1, [i for i, _ in chunk]
            j = [j - j0 for _, j in chunk]
            a, b = ours["values"][i].astype(np.float64), f["values"][j0:j1][j].astype(np.float64)
            diff = np.nan_to_num(np.where(np.isnan(a) & np.isnan(b), 0, np.abs(a - b)), nan=np.inf)
            if diff.max() > worst:
                w, t, c = np.unravel_index(int(diff.argmax()), diff.shape)
                worst = float(diff.max())
                at = dict(clip=keys[i[w]][0], start=keys[i[w]][1], frame=int(t), channel=int(c),
                          reference=float(a[w, t, c]), poseact=float(b[w, t, c]))
            mask_equal &= bool(np.array_equal(ours["mask"][i], f["mask"][j0:j1][j]))
    meta_equal = all((ours["label"][i], ours["split"][i]) == their_meta[j] for i, j in pairs)
    their_keys = set(theirs)
    report = dict(windows=len(pairs), reference_windows=len(keys), poseact_windows=len(theirs),
                  max_abs_difference=worst, mask_equal=mask_equal, same_order=keys == theirs,
                  labels_splits_equal=meta_equal,
                  only_reference=[list(k) for k in keys if k not in their_keys][:10],
                  only_poseact=[list(k) for k in theirs if k not in mine][:10])
    if worst > tolerance:
        report["worst"] = at
    print(json.dumps(report))
    return worst <= tolerance and mask_equal and meta_equal and keys == theirs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", help="keypoint CSV (the format poseact import reads)")
    parser.add_argument("spec", help="spec.json, model.onnx, model.poseact.h5 (or run folder), or a windows file")
    parser.add_argument("--output", help="windows .npz to write")
    parser.add_argument("--fps", type=float, default=30.0, help="the CSV's frame rate without a time column (30)")
    parser.add_argument("--compare", metavar="W.h5", help="compare with poseact's windows file (poseact windows)")
    args = parser.parse_args()
    spec = read_spec(args.spec)
    result = as_arrays(windows(read_csv(args.csv, args.fps), spec), spec)
    if args.output:
        np.savez(args.output, **result)
        print(f"{args.output}: {len(result['start'])} windows of {spec['window']} frames × "
              f"{result['values'].shape[2]} features", file=sys.stderr)
    if args.compare and not compare(result, args.compare):
        sys.exit(1)


if __name__ == "__main__":
    main()
