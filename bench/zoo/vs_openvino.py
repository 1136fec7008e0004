#!/usr/bin/env python3
"""Where OpenVINO runs a corpus model faster than aic-onnx, and why: writes bench/VS_OPENVINO.md.

For each model of the corpus (bench/zoo/make_zoo.py's output) that OpenVINO loads, and each
thread count T:
  - aic-onnx (`aic-onnx bench MODEL --json --threads T`) and OpenVINO (CPU, f32 inference
    precision, latency hint, one stream, INFERENCE_NUM_THREADS T: run_zoo.py's settings) are
    timed on the same seeded inputs in alternating rounds, each engine in a fresh process per
    round; each figure is the median of the per-round medians;
  - where OpenVINO is faster (aic/OpenVINO above 1.0), both are profiled on those inputs:
    aic-onnx by `aic-onnx bench --profile` (time per step kind and op), OpenVINO by its
    performance counters (PERF_COUNT: time per executed node, with the node's type, the
    implementation that ran it and, from its runtime model, the ONNX ops it was made of: a
    fused attention "Subgraph" counts as matmul work). Both are summed into the same op categories (matmul,
    attention and softmax as one, conv, normalization, elementwise, data movement,
    pool/reduce, quantize, detection, reference interpreter: aic-onnx's fallback steps, other),
    and the categories where OpenVINO spends less are listed, largest gap first, with the
    implementations OpenVINO ran there (or the ops aic-onnx ran on its reference
    interpreter): that is the why.

Profiles add their own overhead and the two engines fuse differently (an OpenVINO
"Subgraph" is a run of fused elementwise ops; an aic-onnx MatMul step carries its fused bias
and activation), so categories compare the work, not single kernels.

usage: build/zoo-venv/bin/python bench/zoo/vs_openvino.py --aic build/aic-onnx --zoo build/zoo
           [--threads 1,2] [--rounds 3] [--only SEL,..] [--out bench/VS_OPENVINO.md]
(--only as run_zoo.py's)
"""
import argparse
import collections
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, HERE)
sys.path.insert(0, BENCH)
import run_zoo  # noqa: E402  (feeds, engine runs, model selection)
from machine import machine_line  # noqa: E402

# aic-onnx step kinds and ops, OpenVINO node types -> one category each.
# MatMul, attention and softmax are one category: aic-onnx fuses attention (its softmax
# included) into one step where OpenVINO runs MatMuls and a Softmax, or the reverse.
MATMUL = "matmul/attention/softmax"
CATEGORIES = [MATMUL, "conv", "normalization", "elementwise", "data movement",
              "pool/reduce", "quantize", "detection", "reference interpreter", "other"]
AIC_KIND = {"matmul": "matmul", "gemm": "matmul", "linear": "matmul", "conv": "conv", "deconv": "conv",
            "deconv_gemm": "conv", "deconv_scatter": "conv", "tap_conv": "conv", "depthwise": "conv",
            "attention": "attention", "layernorm": "normalization", "rmsnorm": "normalization",
            "groupnorm": "normalization", "instancenorm": "normalization", "batchnorm": "normalization",
            "channel_affine": "normalization", "softmax": "softmax", "reorder": "data movement",
            "transpose": "data movement", "concat": "data movement", "split": "data movement",
            "slice": "data movement", "gather": "data movement", "pad": "data movement", "tile": "data movement",
            "expand": "data movement", "copy": "data movement", "view": "data movement",
            "pool": "pool/reduce", "window_pool": "pool/reduce", "reduce": "pool/reduce",
            "argmax": "pool/reduce", "topk": "pool/reduce", "quantize": "quantize", "dequantize": "quantize",
            "qadd": "quantize", "qmul": "quantize", "lookup": "quantize", "dynamic_quantize": "quantize",
            "matmul_integer": "matmul", "integer_weights": "matmul", "qconv": "conv",
            "gather_nd": "data movement", "gather_elements": "data movement", "resize": "data movement"}
