#!/usr/bin/env python3
"""Low-precision variants of the public model corpus (issue #17): from the fp32 models that
bench/zoo/make_zoo.py wrote into ZOO, writes next to them

  NAME_fp16.onnx  onnxconverter_common.float16.convert_float_to_float16(model, keep_io_types=True)
                  (inputs and outputs stay float32, Casts at the edges);
  NAME_int8.onnx  onnxruntime.quantization.quantize_static, QDQ format, per-channel, activations
                  QUInt8, weights QInt8, MinMax calibration on 8 random inputs drawn the way the
                  sidecar describes (after onnxruntime.quantization.shape_inference.quant_pre_process
                  where that succeeds);
  NAME_dyn.onnx   onnxruntime.quantization.quantize_dynamic, weights QInt8 (bert_small: MatMuls
                  as MatMulInteger; mobilenet_v3_large: every Conv a ConvInteger),
  NAME_bf16.onnx  onnx.version_converter to opset 22 (the first where Conv, pooling and the
                  elementwise ops take bfloat16), every float weight and Constant rounded to
                  bfloat16 (nearest even), Casts to float become Casts to bfloat16, a Cast at
                  each float input and output (inputs and outputs stay float32). ONNX Runtime's
                  CPU provider has no bfloat16 Conv or Add and refuses these models, so each
                  comes with NAME_bf16_twin.onnx: the same graph in float32 holding the rounded
                  weights, which ORT runs in its place (sidecar "ort_file");

each with a sidecar NAME_VARIANT.json like the fp32 one (inputs, shapes and fills copied; an fp16
variant's float inputs are drawn rounded to half, "round_to": "float16", so that the model's own
input Cast is exact: ORT removes it) plus:
variant ("fp16" | "int8-qdq" | "int8-dynamic"), base (the fp32 model's name), conversion (the
call), op_counts (op type histogram), vs_fp32 (largest |ORT(variant) - ORT(fp32)| per output on
the sample input, with the output's std for scale) and tolerance (the comparison run_zoo.py
makes against ORT on the variant: atol, rtol, optional per-output atol/rtol, and a note). fp16:
1e-2 + 1e-2·|ORT|. int8-qdq: an output that a DequantizeLinear produces (directly or through
shape-only / monotone unary ops) gets atol = one quantization step of that DequantizeLinear,
since engines that round one intermediate value differently land one step apart; others 1e-2.
A variant that fails to convert or that ORT cannot run is reported and skipped;
ZOO/lowp_index.json lists what was written and what was skipped, with why.

usage: build/zoo-venv/bin/python bench/zoo/make_lowp.py --zoo build/zoo [--only NAME|BASE|KIND,..] [--list]
  (KIND: fp16, bf16, int8, dyn)
"""
import argparse
import collections
import json
import os
import sys
import tempfile
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run_zoo import make_feeds  # noqa: E402  (the one place inputs are drawn from a sidecar)

SEED = 20261212  # make_zoo.py's: sample inputs from SEED + 1, calibration inputs from SEED + 2
CALIB_N = 8

# kind: (file suffix, sidecar variant, base models)
KINDS = {
    "fp16": ("_fp16", "fp16", ["resnet50", "mobilenet_v3_large", "vit_tiny_patch16_224", "bert_small",
                               "convnext_tiny"]),
    "int8": ("_int8", "int8-qdq", ["resnet50", "mobilenet_v3_large", "vit_tiny_patch16_224", "bert_small"]),
    "dyn": ("_dyn", "int8-dynamic", ["bert_small", "mobilenet_v3_large"]),
    "bf16": ("_bf16", "bf16", ["resnet50", "vit_tiny_patch16_224", "bert_small"]),
}
VARIANTS = {base + suffix: (kind, base) for kind, (suffix, _, bases) in KINDS.items() for base in bases}

