#!/usr/bin/env python3
"""Quantized models op by op: how far aic-onnx's int8 results are from the QDQ standard's,
one quantized op at a time, on the real activations of the corpus's int8 models.

Why op by op: at the logits of a deep QDQ network, engines that each round correctly
disagree by several quantization steps (ONNX Runtime's own ORT_ENABLE_ALL and
ORT_DISABLE_ALL differ by 6-19 steps on these models): an activation at a rounding tie,
or within float rounding of one, comes out one step apart, and later layers amplify it.
What an engine controls is each op; this measures each op.

For every int8-qdq model in --zoo (bench/zoo/make_lowp.py's variants):
  - the activations: every QuantizeLinear output (and graph input) the model computes,
    from ONNX Runtime with graph optimizations off (ORT_DISABLE_ALL: each QDQ op runs as
    the standard writes it, DequantizeLinear -> float op -> QuantizeLinear) on the
    sidecar's seeded inputs;
  - the units: for each QuantizeLinear of an activation, the subgraph that computes it
    from the nearest quantized tensors, e.g. DequantizeLinear ->
    Conv -> Relu -> QuantizeLinear with its weights;
  - each unit runs on those activations through the reference semantics (ORT with
    optimizations off), aic-onnx (aic_onnx.Session, device cpu: the fused int8 kernels)
    and ORT with all optimizations (its QLinear kernels), and the integer outputs are
    compared with the reference's in quantization steps.

Writes bench/INT8_OPS.md (or --out). Exit status 1 when an aic-onnx unit is more than one
step from the reference anywhere (the target: bit-exact where the standard fixes the
rounding, else within one step).

usage: PYTHONPATH=build/python build/zoo-venv/bin/python bench/zoo/int8_ops.py --zoo build/zoo
           [--only NAME,..] [--out bench/INT8_OPS.md]
"""
import argparse
import collections
import datetime
import json
import os
import sys
import time
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from run_zoo import make_feeds  # noqa: E402
from machine import machine_line  # noqa: E402

import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import aic_onnx  # noqa: E402

# The op a unit is named after: the first of these found in it, else its first float op.
MAIN_OPS = ["Conv", "MatMul", "Gemm", "Attention", "Softmax", "LayerNormalization", "Add", "Mul", "Sub", "Div",
            "GlobalAveragePool", "AveragePool", "MaxPool", "Concat", "Resize"]
QUANT_IO = {"QuantizeLinear", "DequantizeLinear"}


def ort_session(model_bytes, level):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])


def constant_values(m):
    """Names of tensors computed from initializers and Constants only (weights and their
    DequantizeLinear, shapes): they stay inside a unit."""
    const = {t.name for t in m.graph.initializer}
    for n in m.graph.node:
        if all(not i or i in const for i in n.input) and n.op_type not in {"RandomNormal", "RandomUniform"}:
            const.update(n.output)
    return const


def activation_quantizers(m, const):
    return [n for n in m.graph.node if n.op_type == "QuantizeLinear" and n.input[0] not in const]


def unit_of(q, producers, cut, const):
    """(input names, nodes) of the subgraph computing Q's output from the tensors in CUT
    (quantized activations and graph inputs); constants are computed inside."""
    inputs, nodes, seen, stack = [], [], set(), [q.input[0]]
    nodes.append(q)
    while stack:
        name = stack.pop()
        if not name or name in seen:
            continue
        seen.add(name)
        if name in cut:
            inputs.append(name)
            continue
        n = producers.get(name)
        if n is None:  # an initializer
            continue
        nodes.append(n)
        if name in const and n.op_type == "Constant":
            continue
        stack.extend(n.input)
    return sorted(set(inputs)), nodes