AIC_OP = {"MatMul": "matmul", "Gemm": "matmul", "MatMulInteger": "matmul", "QLinearMatMul": "matmul",
          "Conv": "conv", "ConvTranspose": "conv", "QLinearConv": "conv", "Softmax": "softmax",
          "LogSoftmax": "softmax", "LayerNormalization": "normalization", "BatchNormalization": "normalization",
          "InstanceNormalization": "normalization", "GroupNormalization": "normalization",
          "Transpose": "data movement", "Concat": "data movement", "Split": "data movement",
          "Slice": "data movement", "Gather": "data movement", "Pad": "data movement", "Resize": "data movement",
          "MaxPool": "pool/reduce", "AveragePool": "pool/reduce", "GlobalAveragePool": "pool/reduce",
          "ReduceMean": "pool/reduce", "ReduceSum": "pool/reduce", "ReduceMax": "pool/reduce",
          "QuantizeLinear": "quantize", "DequantizeLinear": "quantize", "DynamicQuantizeLinear": "quantize"}
OV_TYPE = {"FullyConnected": "matmul", "MatMul": "matmul", "Convolution": "conv", "GroupConvolution": "conv",
           "Deconvolution": "conv", "ScaledDotProductAttention": "attention", "MVN": "normalization",
           "RMS": "normalization", "NormalizeL2": "normalization", "BatchNormInference": "normalization",
           "Softmax": "softmax", "LogSoftmax": "softmax", "Eltwise": "elementwise", "Subgraph": "elementwise",
           "Math": "elementwise", "Transpose": "data movement", "Reorder": "data movement",
           "Reshape": "data movement", "Concatenation": "data movement", "Split": "data movement",
           "StridedSlice": "data movement", "Gather": "data movement", "Pad": "data movement",
           "Broadcast": "data movement", "Tile": "data movement", "Interpolate": "data movement",
           "Pooling": "pool/reduce", "AdaptivePooling": "pool/reduce", "Reduce": "pool/reduce",
           "ReduceMean": "pool/reduce", "ReduceSum": "pool/reduce", "ReduceMax": "pool/reduce",
           "FakeQuantize": "quantize", "Concat": "data movement", "Convert": "elementwise",
           "NonMaxSuppression": "detection", "TopK": "detection", "NonZero": "detection",
           "GatherND": "data movement", "ShapeOf": "other"}

PROFILE_ROW = re.compile(r"^\s{2}(\S+)\s+(\S+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)%$")


def merged(category):
    return MATMUL if category in ("matmul", "attention", "softmax") else category


def aic_category(kind, op):
    op = op.split("::")[-1]
    if kind == "fallback":  # a step of the reference interpreter, whatever its op
        return "reference interpreter"
    if op in AIC_OP:
        return merged(AIC_OP[op])
    return merged(AIC_KIND.get(kind, "elementwise" if kind in ("eltwise", "binary", "native", "swish", "sigmoid", "tanh",
                                                        "gelutanh", "channel_scale", "cast", "select", "unary",
                                                        "streaming_binary", "rotary", "swiglu") else "other"))


