#!/usr/bin/env python3
"""Time one .tflite model under LiteRT (default op resolver, i.e. XNNPACK).

Prints one JSON line in the format of `poseact bench pose`, plus "runtime": "litert":
{"model": "pose_detection", "runs": 50, "threads": 1, "median_ms": ..., "p90_ms": ..., "runtime": "litert"}
Only invoke() is timed; the input is set once before the loop.
"""
import argparse
import json
import pathlib
import time

import numpy as np
from ai_edge_litert.interpreter import Interpreter


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, type=pathlib.Path)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=5)
    a = ap.parse_args()

    interp = Interpreter(model_path=str(a.model), num_threads=a.threads)
    interp.allocate_tensors()
    rng = np.random.default_rng(0)  # fixed seed: same input every run and every machine
    for d in interp.get_input_details():
        interp.set_tensor(d["index"], rng.random(d["shape"], dtype=np.float32).astype(d["dtype"]))

    for _ in range(a.warmup):  # first runs pay for XNNPACK weight packing and cold caches
        interp.invoke()
    times = []
    for _ in range(a.runs):
        t0 = time.perf_counter()
        interp.invoke()
        times.append((time.perf_counter() - t0) * 1000.0)

    print(json.dumps({
        "model": a.model.stem,
        "runs": a.runs,
        "threads": a.threads,
        "median_ms": round(float(np.median(times)), 3),
        "p90_ms": round(float(np.percentile(times, 90)), 3),
        "runtime": "litert",
    }))


if __name__ == "__main__":
    main()
