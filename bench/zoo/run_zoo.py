#!/usr/bin/env python3
"""Runs the public model corpus (bench/zoo/make_zoo.py's output) through aic-onnx, ONNX
Runtime and OpenVINO side by side and writes bench/ZOO.md.

For each model (NAME.onnx with its sidecar NAME.json) and thread count T:
  - inputs drawn from the sidecar (seeded per model), saved as .npy / .npz, the same
    for every engine;
  - aic-onnx timed by `aic-onnx bench MODEL --json --shape NAME=D,.. --input NAME=FILE.npy
    --threads T` (in-process C++ timing), ONNX Runtime (ORT_ENABLE_ALL, intra-op T,
    inter-op 1) and OpenVINO CPU (INFERENCE_NUM_THREADS T, f32 precision, latency hint,
    one stream) through their Python bindings, each engine in a fresh process per round,
    in alternating rounds (the engine order rotates each round); each cell is the median
    of the per-round medians; ratios aic/ORT and OpenVINO/ORT;
  - outputs of `aic-onnx run --device cpu` (and OpenVINO's) compared with ORT's on those
    inputs: max abs diff, ok when |Δ| <= 1e-3 + 1e-3·|ORT| everywhere (fp32; exact for
    integer and bool outputs; a shape difference fails); a sidecar with a "tolerance"
    ({atol, rtol, outputs: {NAME: {atol, rtol, step}}, note}: the low-precision variants
    of bench/zoo/make_lowp.py) sets the bound for that model, and an output with a
    quantization step also gets its max |Δ| in steps;
  - peak memory per engine and thread count: the peak resident-set growth over the process's
    baseline (VmHWM minus VmRSS before the model is loaded, as bench/run_bench.py measures it),
    aic-onnx from `aic-onnx bench --json` and ORT from run_bench's memory script, each in a
    process of its own running a few iterations;
  - the compiled plan (`aic-onnx bench MODEL --plan --iters 1 --warmup 0`, stderr): steps
    of kind "fallback" (the reference interpreter) by op, and oneDNN implementations
    (` impl=NAME`) whose name contains "ref" or "simple".

usage: build/zoo-venv/bin/python bench/zoo/run_zoo.py --aic build/zoo/aic-onnx --zoo build/zoo
           [--threads 1,2] [--rounds N] [--quick] [--only SEL,..] [--out bench/ZOO.md]
(--quick: about a quarter of the time per measurement and 2 rounds unless --rounds is given)
Every NAME.json in --zoo with its NAME.onnx is a model. --only selects by, each comma-separated:
a model name (resnet50_int8), a glob (resnet50*, *_fp16), a variant (fp16, int8-qdq,
int8-dynamic; int8 = both int8 kinds), lowp (every variant) or fp32 (every model without one).
"""
import argparse
import datetime
import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)

sys.path.insert(0, BENCH)
import run_bench  # noqa: E402  (its ORT timing, Identity model, failure line, table cell)
from machine import machine_line  # noqa: E402

RTOL = ATOL = 1e-3


def make_feeds(specs, rng):
    """Inputs from sidecar specs: fill normal (N(0,1)), uniform ([0,1)), int ([low, high)),
    ones, or mask (ones with the last two positions of each row zero); "round_to": "float16"
    (or "bfloat16") rounds the values to that precision (kept in the declared dtype)."""
    feeds = {}
    for s in specs:
        shape, dtype = tuple(s["shape"]), np.dtype(s.get("dtype", "float32"))
        fill = s.get("fill", "normal")
        if fill == "normal":
            a = rng.standard_normal(shape)
        elif fill == "uniform":
            a = rng.random(shape)
        elif fill == "int":
            a = rng.integers(s["low"], s["high"], size=shape)
        elif fill == "ones":
            a = np.ones(shape)
        elif fill == "mask":
            a = np.ones(shape)
            if shape[-1] > 2:
                a[..., -2:] = 0
        else:
            raise ValueError(f"{s['name']}: unknown fill {fill!r}")
        # np.array, not np.ascontiguousarray: that makes a scalar input (silero
        # VAD's sample rate) a [1] array, which the model's [] does not accept.
        if s.get("round_to") == "bfloat16":
            import ml_dtypes  # numpy has no bfloat16; onnx depends on ml_dtypes
            a = np.asarray(a, dtype=np.float32).astype(ml_dtypes.bfloat16)
        elif s.get("round_to"):
            a = np.asarray(a).astype(np.dtype(s["round_to"]))
        feeds[s["name"]] = np.array(a, dtype=dtype, order="C")
    return feeds