FP16_TOL = dict(atol=1e-2, rtol=1e-2, note="fp16 weights and activations: |Δ| ≤ 1e-2 + 1e-2·|ORT|")
# How far a bf16 variant's outputs may be from ORT on its float32 twin. An engine that computes
# in bf16 rounds activations as the model declares (oneDNN/OpenVINO bf16 kernels read their
# inputs as bf16), and how much one rounding per layer moves the outputs depends on the model:
# a random-weight ResNet-50 amplifies it to 0.16 at the logits, a ViT to 0.004. So each output
# gets atol = max(1e-2, 2·S), S the largest change of the twin's output when every weight is
# multiplied by 1 + u, u uniform in ±2^-9 (half a bf16 unit: one rounding per layer), over
# BF16_PERTURBATIONS draws.
BF16_PERTURBATIONS = 2
# ops through which a quantization step at the input is at most a step at the output
PASS_THROUGH = {"Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Tanh", "Sigmoid", "Relu",
                "Cast", "Softmax"}


def ort_session(path, threads=1):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def ort_run(path, feeds):
    s = ort_session(path)
    return [o.name for o in s.get_outputs()], s.run(None, feeds)


class Reader:
    """CalibrationDataReader over CALIB_N inputs drawn from the sidecar's specs."""

    def __init__(self, specs, n=CALIB_N, seed=SEED + 2):
        rng = np.random.default_rng(seed)
        self.batches = [make_feeds(specs, rng) for _ in range(n)]
        self.it = iter(self.batches)

    def get_next(self):
        return next(self.it, None)

    def rewind(self):
        self.it = iter(self.batches)


def as_reader(specs):
    from onnxruntime.quantization import CalibrationDataReader

    class R(Reader, CalibrationDataReader):
        pass
    return R(specs)


def preprocess(src, dst, notes):
    """quant_pre_process (symbolic shape inference, ORT basic optimizations, ONNX shape inference);
    the fp32 model itself where it fails."""
    from onnxruntime.quantization.shape_inference import quant_pre_process
    try:
        quant_pre_process(src, dst, skip_symbolic_shape=False)
        notes.append("quant_pre_process applied")
        return dst
    except Exception as e:  # noqa: BLE001
        try:
            quant_pre_process(src, dst, skip_symbolic_shape=True)
            notes.append("quant_pre_process without symbolic shape inference (with it: "
                         f"{type(e).__name__}: {str(e).strip()[:120]})")
            return dst
        except Exception as e2:  # noqa: BLE001
            notes.append(f"quant_pre_process failed ({type(e2).__name__}: {str(e2).strip()[:120]}); "
                         "quantized the fp32 model as exported")
            return src


def split_read_outputs(m):
    """Makes every graph output that other nodes read the output of its own Identity; returns how many.

    onnxconverter_common's keep_io_types casts a graph output back to float under the output's
    name, but leaves nodes that read that name as half readers of a float tensor (BERT's pooler
    Gathers from last_hidden_state), which ORT rejects as a type error.
    """
    import onnx
    outputs = {o.name for o in m.graph.output}
    read = {i for n in m.graph.node for i in n.input if i in outputs}
    for name in sorted(read):
        inner = name + "_before_output"
        for n in m.graph.node:
            n.input[:] = [inner if i == name else i for i in n.input]
            n.output[:] = [inner if o == name else o for o in n.output]
        m.graph.node.append(onnx.helper.make_node("Identity", [inner], [name], name=name + "_output_identity"))
    return len(read)


def bf16_rounded(t, dtype):
    """Tensor T's float values rounded to bfloat16 (nearest even), stored as DTYPE:
    BFLOAT16 (the variant) or FLOAT (its twin for ORT)."""
    import ml_dtypes
    import onnx
    from onnx import numpy_helper
    a = numpy_helper.to_array(t).astype(np.float32).astype(ml_dtypes.bfloat16)
    if dtype == onnx.TensorProto.FLOAT:
        return numpy_helper.from_array(a.astype(np.float32), t.name)
    out = onnx.TensorProto(name=t.name, dims=list(t.dims), data_type=onnx.TensorProto.BFLOAT16)
    out.raw_data = a.view(np.uint16).tobytes()
    return out


