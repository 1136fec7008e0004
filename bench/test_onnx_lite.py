#!/usr/bin/env python3
"""Checks bench/onnx_lite.py against the onnx package (run here, where onnx is installed):
initializers of the testdata models read identically, and a written model passes the
checker and runs in ONNX Runtime when available."""
import os
import sys

import numpy as np

try:
    import onnx
    from onnx import numpy_helper
except ImportError:
    print("onnx not installed: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_lite  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

for name in ("seed_mlp.onnx", "encoder.onnx", "resnet_cnn.onnx"):
    path = os.path.join(ROOT, "testdata", name)
    mine = onnx_lite.load_initializers(path)
    ref = {i.name: numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}
    assert mine.keys() == ref.keys(), name
    for k in ref:
        assert mine[k].dtype == ref[k].dtype and np.array_equal(mine[k], ref[k]), (name, k)

w = np.random.default_rng(0).standard_normal((8, 6)).astype(np.float32)
nodes = [onnx_lite.node("Expand", ["s", "shape"], ["a"], "expand"),
         onnx_lite.node("MatMul", ["a", "w"], ["m"], "mm"),
         onnx_lite.node("ReduceMean", ["m"], ["y"], "mean", axes=[1], keepdims=1)]
blob = onnx_lite.model(nodes, {"w": w, "shape": np.array([5, 8], np.int64)}, [("s", [1])], [("y", [5, 1])])
m = onnx.load_from_string(blob)
onnx.checker.check_model(m, full_check=True)
try:
    import onnxruntime as ort
    sess = ort.InferenceSession(blob, providers=["CPUExecutionProvider"])
    s = np.array([0.5], np.float32)
    got = sess.run(None, {"s": s})[0]
    want = (np.full((5, 8), 0.5, np.float32) @ w).mean(axis=1, keepdims=True)
    assert np.allclose(got, want, atol=1e-5), (got, want)
except ImportError:
    pass
print("onnx_lite: ok")
