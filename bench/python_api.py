#!/usr/bin/env python3
"""The Python package side by side with its peers, in one process, alternating
rounds, medians (bench/PYTHON.md):

1. `Session.run` per call on the seed MLP (testdata/seed_mlp.onnx, [1, 10]):
   aic_onnx.Session against onnxruntime.InferenceSession, each timed over
   CALLS back-to-back calls per round; the model is so small that the time
   is the binding's and the session's overhead.
2. `aic_onnx.optimize` on PP-OCRv4 rec, in memory, on the same ModelProto as
   `onnxsim.simplify` and `onnxslim.slim` (each call given its own copy, the
   copy not timed); with aic-onnx's default verification (2 random input sets)
   and without it; onnxsim.simplify also with its own check (check_n=2, ONNX
   Runtime on random inputs at the shapes aic_onnx verifies at), the same
   work as ours by default. The five calls take turns in a rotating order,
   each round starting one later.

usage: python_api.py [--models DIR] [--rounds N] [--calls N] [--out bench/PYTHON.md]
Run with an interpreter that has onnxruntime, onnxsim and onnxslim
(build/bench-venv: bench/requirements.txt) and aic_onnx importable
(PYTHONPATH=build/python, or installed with pip install .).
"""
import argparse
import datetime
import os
import pathlib
import platform
import statistics
import sys
import time

import numpy as np
import onnx

ROOT = pathlib.Path(__file__).resolve().parents[1]


def per_call_us(fn, calls):
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t) / calls * 1e6


def bench_run_overhead(rounds, calls):
    import onnxruntime as ort
    import aic_onnx

    path = str(ROOT / "testdata" / "seed_mlp.onnx")
    x = np.random.default_rng(0).standard_normal((1, 10)).astype(np.float32)
    ours = aic_onnx.Session(path, threads=1)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    theirs = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    name = ours.get_inputs()[0].name
    a = ours.run(None, {name: x})[0]
    b = theirs.run(None, {name: x})[0]
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for _ in range(2):  # warm both
        per_call_us(lambda: ours.run(None, {name: x}), calls // 4)
        per_call_us(lambda: theirs.run(None, {name: x}), calls // 4)
    t_aic, t_ort = [], []
    for _ in range(rounds):
        t_aic.append(per_call_us(lambda: ours.run(None, {name: x}), calls))
        t_ort.append(per_call_us(lambda: theirs.run(None, {name: x}), calls))
    return t_aic, t_ort


def copy_of(model):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    return m


VERIFIED = "aic_onnx.optimize (verify=2, default)"
UNVERIFIED = "aic_onnx.optimize (verify=0)"
SIM = "onnxsim.simplify (default: check_n=0)"
SIM_CHECKED = "onnxsim.simplify (check_n=2)"
SLIM = "onnxslim.slim"


def bench_optimize(models, rounds):
    import onnxsim
    import onnxslim
    import aic_onnx

    path = os.path.join(models, "ppocr_rec.onnx")
    model = onnx.load(path)
    # The shapes aic_onnx's verification runs at, for onnxsim's check.
    verified = aic_onnx.optimize(copy_of(model), return_stats=True)[1]["verify"]["shapes"]
    shapes = {k: [int(d) for d in v.split(",")] for k, v in (kv.split("=") for kv in verified.split())}
    contenders = {
        VERIFIED: lambda m: aic_onnx.optimize(m),
        UNVERIFIED: lambda m: aic_onnx.optimize(m, verify=0),
        SIM: lambda m: onnxsim.simplify(m)[0],
        SIM_CHECKED: lambda m: onnxsim.simplify(m, check_n=2, test_input_shapes=shapes)[0],
        SLIM: lambda m: onnxslim.slim(m),
    }
    times = {k: [] for k in contenders}
    nodes = {}
    labels = list(contenders)
    for r in range(rounds):
        # The order rotates: a call pays for the state its predecessor left.
        # protobuf's Python module (upb) calls malloc_trim from its allocator
        # now and then, and the next call touches every page it allocates
        # afresh: aic_onnx.optimize right after onnxslim.slim took 15.6k page
        # faults and 25 ms more than after itself (the same after malloc_trim(0)).
        for label in labels[r % len(labels):] + labels[:r % len(labels)]:
            fn = contenders[label]
            m = copy_of(model)
            t = time.perf_counter()
            out = fn(m)
            times[label].append(time.perf_counter() - t)
            nodes[label] = len(out.graph.node)
    return len(model.graph.node), times, nodes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=str(ROOT.parent / "shared" / "models"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--out", default=str(ROOT / "bench" / "PYTHON.md"))
    args = ap.parse_args()
    import aic_onnx
    import onnxruntime as ort

    t_aic, t_ort = bench_run_overhead(args.rounds, args.calls)
    lines = [
        "# The Python package against its peers",
        "",
        "Generated by `bench/python_api.py`; do not edit by hand. One process, alternating",
        "rounds, medians; ratios are aic_onnx / the peer in the same run.",
        "",
        f"- When: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; host: {platform.node()}, "
        f"{os.cpu_count()} cores; Python {platform.python_version()}",
        f"- aic_onnx {aic_onnx._core.version()}; onnxruntime {ort.__version__}",
        "",
        "## Session.run per call, seed MLP ([1, 10] -> [1, 10], 1 thread)",
        "",
        f"{args.rounds} rounds x {args.calls} calls each, alternating.",
        "",
        "| session | median µs/call | min | max |",
        "|---|---|---|---|",
        f"| aic_onnx.Session | {statistics.median(t_aic):.2f} | {min(t_aic):.2f} | {max(t_aic):.2f} |",
        f"| onnxruntime.InferenceSession | {statistics.median(t_ort):.2f} | {min(t_ort):.2f} | {max(t_ort):.2f} |",
        "",
        f"Ratio aic/ORT (medians): **{statistics.median(t_aic) / statistics.median(t_ort):.2f}**",
        "",
    ]
    if os.path.exists(os.path.join(args.models, "ppocr_rec.onnx")):
        rounds = max(4, args.rounds)
        before, times, nodes = bench_optimize(args.models, rounds)
        import onnxsim
        import onnxslim

        lines += [
            "## Optimizing PP-OCRv4 rec in memory (ModelProto in, ModelProto out)",
            "",
            f"{rounds} rounds, the order rotating each round; onnxsim {onnxsim.__version__}, onnxslim {onnxslim.__version__}; "
            f"the model has {before} nodes.",
            "",
            "| call | median s | min | max | nodes after |",
            "|---|---|---|---|---|",
        ]
        for label, ts in times.items():
            lines.append(f"| {label} | {statistics.median(ts):.3f} | {min(ts):.3f} | {max(ts):.3f} | {nodes[label]} |")
        med = {k: statistics.median(v) for k, v in times.items()}
        lines += [
            "",
            "Ratios of medians, each call with its defaults: aic_onnx.optimize (verified) / onnxsim.simplify "
            f"(unverified) **{med[VERIFIED] / med[SIM]:.2f}**, / onnxslim.slim **{med[VERIFIED] / med[SLIM]:.2f}**. "
            "The same work on both sides: unverified / onnxsim unverified "
            f"**{med[UNVERIFIED] / med[SIM]:.2f}**; verified on 2 random input sets / onnxsim checked on 2 "
            f"(check_n=2, ONNX Runtime) **{med[VERIFIED] / med[SIM_CHECKED]:.2f}**.",
            "",
        ]
    else:
        lines += [f"PP-OCRv4 rec not found in {args.models}: the optimize comparison did not run.", ""]
    pathlib.Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