def unit_label(nodes):
    ops = [n.op_type for n in nodes]
    for op in MAIN_OPS:
        if op in ops:
            extra = sorted({o for o in ops if o not in QUANT_IO and o != op and o not in {"Constant", "Reshape"}})
            if len(extra) > 3:  # e.g. BERT's float mask computation feeding an unquantized Softmax
                return f"{op} + {len(extra)} other float ops"
            return op + ("+" + "+".join(extra) if extra else "")
    rest = [o for o in ops if o not in QUANT_IO and o != "Constant"]
    return rest[0] if rest else "QuantizeLinear"


def unit_model(m, order, nodes, inputs, output, acts):
    """A model of NODES (in the model's order) reading INPUTS, typed from their values."""
    def info(name):
        a = acts[name]
        return onnx.helper.make_tensor_value_info(name, onnx.helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
    used = {i for n in nodes for i in n.input}
    g = onnx.helper.make_graph(sorted(nodes, key=lambda n: order[id(n)]), "unit", [info(i) for i in inputs],
                               [info(output)], [t for t in m.graph.initializer if t.name in used])
    unit = onnx.helper.make_model(g, opset_imports=m.opset_import, ir_version=m.ir_version)
    return unit


def steps_off(got, want):
    return np.abs(got.astype(np.int64) - want.astype(np.int64))


def measure_model(path, meta, rows, failures):
    m = onnx.load(path)
    const = constant_values(m)
    quantizers = activation_quantizers(m, const)
    graph_inputs = [i.name for i in m.graph.input if i.name not in {t.name for t in m.graph.initializer}]
    cut = {q.output[0] for q in quantizers} | set(graph_inputs)
    producers = {o: n for n in m.graph.node for o in n.output}

    # Every quantized activation from the reference semantics, in one run.
    probe = onnx.ModelProto()
    probe.CopyFrom(m)
    known = {o.name for o in probe.graph.output}
    inits = {t.name: t for t in m.graph.initializer}
    for q in quantizers:
        if q.output[0] in known:
            continue
        # QuantizeLinear's output type is its zero point's (uint8 without one).
        zero = inits.get(q.input[2]) if len(q.input) > 2 and q.input[2] else None
        if zero is None and len(q.input) > 2 and q.input[2] in producers:
            zero = producers[q.input[2]].attribute[0].t
        elem = zero.data_type if zero is not None else onnx.TensorProto.UINT8
        probe.graph.output.append(onnx.helper.make_tensor_value_info(q.output[0], elem, None))
    rng = np.random.default_rng(zlib.crc32(meta["name"].encode()))
    feeds = make_feeds(meta["inputs"], rng)
    ref = ort_session(probe.SerializeToString(), ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    names = [o.name for o in ref.get_outputs()]
    acts = dict(zip(names, ref.run(names, feeds)))
    acts.update(feeds)

    order = {id(n): i for i, n in enumerate(m.graph.node)}
    for q in quantizers:
        inputs, nodes = unit_of(q, producers, cut, const)
        label = unit_label(nodes)
        unit = unit_model(m, order, nodes, inputs, q.output[0], acts)
        data = unit.SerializeToString()
        unit_feeds = {i: acts[i] for i in inputs}
        want = acts[q.output[0]]
        try:
            ours = aic_onnx.Session(data, threads=1).run(None, unit_feeds)[0]
        except Exception as e:  # noqa: BLE001
            failures.append(f"{meta['name']} {q.name} ({label}): aic-onnx failed: {str(e)[:160]}")
            continue
        fused = ort_session(data, ort.GraphOptimizationLevel.ORT_ENABLE_ALL).run(None, unit_feeds)[0]
        # The unit alone through the reference again: the activation the full run gave is
        # what it must reproduce (a check of the extraction itself).
        again = ort_session(data, ort.GraphOptimizationLevel.ORT_DISABLE_ALL).run(None, unit_feeds)[0]
        if not np.array_equal(again, want):
            failures.append(f"{meta['name']} {q.name} ({label}): the extracted unit does not reproduce the full "
                            "model's activation on the reference (extraction problem; skipped)")
            continue
        rows.append(dict(model=meta["name"], node=q.name, label=label, n=want.size,
                         aic=steps_off(ours, want), ort=steps_off(fused, want)))


def summarize(rows):
    groups = collections.OrderedDict()
    for r in sorted(rows, key=lambda r: (r["model"], r["label"])):
        groups.setdefault((r["model"], r["label"]), []).append(r)
    lines = []
    for (model, label), rs in groups.items():
        n = sum(r["n"] for r in rs)
        cells = [model, label, str(len(rs)), f"{n:,}"]
        for key in ("aic", "ort"):
            off = sum(int(np.count_nonzero(r[key])) for r in rs)
            worst = max(int(r[key].max()) if r[key].size else 0 for r in rs)
            cells += [f"{100.0 * (n - off) / n:.4f}%", str(off), str(worst)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zoo", default="build/zoo")
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                  "INT8_OPS.md"))
    args = ap.parse_args()
    only = {t for t in args.only.split(",") if t}
    metas = []
    for f in sorted(os.listdir(args.zoo)):
        if not f.endswith(".json") or f.endswith("_index.json"):
            continue
        meta = json.load(open(os.path.join(args.zoo, f)))
        if meta.get("variant") != "int8-qdq" or (only and meta["name"] not in only):
            continue
        metas.append(meta)
    machine = machine_line(["onnxruntime", "onnx", "numpy"])
    rows, failures = [], []
    start = time.time()
    for meta in metas:
        t0 = time.time()
        before = len(rows)
        measure_model(os.path.join(args.zoo, meta["file"]), meta, rows, failures)
        print(f"{meta['name']}: {len(rows) - before} units, {time.time() - t0:.1f} s", file=sys.stderr)
    worst = max((int(r["aic"].max()) for r in rows if r["aic"].size), default=0)
    off = sum(int(np.count_nonzero(r["aic"])) for r in rows)
    total = sum(r["n"] for r in rows)
    ort_off = sum(int(np.count_nonzero(r["ort"])) for r in rows)
    ort_worst = max((int(r["ort"].max()) for r in rows if r["ort"].size), default=0)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cmd = "PYTHONPATH=build/python build/zoo-venv/bin/python bench/zoo/int8_ops.py --zoo " + args.zoo
    if args.only:
        cmd += " --only " + args.only
    out = [
        "# Quantized models op by op: aic-onnx and ONNX Runtime against the QDQ standard",
        "",
        f"Generated by `{cmd}` on {now}; do not edit by hand. Method: the script's docstring.",
        "",
        f"Machine: {machine}.",
        "",
        "Each unit is one QuantizeLinear of an activation with the float ops and DequantizeLinears that "
        "feed it (a quantized op), run on the activations the reference semantics (ORT, optimizations off) "
        "computes for the model's seeded inputs. Columns: units; elements of their outputs; then for "
        "aic-onnx (`aic_onnx.Session`, cpu, 1 thread) and for ORT with all optimizations (its fused QLinear "
        "kernels): share of elements equal to the reference, elements off, largest difference in "
        "quantization steps.",
        "",
        f"Over {len(rows)} units and {total:,} elements: aic-onnx off by one step on {off:,} "
        f"({100.0 * off / max(total, 1):.4f}%), at most **{worst}** step(s); ORT_ENABLE_ALL off on "
        f"{ort_off:,} ({100.0 * ort_off / max(total, 1):.4f}%), at most {ort_worst}. "
        f"{time.time() - start:.0f} s.",
        "",
        "| model | unit | units | elements | aic exact | aic off | aic max steps | ORT exact | ORT off | "
        "ORT max steps |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    out += summarize(rows)
    out += ["", "## Not measured", ""]
    out += [f"- {f}" for f in failures] or ["none"]
    with open(args.out, "w") as fh:
        fh.write("\n".join(out) + "\n")
    print("\n".join(out[:12]), file=sys.stderr)
    return 1 if worst > 1 or failures else 0


if __name__ == "__main__":
    sys.exit(main())
