#!/usr/bin/env python3
"""`aic-onnx report` on the public model corpus (bench/zoo) against what is known about each
model (issue #21's targets), written to bench/REPORT.md.

For every NAME.onnx with its sidecar NAME.json in --zoo, `aic-onnx report NAME.onnx --format json
--shape IN=D,..` (every input at the sidecar's shape), once with spectra (the default) and once
with --no-spectra, then:

(a) Parameters against torch. The sidecar (bench/zoo/make_zoo.py, also `--params-only`) holds
    torch_params = sum(p.numel() for p in module.parameters()) (tied tensors once) and, found by
    matching every parameter's values against the ONNX file's float constants, what the export
    did to them (torch_export_transforms). The report must count

        expected = torch_params + Σ delta over the transforms, where
          batchnorm folded into conv   delta = −C per BatchNorm (−2C if the Conv had its own bias):
                                       γ, β (2C) and the Conv bias become one Conv bias (C)
          weight norm folded           delta = −numel(g): g, v become w = g·v/‖v‖
          materialized lookup          delta = numel(stored result) − numel(parameter): a Gather or
                                       Slice with constant indices was folded at export (Swin's
                                       relative position bias table [169, h] → [1, h, 49, 49])
          not in the export            delta = −numel: no constant holds the parameter's values
          duplicated by the exporter   delta = 0: one tensor stored twice (GPT-2's tied lm_head as a
                                       transposed copy of wte); the report must count it once

    (the sidecar's torch_params_in_onnx). "exact": report = expected = torch_params; "explained":
    report = expected ≠ torch_params, the difference being the transforms listed; "MISS"
    otherwise. A miss is located node by node: every ONNX constant that holds a torch
    parameter (sidecar torch_param_initializers) is assigned to the report node that reads it
    (through any weight plumbing the report folds away; a second copy of one parameter is worth
    0), and each report node whose count differs from what it reads is listed. scikit-learn
    models are not checked (no torch parameters; skl2onnx keeps most coefficients in node
    attributes); the fp16/int8 variants (make_lowp.py) are reported but not checked (their base
    model is).
(b) MACs against onnx-tool (PyPI onnx-tool 1.0.1, run with --onnx-tool-python in a subprocess,
    on the same shapes and the sample input values the sidecar describes; the worker teaches it
    IsNaN and fixes its Squeeze with negative axes and its Range on 1-element inputs, which the
    transformers exports need; where it still fails on an op after the MAC ops, e.g. ssdlite's If,
    it is run on the part of the model that computes the MAC ops' outputs), reconciled per op
    family as tests/integration/report_vs_onnx_tool.py does: Conv and Gemm minus the one MAC per
    output element onnx-tool adds for a bias, MatMul/MatMulInteger/Einsum as they are,
    ConvTranspose in the report's convention (input elements × Cout/group × kernel), every other
    op (elementwise, normalization, pooling, Softmax...) left out, since onnx-tool counts its work
    as MACs and the report as FLOPs. Target |report − reconciled| ≤ 1% of reconciled. When
    onnx-tool fails on a model its error is recorded and MACs are not checked.
(c) The op types of the report's collapse points. Flagged (a target violation): index and shape
    ops (Shape, Size, Constant, ConstantOfShape, Range, NonZero, ...), a node whose first input
    is an integer or bool tensor, and a node not on the data path, i.e. no floating-point input
    computed from a floating-point graph input or from an embedding lookup (mask plumbing such
    as BERT's IsNaN/Where on the attention mask).
(d) Wall time of the two report runs, one each: the host is shared, so read them as an order of
    magnitude.

Exit status 1 when a torch model (not a variant) misses its parameter or MAC target, or its
report fails; with --strict also when a collapse point is flagged.

usage: build/zoo-venv/bin/python bench/zoo/check_report.py --aic build/aic-onnx --zoo build/zoo
           --out bench/REPORT.md [--only NAME,..] [--onnx-tool-python .venv/bin/python] [--strict]
           [--verbose]   (--verbose: MACs by op family for every model, not only for a miss)
(internally: PYTHON check_report.py --onnx-tool-worker MODEL FEEDS.npz OUT.json)
"""
import argparse
import collections
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SEED = 20261212  # make_zoo.py's: the sample input is drawn from SEED + 1
MAC_TOLERANCE = 0.01
MAC_FAMILIES = ("Conv", "ConvTranspose", "MatMul", "Gemm", "MatMulInteger", "ConvInteger", "QLinearConv",
                "QLinearMatMul", "Einsum")
PATCHED = []  # ops the onnx-tool worker had to teach onnx-tool
INDEX_OPS = {"Shape", "Size", "Constant", "ConstantOfShape", "Range", "NonZero", "EyeLike", "Unique", "OneHot"}


# ---------------------------------------------------------------------------------------
# onnx-tool, in its own interpreter


