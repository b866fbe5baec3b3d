"""ONNX parity: a model exported by `poseact export … --output M.onnx`, run by onnxruntime on
the windows poseact cut (`poseact windows STORE --model M --output W.h5`), against poseact's
own probabilities for the same windows (`poseact evaluate M --data W.h5 --split all
--probabilities P.csv`). Prints one JSON object: windows compared, the largest absolute
difference of a probability, and whether the predicted labels all agree.

    python3 onnx_parity.py M.onnx W.h5 P.csv [--limit N]
"""
import csv, json, sys
import h5py, numpy as np, onnxruntime as ort

model, windows, probabilities = sys.argv[1:4]
limit = int(sys.argv[sys.argv.index("--limit") + 1]) if "--limit" in sys.argv else None
with h5py.File(windows, "r") as f:
    values = f["values"][:].astype(np.float32)
    mask = f["mask"][:].astype(np.float32)
rows = list(csv.reader(open(probabilities)))
expected = np.array([[float(x) for x in r[3:]] for r in rows[1:]], dtype=np.float64)
if limit:
    values, mask, expected = values[:limit], mask[:limit], expected[:limit]
session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
meta = session.get_modelmeta().custom_metadata_map
got = np.concatenate([session.run(["probabilities"], {"windows": values[i:i + 256], "mask": mask[i:i + 256]})[0]
                      for i in range(0, len(values), 256)])
diff = float(np.abs(got - expected).max())
print(json.dumps({"windows": int(len(values)), "max_abs_difference": diff,
                  "same_labels": bool((got.argmax(1) == expected.argmax(1)).all()),
                  "labels": json.loads(meta["labels"]), "onnxruntime": ort.__version__}))
