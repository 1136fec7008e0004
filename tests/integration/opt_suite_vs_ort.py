#!/usr/bin/env python3
"""`aic-onnx opt` over the ONNX backend suite, judged by ONNX Runtime: for every
model ONNX Runtime can run whose original gives the expected outputs there (ONNX
rule: dtype equal, |a-b| <= 1e-7 + 1e-3*|b|, NaN where NaN), the optimized model
(`aic-onnx opt`, default flags) must give them too.

Both models run with ONNX Runtime's own graph optimizations off, so what is
checked is our rewrite, not theirs.

usage: opt_suite_vs_ort.py AIC_ONNX [SUITE_ROOT] [--filter REGEX] [--keep DIR]
Exit 77 (ctest: skipped) when the suite or onnxruntime is absent.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

SKIP = 77
SETS = ["node", "pytorch-converted", "pytorch-operator", "simple"]
RTOL, ATOL = 1e-3, 1e-7


def optimize(binary, src, dst):
    try:
        proc = subprocess.run([binary, "opt", src, dst, "--no-verify"],
                              capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return -1, "timeout"
    return proc.returncode, (proc.stderr.strip() or proc.stdout.strip())[-400:]


def load_value(path, type_proto):
    """A test_data_set .pb file read as the model input/output type declares it."""
    import onnx
    from onnx import numpy_helper
    with open(path, "rb") as f:
        data = f.read()
    kind = type_proto.WhichOneof("value") if type_proto is not None else "tensor_type"
    if kind == "sequence_type":
        seq = onnx.SequenceProto()
        seq.ParseFromString(data)
        return numpy_helper.to_list(seq)
    if kind == "optional_type":
        opt = onnx.OptionalProto()
        opt.ParseFromString(data)
        return numpy_helper.to_optional(opt)
    t = onnx.TensorProto()
    t.ParseFromString(data)
    return numpy_helper.to_array(t)


def load_sets(test_dir, model):
    """[(inputs by name, expected outputs in order)] for every data set."""
    inputs = [i for i in model.graph.input
              if i.name not in {t.name for t in model.graph.initializer}]
    outputs = list(model.graph.output)
    sets = []
    for entry in sorted(os.listdir(test_dir)):
        d = os.path.join(test_dir, entry)
        if not entry.startswith("test_data_set_") or not os.path.isdir(d):
            continue
        feed, expected = {}, []
        k = 0
        while os.path.exists(os.path.join(d, f"input_{k}.pb")):
            if k >= len(inputs):
                return None
            feed[inputs[k].name] = load_value(os.path.join(d, f"input_{k}.pb"), inputs[k].type)
            k += 1
        k = 0
        while os.path.exists(os.path.join(d, f"output_{k}.pb")):
            if k >= len(outputs):
                return None
            expected.append(load_value(os.path.join(d, f"output_{k}.pb"), outputs[k].type))
            k += 1
        sets.append((feed, expected))
    return sets


def mismatch(got, want):
    """None when `got` matches `want` under the ONNX rule, else why not."""
    import numpy as np
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return "sequence length differs"
        for g, w in zip(got, want):
            why = mismatch(g, w)
            if why:
                return why
        return None
    if want is None:
        return None if got is None else "expected an empty optional"
    got = np.asarray(got)
    want = np.asarray(want)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} != {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    if want.dtype.kind in "fc":
        g = got.astype(np.complex128 if want.dtype.kind == "c" else np.float64)
        w = want.astype(g.dtype)
        nan = np.isnan(w)
        if not np.array_equal(np.isnan(g), nan):
            return "NaN positions differ"
        g, w = g[~nan], w[~nan]
        inf = np.isinf(w)
        if not np.array_equal(g[inf], w[inf]):
            return "infinities differ"
        err = np.abs(g[~inf] - w[~inf])
        bad = err > ATOL + RTOL * np.abs(w[~inf])
        if bad.any():
            return f"max abs error {float(err.max()):.3g}"
        return None
    if not np.array_equal(got, want):
        return "values differ"
    return None


def run_in_ort(path, sets):
    """'ok', or why ONNX Runtime could not run the model or missed the expected outputs."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 4
    try:
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - any load failure: ORT can't run it
        return "load: " + (str(e).splitlines() or [type(e).__name__])[0][:200]
    names = [o.name for o in sess.get_outputs()]
    for feed, expected in sets:
        try:
            got = sess.run(names, feed)
        except Exception as e:  # noqa: BLE001
            return "run: " + (str(e).splitlines() or [type(e).__name__])[0][:200]
        if len(got) < len(expected):
            return "fewer outputs"
        for k, want in enumerate(expected):
            why = mismatch(got[k], want)
            if why:
                return f"output {names[k]}: {why}"
    return "ok"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("root", nargs="?", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--filter")
    ap.add_argument("--keep", help="write optimized models here instead of a temp dir")
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(args.root, "node")):
        print(f"skipped: backend suite not found at {args.root}")
        return SKIP
    try:
        import numpy  # noqa: F401
        import onnx
        import onnxruntime  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e} (run `make setup`)")
        return SKIP
    jobs = []
    for s in SETS:
        set_dir = os.path.join(args.root, s)
        if not os.path.isdir(set_dir):
            continue
        for test in sorted(os.listdir(set_dir)):
            if args.filter and not re.search(args.filter, f"{s}/{test}"):
                continue
            if os.path.exists(os.path.join(set_dir, test, "model.onnx")):
                jobs.append((s, test))
    workers = os.cpu_count() or 2
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        out_root = args.keep or tmp
        dst = {j: os.path.join(out_root, j[0], j[1], "model.onnx") for j in jobs}
        for p in dst.values():
            os.makedirs(os.path.dirname(p), exist_ok=True)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            opt = dict(zip(jobs, pool.map(
                lambda j: optimize(args.binary, os.path.join(args.root, j[0], j[1], "model.onnx"), dst[j]),
                jobs)))
        t_opt = time.time() - t0

        def judge(j):
            src_dir = os.path.join(args.root, j[0], j[1])
            src = os.path.join(src_dir, "model.onnx")
            try:
                sets = load_sets(src_dir, onnx.load(src))
            except Exception as e:  # noqa: BLE001 - unreadable data: not judged
                return "data: " + str(e)[:100], None
            if not sets:
                return "no data sets", None
            before = run_in_ort(src, sets)
            if before != "ok":
                return before, None
            rc, msg = opt[j]
            if rc != 0:
                return before, f"opt exited {rc}: {msg}"
            return before, run_in_ort(dst[j], sets)

        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = dict(zip(jobs, pool.map(judge, jobs)))
    judged = [j for j in jobs if results[j][0] == "ok"]
    regressions = [(j, results[j][1]) for j in judged if results[j][1] != "ok"]
    crashes = [(j, opt[j]) for j in jobs if opt[j][0] < 0 or opt[j][0] > 2]
    print(f"models: {len(jobs)}; ONNX Runtime passes {len(judged)} originals; "
          f"optimized still passing {len(judged) - len(regressions)}; regressions {len(regressions)}; "
          f"opt crashes {len(crashes)} (opt {t_opt:.1f} s, total {time.time() - t0:.1f} s, {workers} workers)")
    for (s, t), why in regressions:
        print(f"  REGRESSION: {s}/{t}: {why}")
    for (s, t), (rc, msg) in crashes:
        print(f"  CRASH: {s}/{t}: exit {rc}: {msg}")
    return 1 if regressions or crashes else 0


if __name__ == "__main__":
    sys.exit(main())
