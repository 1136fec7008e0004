#!/usr/bin/env python3
"""`aic-onnx opt` on PaddleOCR det/rec/cls: standard ONNX with at most 0.9x the
nodes ONNX Runtime's basic level leaves, and outputs matching the original in
ONNX Runtime within allclose(rtol=1e-4, atol=1e-5).

usage: opt_ppocr.py AIC_ONNX MODELS_DIR
Exit 77 (ctest: skipped) when the models or onnxruntime are absent.
"""
import os
import subprocess
import sys
import tempfile
import time

SKIP = 77
CASES = [  # model, input shape, ORT basic-level node count (ANCHORS.md)
    ("ppocr_det.onnx", (1, 3, 320, 320), 328),
    ("ppocr_rec.onnx", (1, 3, 48, 320), 407),
    ("ppocr_cls.onnx", (1, 3, 48, 192), 179),
]


def main():
    binary, models = sys.argv[1], sys.argv[2]
    if not os.path.exists(os.path.join(models, "ppocr_det.onnx")):
        print(f"skipped: PaddleOCR models not found in {models}")
        return SKIP
    try:
        import numpy as np
        import onnx
        import onnxruntime as ort
    except ImportError as e:
        print(f"skipped: {e} (run `make setup`)")
        return SKIP
    rng = np.random.default_rng(5)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, shape, ort_basic in CASES:
            src = os.path.join(models, name)
            dst = os.path.join(tmp, "opt_" + name)
            t0 = time.time()
            proc = subprocess.run([binary, "opt", src, dst, "--no-verify"], capture_output=True, text=True)
            seconds = time.time() - t0
            if proc.returncode != 0:
                failures.append(f"{name}: opt exited {proc.returncode}: {proc.stderr.strip()}")
                continue
            onnx.checker.check_model(dst)
            before = len(onnx.load(src).graph.node)
            after_model = onnx.load(dst)
            after = len(after_model.graph.node)
            domains = {n.domain for n in after_model.graph.node} - {"", "ai.onnx"}
            limit = int(0.9 * ort_basic)
            sess_opt = ort.SessionOptions()
            sess_opt.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            ref = ort.InferenceSession(src, sess_opt, providers=["CPUExecutionProvider"])
            new = ort.InferenceSession(dst, sess_opt, providers=["CPUExecutionProvider"])
            worst = 0.0
            ok = True
            for _ in range(2):
                x = rng.standard_normal(shape).astype(np.float32)
                feed = {ref.get_inputs()[0].name: x}
                for a, b in zip(ref.run(None, feed), new.run(None, {new.get_inputs()[0].name: x})):
                    if a.shape != b.shape or not np.allclose(b, a, rtol=1e-4, atol=1e-5):
                        ok = False
                    if a.shape == b.shape:
                        worst = max(worst, float(np.max(np.abs(a.astype(np.float64) - b))))
            print(f"{name}: nodes {before} -> {after} (ORT basic {ort_basic}, limit {limit}); "
                  f"max abs diff {worst:.3g}; opt {seconds:.2f} s")
            if after > limit:
                failures.append(f"{name}: {after} nodes > {limit}")
            if domains:
                failures.append(f"{name}: non-standard domains {sorted(domains)}")
            if not ok:
                failures.append(f"{name}: outputs differ from the original beyond rtol=1e-4, atol=1e-5")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