def onnx_tool_worker(model, feeds_path, out_path):
    """Profiles MODEL with onnx-tool at the shapes and values of FEEDS; writes per-op MACs."""
    import onnx_tool
    from onnx_tool import node as ot_node
    if not hasattr(ot_node, "IsNaNNode"):  # onnx-tool 1.0.1 cannot infer IsNaN (torch's SDPA NaN guard)

        @ot_node.NODE_REGISTRY.register()
        class IsNaNNode(ot_node.NotNode):
            def value_infer(self, intensors, outtensors):
                outtensors[0].update_tensor(np.isnan(intensors[0].get_numpy()))

        PATCHED.append("IsNaN")

    def squeeze_value_infer(self, intensors, outtensors):  # 1.0.1 mishandles negative axes
        x = intensors[0].get_numpy()
        if len(intensors) == 2:
            axes = intensors[1].get_numpy()
        else:
            axes = self.attr.get("axes")
        if axes is None:
            out = np.squeeze(x)
        else:
            out = np.squeeze(x, axis=tuple(int(a) % x.ndim for a in np.atleast_1d(axes)))
        outtensors[0].update_tensor(out)

    ot_node.SqueezeNode.value_infer = squeeze_value_infer
    PATCHED.append("Squeeze")

    def range_value_infer(self, intensors, outtensors):  # 1.0.1 wants numpy scalars, gets 0-d/1-element arrays
        start, limit, delta = (np.asarray(t.get_numpy()).reshape(-1)[0] for t in intensors[:3])
        outtensors[0].update_tensor(np.arange(start, limit, delta, dtype=intensors[0].dtype))

    ot_node.RangeNode.value_infer = range_value_infer
    PATCHED.append("Range")
    feeds = dict(np.load(feeds_path)) if feeds_path else {}
    t0 = time.time()
    m = onnx_tool.Model(model)
    g = m.graph
    g.shape_infer(feeds)
    g.profile()

    def vol(name):
        return int(np.prod(g.tensormap[name].get_shape())) if name in g.tensormap else 0

    per_op = collections.defaultdict(lambda: dict(nodes=0, macs=0, reconciled=0))
    for n in g.nodemap.values():
        macs = int(n.macs[0])
        rec = 0
        if n.op_type in ("Conv", "Gemm"):
            bias = vol(n.output[0]) if len(n.input) > 2 and n.input[2] else 0
            rec = macs - bias
        elif n.op_type == "ConvTranspose":
            kernel = g.tensormap[n.input[1]].get_shape()
            rec = vol(n.input[0]) * int(np.prod(kernel[1:]))
        elif n.op_type in MAC_FAMILIES:
            rec = macs
        e = per_op[n.op_type]
        e["nodes"] += 1
        e["macs"] += macs
        e["reconciled"] += rec
    out = dict(patched=PATCHED, per_op=per_op, total=sum(e["macs"] for e in per_op.values()),
               reconciled=sum(e["reconciled"] for e in per_op.values()), params=int(g.params),
               seconds=round(time.time() - t0, 2))
    with open(out_path, "w") as f:
        json.dump(out, f)