def write_bf16(base_path, out_path, dtype):
    """The bf16 variant (DTYPE BFLOAT16) or its float32 twin (DTYPE FLOAT); see the docstring."""
    import onnx
    from onnx import helper, version_converter
    FLOAT = onnx.TensorProto.FLOAT
    m = version_converter.convert_version(onnx.load(base_path), 22)
    g = m.graph
    for i, t in enumerate(g.initializer):
        if t.data_type == FLOAT:
            g.initializer[i].CopyFrom(bf16_rounded(t, dtype))
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == FLOAT:
                a.t.CopyFrom(bf16_rounded(a.t, dtype))
            if n.op_type == "Cast" and a.name == "to" and a.i == FLOAT:
                a.i = dtype
    del g.value_info[:]  # float types of intermediate values; shape inference redoes them
    if dtype != FLOAT:
        def rename(old, new):
            for n in g.node:
                n.input[:] = [new if x == old else x for x in n.input]
                n.output[:] = [new if x == old else x for x in n.output]
        head, tail = [], []
        for v in g.input:
            if v.type.tensor_type.elem_type == FLOAT:
                rename(v.name, v.name + "_bf16")
                head.append(helper.make_node("Cast", [v.name], [v.name + "_bf16"], to=dtype, name=v.name + "_to_bf16"))
        for v in g.output:
            if v.type.tensor_type.elem_type == FLOAT:
                rename(v.name, v.name + "_bf16")
                tail.append(helper.make_node("Cast", [v.name + "_bf16"], [v.name], to=FLOAT,
                                             name=v.name + "_to_float"))
        nodes = head + list(g.node) + tail
        del g.node[:]
        g.node.extend(nodes)
    onnx.save(m, out_path)
    onnx.checker.check_model(out_path, full_check=True)


def convert(kind, base_path, meta, out_path, tmp):
    """Writes the variant; returns (conversion call, notes)."""
    import onnx
    notes = []
    if kind == "bf16":
        write_bf16(base_path, out_path, onnx.TensorProto.BFLOAT16)
        write_bf16(base_path, twin_path(out_path), onnx.TensorProto.FLOAT)
        notes.append("ONNX Runtime has no bfloat16 Conv/Add on the CPU: it runs the float32 twin "
                     f"{os.path.basename(twin_path(out_path))} (the same rounded weights) in its place")
        return "make_lowp.write_bf16(model, opset 22, weights rounded to bfloat16)", notes
    if kind == "fp16":
        from onnxconverter_common import float16
        import warnings
        m = onnx.load(base_path)
        if split_read_outputs(m):
            notes.append("graph outputs that other nodes also read were given an Identity first (the converter "
                         "left those readers reading the float output: ORT refused the model)")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m16 = float16.convert_float_to_float16(m, keep_io_types=True)
        clipped = sum(1 for w in caught if "will be truncated" in str(w.message))
        if clipped:
            notes.append(f"{clipped} float32 values outside fp16's range clamped by the converter "
                         "(|x| < 1e-7 to ±1e-7, |x| > 1e4 to ±1e4)")
        onnx.save(m16, out_path)
        return "onnxconverter_common.float16.convert_float_to_float16(model, keep_io_types=True)", notes
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_dynamic, quantize_static
    src = preprocess(base_path, os.path.join(tmp, meta["name"] + "_pre.onnx"), notes)
    if kind == "int8":
        exclude = []
        for _ in range(4):
            quantize_static(src, out_path, as_reader(meta["inputs"]), quant_format=QuantFormat.QDQ,
                            per_channel=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                            nodes_to_exclude=exclude or None)
            more = [n for n in bad_range_nodes(out_path, src) if n not in exclude]
            if not more:
                break
            exclude += more
        else:
            raise RuntimeError(f"non-finite or zero quantization scales remain after excluding {len(exclude)} nodes")
        notes.append(f"MinMax calibration on {CALIB_N} random inputs drawn as the sidecar describes (seed {SEED + 2})")
        call = ("onnxruntime.quantization.quantize_static(model, out, reader, quant_format=QuantFormat.QDQ, "
                "per_channel=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8")
        if exclude:
            notes.append(f"{len(exclude)} nodes left in float (nodes_to_exclude) because the tensors they produce or "
                         "read calibrated to a non-finite or zero scale (an additive attention mask of "
                         "finfo(float32).min makes the range infinite): " + ", ".join(exclude))
            call += f", nodes_to_exclude=[{len(exclude)} nodes]"
        return call + ")", notes
    quantize_dynamic(src, out_path, weight_type=QuantType.QInt8)
    return "onnxruntime.quantization.quantize_dynamic(model, out, weight_type=QuantType.QInt8)", notes


