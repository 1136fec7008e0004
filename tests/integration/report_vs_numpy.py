#!/usr/bin/env python3
"""Cross-check of `aic-onnx report`'s weight spectra against numpy: for every
Linear/Conv weight of the PaddleOCR models and the generated encoder and CNN,
the singular values in the JSON report agree with numpy.linalg.svd of the same
weight (viewed as [Cout, Cin/group·kh·kw] for a Conv) to 1e-5·σ₁, and the
ranks derived from them (entropy effective rank, stable rank, numerical rank
with tolerance σ₁·max(m,n)·eps) agree with numpy's.

usage: report_vs_numpy.py AIC_ONNX_BINARY SOURCE_DIR [MODELS_DIR]
Exit 77 (skipped) without numpy/onnx.
"""
import json
import os
import subprocess
import sys

SKIP = 77


def weights_of(onnx, numpy_helper, path):
    """Every constant tensor by value name: initializers and Constant nodes."""
    m = onnx.load(path)
    out = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            out[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    return out


def main():
    binary, src = sys.argv[1], sys.argv[2]
    models = sys.argv[3] if len(sys.argv) > 3 else os.path.join(src, "..", "shared", "models")
    try:
        import numpy as np
        import onnx
        from onnx import numpy_helper
    except ImportError as e:
        print(f"skipped: {e}")
        return SKIP
    cases = [os.path.join(src, "testdata", f) for f in ("seed_mlp.onnx", "encoder.onnx", "resnet_cnn.onnx")]
    cases += [os.path.join(models, f) for f in ("ppocr_det.onnx", "ppocr_rec.onnx", "ppocr_cls.onnx")]
    failures, checked = 0, 0
    for path in cases:
        if not os.path.exists(path):
            print("missing, skipped:", path)
            continue
        p = subprocess.run([binary, "report", path, "--format", "json"], capture_output=True, text=True)
        if p.returncode != 0:
            print("FAIL: report exited", p.returncode, p.stderr)
            failures += 1
            continue
        doc = json.loads(p.stdout)
        weights = weights_of(onnx, numpy_helper, path)
        for n in doc["nodes"]:
            sp = n["spectrum"]
            if not sp or sp["skipped"] is not None:
                continue
            w = weights[n["layer"]["weight"]].astype(np.float64)
            w = w.reshape(w.shape[0], -1)
            s = np.linalg.svd(w, compute_uv=False)
            ours = np.array(sp["singular_values"])
            checked += 1
            bad = []
            if ours.shape != s.shape:
                bad.append(f"{ours.shape} singular values, numpy has {s.shape}")
            else:
                err = np.max(np.abs(ours - s)) / s[0]
                if err > 1e-5:
                    bad.append(f"singular values differ by {err:.2e}·σ₁")
                p_ = s / s.sum()
                p_ = p_[p_ > 0]
                eff = float(np.exp(-(p_ * np.log(p_)).sum()))
                stable = float((s ** 2).sum() / s[0] ** 2)
                tol = s[0] * max(w.shape) * np.finfo(np.float32).eps
                num = int((s > tol).sum())
                if abs(eff - sp["effective_rank"]) > 1e-4 * eff:
                    bad.append(f"effective rank {sp['effective_rank']} vs numpy {eff}")
                if abs(stable - sp["stable_rank"]) > 1e-4 * stable:
                    bad.append(f"stable rank {sp['stable_rank']} vs numpy {stable}")
                if num != sp["numerical_rank"]:
                    bad.append(f"numerical rank {sp['numerical_rank']} vs numpy {num}")
            if bad:
                failures += 1
                print(f"FAIL {os.path.basename(path)} node {n['index']} ({n['layer']['weight']}): " + "; ".join(bad))
    print(f"{checked} weight spectra compared with numpy, {failures} failed")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
