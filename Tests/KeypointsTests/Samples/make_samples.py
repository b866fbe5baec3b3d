"""Writes the small keypoint samples the import tests read, one per foreign format, from one
real pose: BlazePose's 33 landmarks on a frame of shared/data/pushups/test/correct/correct39.mp4
(640x360, `poseact pose` on its frame at 1 s), laid out as each tool documents its files:
OpenPose's output/*_keypoints.json (BODY_25), COCO's person_keypoints JSON (17 joints, v flags),
MediaPipe's pose landmarks (normalised x, y, z, visibility), NTU RGB+D's .skeleton text
(Kinect v2's 25 joints; colour-camera pixels in columns 6-7, tracking state in column 12).

    python3 make_samples.py POSE.json   (one line of `poseact pose --json` output)
"""
import json, os, sys

pose = json.loads(open(sys.argv[1]).readline())
W, H = pose["width"], pose["height"]
lm = {l["name"]: l for l in pose["persons"][0]["landmarks"]}
def pt(name, dx=0.0, dy=0.0, scale=1.0):
    if name == "neck":
        a, b = lm["left_shoulder"], lm["right_shoulder"]; x, y = (a["x"] + b["x"]) / 2, (a["y"] + b["y"]) / 2
    elif name == "root":
        a, b = lm["left_hip"], lm["right_hip"]; x, y = (a["x"] + b["x"]) / 2, (a["y"] + b["y"]) / 2
    else:
        x, y = lm[name]["x"], lm[name]["y"]
    return round(x * scale + dx, 2), round(y * scale + dy, 2)
here = os.path.dirname(os.path.abspath(__file__))

# OpenPose BODY_25: two people a frame, the second a half-size copy (the importer keeps the larger).
body25 = ["nose", "neck", "right_shoulder", "right_elbow", "right_wrist", "left_shoulder", "left_elbow", "left_wrist", "root",
          "right_hip", "right_knee", "right_ankle", "left_hip", "left_knee", "left_ankle", "right_eye", "left_eye", "right_ear",
          "left_ear", "left_foot_index", None, "left_heel", "right_foot_index", None, "right_heel"]
folder = os.path.join(here, "openpose", "pushup", "clip1")
os.makedirs(folder, exist_ok=True)
for f in range(3):
    people = []
    for scale, dx in ((0.5, 20.0), (1.0, 0.0)):
        flat = []
        for name in body25:
            if name is None:
                flat += [0, 0, 0]            # OpenPose's missing joint
            else:
                x, y = pt(name, dx + f * 2, 0, scale)
                flat += [x, y, 0.8]
        people.append({"person_id": [-1], "pose_keypoints_2d": flat, "face_keypoints_2d": [],
                       "hand_left_keypoints_2d": [], "hand_right_keypoints_2d": [], "pose_keypoints_3d": []})
    json.dump({"version": 1.3, "people": people}, open(os.path.join(folder, f"clip1_{f:012d}_keypoints.json"), "w"))

# COCO keypoints: 3 images (frames), one annotation each, v = 2 visible, hips hidden (1) in frame 2, an ankle unlabelled (0).
coco17 = ["nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder", "left_elbow",
          "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle"]
images, annotations = [], []
for f in range(3):
    images.append({"id": 100 + f, "file_name": f"frame_{f:04d}.jpg", "width": W, "height": H})
    flat = []
    for name in coco17:
        x, y = pt(name, f * 2)
        v = 0 if name == "left_ankle" else (1 if f == 1 and name.endswith("_hip") else 2)
        flat += [x, y, v] if v else [0, 0, 0]
    annotations.append({"id": f + 1, "image_id": 100 + f, "category_id": 1, "num_keypoints": 16, "keypoints": flat,
                        "bbox": [98, 202, 386, 83], "area": 386 * 83, "iscrowd": 0})
os.makedirs(os.path.join(here, "coco", "pushup"), exist_ok=True)
json.dump({"images": images, "annotations": annotations,
           "categories": [{"id": 1, "name": "person", "keypoints": coco17, "skeleton": [[16, 14], [14, 12]]}]},
          open(os.path.join(here, "coco", "pushup", "clip2.json"), "w"))

# MediaPipe: the 33 landmarks normalised, 3 frames with times, the middle one without a person.
frames = []
for f in range(3):
    marks = [] if f == 1 else [{"x": round((l["x"] + f * 2) / W, 5), "y": round(l["y"] / H, 5), "z": round(l["z"] / W, 5),
                                "visibility": l["visibility"]} for l in pose["persons"][0]["landmarks"]]
    frames.append({"time": round(f / 25, 3), "landmarks": marks})
os.makedirs(os.path.join(here, "mediapipe", "pushup"), exist_ok=True)
json.dump({"width": W, "height": H, "frames": frames}, open(os.path.join(here, "mediapipe", "pushup", "clip3.json"), "w"))

# NTU RGB+D: 2 frames; frame 2 has a second, smaller body. The pose scaled to the colour camera (1920x1080).
ntu = ["root", None, "neck", "nose", "left_shoulder", "left_elbow", "left_wrist", "left_index", "right_shoulder", "right_elbow",
       "right_wrist", "right_index", "left_hip", "left_knee", "left_ankle", "left_foot_index", "right_hip", "right_knee",
       "right_ankle", "right_foot_index", "neck", "left_index", "left_thumb", "right_index", "right_thumb"]
lines = ["2"]
for f in range(2):
    bodies = [(3.0, 0.0)] + ([(1.0, 1200.0)] if f == 1 else [])
    lines.append(str(len(bodies)))
    for scale, dx in bodies:
        lines.append("72057594037931101 0 1 1 1 1 0 0.02 0.1 2")
        lines.append("25")
        for k, name in enumerate(ntu):
            x, y = pt(name or "root", dx, 0, scale)
            state = 0 if name is None else (1 if name == "left_thumb" else 2)
            lines.append(f"0.1 0.2 3.5 250.1 210.3 {x} {y} 0.1 0.2 0.3 0.9 {state}")
os.makedirs(os.path.join(here, "ntu"), exist_ok=True)
open(os.path.join(here, "ntu", "S001C001P001R001A010.skeleton"), "w").write("\n".join(lines) + "\n")
