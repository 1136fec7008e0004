#!/usr/bin/env python3
"""`aic-onnx opt --apply low-rank --apply merge-linear --apply prune-dead` over every model of
the ONNX backend suite with the budget opened wide (--max-error 1e9), so that every edit the
transformations can make is kept: opt never crashes, and every model it changed passes
onnx.checker where the input did and loads and runs in ONNX Runtime where the input did, with
the input's output shapes. (Whether an edit is close enough is what the budget decides; this
is about the edits being valid ONNX on every kind of model.)

usage: opt_apply_suite.py AIC_ONNX [SUITE_ROOT]
Exit 77 (ctest: skipped) when the suite is not installed.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np

SKIP = 77
SETS = ["node", "pytorch-converted", "pytorch-operator", "simple"]


def apply_one(binary, model, out, stats):
    return subprocess.run([binary, "opt", model, out, "--no-verify", "--apply", "low-rank", "--apply",
                           "merge-linear", "--apply", "prune-dead", "--max-error", "1e9", "--no-latency",
                           "--calib", "random:2", "--stats", stats], capture_output=True, text=True, timeout=300)


def checker_error(path):
    import onnx
    try:
        onnx.checker.check_model(path)
        return None
    except Exception as e:  # noqa: BLE001 - any complaint counts
        return (str(e).splitlines() or [type(e).__name__])[0]


def ort_outputs(path, test_dir):
    """The outputs' shapes on the first test data set, or the error ONNX Runtime gives."""
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper
    so = ort.SessionOptions()
    so.log_severity_level = 3
    try:
        s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        sets = sorted(glob.glob(os.path.join(test_dir, "test_data_set_*")))
        if not sets:
            return []
        feeds = {}
        for k, i in enumerate(s.get_inputs()):
            t = onnx.TensorProto()
            with open(os.path.join(sets[0], f"input_{k}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            feeds[i.name] = numpy_helper.to_array(t)
        return [np.shape(y) for y in s.run(None, feeds)]
    except Exception as e:  # noqa: BLE001
        return str(e).splitlines()[0] if str(e) else type(e).__name__


def main():
    binary = sys.argv[1]
    root = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/libonnx-testdata/data"
    if not os.path.isdir(os.path.join(root, "node")):
        print(f"skipped: backend suite not found at {root}")
        return SKIP
    jobs = [d for s in SETS for d in sorted(glob.glob(os.path.join(root, s, "*")))
            if os.path.exists(os.path.join(d, "model.onnx"))]
    crashes, problems, edited = [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        def work(i_d):
            i, d = i_d
            out, stats = os.path.join(tmp, f"{i}.onnx"), os.path.join(tmp, f"{i}.json")
            return d, out, stats, apply_one(binary, os.path.join(d, "model.onnx"), out, stats)
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            results = list(pool.map(work, enumerate(jobs)))
        for d, out, stats, proc in results:
            key = os.path.relpath(d, root)
            if proc.returncode < 0 or proc.returncode > 2 or "internal error" in proc.stderr:
                crashes.append(f"{key}: exit {proc.returncode} {proc.stderr.strip()[-300:]}")
                continue
            if proc.returncode != 0:
                continue  # input refused with a one-line error: opt's contract, tested elsewhere
            with open(stats) as f:
                steps = json.load(f).get("approximations", {}).get("steps", [])
            if not any(s.get("kept") for s in steps):
                continue
            edited += 1
            original = os.path.join(d, "model.onnx")
            if checker_error(original) is None and (err := checker_error(out)) is not None:
                problems.append(f"{key}: onnx.checker: {err}")
                continue
            want = ort_outputs(original, d)
            if isinstance(want, list):
                got = ort_outputs(out, d)
                if got != want:
                    problems.append(f"{key}: ONNX Runtime: {got} where the input gave {want}")
    print(f"models: {len(jobs)}; edited by --apply {edited}; crashed {len(crashes)}; invalid results {len(problems)}")
    for line in crashes + problems:
        print("  ", line)
    return 1 if crashes or problems else 0


if __name__ == "__main__":
    sys.exit(main())
