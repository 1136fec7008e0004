#!/usr/bin/env python3
"""Generates BERT-style encoders written the way different exporters write them (fixed seeds,
random weights), for the benchmark's "one pipeline" check: `aic-onnx bench` on the file as
exported must be as fast as on the output of `aic-onnx opt`.

Every variant is the same function: x[batch, 128, 256] -> y, 2 post-LN layers, d=256, FFN 1024,
Linear layers as MatMul + bias Add, attention without a mask, LayerNorm *decomposed* (mean,
centre, square, mean, + eps, Sqrt, divide, * gamma, + beta) and GELU written with Erf
(0.5·x·(1 + erf(x/√2))). None uses the LayerNormalization op (opset >= 17) or Gelu (>= 20).
They differ in the exporter's idioms:

  encoder_torch13.onnx  torch.onnx, opset 13, static shapes: 4 heads; ReduceMean axes as an
                        attribute; (x - mean)^2 as Pow(d, 2); every constant a Constant node (one
                        per use); bias Add with the bias first; GELU (x·(1 + erf(x/1.4142135)))·0.5;
                        scores Div by √d_head = 8; K as permute + transpose(-1, -2) (two
                        Transposes); Reshape to concrete [1, 128, 4, 64].
  encoder_torch17.onnx  torch.onnx, opset 17, dynamic axes: 8 heads; axes attribute; Mul(d, d);
                        constants as initializers (shared); GELU x·(0.5·(1 + erf(x·0.70710678)));
                        scores Mul by 1/√d_head; head shapes computed from the input
                        (Shape → Gather → Unsqueeze → Concat → Reshape); two Transposes for K.
  encoder_dynamo18.onnx torch.export (dynamo) style, opset 18: 4 heads; ReduceMean axes as an
                        input; Pow(d, 2); Constant nodes; GELU (x·0.5)·(1 + erf(x/√2)); scaling
                        split over Q and Kᵀ (each · d_head^-1/4, as the SDPA decomposition
                        writes it); K as one Transpose [0, 2, 3, 1]; Reshape to [-1, 128, 4, 64].
  encoder_tf13.onnx     tf2onnx style, opset 13: 8 heads; axes attribute; Mul(d, d); 1/Sqrt as
                        Reciprocal then Mul instead of Div; initializers; GELU
                        x·(0.5·(1 + erf(x·0.70710678))); scores Mul by 1/√d_head; Reshape to
                        [0, 0, 8, 32].

usage: python bench/make_encoder_variants.py OUT_DIR   (writes the files, checks each with
       onnx.checker (full_check) and against a numpy reference in onnxruntime)
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

D, FF, SEQ, LAYERS = 256, 1024, 128, 2

# file -> how it is written (see the docstring). Keys:
#   opset, heads; axes: "attr" | "input"; square: "pow" | "mul"; rsqrt: "div" | "reciprocal";
#   consts: "node" (a Constant node per use) | "init" (shared initializers); bias_first;
#   gelu: "torch" (x*(1+erf(x/c)))*0.5 | "inner" x*(0.5*(1+erf(x*c))) | "outer" (x*0.5)*(1+erf(x/c));
#   scale: "div" | "mul" | "split"; k_transposes: 1 | 2; reshape: "dynamic" or the first two dims
#   of the Reshape's shape; batch: the input's first dim (an int or a symbolic name); eps.
VARIANTS = {
    "encoder_torch13.onnx": dict(
        label="encoder, torch opset 13", opset=13, heads=4, axes="attr", square="pow", rsqrt="div",
        consts="node", bias_first=True, gelu="torch", scale="div", k_transposes=2, reshape=[1, SEQ],
        batch=1, eps=1e-12),
    "encoder_torch17.onnx": dict(
        label="encoder, torch opset 17 dynamic", opset=17, heads=8, axes="attr", square="mul", rsqrt="div",
        consts="init", bias_first=False, gelu="inner", scale="mul", k_transposes=2, reshape="dynamic",
        batch="batch", eps=1e-5),
    "encoder_dynamo18.onnx": dict(
        label="encoder, dynamo opset 18", opset=18, heads=4, axes="input", square="pow", rsqrt="div",
        consts="node", bias_first=False, gelu="outer", scale="split", k_transposes=1, reshape=[-1, SEQ],
        batch="batch", eps=1e-5),
    "encoder_tf13.onnx": dict(
        label="encoder, tf2onnx opset 13", opset=13, heads=8, axes="attr", square="mul", rsqrt="reciprocal",
        consts="init", bias_first=False, gelu="inner", scale="mul", k_transposes=1, reshape=[0, 0],
        batch="batch", eps=1e-6),
}


class Builder:
    def __init__(self, consts):
        self.nodes, self.inits, self.n, self.consts = [], [], 0, consts
        self.shared = {}

    def init(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def const(self, name, array):
        """An exporter's constant (a scalar, a shape, axes): a fresh Constant node per use, or one
        shared initializer per name."""
        array = np.asarray(array)
        if self.consts == "init":
            if name not in self.shared:
                self.shared[name] = self.init(name, array)
            return self.shared[name]
        self.n += 1
        out = f"Constant_{self.n}_output_0"
        self.nodes.append(helper.make_node("Constant", [], [out], name=f"Constant_{self.n}",
                                           value=numpy_helper.from_array(array, out)))
        return out

    def op(self, op_type, inputs, name=None, **attrs):
        self.n += 1
        name = name or f"{op_type}_{self.n}"
        out = f"{name}_output_0"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=name, **attrs))
        return out


def f32(v):
    return np.array(v, np.float32)


def weights(seed):
    rng = np.random.default_rng(seed)

    def dense(rows, cols):
        return (rng.standard_normal((rows, cols)) / np.sqrt(rows)).astype(np.float32)

    def bias(n):
        return (rng.standard_normal(n) * 0.02).astype(np.float32)

    layers = []
    for _ in range(LAYERS):
        w = {k: dense(D, D) for k in ("q", "k", "v", "o")}
        w["ff1"], w["ff2"] = dense(D, FF), dense(FF, D)
        for k in ("q", "k", "v", "o", "ff2"):
            w[k + ".b"] = bias(D)
        w["ff1.b"] = bias(FF)
        for ln in ("ln1", "ln2"):
            w[ln + ".g"] = (1 + 0.1 * rng.standard_normal(D)).astype(np.float32)
            w[ln + ".b"] = bias(D)
        layers.append(w)
    return layers


def build(v, layers):
    b = Builder(v["consts"])
    heads, dh = v["heads"], D // v["heads"]

    def mean(t, name):
        if v["axes"] == "input":
            return b.op("ReduceMean", [t, b.const("axes_last", np.array([-1], np.int64))], name=name, keepdims=1)
        return b.op("ReduceMean", [t], name=name, axes=[-1], keepdims=1)

    def layer_norm(x, p, gamma, beta):
        mu = mean(x, f"{p}/ReduceMean")
        d = b.op("Sub", [x, mu], name=f"{p}/Sub")
        if v["square"] == "pow":
            sq = b.op("Pow", [d, b.const("pow_two", f32(2.0))], name=f"{p}/Pow")
        else:
            sq = b.op("Mul", [d, d], name=f"{p}/Square")
        var = mean(sq, f"{p}/ReduceMean_1")
        var = b.op("Add", [var, b.const("ln_eps", f32(v["eps"]))], name=f"{p}/Add")
        s = b.op("Sqrt", [var], name=f"{p}/Sqrt")
        if v["rsqrt"] == "reciprocal":
            n = b.op("Mul", [d, b.op("Reciprocal", [s], name=f"{p}/Reciprocal")], name=f"{p}/Mul_norm")
        else:
            n = b.op("Div", [d, s], name=f"{p}/Div")
        n = b.op("Mul", [n, gamma], name=f"{p}/Mul")
        return b.op("Add", [n, beta], name=f"{p}/Add_1")

    def linear(x, w, bias, p):
        mm = b.op("MatMul", [x, w], name=f"{p}/MatMul")
        return b.op("Add", [bias, mm] if v["bias_first"] else [mm, bias], name=f"{p}/Add")

    def reshape(t, tail, p):
        if v["reshape"] == "dynamic":
            shape = b.op("Shape", [t], name=f"{p}/Shape")
            dims = []
            for i in (0, 1):
                g = b.op("Gather", [shape, b.const(f"index_{i}", np.array(i, np.int64))], name=f"{p}/Gather_{i}",
                         axis=0)
                dims.append(b.op("Unsqueeze", [g, b.const("axes_0", np.array([0], np.int64))],
                                 name=f"{p}/Unsqueeze_{i}"))
            tail_c = b.const("shape_tail_" + "_".join(map(str, tail)), np.array(tail, np.int64))
            target = b.op("Concat", dims + [tail_c], name=f"{p}/Concat", axis=0)
        else:
            dims = v["reshape"] + tail
            target = b.const("shape_" + "_".join(map(str, dims)).replace("-", "m"), np.array(dims, np.int64))
        return b.op("Reshape", [t, target], name=f"{p}/Reshape")

    def gelu(h, p):
        if v["gelu"] == "torch":  # (x * (1 + erf(x / 1.4142135))) * 0.5
            e = b.op("Div", [h, b.const("gelu_sqrt2", f32(1.4142135))], name=f"{p}/Div")
            e = b.op("Erf", [e], name=f"{p}/Erf")
            e = b.op("Add", [e, b.const("gelu_one", f32(1.0))], name=f"{p}/Add")
            m = b.op("Mul", [h, e], name=f"{p}/Mul")
            return b.op("Mul", [m, b.const("gelu_half", f32(0.5))], name=f"{p}/Mul_1")
        if v["gelu"] == "inner":  # x * (0.5 * (1 + erf(x * 0.70710678)))
            e = b.op("Mul", [h, b.const("gelu_rsqrt2", f32(0.70710678))], name=f"{p}/Mul")
            e = b.op("Erf", [e], name=f"{p}/Erf")
            e = b.op("Add", [e, b.const("gelu_one", f32(1.0))], name=f"{p}/Add")
            e = b.op("Mul", [b.const("gelu_half", f32(0.5)), e], name=f"{p}/Mul_1")
            return b.op("Mul", [h, e], name=f"{p}/Mul_2")
        # (x * 0.5) * (1 + erf(x / √2))
        hh = b.op("Mul", [h, b.const("gelu_half", f32(0.5))], name=f"{p}/Mul")
        e = b.op("Div", [h, b.const("gelu_sqrt2", f32(np.sqrt(2.0)))], name=f"{p}/Div")
        e = b.op("Erf", [e], name=f"{p}/Erf")
        e = b.op("Add", [b.const("gelu_one", f32(1.0)), e], name=f"{p}/Add")
        return b.op("Mul", [hh, e], name=f"{p}/Mul_1")

    x = "x"
    for i, w in enumerate(layers):
        p = f"/encoder/layer.{i}"
        wn = {k: b.init(f"encoder.layer.{i}.{k}", a) for k, a in w.items()}
        q = linear(x, wn["q"], wn["q.b"], f"{p}/attention/query")
        k = linear(x, wn["k"], wn["k.b"], f"{p}/attention/key")
        val = linear(x, wn["v"], wn["v.b"], f"{p}/attention/value")
        q = b.op("Transpose", [reshape(q, [heads, dh], f"{p}/attention/query")], name=f"{p}/attention/Transpose_q",
                 perm=[0, 2, 1, 3])
        val = b.op("Transpose", [reshape(val, [heads, dh], f"{p}/attention/value")],
                   name=f"{p}/attention/Transpose_v", perm=[0, 2, 1, 3])
        k = reshape(k, [heads, dh], f"{p}/attention/key")
        if v["k_transposes"] == 2:
            k = b.op("Transpose", [k], name=f"{p}/attention/Transpose_k", perm=[0, 2, 1, 3])
            k = b.op("Transpose", [k], name=f"{p}/attention/Transpose_kt", perm=[0, 1, 3, 2])
        else:
            k = b.op("Transpose", [k], name=f"{p}/attention/Transpose_k", perm=[0, 2, 3, 1])
        if v["scale"] == "split":
            q = b.op("Mul", [q, b.const("sdpa_scale", f32(math.sqrt(1.0 / math.sqrt(dh))))],
                     name=f"{p}/attention/Mul_q")
            k = b.op("Mul", [k, b.const("sdpa_scale", f32(math.sqrt(1.0 / math.sqrt(dh))))],
                     name=f"{p}/attention/Mul_k")
        scores = b.op("MatMul", [q, k], name=f"{p}/attention/MatMul")
        if v["scale"] == "div":
            scores = b.op("Div", [scores, b.const("attn_sqrt_dh", f32(math.sqrt(dh)))], name=f"{p}/attention/Div")
        elif v["scale"] == "mul":
            scores = b.op("Mul", [scores, b.const("attn_rsqrt_dh", f32(1.0 / math.sqrt(dh)))],
                          name=f"{p}/attention/Mul")
        probs = b.op("Softmax", [scores], name=f"{p}/attention/Softmax", axis=-1)
        ctx = b.op("MatMul", [probs, val], name=f"{p}/attention/MatMul_1")
        ctx = b.op("Transpose", [ctx], name=f"{p}/attention/Transpose_ctx", perm=[0, 2, 1, 3])
        ctx = reshape(ctx, [D], f"{p}/attention/merge")
        attn = linear(ctx, wn["o"], wn["o.b"], f"{p}/attention/output/dense")
        x1 = b.op("Add", [attn, x], name=f"{p}/attention/output/Add")
        x1 = layer_norm(x1, f"{p}/attention/output/LayerNorm", wn["ln1.g"], wn["ln1.b"])
        h = linear(x1, wn["ff1"], wn["ff1.b"], f"{p}/intermediate/dense")
        h = gelu(h, f"{p}/intermediate/gelu")
        h = linear(h, wn["ff2"], wn["ff2.b"], f"{p}/output/dense")
        x2 = b.op("Add", [h, x1], name=f"{p}/output/Add")
        x = layer_norm(x2, f"{p}/output/LayerNorm", wn["ln2.g"], wn["ln2.b"])
    b.nodes.append(helper.make_node("Identity", [x], ["y"], name="output"))
    seq = "seq" if v["reshape"] == "dynamic" else SEQ
    xi = helper.make_tensor_value_info("x", TensorProto.FLOAT, [v["batch"], seq, D])
    yo = helper.make_tensor_value_info("y", TensorProto.FLOAT, [v["batch"], seq, D])
    graph = helper.make_graph(b.nodes, "encoder", [xi], [yo], b.inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", v["opset"])],
                             producer_name="aic-onnx bench", ir_version=8)


def reference(v, layers, x):
    """The function every variant computes, in float64 numpy."""
    heads = v["heads"]
    dh = D // heads
    erf = np.vectorize(math.erf)

    def ln(t, g, bias):
        mu = t.mean(-1, keepdims=True)
        d = t - mu
        return d / np.sqrt((d * d).mean(-1, keepdims=True) + v["eps"]) * g + bias

    x = x.astype(np.float64)
    n, s, _ = x.shape
    for w in layers:
        w = {k: a.astype(np.float64) for k, a in w.items()}

        def split(t):
            return t.reshape(n, s, heads, dh).transpose(0, 2, 1, 3)

        q, k, val = (split(x @ w[c] + w[c + ".b"]) for c in ("q", "k", "v"))
        sc = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)
        sc = np.exp(sc - sc.max(-1, keepdims=True))
        ctx = (sc / sc.sum(-1, keepdims=True)) @ val
        ctx = ctx.transpose(0, 2, 1, 3).reshape(n, s, D)
        x1 = ln(x + ctx @ w["o"] + w["o.b"], w["ln1.g"], w["ln1.b"])
        h = x1 @ w["ff1"] + w["ff1.b"]
        h = 0.5 * h * (1 + erf(h / math.sqrt(2.0)))
        x = ln(x1 + h @ w["ff2"] + w["ff2.b"], w["ln2.g"], w["ln2.b"])
    return x


def models():
    """[(file, variant, weights, model)], fixed seeds."""
    out = []
    for i, (name, v) in enumerate(VARIANTS.items()):
        layers = weights(20261203 + i)
        out.append((name, v, layers, build(v, layers)))
    return out


def write_all(out_dir):
    """Writes every variant into out_dir (checked with onnx.checker, full_check); returns {file: path}."""
    os.makedirs(out_dir, exist_ok=True)
    paths = {}
    for name, _, _, model in models():
        onnx.checker.check_model(model, full_check=True)
        paths[name] = os.path.join(out_dir, name)
        onnx.save(model, paths[name])
    return paths


def self_check(out_dir):
    """Writes the variants and runs each in onnxruntime against the numpy reference."""
    import onnxruntime as ort
    paths = write_all(out_dir)
    x = (np.random.default_rng(0).standard_normal((1, SEQ, D)) * 0.5).astype(np.float32)
    ok = True
    for name, v, layers, model in models():
        want = reference(v, layers, x)
        for level in (ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_ALL):
            so = ort.SessionOptions()
            so.graph_optimization_level = level
            s = ort.InferenceSession(paths[name], so, providers=["CPUExecutionProvider"])
            got = s.run(None, {"x": x})[0]
            diff = float(np.abs(got - want).max())
            good = bool(np.all(np.abs(got - want) <= 1e-4 + 1e-3 * np.abs(want)))
            ok = ok and good
            ops = {}
            for node in model.graph.node:
                ops[node.op_type] = ops.get(node.op_type, 0) + 1
            print(f"{name}: opset {v['opset']}, {len(model.graph.node)} nodes, "
                  f"{os.path.getsize(paths[name])} bytes; ORT {level.name}: max |Δ| vs numpy {diff:.2e} "
                  f"{'ok' if good else 'MISMATCH'}")
        print("   ops:", ", ".join(f"{k} {n}" for k, n in sorted(ops.items())))
    return ok


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    sys.exit(0 if self_check(sys.argv[1]) else 1)