def corpus_names(zoo):
    """Every model of the corpus: a NAME.json sidecar with its NAME.onnx."""
    return sorted(f[:-5] for f in os.listdir(zoo) if f.endswith(".json")
                  and f not in ("zoo_index.json", "lowp_index.json")
                  and os.path.exists(os.path.join(zoo, f[:-5] + ".onnx")))


def write_inputs(name, meta, tmp):
    """The model's seeded inputs (make_feeds, seeded by its name) saved under tmp: (feeds, the
    `--shape`/`--input` arguments of aic-onnx, the .npz OpenVINO and ORT runs read)."""
    feeds = make_feeds(meta["inputs"], np.random.default_rng(zlib.crc32(name.encode())))
    input_args = []
    for s in meta["inputs"]:
        npy = os.path.join(tmp, f"{name}__{safe_name(s['name'])}.npy")
        np.save(npy, feeds[s["name"]])
        input_args += ["--shape", f"{s['name']}=" + ",".join(map(str, s["shape"])), "--input", f"{s['name']}={npy}"]
    npz = os.path.join(tmp, f"{name}.npz")
    np.savez(npz, **feeds)
    return feeds, input_args, npz


def safe_name(name):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


# How OpenVINO compiles every corpus model (INFERENCE_NUM_THREADS added per run):
# f32 inference precision, latency hint, one stream.
OV_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1}

OV_SCRIPT = r"""
import sys, time, json, numpy as np
import openvino as ov
model, threads, iters, warmup, npz, out, config = sys.argv[1:8]
threads, iters, warmup = int(threads), int(iters), int(warmup)
feeds = dict(np.load(npz))
core = ov.Core()
m = core.read_model(model)
m.reshape({name: ov.PartialShape(list(a.shape)) for name, a in feeds.items()})
cm = core.compile_model(m, "CPU", dict(json.loads(config), INFERENCE_NUM_THREADS=threads))
req = cm.create_infer_request()
res = req.infer(feeds)
if out != "-":
    np.savez(out, *[np.asarray(res[o]) for o in cm.outputs])
for _ in range(warmup):
    req.infer(feeds)
ts = []
for _ in range(iters):
    t = time.perf_counter()
    req.infer(feeds)
    ts.append((time.perf_counter() - t) * 1e3)
print(json.dumps({"median_ms": float(np.median(ts)) if ts else None}))
"""


