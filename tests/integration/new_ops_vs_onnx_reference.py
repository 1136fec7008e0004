#!/usr/bin/env python3
"""Ops newer than the ONNX 1.12 backend suite (tests/conformance) checked against the
onnx wheel's own reference implementation (onnx.reference) on random inputs, on both
devices: RMSNormalization-23 over several axes and scale shapes.

usage: new_ops_vs_onnx_reference.py AIC_ONNX_BINARY
Exit 77 (skipped) without onnx/numpy.
"""
import os
import subprocess
import sys
import tempfile

SKIP = 77


def main():
    binary = sys.argv[1]
    try:
        import numpy as np
        import onnx
        from onnx import TensorProto, helper, numpy_helper
        from onnx.reference import ReferenceEvaluator
    except ImportError as e:
        print(f"skipped: {e}")
        return SKIP
    rng = np.random.default_rng(0)
    failures = []
    cases = [(-1, (2, 3, 8), (8,)), (1, (2, 3, 8), (3, 8)), (0, (2, 3, 4), (2, 3, 4)),
             (-2, (2, 5, 6), (1, 6)), (-1, (4, 64), (64,))]
    with tempfile.TemporaryDirectory() as tmp:
        for axis, shape, scale_shape in cases:
            x = rng.standard_normal(shape).astype(np.float32)
            scale = rng.standard_normal(scale_shape).astype(np.float32)
            node = helper.make_node("RMSNormalization", ["x", "scale"], ["y"], axis=axis, epsilon=1e-5)
            graph = helper.make_graph([node], "rms", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                                      [numpy_helper.from_array(scale, "scale")])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
            model.ir_version = 10
            path, feed = os.path.join(tmp, "m.onnx"), os.path.join(tmp, "x.npy")
            onnx.save(model, path)
            np.save(feed, x)
            expected = ReferenceEvaluator(model).run(None, {"x": x})[0]
            for device in ("reference", "cpu"):
                out = os.path.join(tmp, "out_" + device)
                p = subprocess.run([binary, "run", path, "--input", "x=" + feed, "--out", out, "--device", device],
                                   capture_output=True, text=True)
                if p.returncode != 0:
                    failures.append(f"axis {axis} {shape} on {device}: exit {p.returncode}: {p.stderr.strip()}")
                    continue
                err = float(np.abs(np.load(os.path.join(out, "y.npy")) - expected).max())
                print(f"RMSNormalization axis {axis} x{list(shape)} scale{list(scale_shape)} {device}: max |diff| {err:.2e}")
                if err > 1e-5:
                    failures.append(f"axis {axis} {shape} on {device}: max |diff| {err}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