def bad_range_nodes(qpath, fpath):
    """Names of the float model's nodes that produce or read a tensor whose QuantizeLinear in the
    quantized model has a non-finite or zero scale."""
    import onnx
    from onnx import numpy_helper
    q = onnx.load(qpath)
    inits = {t.name: t for t in q.graph.initializer}
    bad = set()
    for n in q.graph.node:
        if n.op_type == "QuantizeLinear" and n.input[1] in inits:
            s = numpy_helper.to_array(inits[n.input[1]]).astype(np.float64)
            if not np.all(np.isfinite(s)) or np.any(s == 0):
                bad.add(n.input[0])
    if not bad:
        return []
    f = onnx.load(fpath)
    names = [n.name for n in f.graph.node if n.name and (set(n.output) & bad or set(n.input) & bad)]
    unnamed = [n for n in f.graph.node if not n.name and (set(n.output) & bad or set(n.input) & bad)]
    if unnamed:
        raise RuntimeError(f"{len(bad)} tensors calibrated to a non-finite or zero scale, {len(unnamed)} of the nodes "
                           "around them have no name to exclude")
    return names


def const_scalar(name, inits, producers):
    """The value of a scalar initializer (or Constant) named NAME, else None."""
    from onnx import numpy_helper
    if name in inits:
        a = numpy_helper.to_array(inits[name])
    elif name in producers and producers[name].op_type == "Constant":
        a = numpy_helper.to_array(producers[name].attribute[0].t)
    else:
        return None
    return float(a.reshape(-1)[0]) if a.size == 1 else None


def output_steps(m):
    """{graph output: quantization step of the DequantizeLinear it comes from}."""
    producers = {o: n for n in m.graph.node for o in n.output}
    inits = {t.name: t for t in m.graph.initializer}
    steps = {}
    for out in m.graph.output:
        name = out.name
        for _ in range(8):
            n = producers.get(name)
            if n is None:
                break
            if n.op_type == "DequantizeLinear":
                s = const_scalar(n.input[1], inits, producers)
                if s is not None:
                    steps[out.name] = s
                break
            if n.op_type not in PASS_THROUGH:
                break
            name = n.input[0]
    return steps