def ov_run(model, threads, iters, warmup, npz, out="-"):
    """OpenVINO in its own process: (median ms, None) or (None, why it failed)."""
    p = subprocess.run([sys.executable, "-c", OV_SCRIPT, model, str(threads), str(iters), str(warmup), npz, out,
                        json.dumps(OV_CONFIG)], capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        lines = [l.strip() for l in p.stderr.strip().splitlines() if l.strip()]
        start = max([i for i, l in enumerate(lines) if re.match(r"^\w+(Error|Exception)\b", l)] or [0])
        lines = lines[start:]
        if "Summary:" in lines:  # the frontend's list of ops it could not convert
            lines = lines[lines.index("Summary:") + 1:]
        lines = [l for l in lines if not l.startswith(("Exception from src/", "Check 'false' failed"))] or lines
        return None, f"OpenVINO failed (exit {p.returncode}): {'; '.join(lines)[:300] or 'no message'}"
    return json.loads(p.stdout.strip().splitlines()[-1])["median_ms"], None


def aic(aic_bin, args, timeout=900):
    """Runs aic-onnx: (CompletedProcess, None) or (None, why it failed, one line)."""
    try:
        p = subprocess.run([aic_bin] + args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"{args[0]} timed out after {timeout} s"
    if p.returncode != 0:
        return None, run_bench.why_failed(args[0], p.returncode, p.stderr or p.stdout)
    return p, None


def aic_bench_json(aic_bin, model, input_args, threads, iters, warmup):
    p, err = aic(aic_bin, ["bench", model, "--json", "--threads", str(threads), "--iters", str(iters),
                           "--warmup", str(warmup)] + input_args)
    if err:
        return None, err
    return json.loads(p.stdout.strip().splitlines()[-1]), None


PLAN_IMPL = re.compile(r"\simpl=(\S+)\s*$")


def plan_findings(aic_bin, model, input_args, threads):
    """(fallback ops {op: count}, ref/simple impls {impl: [ops]}, plan summary line, error)."""
    p, err = aic(aic_bin, ["bench", model, "--plan", "--iters", "1", "--warmup", "0", "--threads", str(threads)]
                 + input_args)
    if err:
        return {}, {}, None, err
    fallback, impls, summary = {}, {}, None
    for line in p.stderr.splitlines():
        fields = line.split("\t")
        if len(fields) >= 2:
            kind = fields[0].strip()
            op = kind if kind == "reorder" or not fields[1].split() else fields[1].split()[0]
            if kind == "fallback":
                fallback[op] = fallback.get(op, 0) + 1
            m = PLAN_IMPL.search(line)
            if m and ("ref" in m.group(1) or "simple" in m.group(1)):
                impls.setdefault(m.group(1), []).append(op)
        elif " steps: " in line:
            summary = line.strip()
    return fallback, impls, summary, None


def compare(got, want, atol=ATOL, rtol=RTOL):
    """(max abs diff, ok, note) of one output against ORT's."""
    if got.shape != want.shape:
        return float("nan"), False, f"shape {list(got.shape)} vs ORT {list(want.shape)}"
    if got.size == 0:
        return 0.0, True, ""
    if not (np.issubdtype(want.dtype, np.floating) or np.issubdtype(got.dtype, np.floating)):
        d = np.abs(got.astype(np.int64) - want.astype(np.int64)) if want.dtype != np.bool_ else (got != want)
        return float(d.max()), bool(np.all(d == 0)), ""
    g, w = got.astype(np.float64), want.astype(np.float64)
    d = np.abs(g - w)
    same_nan = np.isnan(g) & np.isnan(w)
    d = np.where(same_nan, 0.0, d)
    worst = float(np.nanmax(d)) if not np.all(np.isnan(d)) else float("nan")
    ok = bool(np.all(d <= atol + rtol * np.abs(w)))  # NaN where only one side is NaN fails
    return worst, ok, "" if ok else f"{int(np.sum(~(d <= atol + rtol * np.abs(w))))} of {d.size} elements off"


def output_tolerance(tol, name):
    """(atol, rtol, quantization step or None) for one output under a sidecar's tolerance (None: fp32)."""
    if not tol:
        return ATOL, RTOL, None
    per = (tol.get("outputs") or {}).get(name, {})
    return (per.get("atol", tol.get("atol", ATOL)), per.get("rtol", tol.get("rtol", RTOL)), per.get("step"))


def compare_all(names, got_list, want_list, tol=None):
    worst, ok, notes = 0.0, True, []
    for n, g, w in zip(names, got_list, want_list):
        if g is None:
            ok = False
            notes.append(f"{n}: missing")
            continue
        atol, rtol, step = output_tolerance(tol, n)
        d, o, note = compare(g, w, atol, rtol)
        if step and not np.isnan(d):
            note = f"{d / step:.2f} steps" + (f", {note}" if note else "")
        worst = d if np.isnan(d) or np.isnan(worst) else max(worst, d)
        ok = ok and o
        if note:
            notes.append(f"{n}: {note}")
    return worst, ok, "; ".join(notes)


def add_error(rec, err):
    """One line per distinct message: `run` and `bench` failing alike is one failure."""
    if err and not any(e.split("): ", 1)[-1] == err.split("): ", 1)[-1] for e in rec["errors"]):
        rec["errors"].append(err)


def ort_int8_products():
    """ORT's MatMulInteger of uint8 255 by int8 127 over 64 terms, against the exact 2,072,640: on an
    x86 CPU without VNNI, ORT multiplies u8 by s8 with VPMADDUBSW, whose pairs of products saturate in
    int16 (its documented trade-off), so its int8 kernels compute another function than the QDQ
    standard there, and faster than any exact form. Returns (ORT's value, exact value)."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
    k = 64
    g = helper.make_graph([helper.make_node("MatMulInteger", ["a", "w"], ["y"])], "probe",
                          [helper.make_tensor_value_info("a", TensorProto.UINT8, [1, k])],
                          [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
                          [numpy_helper.from_array(np.full((k, 8), 127, np.int8), "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    got = int(s.run(None, {"a": np.full((1, k), 255, np.uint8)})[0][0, 0])
    return got, 255 * 127 * k


def int8_sentence(models):
    """What the int8 rows mean on this CPU: whether ORT's u8·s8 products are exact here."""
    if not any((m["meta"].get("variant") or "").startswith("int8") for m in models):
        return []
    got, exact = ort_int8_products()
    if got == exact:
        return [f"int8 on this CPU: ORT's u8·s8 products are exact (MatMulInteger probe of 255·127 over 64 terms: "
                f"{got:,}); aic-onnx runs QLinearConv/QLinearMatMul as int8 where its products are exact (VNNI).", ""]
    return [f"int8 on this CPU: **ORT's u8·s8 products saturate** (MatMulInteger probe of 255·127 over 64 terms: "
            f"{got:,}, exactly {exact:,}): without VNNI, ORT multiplies with VPMADDUBSW, whose pair sums clamp "
            "to int16, so its int8 models compute another function than the QDQ standard here "
            "(bench/INT8_OPS.md measures its kernels op by op). aic-onnx computes QLinearConv, QLinearMatMul and "
            "MatMulInteger exactly here with int16 VPMADDWD products (exec/cpu/kernels/pair_gemm.h), which run at "
            "the saturating form's multiply-add rate (bench/int8_products.cc times the forms), and rounds as the "
            "reference kernels do.", ""]


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return float(np.exp(np.mean(np.log(xs)))) if xs else None


def fmt(x, spec=".3f"):
    return "—" if x is None else format(x, spec)


VARIANT_SELECTORS = {"int8": ("int8-qdq", "int8-dynamic")}


def select(metas, variants, only):
    """The models that --only's selectors name (see the docstring), in metas' order; warns of a
    selector that names none."""
    chosen = set()
    for tok in only:
        if tok == "lowp":
            hits = {n for n in metas if variants.get(n)}
        elif tok == "fp32":
            hits = {n for n in metas if not variants.get(n)}
        elif tok in VARIANT_SELECTORS or tok in set(variants.values()) - {None}:
            kinds = VARIANT_SELECTORS.get(tok, (tok,))
            hits = {n for n in metas if variants.get(n) in kinds}
        elif any(c in tok for c in "*?["):
            hits = set(fnmatch.filter(metas, tok))
        else:
            hits = {tok} & set(metas)
        if not hits:
            print(f"run_zoo.py: --only {tok!r} names no model in the zoo", file=sys.stderr)
        chosen |= hits
    return [n for n in metas if n in chosen]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aic", default=os.path.join(ROOT, "build", "zoo", "aic-onnx"))
    ap.add_argument("--zoo", default=os.path.join(ROOT, "build", "zoo"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=None, help="default 5, 2 with --quick")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "ZOO.md"))
    args = ap.parse_args()
    if args.rounds is None:
        args.rounds = 2 if args.quick else 5
    target_ms = 250.0 if args.quick else 1000.0  # timed run length per engine per round
    threads_list = [int(t) for t in args.threads.split(",")]
    aic_bin = os.path.abspath(args.aic)
    index_path = os.path.join(args.zoo, "zoo_index.json")
    index = json.load(open(index_path)) if os.path.exists(index_path) else {"models": {}, "skipped": {}}
    metas = corpus_names(args.zoo)
    only = [n for n in args.only.split(",") if n]
    lowp_path = os.path.join(args.zoo, "lowp_index.json")
    lowp_skipped = json.load(open(lowp_path)).get("skipped", {}) if os.path.exists(lowp_path) else {}
    if only:
        variants = {n: json.load(open(os.path.join(args.zoo, n + ".json"))).get("variant") for n in metas}
        variants.update({n: v.get("variant") for n, v in lowp_skipped.items()})
        chosen = set(select(sorted(variants), variants, only))  # the skipped variants too, for the Failures list
        metas = [n for n in metas if n in chosen]
        lowp_skipped = {n: v for n, v in lowp_skipped.items() if n in chosen}
    index["lowp_skipped"] = lowp_skipped
    tmp = tempfile.mkdtemp(prefix="aic_zoo_")
    machine = machine_line(["onnxruntime", "openvino", "numpy"])
    identity = os.path.join(tmp, "identity.onnx")
    run_bench.make_identity(identity)
    ident_npz = os.path.join(tmp, "identity.npz")
    np.savez(ident_npz, x=np.zeros((1, 10), np.float32))
    overhead = {t: run_bench.ort_bench(identity, t, 500 if args.quick else 5000, 100, ident_npz) for t in threads_list}
    import onnxruntime as ort

    models, rows = [], []
    for name in metas:
        meta = json.load(open(os.path.join(args.zoo, name + ".json")))
        path = os.path.join(args.zoo, meta["file"])
        # The model ORT runs: a bf16 variant's float32 twin (ORT has no bfloat16 Conv/Add).
        ort_path = os.path.join(args.zoo, meta.get("ort_file", meta["file"]))
        rec = dict(name=name, meta=meta, errors=[], fallback={}, impls={}, aic_ok=None, aic_worst=None,
                   aic_note="", ov_ok=None, ov_worst=None, ov_note="", ov_error=None, plan=None)
        models.append(rec)
        print(f"{name}: checking outputs ...", file=sys.stderr, flush=True)
        feeds, input_args, npz = write_inputs(name, meta, tmp)
        rec["shapes"] = ", ".join(f"{s['name']}={'×'.join(map(str, s['shape']))}" for s in meta["inputs"])
        # ONNX Runtime: the reference outputs, and a first estimate of the time per run.
        try:
            so = ort.SessionOptions()
            so.intra_op_num_threads = threads_list[0]
            so.inter_op_num_threads = 1
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            sess = ort.InferenceSession(ort_path, so, providers=["CPUExecutionProvider"])
            out_names = [o.name for o in sess.get_outputs()]
            want = sess.run(None, feeds)
            t0 = time.perf_counter()
            for _ in range(3):
                sess.run(None, feeds)
            est_ms = (time.perf_counter() - t0) * 1e3 / 3
            del sess
        except Exception as e:  # noqa: BLE001
            rec["errors"].append(f"ONNX Runtime failed: {str(e).strip().splitlines()[0][:240]}")
            continue
        iters = int(min(1000, max(3, target_ms / max(est_ms, 1e-3))))
        warmup = max(2, iters // 10)
        rec["iters"] = iters
        # aic-onnx's outputs against ORT's.
        out_dir = os.path.join(tmp, "aic_out_" + name)
        p, err = aic(aic_bin, ["run", path, "--device", "cpu", "--threads", str(threads_list[0]), "--out", out_dir]
                     + input_args)
        if err:
            add_error(rec, err)
        else:
            got = []
            for n in out_names:
                f = os.path.join(out_dir, safe_name(n) + ".npy")
                got.append(np.load(f) if os.path.exists(f) else None)
            rec["aic_worst"], rec["aic_ok"], rec["aic_note"] = compare_all(out_names, got, want,
                                                                           meta.get("tolerance"))
        # OpenVINO's outputs (and whether it loads at all).
        ov_out = os.path.join(tmp, f"ov_out_{name}.npz")
        _, rec["ov_error"] = ov_run(path, threads_list[0], 0, 0, npz, ov_out)
        if rec["ov_error"] is None:
            z = np.load(ov_out)
            got = [z[f"arr_{i}"] if f"arr_{i}" in z else None for i in range(len(out_names))]
            rec["ov_worst"], rec["ov_ok"], rec["ov_note"] = compare_all(out_names, got, want,
                                                                        meta.get("tolerance"))
        # The compiled plan: fallback steps and reference implementations.
        rec["fallback"], rec["impls"], rec["plan"], err = plan_findings(aic_bin, path, input_args, threads_list[0])
        add_error(rec, err)
        for t in threads_list:
            print(f"{name}, {t} thread(s), {iters} iterations ...", file=sys.stderr, flush=True)
            med = {"aic": [], "ort": [], "ov": []}
            last, aic_err, ov_err = None, None, rec["ov_error"]
            for r in range(args.rounds):
                engines = ["aic", "ort", "ov"]
                engines = engines[r % 3:] + engines[:r % 3]
                for e in engines:
                    if e == "aic" and aic_err is None:
                        j, aic_err = aic_bench_json(aic_bin, path, input_args, t, iters, warmup)
                        if j:
                            last = j
                            med["aic"].append(j["median_ms"])
                    elif e == "ort":
                        med["ort"].append(run_bench.ort_bench(ort_path, t, iters, warmup, npz))
                    elif e == "ov" and ov_err is None:
                        ms, ov_err = ov_run(path, t, iters, warmup, npz)
                        if ms is not None:
                            med["ov"].append(ms)
            m = {k: float(np.median(v)) if v else None for k, v in med.items()}
            add_error(rec, aic_err)
            # Peak memory, each engine in a process of its own.
            mem_iters = max(2, iters // 10)
            aic_mem = ort_mem = None
            if aic_err is None:
                j, err = aic_bench_json(aic_bin, path, input_args, t, mem_iters, 1)
                if j:
                    aic_mem = j["peak_memory_bytes"] - j["baseline_memory_bytes"]
                add_error(rec, err)
            p = subprocess.run([sys.executable, "-c", run_bench.ORT_MEMORY_SCRIPT, ort_path, str(t), str(mem_iters),
                                npz], capture_output=True, text=True)
            if p.returncode == 0:
                ort_mem = int(p.stdout.strip().splitlines()[-1])
            rows.append(dict(rec=rec, threads=t, aic=m["aic"], ort=m["ort"], ov=m["ov"],
                             ratio=m["aic"] / m["ort"] if m["aic"] and m["ort"] else None,
                             ov_ratio=m["ov"] / m["ort"] if m["ov"] and m["ort"] else None,
                             steps=last["steps"] if last else None,
                             fallback_steps=last["fallback_steps"] if last else None,
                             plan_threads=last["threads"] if last else None,
                             digest=last["plan_digest"] if last else None, aic_error=aic_err, ov_error=ov_err,
                             aic_mem=aic_mem, ort_mem=ort_mem))
    write_md(args, machine, overhead, index, models, rows, threads_list)


def tol_text(tol, out_names):
    """A sidecar tolerance, short: '0.01 + 0.01·|ORT|' or per output 'logits: 1 step (0.016) + 0.001·|ORT|'."""
    per_out = tol.get("outputs") or {}
    parts = []
    for n, per in sorted(per_out.items()):
        parts.append(f"{n}: 1 step ({per['step']:.3g}) + {per['rtol']:g}·|ORT|" if per.get("step") else
                     f"{n}: {per['atol']:g} + {per['rtol']:g}·|ORT|")
    if any(n not in per_out for n in out_names) or not parts:
        parts.append(("others " if parts else "") + f"{tol.get('atol', ATOL):g} + {tol.get('rtol', RTOL):g}·|ORT|")
    return "; ".join(parts)


def tolerance_sentence(models):
    tolled = [m for m in models if m["meta"].get("tolerance")]
    if not tolled:
        return ""
    return ("; the low-precision variants (bench/zoo/make_lowp.py) use their sidecar's tolerance instead, against "
            "ORT on the same variant: " + ", ".join(f"{m['name']} {tol_text(m['meta']['tolerance'], [o['name'] for o in m['meta'].get('outputs', [])])}"
                                                   for m in tolled)
            + " (int8: differences of one quantization step are expected; `N steps` is max |Δ| over the output's "
              "quantization step)")


def mib(b):
    return "—" if b is None else f"{b / 2**20:.1f}"


def over_memory(rows):
    return [r for r in rows if r["aic_mem"] is not None and r["ort_mem"] is not None and r["aic_mem"] > r["ort_mem"]]


def memory_sentence(rows):
    both = [r for r in rows if r["aic_mem"] is not None and r["ort_mem"] is not None]
    if not both:
        return ""
    ratios = [r["aic_mem"] / r["ort_mem"] for r in both if r["ort_mem"] > 0]
    return (f"Peak memory aic/ORT over {len(both)} models: geometric mean {fmt(geomean(ratios), '.2f')}, "
            f"{len(both) - len(over_memory(both))} at or below ORT's.")


def write_md(args, machine, overhead, index, models, rows, threads_list):
    cmd = "build/zoo-venv/bin/python bench/zoo/run_zoo.py " + " ".join(sys.argv[1:])
    n_ok = sum(1 for m in models if m["aic_ok"])
    lines = [
        "# Public model corpus: aic-onnx (`--device cpu`) vs ONNX Runtime and OpenVINO",
        "",
        f"Generated by `{cmd.strip()}` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}, on "
        "models written by `build/zoo-venv/bin/python bench/zoo/make_zoo.py --out build/zoo` (random weights, "
        "see that file's docstring; each model's sidecar NAME.json says how it was built). Do not edit by hand.",
        "",
        f"Machine: {machine}.",
        "",
        "Method: the same model file (but a bf16 variant, which ORT's CPU provider refuses: ORT runs its float32 twin, the same graph holding the same rounded weights) and the same seeded inputs for every engine (an fp16 or bf16 variant's float inputs drawn rounded to that precision: ORT removes the model's input Cast to float16, so only exactly representable inputs give both the same function); ORT with all graph optimizations "
        "(`ORT_ENABLE_ALL`, intra-op threads = T, inter-op 1), OpenVINO CPU with `INFERENCE_NUM_THREADS` = T, "
        "f32 inference precision, latency hint, one stream, input shapes fixed by `reshape`; aic-onnx timed "
        "in-process by `aic-onnx bench --json --shape … --input … --threads T`, ORT and OpenVINO through their "
        "Python bindings (ORT's per-call binding overhead on an Identity model: "
        + ", ".join(f"{overhead[t] * 1000:.1f} µs at {t} thread(s)" for t in sorted(overhead)) +
        f"). Each engine runs in a fresh process per round, {args.rounds} rounds with the engine order rotating; "
        "each cell is the median of the per-round medians (iterations per round sized to about "
        f"{250 if args.quick else 1000} ms of ORT time). `max |Δ|` compares `aic-onnx run --device cpu` "
        f"(T = {threads_list[0]}) with ORT on the same inputs: ok when |Δ| ≤ {ATOL:g} + {RTOL:g}·|ORT| on every "
        "element (integer outputs exact)" + tolerance_sentence(models) + ". Fallback steps are the steps of kind `fallback` (the reference "
        "interpreter) in the plan aic-onnx compiles (`bench --plan`). Peak memory (MiB) is each engine's peak "
        "resident-set growth over its process's baseline before the model is loaded (VmHWM − VmRSS), in a process "
        "of its own running a few iterations (aic-onnx: `aic-onnx bench --json`; ORT: bench/run_bench.py's memory "
        "script). "
        f"Load average at the end: {os.getloadavg()[0]:.1f} (the machine is shared: 2-thread timings depend on "
        "what else runs).",
        "",
    ]
    for t in threads_list:
        rs = [r for r in rows if r["threads"] == t]
        rs.sort(key=lambda r: (r["ratio"] is not None, -(r["ratio"] or 0)))
        lines += [f"## {t} thread{'s' if t > 1 else ''}", "",
                  "| model | exporter, opset | inputs | nodes | aic-onnx ms | ORT ms | OpenVINO ms | aic/ORT | "
                  "OpenVINO/ORT | aic steps (fallback) | aic MiB | ORT MiB |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in rs:
            rec, meta = r["rec"], r["rec"]["meta"]
            exp = {"torch.onnx dynamo=False": "torch.onnx", "torch.onnx dynamo=True": "dynamo"}.get(
                meta["exporter"], meta["exporter"])
            if meta.get("variant"):
                exp += f" → {meta['variant']}"
            ratio = f"**{r['ratio']:.2f}**" if r["ratio"] is not None else "error"
            steps = f"{r['steps']} ({r['fallback_steps']})" if r["steps"] is not None else "—"
            lines.append(f"| {rec['name']} | {exp}, {meta['opset']} | {run_bench.cell(rec['shapes'])} | "
                         f"{meta['nodes']} | {fmt(r['aic'], '.3f')} | {fmt(r['ort'], '.3f')} | "
                         f"{fmt(r['ov'], '.3f')} | {ratio} | {fmt(r['ov_ratio'], '.2f')} | {steps} | "
                         f"{mib(r['aic_mem'])} | {mib(r['ort_mem'])} |")
        ratios = [r["ratio"] for r in rs if r["ratio"] is not None]
        ov_ratios = [r["ov_ratio"] for r in rs if r["ov_ratio"] is not None]
        lines += ["", f"aic/ORT over {len(ratios)} models: geometric mean **{fmt(geomean(ratios), '.2f')}**, "
                  f"median {fmt(float(np.median(ratios)) if ratios else None, '.2f')}, "
                  f"{sum(1 for x in ratios if x <= 1.0)} at or below 1.0. "
                  f"OpenVINO/ORT over {len(ov_ratios)} models: geometric mean {fmt(geomean(ov_ratios), '.2f')}, "
                  f"median {fmt(float(np.median(ov_ratios)) if ov_ratios else None, '.2f')}. "
                  + memory_sentence(rs), ""]
    lines += int8_sentence(models)
    lines += ["## Outputs and plans", "",
              f"{n_ok} of {len(models)} models within tolerance of ORT.", "",
              "| model | aic-onnx max \\|Δ\\| vs ORT | OpenVINO max \\|Δ\\| vs ORT | fallback ops | ref/simple impls |",
              "|---|---|---|---|---|"]

    def acc(worst, ok, note, err=None):
        if err:
            return "error"
        if ok is None:
            return "—"
        s = f"{worst:.2e} {'ok' if ok else 'MISMATCH'}"
        return s + (f" ({run_bench.cell(note)[:160]})" if note else "")

    for m in models:
        fb = ", ".join(f"{op}×{n}" for op, n in sorted(m["fallback"].items())) or "—"
        im = ", ".join(f"{i}: {', '.join(sorted(set(ops)))}" for i, ops in sorted(m["impls"].items())) or "—"
        lines.append(f"| {m['name']} | {acc(m['aic_worst'], m['aic_ok'], m['aic_note'], m['errors'])} | "
                     f"{acc(m['ov_worst'], m['ov_ok'], m['ov_note'], m['ov_error'])} | {fb} | {run_bench.cell(im)} |")
    lines += ["", "## Failures", ""]
    skipped = index.get("skipped", {})
    fails = [("Not exported (make_zoo.py skipped them)",
              [f"{n} ({v['exporter']}, opset {v['opset']}): {v['why']}" for n, v in sorted(skipped.items())]),
             ] + ([("Low-precision variants not made (make_lowp.py skipped them)",
                    [f"{n} ({v['variant']} of {v['base']}): {v['why']}"
                     for n, v in sorted(index["lowp_skipped"].items())])] if index.get("lowp_skipped") else []) + [
             ("aic-onnx errors", [f"{m['name']}: {e}" for m in models for e in m["errors"]]),
             ("Wrong outputs (aic-onnx vs ORT)",
              [f"{m['name']}: max |Δ| {m['aic_worst']:.3g}; {m['aic_note']}"
               + ("; op by op within one step of the QDQ standard: bench/INT8_OPS.md, which measures ORT's own kernels too"
                  if m["meta"].get("variant") == "int8-qdq" else "")
               for m in models if m["aic_ok"] is False]),
             ("Peak memory over ORT's", [f"{r['rec']['name']} at {r['threads']} thread(s): {mib(r['aic_mem'])} MiB "
                                         f"vs ORT's {mib(r['ort_mem'])}" for r in over_memory(rows)]),
             ("Fallback (reference) ops", [f"{m['name']}: " + ", ".join(f"{op}×{n}" for op, n in
                                                                        sorted(m["fallback"].items()))
                                           for m in models if m["fallback"]]),
             ("oneDNN ref/simple implementations", [f"{m['name']}: " + "; ".join(
                 f"{i} ({', '.join(sorted(set(ops)))})" for i, ops in sorted(m["impls"].items()))
                 for m in models if m["impls"]]),
             ("OpenVINO", [f"{m['name']}: {m['ov_error']}" for m in models if m["ov_error"]] +
              [f"{m['name']}: outputs differ from ORT, max |Δ| {m['ov_worst']:.3g}; {m['ov_note']}"
               for m in models if m["ov_ok"] is False])]
    for title, items in fails:
        lines += [f"### {title}", ""] + ([f"- {run_bench.cell(i)}" for i in items] or ["none"]) + [""]
    lines += ["## Models", "", "| model | source | exporter, opset | nodes | params | notes |", "|---|---|---|---|---|---|"]
    for m in models:
        meta = m["meta"]
        lines.append(f"| {m['name']} | {run_bench.cell(meta['source'])} | {meta['exporter']}, {meta['opset']} | "
                     f"{meta['nodes']} | {meta['params']:,} | {run_bench.cell(meta.get('notes', ''))} |")
    lines.append("")
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