def run_onnx_tool(python, model, feeds, tmp, timeout=900):
    fp = os.path.join(tmp, "feeds.npz")
    np.savez(fp, **feeds)
    op = os.path.join(tmp, "onnx_tool.json")
    if os.path.exists(op):
        os.remove(op)
    try:
        p = subprocess.run([python, os.path.abspath(__file__), "--onnx-tool-worker", model, fp, op],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"onnx-tool timed out after {timeout} s"
    if p.returncode != 0 or not os.path.exists(op):
        lines = [x for x in (p.stderr or p.stdout).strip().splitlines() if x.strip()]
        return None, "onnx-tool failed: " + (lines[-1][:300] if lines else f"exit {p.returncode}")
    with open(op) as f:
        return json.load(f), None


def mac_submodel(path, tmp):
    """The part of PATH that computes the outputs of its MAC-family nodes (those nodes and their
    ancestors): what is left for onnx-tool when it fails on an op after them (ssdlite's If around its
    non-maximum suppression)."""
    import onnx
    from onnx import helper
    m = onnx.load(path)
    g = m.graph
    producer = {o: i for i, n in enumerate(g.node) for o in n.output if o}
    outputs = [n.output[0] for n in g.node if n.op_type in MAC_FAMILIES]
    if not outputs:
        return None
    keep, todo = set(), [producer[o] for o in outputs]
    while todo:
        i = todo.pop()
        if i in keep:
            continue
        keep.add(i)
        todo.extend(producer[x] for x in g.node[i].input if x in producer)
    nodes = [n for i, n in enumerate(g.node) if i in keep]
    used = {x for n in nodes for x in n.input}
    sub = helper.make_graph(nodes, g.name + "_mac_part", [vi for vi in g.input if vi.name in used],
                            [helper.make_empty_tensor_value_info(o) for o in outputs],
                            [t for t in g.initializer if t.name in used])
    model = helper.make_model(sub, opset_imports=m.opset_import, ir_version=m.ir_version)
    dst = os.path.join(tmp, "mac_part.onnx")
    onnx.save(model, dst)
    return dst


# ---------------------------------------------------------------------------------------
# the report, read defensively (keys are added over time; a count may become an object that
# carries a symbolic expression next to its value)


def num(x):
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return int(x)
    if isinstance(x, str):
        try:
            return int(float(x.replace(",", "")))
        except ValueError:
            return None
    if isinstance(x, dict):
        for k in ("value", "at_shapes", "evaluated", "count", "total", "at"):
            if k in x and num(x[k]) is not None:
                return num(x[k])
    return None


def snapshot_binary(aic, tmp, wait_s=900):
    """A private copy of the binary, taken once it exists and has not changed for 20 s, so that one run
    measures one build even while the binary is being rebuilt."""
    t_end = time.time() + wait_s
    while time.time() < t_end:
        try:
            st = os.stat(aic)
            if time.time() - st.st_mtime > 20 and os.access(aic, os.X_OK):
                dst = os.path.join(tmp, "aic-onnx")
                shutil.copy2(aic, dst)
                if os.stat(aic).st_mtime == st.st_mtime:
                    return dst, st.st_mtime
        except OSError:
            pass
        print(f"waiting for {aic} (missing or being written) ...", file=sys.stderr, flush=True)
        time.sleep(10)
    raise SystemExit(f"{aic} missing or changing for {wait_s} s")


def run_report(aic, model, shape_args, spectra):
    cmd = [aic, "report", model, "--format", "json"] + shape_args + ([] if spectra else ["--no-spectra"])
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.time() - t0
    if p.returncode != 0:
        return None, dt, f"report exited {p.returncode}: {(p.stderr or '').strip()[-300:]}"
    try:
        return json.loads(p.stdout), dt, None
    except json.JSONDecodeError as e:
        return None, dt, f"report JSON unreadable: {e}"


def node_ops(node):
    return [o.get("op_type", "?") for o in node.get("onnx_nodes") or []] or [node.get("name", "?")]


# ---------------------------------------------------------------------------------------
# the ONNX side


class Graph:
    """The ONNX graph: nodes by name, readers of each value, value dtypes (after shape inference),
    and the values on the data path."""

    def __init__(self, path):
        import onnx
        from onnx import numpy_helper
        self.onnx = onnx
        m = onnx.load(path)
        try:
            m = onnx.shape_inference.infer_shapes(m)
        except Exception:  # noqa: BLE001 - dtypes then come from what the file declares
            pass
        g = m.graph
        self.nodes = list(g.node)
        self.by_name = {}
        for n in self.nodes:
            self.by_name.setdefault(n.name, n)
        self.readers = collections.defaultdict(list)
        self.producer = {o: n for n in self.nodes for o in n.output if o}
        for n in self.nodes:
            for x in n.input:
                if x:
                    self.readers[x].append(n)
        self.dtype = {}
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            if vi.type.HasField("tensor_type"):
                self.dtype[vi.name] = vi.type.tensor_type.elem_type
        self.size = {}
        for t in g.initializer:
            self.dtype[t.name] = t.data_type
            self.size[t.name] = int(np.prod(t.dims))
        for n in self.nodes:
            if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
                t = n.attribute[0].t
                self.dtype[n.output[0]] = t.data_type
                self.size[n.output[0]] = int(np.prod(t.dims))
        self.constants = set(self.size)
        self.small = {}  # values of small integer constants (Slice bounds, Gather indices)
        for t in g.initializer:
            if self.size[t.name] <= 64 and self.is_intlike(t.name):
                self.small[t.name] = numpy_helper.to_array(t)
        for n in self.nodes:
            if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value" and \
                    self.size[n.output[0]] <= 64 and self.is_intlike(n.output[0]):
                self.small[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
        self.inputs = [vi.name for vi in g.input if vi.name not in self.constants]
        self.data = self._data_path(numpy_helper)

    def cone(self, value, limit=200):
        """What computes VALUE: op type counts of its producers and the constants at the leaves."""
        ops, leaves, seen, todo = collections.Counter(), [], set(), [value]
        while todo and len(seen) < limit:
            v = todo.pop()
            if v in seen:
                continue
            seen.add(v)
            n = self.producer.get(v)
            if n is None or n.op_type == "Constant":
                if v in self.constants:
                    leaves.append(v)
                continue
            ops[n.op_type] += 1
            if n.op_type not in ("Shape", "Size"):  # only the input's shape matters
                todo.extend(x for x in n.input if x)
        return ops, leaves

    def describe_input(self, value, holds):
        """One line on a constant-derived input value: what it is computed from."""
        if value in self.constants:
            return f"`{value}` (a constant of {self.size.get(value, '?'):,} elements)"
        ops, leaves = self.cone(value)
        learned = [x for x in leaves if x in holds]
        floats = [x for x in leaves if self.is_float(x) and x not in holds]
        src = (f"from learned {', '.join(learned[:2])}" if learned else
               "from no learned constant" + (f" (float constants {', '.join(floats[:2])})" if floats else ""))
        return f"`{value}` computed by {dict(ops.most_common(6))} {src}"

    INDEX_TYPES = (7, 6, 9, 12, 13)  # TensorProto INT64, INT32, BOOL, UINT32, UINT64

    def is_float(self, name):
        t = self.dtype.get(name)
        P = self.onnx.TensorProto
        return t is None or t in (P.FLOAT, P.FLOAT16, P.BFLOAT16, P.DOUBLE)

    def is_intlike(self, name):
        t = self.dtype.get(name)
        P = self.onnx.TensorProto
        return t in (P.INT64, P.INT32, P.INT16, P.INT8, P.UINT64, P.UINT32, P.UINT16, P.BOOL)

    def _data_path(self, numpy_helper):
        """Values computed from a floating-point graph input or from a lookup of a float constant
        table with non-constant indices (an embedding), other than through shape and index ops
        (Shape, Size, Range...): the data path. Quantized values (QDQ) stay on it."""
        data = {x for x in self.inputs if self.is_float(x)}
        for n in self.nodes:  # topological order
            if n.op_type in INDEX_OPS:
                continue
            hit = any(x in data for x in n.input if x)
            if not hit and n.op_type == "Gather" and len(n.input) > 1 and n.input[0] not in self.inputs \
                    and n.input[1] not in self.constants and self.dtype.get(n.input[0]) not in self.INDEX_TYPES:
                hit = True  # an embedding lookup: a constant table (maybe quantized, maybe dequantized first)
            if hit:
                data.update(o for o in n.output if o)
        return data


def attribute_params(graph, doc, side):
    """Per report node: the learned elements it reads (see the module docstring) against what it counts."""
    holds = side.get("torch_param_initializers") or {}
    in_report = {}
    for node in doc.get("nodes") or []:
        for o in node.get("onnx_nodes") or []:
            in_report.setdefault(o.get("name"), node.get("index"))
    seen_param = set()
    worth = {}
    for c, what in holds.items():
        base = what.split(" (")[0]
        if what.startswith("values of ") or " folded with " in what or "= g·v/‖v‖" in what:
            worth[c] = graph.size.get(c, 0)
        elif base in seen_param:
            worth[c] = 0  # a second copy of one torch parameter
        else:
            seen_param.add(base)
            worth[c] = graph.size.get(c, 0)
    for t in side.get("torch_export_transforms") or []:
        if t.get("kind") == "partial copy of a parameter":
            for c in t.get("onnx", []):
                worth[c] = 0
    got = collections.Counter()
    reads = collections.defaultdict(list)
    unattributed = []
    for c, w in worth.items():
        found, frontier, visited = [], [c], set()
        while frontier:
            v = frontier.pop()
            for n in graph.readers.get(v, []):
                if id(n) in visited:
                    continue
                visited.add(id(n))
                if n.name in in_report:
                    found.append(in_report[n.name])
                else:  # folded away by the report (a weight's Transpose, Cast, Reshape...): follow it
                    frontier.extend(o for o in n.output if o)
        if found:
            i = min(found)
            got[i] += w
            reads[i].append((c, holds[c], w))
        elif w:
            unattributed.append((c, holds[c], w))
    rows = []
    for node in doc.get("nodes") or []:
        i = node.get("index")
        counted = num(node.get("parameters")) or 0
        if counted != got[i]:
            srcs = []
            if counted > got[i]:  # what else it reads: inputs computed from constants, not on the data path
                for o in node.get("onnx_nodes") or []:
                    on = graph.by_name.get(o.get("name"))
                    for x in (on.input if on is not None else []):
                        if x and x not in graph.data and x not in graph.inputs and x not in holds \
                                and graph.is_float(x):
                            srcs.append(graph.describe_input(x, holds))
            rows.append(dict(index=i, name=node.get("name"), ops=node_ops(node), onnx=(node.get("onnx_nodes") or
                             [{}])[0].get("name"), counted=counted, learned=got[i], reads=reads[i], srcs=srcs))
    return rows, unattributed, sum(worth.values())


def summarize_param_rows(rows, unattributed, left_out=0):
    """Groups the per-node differences into a few lines. LEFT_OUT: what the nodes count beyond the
    report's total; the groups that add up to it exactly are marked as not in the total."""
    groups = collections.OrderedDict()
    for r in rows:
        d = r["counted"] - r["learned"]
        if r["learned"] == 0:
            why = "counts constants that hold no torch parameter"
        elif r["counted"] == 0:
            why = "does not count the learned constants it reads"
        elif d > 0:
            why = "counts more than the learned constants it reads"
        else:
            why = "counts part of the learned constants it reads"
        key = (r["name"], "+".join(r["ops"]), why)
        g = groups.setdefault(key, dict(n=0, diff=0, examples=[]))
        g["n"] += 1
        g["diff"] += d
        if len(g["examples"]) < 3:
            what = ", ".join(f"`{c}` = {h} ({w:,})" for c, h, w in r["reads"][:2]) or "no learned constant"
            extra = f"; also reads {'; '.join(r['srcs'][:2])}" if r.get("srcs") else ""
            g["examples"].append(f"node {r['index']} `{r['onnx']}` counts {r['counted']:,}, reads {what}{extra}")
    order = sorted(groups, key=lambda k: -abs(groups[k]["diff"]))
    outside = set()
    if left_out:
        import itertools
        for k in range(1, min(len(order), 8) + 1):
            hit = next((c for c in itertools.combinations(order[:12], k)
                        if sum(groups[x]["diff"] for x in c) == left_out), None)
            if hit:
                outside = set(hit)
                break
    lines = []
    for key in order:
        (name, ops, why), g = key, groups[key]
        tag = " (per node only: the total leaves these out)" if key in outside else ""
        lines.append(f"{g['n']} × {name} ({ops}) {why}: {g['diff']:+,}{tag}; e.g. " + "; ".join(g["examples"]))
    if unattributed:
        tot = sum(w for _, _, w in unattributed)
        lines.append(f"{len(unattributed)} learned constants read by no report node: −{tot:,}; e.g. "
                     + ", ".join(f"{c} = {h} ({w:,})" for c, h, w in unattributed[:3]))
    return lines


def classify_collapse(graph, doc):
    """[(node index, op types, flag or None)] for the report's collapse points."""
    out = []
    nodes = {n.get("index"): n for n in doc.get("nodes") or []}
    for cp in (doc.get("summary") or {}).get("collapse_points") or []:
        i = cp.get("node")
        node = nodes.get(i, {})
        ops = node_ops(node)
        flag = None
        first = (node.get("onnx_nodes") or [{}])[0]
        on = graph.by_name.get(first.get("name"))
        if any(o in INDEX_OPS for o in ops):
            flag = "shape/index op"
        elif on is not None:
            ins = [x for x in on.input if x and x not in graph.constants]
            if not any(x in graph.data for x in ins):
                flag = "off the data path" + (", integer/bool inputs" if ins and not any(graph.is_float(x) for x in ins)
                                              else "" if ins else ", constant inputs")
        note = None
        if on is not None and not flag:
            src = graph.producer.get(on.input[0]) if on.input else None
            if on.op_type == "IsNaN" and src is not None and src.op_type == "Softmax":
                note = "NaN guard of a Softmax (torch's attention export: Where(IsNaN(p), 0, p))"
            elif on.op_type == "Where" and src is not None and src.op_type == "IsNaN":
                note = "NaN guard of a Softmax (torch's attention export: Where(IsNaN(p), 0, p))"
            elif on.op_type in ("Slice", "Gather") and is_partition(graph, on, node):
                note = "one part of a split whose parts are all read (q/k/v, Roll, patch merging, rotate_half)"
            elif on.op_type == "Mul" and any(graph.cone(x)[0].get(op) for x in on.input if x not in graph.data
                                             for op in ("Sin", "Cos")):
                note = "rotary position embedding: x·cos + rotate_half(x)·sin is a rotation"
            elif (on.op_type.startswith("Reduce") or on.op_type == "GlobalAveragePool") and \
                    rescales_own_input(graph, on):
                note = "a statistic that rescales its own input (RMSNorm, GRN, a squeeze-excitation gate)"
        out.append((i, "+".join(ops), flag, note))
    return out


def _covered(graph, n, dims):
    """{axis: set of indices} that Slice/Gather node N reads of its input of shape DIMS, or None."""
    rank = len(dims)
    if n.op_type == "Gather":
        if len(n.input) < 2 or n.input[1] not in graph.small:
            return None
        axis = next((a.i for a in n.attribute if a.name == "axis"), 0) % rank
        if not isinstance(dims[axis], int):
            return None
        return {axis: {int(v) % dims[axis] for v in np.atleast_1d(graph.small[n.input[1]])}}
    ins = list(n.input) + [""] * (5 - len(n.input))
    if any(x and x not in graph.small for x in ins[1:5]) or not ins[1] or not ins[2]:
        return None
    starts, ends = (np.atleast_1d(graph.small[x]) for x in ins[1:3])
    axes = np.atleast_1d(graph.small[ins[3]]) if ins[3] else np.arange(len(starts))
    steps = np.atleast_1d(graph.small[ins[4]]) if ins[4] else np.ones(len(starts), dtype=np.int64)
    out = {}
    for st, en, ax, sp in zip(starts, ends, axes, steps):
        ax = int(ax) % rank
        if not isinstance(dims[ax], int):
            return None
        out[ax] = set(range(*slice(int(st), int(en), int(sp)).indices(dims[ax])))
    return out


def is_partition(graph, on, node):
    """Whether Slice/Gather ON is one of several slices of one value that together read all of it."""
    shapes = node.get("input_shapes") or []
    dims = shapes[0] if shapes and isinstance(shapes[0], list) else None
    if not dims or not on.input:
        return False
    mine = _covered(graph, on, dims)
    if not mine:
        return False
    union = collections.defaultdict(set)
    for sib in graph.readers.get(on.input[0], []):
        if sib.op_type in ("Slice", "Gather"):
            c = _covered(graph, sib, dims)
            for ax, idx in (c or {}).items():
                union[ax] |= idx
    return all(union[ax] == set(range(dims[ax])) for ax in mine)


def rescales_own_input(graph, on, depth=8):
    """Whether the output of reduction ON reaches, within DEPTH nodes, a Mul/Div that also reads ON's
    input (or the value squared into it): a normalization statistic or a gate, not a collapse."""
    x = on.input[0]
    sources = {x}
    p = graph.producer.get(x)
    if p is not None and p.op_type in ("Pow", "Mul", "Abs"):
        sources.add(p.input[0])
    frontier, seen = [o for o in on.output if o], set()
    for _ in range(depth):
        nxt = []
        for v in frontier:
            for n in graph.readers.get(v, []):
                if id(n) in seen:
                    continue
                seen.add(id(n))
                if n.op_type in ("Mul", "Div") and any(i in sources for i in n.input):
                    return True
                nxt.extend(o for o in n.output if o)
        frontier = nxt
    return False


# ---------------------------------------------------------------------------------------


def ours_macs_by_family(doc):
    fam = collections.Counter()
    for n in doc.get("nodes") or []:
        ops = node_ops(n)
        f = next((o for o in ops if o in MAC_FAMILIES), "other")
        fam[f] += num(n.get("macs")) or 0
    return fam


def check_model(args, name, side, tmp):
    sys.path.insert(0, HERE)
    from run_zoo import make_feeds
    model = os.path.join(args.zoo, side.get("file", name + ".onnx"))
    specs = side.get("inputs") or []
    shape_args = []
    for s in specs:
        shape_args += ["--shape", f"{s['name']}=" + ",".join(str(d) for d in s["shape"])]
    if side.get("exporter") == "skl2onnx":
        kind = "sklearn"
    elif side.get("variant"):
        kind = "variant"
    else:
        kind = "torch"
    r = dict(name=name, kind=kind, exporter=side.get("exporter"), variant=side.get("variant"),
             shapes=", ".join(f"{s['name']}={'x'.join(map(str, s['shape']))}" for s in specs), notes=[])
    doc, r["t_spectra"], err = run_report(args.aic, model, shape_args, True)
    doc_ns, r["t_nospectra"], err_ns = run_report(args.aic, model, shape_args, False)
    if doc is None and doc_ns is None:
        r["error"] = err or err_ns
        return r
    if doc is None:
        r["notes"].append(f"with spectra: {err}")
        doc = doc_ns
    s = doc.get("summary") or {}
    r["params"] = num(s.get("total_parameters"))
    r["macs"] = num(s.get("total_macs"))
    r["uncounted"] = num(s.get("uncounted_nodes")) or 0
    if doc_ns is not None:
        s2 = doc_ns.get("summary") or {}
        if (num(s2.get("total_parameters")), num(s2.get("total_macs"))) != (r["params"], r["macs"]):
            r["notes"].append(f"--no-spectra gives params {num(s2.get('total_parameters'))}, "
                              f"MACs {num(s2.get('total_macs'))}")
    else:
        r["notes"].append(f"--no-spectra: {err_ns}")
    graph = Graph(model)

    # (a) parameters
    if kind == "sklearn":
        r["param_status"] = "n/a"
        r["param_why"] = "scikit-learn: no torch parameters; skl2onnx keeps most coefficients in attributes"
    elif kind == "variant":
        r["param_status"] = "n/a"
        base = os.path.join(args.zoo, (side.get("base") or "") + ".json")
        if os.path.exists(base):
            with open(base) as f:
                b = json.load(f)
            r["torch_params"] = b.get("torch_params")
            r["expected"] = b.get("torch_params_in_onnx")
        r["param_why"] = f"{side.get('variant')} variant of {side.get('base')}: not checked (its base is)"
    elif "torch_params" not in side:
        r["param_status"] = "?"
        r["param_why"] = "sidecar without torch_params: run make_zoo.py --params-only"
    else:
        tp = side["torch_params"]
        transforms = side.get("torch_export_transforms") or []
        expected = tp + sum(t.get("delta", 0) for t in transforms)
        if side.get("torch_params_in_onnx") not in (None, expected):
            r["notes"].append(f"sidecar torch_params_in_onnx {side['torch_params_in_onnx']} != {expected}")
        r["torch_params"], r["expected"], r["transforms"] = tp, expected, transforms
        if r["params"] == expected:
            r["param_status"] = "exact" if expected == tp else "explained"
        else:
            r["param_status"] = "MISS"
            rows, unattributed, total = attribute_params(graph, doc, side)
            if total != expected:
                r["notes"].append(f"learned constants found in the file: {total:,} (expected {expected:,})")
            node_sum = sum(num(n.get("parameters")) or 0 for n in doc.get("nodes") or [])
            r["param_diag"] = summarize_param_rows(rows, unattributed, node_sum - r["params"])
            if node_sum != r["params"]:
                r["param_diag"].append(f"the nodes' parameters add up to {node_sum:,}, the total says {r['params']:,}")

    # (b) MACs
    feeds = make_feeds(specs, np.random.default_rng(SEED + 1))
    tool, terr = run_onnx_tool(args.onnx_tool_python, model, feeds, tmp)
    r["macs_by_family"] = ours_macs_by_family(doc)
    if tool is None:
        r["tool_error"] = terr
        try:
            part = mac_submodel(model, tmp)
        except Exception as e:  # noqa: BLE001 - then MACs stay unchecked
            part = None
            r["notes"].append(f"no sub-model of the MAC ops: {type(e).__name__}: {str(e)[:200]}")
        if part:
            tool, terr2 = run_onnx_tool(args.onnx_tool_python, part, feeds, tmp)
            if tool is not None:
                r["mac_fallback"] = True
            else:
                r["notes"].append(f"on the sub-model of the MAC ops too: {terr2}")
    if tool is None:
        r["mac_status"] = "unchecked"
    else:
        r["tool"] = tool
        rec = tool["reconciled"]
        r["tool_reconciled"] = rec
        if r["macs"] is None:
            r["mac_status"] = "MISS"
        elif rec == 0:
            r["mac_status"] = "ok" if r["macs"] == 0 else "MISS"
            r["mac_diff"] = 0.0 if r["macs"] == 0 else float("inf")
        else:
            r["mac_diff"] = (r["macs"] - rec) / rec
            r["mac_status"] = "ok" if abs(r["mac_diff"]) <= MAC_TOLERANCE else "MISS"
        if r["mac_status"] == "MISS" or args.verbose:
            fams = sorted(set(r["macs_by_family"]) | {k for k, v in tool["per_op"].items() if v["reconciled"]})
            r["mac_diag"] = [f"{f}: report {r['macs_by_family'].get(f, 0):,}, onnx-tool "
                             f"{tool['per_op'].get(f, {}).get('reconciled', 0):,}" for f in fams]
    if r["uncounted"]:
        r["notes"].append(f"{r['uncounted']} nodes not counted (non-static shapes)")

    # (c) collapse points
    r["collapse"] = classify_collapse(graph, doc)
    return r


# ---------------------------------------------------------------------------------------
# the page


def fmt(n):
    return "—" if n is None else f"{n:,}"


def git_describe():
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty", "--tags"], cwd=ROOT, capture_output=True,
                              text=True).stdout.strip() or "?"
    except OSError:
        return "?"


def collapse_cell(cps):
    c = collections.Counter()
    flagged = collections.Counter()
    noted = collections.Counter()
    for _, ops, flag, note in cps:
        c[ops] += 1
        flagged[ops] += bool(flag)
        noted[ops] += bool(note)
    parts = []
    for ops, k in c.most_common():
        mark = "*" if noted[ops] == k else (f" ({noted[ops]}*)" if noted[ops] else "")
        parts.append(f"**{ops} {k}!**" if flagged[ops] == k else
                     (f"{ops} {k} (**{flagged[ops]}!**)" if flagged[ops] else
                      (f"{ops}* {k}" if mark == "*" else f"{ops} {k}{mark}")))
    return ", ".join(parts) or "none"


def write_page(args, results, argv, started):
    torch_rows = [r for r in results if r["kind"] == "torch"]
    exact = sum(r.get("param_status") == "exact" for r in torch_rows)
    explained = sum(r.get("param_status") == "explained" for r in torch_rows)
    p_miss = [r["name"] for r in torch_rows if r.get("param_status") not in ("exact", "explained")]
    m_ok = sum(r.get("mac_status") == "ok" for r in torch_rows)
    m_unchecked = [r["name"] for r in torch_rows if r.get("mac_status") == "unchecked"]
    m_miss = [r["name"] for r in torch_rows if r.get("mac_status") == "MISS" or r.get("error")]
    flagged_models = [r["name"] for r in results if any(c[2] for c in r.get("collapse", []))]
    flagged_n = sum(1 for r in results for c in r.get("collapse", []) if c[2])
    L = []
    L.append("# `aic-onnx report` on the model zoo (issue #21)")
    L.append("")
    L.append(f"Generated by `{' '.join(argv)}` on {started:%Y-%m-%d %H:%M} (git describe `{git_describe()}`; "
             f"binary `{args.aic_given}` built {datetime.datetime.fromtimestamp(args.aic_mtime):%Y-%m-%d %H:%M}). "
             f"Do not edit by hand: bench/zoo/check_report.py writes it.")
    L.append("")
    L.append(f"**Summary** ({len(torch_rows)} torch models; {len(results) - len(torch_rows)} more reported, not checked): "
             f"parameters {exact} exact + {explained} explained = {exact + explained} of {len(torch_rows)}"
             + (f" (miss: {', '.join(p_miss)})" if p_miss else "")
             + f"; MACs within 1% of onnx-tool {m_ok} of {len(torch_rows) - len(m_unchecked)} checked"
             + (f" (miss: {', '.join(m_miss)})" if m_miss else "")
             + (f", {len(m_unchecked)} unchecked (onnx-tool failed: {', '.join(m_unchecked)})" if m_unchecked else "")
             + f"; {flagged_n} flagged collapse points in {len(flagged_models)} "
             + ("model" if len(flagged_models) == 1 else "models")
             + (f" ({', '.join(flagged_models)})." if flagged_models else "."))
    L.append("")
    L.append("Targets (issue #21): parameters equal to torch's `sum(p.numel() for p in model.parameters())`, "
             "where the export transformed a parameter the difference explained exactly; MACs within 1% of "
             "onnx-tool's at the same shapes; no Shape/Size/Constant/index op among the collapse points.")
    L.append("")
    L.append("- **expected** = torch_params + Σ delta of the export's transforms (bench/zoo/make_zoo.py "
             "finds them by matching each parameter's values against the file's constants): BatchNorm "
             "folded into the Conv before it −C (γ, β → the Conv bias), weight norm folded −numel(g), a "
             "lookup with constant indices materialized +numel(result) − numel(table), a parameter not "
             "in the file −numel; a tensor stored twice (tied weights) 0, the report must count it once. "
             "*exact*: report = torch; *explained*: report = expected ≠ torch (the transforms are listed "
             "below); **MISS** otherwise, located node by node below.")
    L.append("- **onnx-tool (rec.)**: onnx-tool 1.0.1 (taught IsNaN, its Squeeze with negative axes and its "
             "Range on 1-element inputs fixed: the transformers exports need them), its MACs of "
             "Conv/ConvTranspose/MatMul/Gemm/Einsum/"
             "MatMulInteger, less one MAC per output element of a Conv or Gemm bias, ConvTranspose as input "
             "elements × Cout/group × kernel; the elementwise work onnx-tool also counts as MACs is left out "
             "(the report counts it in FLOPs). Δ = (report − rec.) / rec. † = onnx-tool failed on the "
             "whole model (its error is below) and ran on the part of it that computes the outputs of the "
             "MAC ops (those nodes and their ancestors), which holds every MAC op.")
    L.append("- **collapse points**: op types (of the report node's ONNX nodes, `+` joining grouped nodes) "
             "and count; **bold!** = flagged: a shape/index op, or a node none of whose non-constant inputs is "
             "on the data path (computed from a float graph input or an embedding lookup, not through "
             "Shape/Size/Range...): mask, shape and weight plumbing; * = on the data path but not a collapse "
             "of its own, part of an exporter idiom: torch's NaN guard after an attention Softmax "
             "(`Where(IsNaN(p), 0, p)`), one part of a split whose parts are all read (q/k/v, Roll as "
             "Slice+Concat, patch merging, rotate_half), the sin product of a rotary embedding, a reduction "
             "whose result rescales its own input (RMSNorm, GRN, squeeze-excitation); see the notes per model.")
    L.append(f"- **time**: wall seconds of one `report` run with spectra / with `--no-spectra`, on a shared host "
             f"({os.cpu_count()} logical cores, load average {args.load:.1f} at start): an order of magnitude.")
    L.append("")
    L.append("| model | exporter | inputs | params: report | torch | expected | params | MACs: report | "
             "onnx-tool (rec.) | Δ | MACs | collapse points | time s |")
    L.append("|---|---|---|--:|--:|--:|---|--:|--:|--:|---|---|--:|")
    for r in results:
        exp = {"torch.onnx dynamo=False": "torch (TorchScript)", "torch.onnx dynamo=True": "torch (dynamo)"}.get(
            r.get("exporter"), r.get("exporter") or "?")
        if r.get("variant"):
            exp += f", {r['variant']}"
        if r.get("error"):
            L.append(f"| {r['name']} | {exp} | {r['shapes']} | **{r['error']}** |||||||||")
            continue
        ps = r.get("param_status", "?")
        ps = f"**{ps}**" if ps == "MISS" else ps
        if ps == "n/a" and r["kind"] == "sklearn":
            ps = "n/a (sklearn)"
        diff = r.get("mac_diff")
        ms = r.get("mac_status", "?")
        ms = f"**{ms}**" if ms == "MISS" else ms
        if r.get("mac_fallback"):
            ms += " †"
        if r["kind"] != "torch" and ms != "unchecked":
            ms += " (not checked)" if r["kind"] == "variant" else " (sklearn)"
        L.append(f"| {r['name']} | {exp} | {r['shapes']} | {fmt(r.get('params'))} | {fmt(r.get('torch_params'))} | "
                 f"{fmt(r.get('expected'))} | {ps} | {fmt(r.get('macs'))} | {fmt(r.get('tool_reconciled'))} | "
                 f"{'—' if diff is None else f'{100 * diff:+.2f}%'} | {ms} | {collapse_cell(r.get('collapse', []))} | "
                 f"{r['t_spectra']:.1f} / {r['t_nospectra']:.1f} |")
    L.append("")
    L.append("## Per model")
    L.append("")
    for r in results:
        lines = []
        kinds = collections.OrderedDict()
        for t in r.get("transforms") or []:
            kinds.setdefault(t["kind"], []).append(t)
        for kind, ts in kinds.items():
            what = [w for t in ts for w in (t.get("modules") or t.get("params") or [])]
            shown = ", ".join(what[:4]) + (f", … ({len(what)} in all)" if len(what) > 4 else "")
            onnx = [o for t in ts for o in (t.get("onnx") or [])]
            te, oe, d = (sum(t[k] for t in ts) for k in ("torch_elements", "onnx_elements", "delta"))
            lines.append(f"export: {kind}{f' ×{len(ts)}' if len(ts) > 1 else ''} ({shown}): torch {te:,} → file "
                         f"{oe:,}, delta {d:+,}"
                         + (f"; in the file: {', '.join(onnx[:3])}" + (" …" if len(onnx) > 3 else "") if onnx else "")
                         + f". {ts[0].get('how', '')}")
        if r.get("param_status") == "MISS":
            lines.append(f"**params miss**: report {fmt(r.get('params'))}, expected {fmt(r.get('expected'))} "
                         f"({r['params'] - r['expected']:+,}):")
            lines += [f"  - {x}" for x in r.get("param_diag", [])]
        elif r.get("param_why"):
            lines.append(r["param_why"])
        if r.get("tool_error"):
            lines.append((f"MACs: onnx-tool run on the sub-model that computes the MAC ops' outputs (†), since on "
                          f"the whole model {r['tool_error']}"
                          if r.get("mac_fallback") else f"MACs unchecked: {r['tool_error']}"))
        if r.get("mac_diag"):
            lines.append(("**MACs miss**: " if r.get("mac_status") == "MISS" else "MACs by family: ")
                         + "; ".join(r["mac_diag"]))
        flagged = [(i, ops, f) for i, ops, f, _ in r.get("collapse", []) if f]
        noted = collections.Counter((ops, n) for _, ops, _, n in r.get("collapse", []) if n)
        if noted:
            lines.append("collapse points marked * (not a collapse of their own): "
                         + "; ".join(f"{ops} ×{k}: {n}" for (ops, n), k in noted.most_common()))
        if flagged:
            c = collections.Counter((ops, f) for _, ops, f in flagged)
            lines.append("flagged collapse points: " + ", ".join(f"{ops} ×{k} ({f})" for (ops, f), k in c.most_common())
                         + f" (nodes {', '.join(str(i) for i, _, _ in flagged[:12])}{' …' if len(flagged) > 12 else ''})")
        lines += r.get("notes", [])
        if lines:
            L.append(f"**{r['name']}**")
            L.append("")
            L += [x if x.startswith("  - ") else f"- {x}" for x in lines]
            L.append("")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(L).rstrip() + "\n")
    return p_miss, m_miss, flagged_models


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--onnx-tool-worker":
        onnx_tool_worker(*sys.argv[2:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aic", default=os.path.join(ROOT, "build", "aic-onnx"))
    ap.add_argument("--zoo", default=os.path.join(ROOT, "build", "zoo"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "REPORT.md"))
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--onnx-tool-python", default=os.path.join(ROOT, ".venv", "bin", "python"),
                    help="an interpreter with onnx_tool installed")
    ap.add_argument("--strict", action="store_true", help="also fail on flagged collapse points")
    ap.add_argument("--verbose", action="store_true", help="MACs by op family for every model")
    args = ap.parse_args()
    started = datetime.datetime.now()
    args.load = os.getloadavg()[0]
    names = sorted(f[:-5] for f in os.listdir(args.zoo) if f.endswith(".json") and not f.endswith("_index.json")
                   and os.path.exists(os.path.join(args.zoo, f[:-5] + ".onnx")))
    if args.only:
        want = [n for n in args.only.split(",") if n]
        unknown = [n for n in want if n not in names]
        if unknown:
            ap.error(f"not in {args.zoo}: {', '.join(unknown)}")
        names = want
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        args.aic_given = args.aic
        args.aic, args.aic_mtime = snapshot_binary(args.aic, tmp)
        for n in names:
            with open(os.path.join(args.zoo, n + ".json")) as f:
                side = json.load(f)
            t0 = time.time()
            try:
                r = check_model(args, n, side, tmp)
            except Exception as e:  # noqa: BLE001 - one model's failure is a row, not the end
                import traceback
                r = dict(name=n, kind="torch" if str(side.get("exporter", "")).startswith("torch") and
                         not side.get("variant") else "other", exporter=side.get("exporter"),
                         variant=side.get("variant"), shapes="", notes=[], t_spectra=0, t_nospectra=0,
                         error=f"check failed: {type(e).__name__}: {e}")
                traceback.print_exc()
            results.append(r)
            print(f"{n}: params {r.get('param_status', '?')} ({fmt(r.get('params'))} vs {fmt(r.get('expected'))}), "
                  f"MACs {r.get('mac_status', '?')} "
                  f"({'—' if r.get('mac_diff') is None else '%+.2f%%' % (100 * r['mac_diff'])}), "
                  f"{sum(1 for c in r.get('collapse', []) if c[2])} flagged collapse points, "
                  f"{time.time() - t0:.1f} s" + (f" ERROR {r['error']}" if r.get("error") else ""), file=sys.stderr,
                  flush=True)
    if os.path.exists(args.aic_given) and os.path.getmtime(args.aic_given) != args.aic_mtime:
        print(f"note: {args.aic_given} was rebuilt while this ran; these numbers are the earlier build's",
              file=sys.stderr)
    p_miss, m_miss, flagged = write_page(args, results, ["build/zoo-venv/bin/python", "bench/zoo/check_report.py"]
                                         + sys.argv[1:], started)
    print(f"wrote {args.out}", file=sys.stderr)
    fail = bool(p_miss or m_miss or (args.strict and flagged))
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
