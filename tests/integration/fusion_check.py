"""What the fusion tests against ONNX Runtime share (attention_vs_ort.py,
rotary_vs_ort.py): `aic-onnx opt` on a model built in the test, and the
largest difference between ONNX Runtime's outputs on the original and on the
optimized model over a few random feeds (ORT's own rewrites off, so each side
runs as written)."""
import os
import subprocess


def run_opt(binary, model, tmp, name, flags):
    """Saves `model` as TMP/NAME.onnx and optimizes it to TMP/NAME.opt.onnx:
    (src, dst, None), or (src, dst, why) when opt failed."""
    import onnx
    src, dst = os.path.join(tmp, name + ".onnx"), os.path.join(tmp, name + ".opt.onnx")
    onnx.save(model, src)
    p = subprocess.run([binary, "opt", src, dst] + flags, capture_output=True, text=True)
    if p.returncode != 0:
        return src, dst, f"opt exit {p.returncode}: {p.stderr.strip()} {p.stdout.strip()[-500:]}"
    return src, dst, None


def ort_max_diff(src, dst, feeds, rng, tol, trials=3):
    """(max |original - optimized| over every output and trial, None), or
    (err, why) when the outputs differ in shape or dtype or by more than
    `tol` (or not finitely). `feeds(rng)` makes one feed dict."""
    import numpy as np
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3  # not the unused-initializer warnings of shared constants
    a = ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
    b = ort.InferenceSession(dst, so, providers=["CPUExecutionProvider"])
    err = 0.0
    for _ in range(trials):
        f = feeds(rng)
        ya, yb = a.run(None, f), b.run(None, f)
        bad = [(u.shape, u.dtype, v.shape, v.dtype) for u, v in zip(ya, yb) if u.shape != v.shape or u.dtype != v.dtype]
        if bad or len(ya) != len(yb):
            return None, f"outputs differ in shape or dtype: {bad}"
        err = max([err] + [float(np.abs(u.astype(np.float64) - v.astype(np.float64)).max()) for u, v in zip(ya, yb)])
        if not np.isfinite(err) or err > tol:
            return err, f"max |diff| {err} > {tol}"
    return err, None