def bf16_sensitivity(twin, feeds):
    """{output: S} for the float32 twin at path TWIN (see BF16_PERTURBATIONS)."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(twin)
    names, base = ort_run(twin, feeds)
    rng = np.random.default_rng(SEED + 3)
    worst = {n: 0.0 for n in names}
    for _ in range(BF16_PERTURBATIONS):
        p = onnx.ModelProto()
        p.CopyFrom(m)
        for i, t in enumerate(p.graph.initializer):
            if t.data_type == onnx.TensorProto.FLOAT:
                a = numpy_helper.to_array(t)
                a = (a * (1 + rng.uniform(-2.0 ** -9, 2.0 ** -9, a.shape))).astype(np.float32)
                p.graph.initializer[i].CopyFrom(numpy_helper.from_array(a, t.name))
        _, got = ort_run(p.SerializeToString(), feeds)
        for n, g, b in zip(names, got, base):
            worst[n] = max(worst[n], float(np.max(np.abs(g.astype(np.float64) - b))))
    return worst


def twin_path(variant_path):
    return variant_path[:-len(".onnx")] + "_twin.onnx"


def tolerance(kind, m, out_names, sensitivity=None):
    if kind == "fp16":
        return dict(FP16_TOL)
    if kind == "bf16":
        per = {n: dict(atol=max(1e-2, 2 * sensitivity[n]), rtol=1e-2) for n in out_names}
        return dict(atol=1e-2, rtol=1e-2, outputs=per,
                    note="bf16 against ORT on the float32 twin: an engine computing in bf16 rounds activations as "
                         "the model declares; |Δ| ≤ max(1e-2, 2·S) + 1e-2·|ORT|, S the output's change when every "
                         "weight moves by half a bf16 unit (make_lowp.py bf16_sensitivity): " +
                         ", ".join(f"{n} S = {sensitivity[n]:.3g}" for n in out_names))
    if kind == "dyn":
        return dict(atol=1e-2, rtol=1e-2, note="int8 dynamic quantization (DynamicQuantizeLinear + MatMulInteger): "
                    "activations are quantized per run from their own min/max, so an engine that rounds one "
                    "activation to the neighbouring step changes the outputs by about one step times a weight row; "
                    "|Δ| ≤ 1e-2 + 1e-2·|ORT|")
    steps = output_steps(m)
    per = {n: dict(atol=steps[n] * 1.001, rtol=1e-3, step=steps[n]) for n in out_names if n in steps}
    return dict(atol=1e-2, rtol=1e-2, outputs=per,
                note="int8 QDQ: differences of one quantization step are expected (an engine that rounds one "
                     "intermediate value to the neighbouring step); an output that a DequantizeLinear produces is "
                     "ok within one of its steps (+1e-3·|ORT|), others within 1e-2 + 1e-2·|ORT|")


def build_one(variant, zoo, tmp):
    import onnx
    kind, base = VARIANTS[variant]
    base_path = os.path.join(zoo, base + ".onnx")
    with open(os.path.join(zoo, base + ".json")) as f:
        base_meta = json.load(f)
    out_path = os.path.join(zoo, variant + ".onnx")
    t0 = time.time()
    call, notes = convert(kind, base_path, base_meta, out_path, tmp)
    feeds = make_feeds(base_meta["inputs"], np.random.default_rng(SEED + 1))
    try:
        names, got = ort_run(twin_path(out_path) if kind == "bf16" else out_path, feeds)
    except Exception as e:  # noqa: BLE001
        raise RuntimeError(f"ONNX Runtime cannot run it: {str(e).strip().splitlines()[0][:300]}") from e
    _, ref = ort_run(base_path, feeds)
    m = onnx.load(out_path)
    outputs, vs = [], {}
    for n, g, w in zip(names, got, ref):
        o = dict(name=n, dtype=str(g.dtype), shape=list(g.shape))
        if g.size and np.issubdtype(g.dtype, np.number):
            o.update(std=float(np.std(g.astype(np.float64))), min=float(g.min()), max=float(g.max()))
        outputs.append(o)
        if g.shape == w.shape and g.size:
            vs[n] = dict(max_abs=float(np.max(np.abs(g.astype(np.float64) - w.astype(np.float64)))),
                         fp32_std=float(np.std(w.astype(np.float64))))
    opsets = {o.domain or "ai.onnx": o.version for o in m.opset_import}
    counts = collections.Counter((n.domain + "." if n.domain and n.domain != "ai.onnx" else "") + n.op_type
                                 for n in m.graph.node)
    suffix, label, _ = KINDS[kind]
    meta = dict(base_meta)
    if kind == "bf16":
        meta["ort_file"] = os.path.basename(twin_path(out_path))
        meta["inputs"] = [dict(s, round_to="bfloat16") if s.get("dtype", "float32") == "float32" and
                          s.get("fill", "normal") in ("normal", "uniform") else s for s in base_meta["inputs"]]
    if kind == "fp16":
        # The converted model's first step casts a float input to float16, and ORT removes
        # that Cast (its fp16 models compute from the unrounded input): inputs that half
        # represents exactly make the Cast exact, so ORT and the model agree on the function.
        meta["inputs"] = [dict(s, round_to="float16") if s.get("dtype", "float32") == "float32" and
                          s.get("fill", "normal") in ("normal", "uniform") else s for s in base_meta["inputs"]]
    for k in ("torch_vs_ort", "export_seconds"):
        meta.pop(k, None)
    meta.update(
        name=variant, file=variant + ".onnx", variant=label, base=base,
        source=f"{base} ({base_meta['source']}) through {call.split('(')[0]}",
        conversion=call, opset=opsets.get("ai.onnx", base_meta.get("opset")), opset_imports=opsets,
        outputs=outputs, nodes=len(m.graph.node), params=int(sum(np.prod(t.dims) for t in m.graph.initializer)),
        op_counts=dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))), vs_fp32=vs,
        tolerance=tolerance(kind, m, names, bf16_sensitivity(twin_path(out_path), feeds) if kind == "bf16" else None),
        make_seconds=round(time.time() - t0, 1),
        notes="; ".join([f"{label} variant of {base} (bench/zoo/make_lowp.py)"] + notes
                        + ([base_meta["notes"]] if base_meta.get("notes") else [])))
    with open(os.path.join(zoo, variant + ".json"), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def select(only):
    if not only:
        return list(VARIANTS)
    out = []
    for tok in only:
        if tok in VARIANTS:
            hits = [tok]
        elif tok in KINDS:
            hits = [v for v, (k, _) in VARIANTS.items() if k == tok]
        else:
            hits = [v for v, (_, b) in VARIANTS.items() if b == tok]
        if not hits:
            raise SystemExit(f"make_lowp.py: unknown variant, base or kind {tok!r}; --list names them")
        out += [h for h in hits if h not in out]
    return out


KEY_OPS = ("QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger", "ConvInteger", "Cast")


def build_all(names, zoo, index, tmp):
    for v in names:
        kind, base = VARIANTS[v]
        index["models"].pop(v, None)
        index["skipped"].pop(v, None)
        print(f"{v}: {KINDS[kind][1]} from {base} ...", file=sys.stderr, flush=True)
        try:
            if not os.path.exists(os.path.join(zoo, base + ".json")):
                raise FileNotFoundError(f"{base}.onnx/.json not in {zoo} (make_zoo.py --only {base})")
            # quant_pre_process and the quantizers leave scratch files (sym_shape_infer_temp.onnx,
            # UUID.data external data) in the working directory: run them in tmp
            here = os.getcwd()
            os.chdir(tmp)
            try:
                meta = build_one(v, os.path.join(here, zoo), tmp)
            finally:
                os.chdir(here)
        except Exception as e:  # noqa: BLE001 - a variant that fails is reported and skipped
            tb = traceback.format_exc().strip().splitlines()
            why = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:400]
            print(f"{v}: SKIPPED: {why}\n  " + "\n  ".join(tb[-6:]), file=sys.stderr, flush=True)
            index["skipped"][v] = dict(base=base, variant=KINDS[kind][1], exporter=f"make_lowp.py {KINDS[kind][1]}",
                                       opset="—", why=why)
            for ext in (".onnx", ".json", "_twin.onnx"):
                p = os.path.join(zoo, v + ext)
                if os.path.exists(p):
                    os.remove(p)
            continue
        index["models"][v] = dict(base=base, variant=meta["variant"], nodes=meta["nodes"], opset=meta["opset"])
        c = meta["op_counts"]
        key = ", ".join(f"{op}×{c[op]}" for op in KEY_OPS if op in c)
        qlinear = ", ".join(f"{op}×{n}" for op, n in c.items() if ("QLinear" in op or op.endswith("Integer"))
                            and op not in KEY_OPS)
        vs = "; ".join(f"{n} {d['max_abs']:.3g} (std {d['fp32_std']:.3g})" for n, d in meta["vs_fp32"].items())
        with open(os.path.join(zoo, base + ".json")) as f:
            base_nodes = json.load(f)["nodes"]
        print(f"{v}: {meta['nodes']} nodes (fp32 {base_nodes}), opset {meta['opset']}, "
              f"{key or 'no Q/DQ/Cast'}{', ' + qlinear if qlinear else ''}; ORT vs fp32 ORT: {vs}; "
              f"{meta['make_seconds']} s", file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zoo", default="build/zoo")
    ap.add_argument("--only", default="", help="comma-separated variant names, base model names or kinds "
                                              "(fp16, bf16, int8, dyn)")
    ap.add_argument("--list", action="store_true", help="print the variant names and exit")
    args = ap.parse_args()
    if args.list:
        print("\n".join(f"{v}\t{KINDS[k][1]}\t{b}" for v, (k, b) in VARIANTS.items()))
        return 0
    names = select([t for t in args.only.split(",") if t])
    index_path = os.path.join(args.zoo, "lowp_index.json")
    index = {"models": {}, "skipped": {}}
    if os.path.exists(index_path) and args.only:
        with open(index_path) as f:
            index = json.load(f)
    with tempfile.TemporaryDirectory(prefix="aic_lowp_") as tmp:
        build_all(names, args.zoo, index, tmp)
    index["models"] = dict(sorted(index["models"].items()))
    with open(index_path, "w") as f:
        json.dump(index, f, indent=1)
    print(f"{len(index['models'])} variants in {args.zoo}, {len(index['skipped'])} skipped"
          + "".join(f"\n  {k}: {v['why']}" for k, v in index["skipped"].items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
