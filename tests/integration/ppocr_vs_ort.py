#!/usr/bin/env python3
"""The PaddleOCR models run end to end through aic-onnx's reference executor and
match ONNX Runtime within allclose(rtol=1e-4, atol=1e-5) on random inputs.

usage: ppocr_vs_ort.py AIC_ONNX_BINARY MODELS_DIR
Exit 77 (ctest: skipped) when the models or onnxruntime are absent.
"""
import os
import subprocess
import sys
import tempfile

SKIP = 77

CASES = [
    ("ppocr_det.onnx", (1, 3, 320, 320)),
    ("ppocr_rec.onnx", (1, 3, 48, 320)),
    ("ppocr_cls.onnx", (1, 3, 48, 192)),
]


def main():
    binary, models = sys.argv[1], sys.argv[2]
    if not os.path.exists(os.path.join(models, "ppocr_det.onnx")):
        print(f"skipped: PaddleOCR models not found in {models} (../shared/models)")
        return SKIP
    try:
        import numpy as np
        import onnxruntime as ort
    except ImportError as e:
        print(f"skipped: {e} (run `make setup`)")
        return SKIP
    failed_models = set()
    rng = np.random.default_rng(11)
    for name, shape in CASES:
        path = os.path.join(models, name)
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        input_name = sess.get_inputs()[0].name
        x = rng.standard_normal(shape).astype(np.float32)
        expected = sess.run(None, {input_name: x})
        with tempfile.TemporaryDirectory() as tmp:
            np.save(os.path.join(tmp, "x.npy"), x)
            out_dir = os.path.join(tmp, "out")
            proc = subprocess.run([binary, "run", path, "--input", f"{input_name}=" + os.path.join(tmp, "x.npy"),
                                   "--out", out_dir], capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"FAIL {name}: aic-onnx run exited {proc.returncode}: {proc.stderr.strip()}")
                failed_models.add(name)
                continue
            for meta, want in zip(sess.get_outputs(), expected):
                safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in meta.name)
                got = np.load(os.path.join(out_dir, safe + ".npy"))
                ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-5)
                err = float(np.max(np.abs(got.astype(np.float64) - want))) if got.shape == want.shape else float("inf")
                print(f"{'ok  ' if ok else 'FAIL'} {name} {meta.name} {list(want.shape)} max abs err {err:.3g}")
                if not ok:
                    failed_models.add(name)
    print(f"ppocr vs onnxruntime: {len(CASES) - len(failed_models)} passed, {len(failed_models)} failed")
    return 1 if failed_models else 0


if __name__ == "__main__":
    sys.exit(main())