def aic_profile(aic_bin, path, input_args, threads, iters):
    """{category: ms per run} from `aic-onnx bench --profile`, or (None, error)."""
    p, err = run_zoo.aic(aic_bin, ["bench", path, "--profile", "--threads", str(threads), "--iters", str(iters),
                                   "--warmup", str(max(2, iters // 10))] + input_args)
    if err:
        return None, err
    cats = collections.defaultdict(float)
    fallback = collections.defaultdict(float)
    for line in (p.stdout + p.stderr).splitlines():
        if line.startswith("slowest steps"):
            break
        m = PROFILE_ROW.match(line)
        if m and m.group(1) != "kind":
            cats[aic_category(m.group(1), m.group(2))] += float(m.group(4))
            if m.group(1) == "fallback":
                fallback[m.group(2)] += float(m.group(4))
    cats = dict(cats)
    cats["_fallback_ops"] = [op for op, _ in sorted(fallback.items(), key=lambda kv: -kv[1])]
    return cats, None


OV_PROFILE_SCRIPT = r"""
import sys, json, collections, numpy as np
import onnx
import openvino as ov
model, threads, iters, npz, config = sys.argv[1:6]
threads, iters = int(threads), int(iters)
feeds = dict(np.load(npz))
# The ONNX op type of every node name, subgraphs included: what OpenVINO's fused nodes came from.
op_types = {}
def walk(g):
    for n in g.node:
        op_types[n.name] = n.op_type
        for a in n.attribute:
            if a.g is not None:
                walk(a.g)
walk(onnx.load(model, load_external_data=False).graph)
core = ov.Core()
m = core.read_model(model)
m.reshape({name: ov.PartialShape(list(a.shape)) for name, a in feeds.items()})
cm = core.compile_model(m, "CPU", dict(json.loads(config), INFERENCE_NUM_THREADS=threads, PERF_COUNT=True))
origins = {}
for op in cm.get_runtime_model().get_ordered_ops():
    names = op.get_rt_info()["originalLayersNames"].astype(str)
    origins[op.get_friendly_name()] = sorted({op_types[n] for n in names.split(",") if n in op_types})
req = cm.create_infer_request()
for _ in range(max(2, iters // 10)):
    req.infer(feeds)
nodes = {}
for _ in range(iters):
    req.infer(feeds)
    for p in req.profiling_info:
        if p.status == p.Status.EXECUTED:
            r = nodes.setdefault(p.node_name, {"type": p.node_type, "impl": p.exec_type, "ms": 0.0,
                                               "from": origins.get(p.node_name, [])})
            r["ms"] += p.real_time.total_seconds() * 1e3 / iters
print(json.dumps(nodes))
"""


# ONNX op types in the order that names a fused node's category: a node that
# came from a MatMul and a Softmax (OpenVINO's attention "Subgraph") is matmul
# work, one from a Conv and an Add conv work.
ORIGIN_PRIORITY = ["MatMul", "Gemm", "Conv", "ConvTranspose", "QLinearConv", "QLinearMatMul", "MatMulInteger",
                   "LayerNormalization", "BatchNormalization", "InstanceNormalization", "GroupNormalization",
                   "Softmax", "LogSoftmax", "NonMaxSuppression", "TopK", "NonZero", "MaxPool", "AveragePool",
                   "GlobalAveragePool", "ReduceMean", "ReduceSum", "ReduceL2", "ReduceMax"]
ORIGIN_CATEGORY = {"NonMaxSuppression": "detection", "TopK": "detection", "NonZero": "detection",
                   "ReduceL2": "pool/reduce"}


def ov_category(node_type, origins):
    """A node's category from the ONNX ops it came from, else from its own type."""
    for op in ORIGIN_PRIORITY:
        if op in origins:
            return merged(ORIGIN_CATEGORY.get(op) or AIC_OP.get(op, "other"))
    return merged(OV_TYPE.get(node_type, "other"))


def ov_profile(path, threads, iters, npz):
    """({category: ms}, {category: [implementations]}) from OpenVINO's counters, or (None, None)."""
    p = subprocess.run([sys.executable, "-c", OV_PROFILE_SCRIPT, path, str(threads), str(iters), npz,
                        json.dumps(run_zoo.OV_CONFIG)], capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        return None, None
    cats, impls = collections.defaultdict(float), collections.defaultdict(set)
    for node in json.loads(p.stdout.strip().splitlines()[-1]).values():
        c = ov_category(node["type"], node["from"])
        cats[c] += node["ms"]
        impls[c].add(f"{node['type']}: {node['impl']}")
    return dict(cats), {k: sorted(v) for k, v in impls.items()}


def why(aic_cats, ov_cats, ov_impls):
    """The categories where OpenVINO spends less, largest gap first: [(category, aic ms, ov ms, impls)]."""
    gaps = []
    total = sum(v for k, v in aic_cats.items() if not k.startswith("_"))
    for c in CATEGORIES:
        a, o = aic_cats.get(c, 0.0), ov_cats.get(c, 0.0)
        if a - o > 0.02 * max(total, 1e-9):  # at least 2% of aic's time
            what = ([f"aic-onnx's reference interpreter ran {', '.join(aic_cats['_fallback_ops'][:4])}"]
                    if c == "reference interpreter" else ov_impls.get(c, []))
            gaps.append((a - o, c, a, o, what))
    gaps.sort(reverse=True)
    return [(c, a, o, impls) for _, c, a, o, impls in gaps]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aic", default=os.path.join(ROOT, "build", "aic-onnx"))
    ap.add_argument("--zoo", default=os.path.join(ROOT, "build", "zoo"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=os.path.join(BENCH, "VS_OPENVINO.md"))
    args = ap.parse_args()
    threads_list = [int(t) for t in args.threads.split(",")]
    aic_bin = os.path.abspath(args.aic)
    metas = run_zoo.corpus_names(args.zoo)
    only = [n for n in args.only.split(",") if n]
    if only:
        variants = {n: json.load(open(os.path.join(args.zoo, n + ".json"))).get("variant") for n in metas}
        metas = [n for n in run_zoo.select(metas, variants, only)]
    machine = machine_line(["openvino", "numpy"])
    tmp = tempfile.mkdtemp(prefix="aic_vs_ov_")
    rows, skipped = [], []
    for name in metas:
        meta = json.load(open(os.path.join(args.zoo, name + ".json")))
        path = os.path.join(args.zoo, meta["file"])
        _, input_args, npz = run_zoo.write_inputs(name, meta, tmp)
        # One OpenVINO run sizes the iterations (about 600 ms of its time per round, at least
        # 5) and says whether it loads the model at all.
        est, err = run_zoo.ov_run(path, threads_list[0], 3, 1, npz)
        if err:
            skipped.append((name, err))
            continue
        iters = int(min(500, max(5, 600.0 / max(est, 1e-3))))
        for t in threads_list:
            print(f"{name}, {t} thread(s), {iters} iterations ...", file=sys.stderr, flush=True)
            med = {"aic": [], "ov": []}
            for r in range(args.rounds):
                for e in (["aic", "ov"] if r % 2 == 0 else ["ov", "aic"]):
                    if e == "aic":
                        j, err = run_zoo.aic_bench_json(aic_bin, path, input_args, t, iters, max(2, iters // 10))
                        if j:
                            med["aic"].append(j["median_ms"])
                    else:
                        ms, _ = run_zoo.ov_run(path, t, iters, max(2, iters // 10), npz)
                        if ms is not None:
                            med["ov"].append(ms)
            if not med["aic"] or not med["ov"]:
                continue
            a, o = float(np.median(med["aic"])), float(np.median(med["ov"]))
            row = dict(name=name, threads=t, aic=a, ov=o, ratio=a / o, reasons=None)
            if a > o:
                aic_cats, err = aic_profile(aic_bin, path, input_args, t, iters)
                ov_cats, ov_impls = ov_profile(path, t, iters, npz)
                if aic_cats is not None and ov_cats is not None:
                    row.update(aic_cats=aic_cats, ov_cats=ov_cats, reasons=why(aic_cats, ov_cats, ov_impls))
            rows.append(row)
    write_md(args, machine, rows, skipped, threads_list)


def write_md(args, machine, rows, skipped, threads_list):
    cmd = "build/zoo-venv/bin/python bench/zoo/vs_openvino.py " + " ".join(sys.argv[1:])
    lines = ["# Where OpenVINO is faster than aic-onnx, and why", "",
             f"Generated by `{cmd.strip()}` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}; "
             "do not edit by hand. Method: the script's docstring (alternating rounds, medians; profiles by op "
             f"category where OpenVINO is faster). Machine: {machine}.", ""]
    for t in threads_list:
        rs = sorted((r for r in rows if r["threads"] == t), key=lambda r: -r["ratio"])
        faster = [r for r in rs if r["ratio"] > 1.0]
        lines += [f"## {t} thread{'s' if t > 1 else ''}", "",
                  f"OpenVINO faster on {len(faster)} of {len(rs)} models"
                  + (f" (aic/OpenVINO geometric mean {float(np.exp(np.mean(np.log([r['ratio'] for r in rs])))):.2f})"
                     if rs else "") + ".", "",
                  "| model | aic-onnx ms | OpenVINO ms | aic/OpenVINO | where OpenVINO spends less (aic ms vs OpenVINO ms; "
                  "OpenVINO's implementations) |", "|---|---|---|---|---|"]
        for r in rs:
            if r["ratio"] <= 1.0:
                reason = "—"
            elif r["reasons"] is None:
                reason = "not profiled (a profile failed)"
            elif not r["reasons"]:
                reason = "no category 2% apart: the difference is spread over the steps"
            else:
                reason = "; ".join(f"{c} {a:.2f} vs {o:.2f}" + (f" ({', '.join(impls[:3])})" if impls else "")
                                   for c, a, o, impls in r["reasons"][:3])
            lines.append(f"| {r['name']} | {r['aic']:.3f} | {r['ov']:.3f} | **{r['ratio']:.2f}** | {reason} |")
        lines.append("")
    if skipped:
        lines += ["## Not compared (OpenVINO does not load them)", ""]
        lines += [f"- {n}: {e}" for n, e in skipped] + [""]
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
