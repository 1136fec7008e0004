#!/usr/bin/env python3
"""scikit-learn models converted by skl2onnx (testdata/sklearn, written by
testdata/make_sklearn_models.py) through `aic-onnx run` on the reference and
cpu devices, compared with ONNX Runtime on the same fixed input: labels
(integer and string outputs) exactly, scores and probabilities within
rtol 1e-4 / atol 1e-5, NaN where ONNX Runtime has NaN. Then `aic-onnx opt` on
each model: ONNX Runtime must load the result and give the same outputs.

A seq(map) output (ZipMap) is written by `aic-onnx run` as NAME.json, a list
of {key: value} objects; it is compared with ONNX Runtime's list of dicts.

usage: sklearn_vs_ort.py AIC_ONNX [TESTDATA_DIR] [--filter REGEX] [--keep DIR]
Exit 77 (ctest: skipped) when the folder or onnxruntime is absent.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

SKIP = 77
RTOL, ATOL = 1e-4, 1e-5
DEVICES = ["reference", "cpu"]


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def run_aic(binary, model, inputs, out_dir, device):
    args = [binary, "run", model, "--out", out_dir, "--device", device]
    for name, path in inputs.items():
        args += ["--input", f"{name}={path}"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    return proc.returncode, (proc.stderr.strip() or proc.stdout.strip())[-800:]


def read_output(out_dir, name):
    base = os.path.join(out_dir, sanitize(name))
    if os.path.exists(base + ".json"):
        with open(base + ".json") as f:
            return json.load(f)
    return np.load(base + ".npy")


def compare(expected, got):
    """None when equal under the rules, else a reason."""
    if isinstance(expected, list):  # ZipMap: a list of {key: value}
        if not isinstance(got, list) or len(got) != len(expected):
            return f"expected a list of {len(expected)} maps, got {type(got).__name__}"
        for i, (e, g) in enumerate(zip(expected, got)):
            g = {str(k): v for k, v in g.items()}  # JSON keys are strings; ONNX Runtime's may be ints
            keys = [str(k) for k in e]
            if sorted(keys) != sorted(g.keys()):
                return f"map {i}: keys {sorted(g.keys())}, expected {sorted(keys)}"
            ev = np.array([e[k] for k in e], dtype=np.float64)
            gv = np.array([g[str(k)] for k in e], dtype=np.float64)
            if not np.allclose(gv, ev, rtol=RTOL, atol=ATOL, equal_nan=True):
                return f"map {i}: values {gv}, expected {ev}"
        return None
    expected = np.asarray(expected)
    got = np.asarray(got)
    if expected.shape != got.shape:
        return f"shape {got.shape}, expected {expected.shape}"
    if expected.dtype.kind in "OUS":
        if got.dtype.kind not in "OUS":
            return f"dtype {got.dtype}, expected strings"
        if [str(v) for v in expected.ravel()] != [str(v) for v in got.ravel()]:
            return f"labels {got.ravel().tolist()}, expected {expected.ravel().tolist()}"
        return None
    if expected.dtype != got.dtype:
        return f"dtype {got.dtype}, expected {expected.dtype}"
    if expected.dtype.kind in "iub":
        if not np.array_equal(expected, got):
            return f"values {got.ravel().tolist()}, expected {expected.ravel().tolist()}"
        return None
    if not np.allclose(got, expected, rtol=RTOL, atol=ATOL, equal_nan=True):
        diff = np.nanmax(np.abs(got.astype(np.float64) - expected.astype(np.float64)))
        return f"max |diff| {diff:.3g}"
    return None


def ort_run(ort, model_bytes_or_path, feeds):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model_bytes_or_path, options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return names, session.run(None, feeds)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("testdata", nargs="?",
                        default=os.path.join(os.path.dirname(__file__), "..", "..", "testdata", "sklearn"))
    parser.add_argument("--filter", default="")
    parser.add_argument("--keep", help="keep the outputs in this folder")
    args = parser.parse_args()
    if not os.path.isdir(args.testdata):
        print(f"skip: {args.testdata} is missing (testdata/make_sklearn_models.py writes it)")
        return SKIP
    try:
        import onnx
        import onnxruntime as ort
    except ImportError as e:
        print(f"skip: {e}")
        return SKIP
    models = sorted(f[:-5] for f in os.listdir(args.testdata)
                    if f.endswith(".onnx") and re.search(args.filter, f))
    if not models:
        print(f"skip: no models in {args.testdata}")
        return SKIP

    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="sklearn_vs_ort_")
    work = args.keep or tmp.name
    failures = []
    for name in models:
        path = os.path.join(args.testdata, name + ".onnx")
        model = onnx.load(path)
        inputs = [i.name for i in model.graph.input]
        x = np.load(os.path.join(args.testdata, name + ".input.npy"))
        feeds = {inputs[0]: x}
        input_files = {inputs[0]: os.path.join(args.testdata, name + ".input.npy")}
        out_names, expected = ort_run(ort, path, feeds)
        problems = []
        for device in DEVICES:
            out_dir = os.path.join(work, name, device)
            os.makedirs(out_dir, exist_ok=True)
            rc, log = run_aic(args.binary, path, input_files, out_dir, device)
            if rc != 0:
                problems.append(f"{device}: exit {rc}: {log}")
                continue
            for out, exp in zip(out_names, expected):
                try:
                    why = compare(exp, read_output(out_dir, out))
                except (OSError, ValueError) as e:
                    why = f"unreadable: {e}"
                if why:
                    problems.append(f"{device} {out}: {why}")
        # `aic-onnx opt`, then ONNX Runtime on the result.
        opt_path = os.path.join(work, name, "opt.onnx")
        proc = subprocess.run([args.binary, "opt", path, opt_path, "--no-verify"],
                              capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            problems.append(f"opt: exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-400:]}")
        else:
            try:
                opt_names, opt_out = ort_run(ort, opt_path, feeds)
                for out, exp in zip(out_names, expected):
                    why = compare(exp, opt_out[opt_names.index(out)]) if out in opt_names else "output missing"
                    if why:
                        problems.append(f"opt {out}: {why}")
            except Exception as e:  # noqa: BLE001 - any ORT failure is the finding
                problems.append(f"opt: ONNX Runtime fails on the result: {str(e)[:300]}")
        status = "ok" if not problems else "FAIL"
        print(f"{status:4} {name}")
        for p in problems:
            print(f"       {p}")
        if problems:
            failures.append(name)
    print(f"{len(models) - len(failures)}/{len(models)} models agree with ONNX Runtime (outputs in {work})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
