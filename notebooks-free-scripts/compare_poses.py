"""Compares two `poseact pose` outputs of the same pictures (JSON Lines), person by person
(matched by their boxes' order) and landmark by landmark, and prints the largest distance.

    python3 compare_poses.py A.jsonl B.jsonl BOUND_PX

Exit 0 when both found the same people in every picture and no landmark moved more than
BOUND_PX pixels, 1 otherwise. (portable-check.sh: the aarch64 binary against the x86-64 one.)
"""
import json
import math
import sys


def people(path):
    out = {}
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            if "persons" in record:
                out[record["input"]] = record["persons"]
    return out


def main() -> int:
    first, second, bound = sys.argv[1], sys.argv[2], float(sys.argv[3])
    a, b = people(first), people(second)
    if not a or a.keys() != b.keys():
        print(f"compare_poses: different pictures: {sorted(a)} against {sorted(b)}", file=sys.stderr)
        return 1
    worst, where = 0.0, ""
    for picture in sorted(a):
        if len(a[picture]) != len(b[picture]):
            print(f"compare_poses: {picture}: {len(a[picture])} people against {len(b[picture])}", file=sys.stderr)
            return 1
        for p, q in zip(sorted(a[picture], key=lambda p: p["box"]), sorted(b[picture], key=lambda p: p["box"])):
            if len(p["landmarks"]) != len(q["landmarks"]):
                print(f"compare_poses: {picture}: {len(p['landmarks'])} landmarks against {len(q['landmarks'])}", file=sys.stderr)
                return 1
            for l, m in zip(p["landmarks"], q["landmarks"]):
                d = math.hypot(l["x"] - m["x"], l["y"] - m["y"])
                if not math.isfinite(d):
                    print(f"compare_poses: {picture}: {l['name']} is not a number", file=sys.stderr)
                    return 1
                if d > worst:
                    worst, where = d, f"{picture} {l['name']}"
    count = sum(len(v) for v in a.values())
    print(f"{len(a)} pictures, {count} people: largest landmark difference {worst:.3f} px"
          + (f" ({where})" if where else "") + f"; bound {bound} px")
    return 0 if worst <= bound else 1


if __name__ == "__main__":
    sys.exit(main())
