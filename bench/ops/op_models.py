#!/usr/bin/env python3
"""One-op ONNX models for the op-level benchmark (bench/ops/run_ops.py).

Every case is one operator (two for the Cast round trip, a body for If and Loop)
on shapes taken from real models: transformer activations [1,128,768] and
[8,512,768] (smaller where one op would take more than ~50 ms at one thread),
attention scores [1,12,128,128], CNN feature maps [1,64,112,112],
[1,64,56,56] and [1,256,14,14]. The op's data operands are graph inputs, so
neither engine can fold the op away; weights, biases, axes, shapes, scales and
other parameters a real exporter writes as initializers are initializers.
Every case has a stable id, `Op/variant/shape` (`.../f16` for the float16
variant), and is built from fixed seeds.

Opset 17 unless the op needs a higher one (Mish 18, Gelu 20,
GroupNormalization 21, Attention and RotaryEmbedding 23).

f16 variants are built for the ops whose ONNX Runtime CPU kernels might take
float16; run_ops.py skips, with a note, those ORT cannot create a session for.

usage (listing): .venv/bin/python bench/ops/op_models.py [--filter SUBSTR]
"""
import argparse
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17

NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.bool_): TensorProto.BOOL,
    np.dtype(np.uint8): TensorProto.UINT8,
}

SHP = {
    "tok": (1, 128, 768),
    "tok8": (8, 512, 768),
    "att": (1, 12, 128, 128),
    "c112": (1, 64, 112, 112),
    "c56": (1, 64, 56, 56),
    "c14": (1, 256, 14, 14),
}


def sname(shape):
    return "x".join(str(d) for d in shape) if len(shape) else "scalar"


class Builder:
    """A one-graph model under construction: float arrays become `dt` (f32 or f16)
    unless added with keep=True."""

    def __init__(self, case_id, dt):
        self.dt = np.dtype(dt)
        self.rng = np.random.default_rng(zlib.crc32(case_id.encode()))
        self.nodes, self.inits, self.inputs, self.outputs, self.feeds = [], [], [], [], {}
        self.opset = OPSET
        self.n = 0

    def _conv(self, arr, keep):
        arr = np.asarray(arr)
        if arr.dtype.kind == "f" and not keep:
            arr = arr.astype(self.dt)
        return arr

    def input(self, name, arr, keep=False):
        arr = self._conv(arr, keep)
        self.feeds[name] = arr
        self.inputs.append(helper.make_tensor_value_info(name, NP_TO_ONNX[arr.dtype], list(arr.shape)))
        return name

    def const(self, name, arr, keep=False):
        arr = self._conv(arr, keep)
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def randn(self, *shape, scale=1.0):
        return (self.rng.standard_normal(shape) * scale).astype(np.float32)

    def x(self, shape, name="x", kind="normal"):
        """A float graph input: normal, positive (for Log/Sqrt/Pow bases) or away
        from zero (divisors)."""
        a = self.randn(*shape)
        if kind == "positive":
            a = np.abs(a) + 0.1
        elif kind == "divisor":
            a = (self.rng.random(shape) + 0.5).astype(np.float32) * np.where(self.rng.random(shape) < 0.5, -1, 1)
        return self.input(name, a.astype(np.float32))

    def weight(self, *shape, fan_in=None):
        fan_in = fan_in or int(np.prod(shape[1:])) or 1
        return self.randn(*shape, scale=1.0 / np.sqrt(fan_in))

    def node(self, op, ins, outs=None, domain="", **attrs):
        if outs is None:
            self.n += 1
            outs = [f"t{self.n}"]
        self.nodes.append(helper.make_node(op, ins, outs, domain=domain or None, **attrs))
        return outs[0] if len(outs) == 1 else outs

    def out(self, name, elem=None, shape=None):
        elem = NP_TO_ONNX[self.dt] if elem is None else elem
        self.outputs.append(helper.make_tensor_value_info(name, elem, None if shape is None else list(shape)))

    def model(self, name):
        g = helper.make_graph(self.nodes, name.replace("/", "_"), self.inputs, self.outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)],
                              producer_name="aic-onnx bench/ops")
        m.ir_version = 8 if self.opset <= 17 else 9 if self.opset <= 20 else 10
        # Fill the outputs' shapes in from ONNX shape inference where it knows them.
        try:
            inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True)
            known = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
            for o in m.graph.output:
                v = known.get(o.name)
                if v is not None and v.type.tensor_type.HasField("shape"):
                    o.type.CopyFrom(v.type)
        except Exception:  # noqa: BLE001 - an output without a shape is still a valid model
            pass
        return m


class Case:
    def __init__(self, cid, fn, dt="f32", note=""):
        self.id = cid + ("/f16" if dt == "f16" else "")
        self.fn, self.dt, self.note = fn, dt, note
        self.op = cid.split("/")[0]

    def build(self):
        """(ModelProto, {input name: numpy array})"""
        b = Builder(self.id, np.float16 if self.dt == "f16" else np.float32)
        self.fn(b)
        return b.model(self.id), b.feeds


CASES = []


def case(cid, fn, f16=False, note=""):
    CASES.append(Case(cid, fn, "f32", note))
    if f16:
        CASES.append(Case(cid, fn, "f16", note))


# ---------------------------------------------------------------- convolution

def conv_case(variant, shape, cout, k, stride=1, pad=None, dilation=1, group=1, bias=True, f16=True):
    def fn(b):
        cin = shape[1]
        nd = len(shape) - 2
        ks = [k] * nd
        p = pad if pad is not None else dilation * (k - 1) // 2
        x = b.x(shape)
        w = b.const("w", b.weight(cout, cin // group, *ks))
        ins = [x, w] + ([b.const("b", b.randn(cout, scale=0.1))] if bias else [])
        b.out(b.node("Conv", ins, ["y"], kernel_shape=ks, strides=[stride] * nd, pads=[p] * (2 * nd),
                     dilations=[dilation] * nd, group=group))
    case(f"Conv/{variant}/{sname(shape)}", fn, f16=f16)


conv_case("3x3", SHP["c56"], 64, 3)
conv_case("3x3", SHP["c14"], 256, 3)
conv_case("3x3", SHP["c112"], 64, 3)
conv_case("1x1", SHP["c56"], 256, 1)
conv_case("1x1", SHP["c14"], 1024, 1)
conv_case("depthwise3x3", SHP["c112"], 64, 3, group=64)
conv_case("depthwise3x3", SHP["c14"], 256, 3, group=256)
conv_case("dilated3x3", SHP["c56"], 64, 3, dilation=2)
conv_case("dilated3x3", SHP["c14"], 256, 3, dilation=2)
conv_case("grouped3x3-g8", SHP["c56"], 64, 3, group=8)
conv_case("grouped3x3-g32", SHP["c14"], 256, 3, group=32)
conv_case("grouped3x3-g32", (1, 128, 56, 56), 128, 3, group=32)  # 4 channels a group: ResNeXt-50 32x4d, DPN-68
conv_case("1d-k3", (1, 768, 128), 768, 3)
conv_case("1d-k3", (1, 80, 3000), 384, 3)
conv_case("strided3x3s2", SHP["c112"], 128, 3, stride=2)
conv_case("strided3x3s2", SHP["c56"], 128, 3, stride=2)
conv_case("stem7x7s2", (1, 3, 224, 224), 64, 7, stride=2, pad=3)


def convt_case(variant, shape, cout, k, stride, pad):
    def fn(b):
        x = b.x(shape)
        w = b.const("w", b.weight(shape[1], cout, k, k, fan_in=shape[1] * k * k // (stride * stride)))
        bias = b.const("b", b.randn(cout, scale=0.1))
        b.out(b.node("ConvTranspose", [x, w, bias], ["y"], kernel_shape=[k, k], strides=[stride, stride],
                     pads=[pad] * 4))
    case(f"ConvTranspose/{variant}/{sname(shape)}", fn, f16=True)


convt_case("2x2s2", SHP["c56"], 32, 2, 2, 0)
convt_case("4x4s2p1", SHP["c14"], 128, 4, 2, 1)

# ---------------------------------------------------------------- pooling


def pool_case(op, variant, shape, **attrs):
    def fn(b):
        b.out(b.node(op, [b.x(shape)], ["y"], **attrs))
    case(f"{op}/{variant}/{sname(shape)}", fn, f16=True)


pool_case("MaxPool", "3x3s2", SHP["c112"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
pool_case("MaxPool", "3x3s2", SHP["c56"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
pool_case("MaxPool", "2x2s2", SHP["c14"], kernel_shape=[2, 2], strides=[2, 2])
pool_case("AveragePool", "3x3s1p1", SHP["c56"], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1],
          count_include_pad=0)
pool_case("AveragePool", "2x2s2", SHP["c112"], kernel_shape=[2, 2], strides=[2, 2])
pool_case("AveragePool", "2x2s2", SHP["c14"], kernel_shape=[2, 2], strides=[2, 2])
for s in ("c56", "c14"):
    pool_case("GlobalAveragePool", "global", SHP[s])
    pool_case("GlobalMaxPool", "global", SHP[s])
pool_case("GlobalAveragePool", "global", (1, 2048, 7, 7))

# ---------------------------------------------------------------- matmul / gemm


def matmul_const(variant, xshape, n):
    def fn(b):
        x = b.x(xshape)
        w = b.const("w", b.weight(xshape[-1], n, fan_in=xshape[-1]))
        b.out(b.node("MatMul", [x, w], ["y"]))
    case(f"MatMul/{variant}/{sname(xshape)}x{n}", fn, f16=True)


def matmul_dyn(variant, ashape, bshape):
    def fn(b):
        b.out(b.node("MatMul", [b.x(ashape, "a"), b.x(bshape, "b")], ["y"]))
    case(f"MatMul/{variant}/{sname(ashape)}@{sname(bshape)}", fn, f16=True)


matmul_const("linear", (1, 128, 768), 768)
matmul_const("linear", (1, 128, 768), 3072)
matmul_const("linear", (1, 512, 768), 3072)  # [8,512,768]x3072 is ~200 ms: one sequence
matmul_const("linear", (1, 1, 768), 3072)  # decoder step (GEMV)
matmul_dyn("attn-qk", (1, 12, 128, 64), (1, 12, 64, 128))
matmul_dyn("attn-v", (1, 12, 128, 128), (1, 12, 128, 64))
matmul_dyn("attn-qk", (8, 12, 128, 64), (8, 12, 64, 128))


def gemm_case(variant, m, k, n):
    def fn(b):
        a = b.x((m, k), "a")
        w = b.const("w", b.weight(n, k))
        c = b.const("c", b.randn(n, scale=0.1))
        b.out(b.node("Gemm", [a, w, c], ["y"], transB=1))
    case(f"Gemm/{variant}/{m}x{k}x{n}", fn, f16=True)


gemm_case("transB-bias", 1, 2048, 1000)
gemm_case("transB-bias", 128, 768, 768)
gemm_case("transB-bias", 512, 768, 3072)

# ---------------------------------------------------------------- normalization


def bn_case(shape):
    def fn(b):
        c = shape[1]
        x = b.x(shape)
        scale = b.const("scale", 1 + b.randn(c, scale=0.1))
        bias = b.const("bias", b.randn(c, scale=0.1))
        mean = b.const("mean", b.randn(c, scale=0.1))
        var = b.const("var", (np.abs(b.randn(c)) + 0.5).astype(np.float32))
        b.out(b.node("BatchNormalization", [x, scale, bias, mean, var], ["y"], epsilon=1e-5))
    case(f"BatchNormalization/standalone/{sname(shape)}", fn, f16=True)


for s in ("c112", "c14"):
    bn_case(SHP[s])


def instnorm_case(shape):
    def fn(b):
        c = shape[1]
        b.out(b.node("InstanceNormalization", [b.x(shape), b.const("s", 1 + b.randn(c, scale=0.1)),
                                               b.const("b", b.randn(c, scale=0.1))], ["y"], epsilon=1e-5))
    case(f"InstanceNormalization/eps1e-5/{sname(shape)}", fn, f16=True)


def groupnorm_case(shape, groups):
    def fn(b):
        b.opset = 21
        c = shape[1]
        b.out(b.node("GroupNormalization", [b.x(shape), b.const("s", 1 + b.randn(c, scale=0.1)),
                                            b.const("b", b.randn(c, scale=0.1))], ["y"], epsilon=1e-5,
                     num_groups=groups), shape=shape)
    case(f"GroupNormalization/g{groups}/{sname(shape)}", fn, f16=True)


def layernorm_case(shape):
    def fn(b):
        d = shape[-1]
        b.out(b.node("LayerNormalization", [b.x(shape), b.const("s", 1 + b.randn(d, scale=0.1)),
                                            b.const("b", b.randn(d, scale=0.1))], ["y"], axis=-1, epsilon=1e-5))
    case(f"LayerNormalization/last/{sname(shape)}", fn, f16=True)


for s in ("c56", "c14"):
    instnorm_case(SHP[s])
    groupnorm_case(SHP[s], 32)
for s in ("tok", "tok8"):
    layernorm_case(SHP[s])


def softmax_case(op, variant, shape, axis):
    def fn(b):
        b.out(b.node(op, [b.x(shape)], ["y"], axis=axis))
    case(f"{op}/{variant}/{sname(shape)}", fn, f16=True)


for op in ("Softmax", "LogSoftmax"):
    softmax_case(op, "last", SHP["att"], -1)
    softmax_case(op, "last", (8, 12, 128, 128), -1)
    softmax_case(op, "last", (128, 1000), -1)
    softmax_case(op, "axis1", SHP["att"], 1)
    softmax_case(op, "axis1", SHP["c56"], 1)


def attention_case(variant, batch, q_heads, kv_heads, q_seq, kv_seq, head, causal=False, mask=None, past=0):
    """ONNX Attention (opset 23) at encoder and decoder shapes: Q/K/V and the
    past are graph inputs; `mask` "bool" or "float" is a [batch, 1, q_seq, total] input."""
    def fn(b):
        b.opset = 23
        ins = [b.x((batch, q_heads, q_seq, head), "q"), b.x((batch, kv_heads, kv_seq, head), "k"),
               b.x((batch, kv_heads, kv_seq, head), "v")]
        total = past + kv_seq
        if mask == "bool":
            ins.append(b.input("mask", b.rng.random((batch, 1, q_seq, total)) < 0.9))
        elif mask == "float":
            ins.append(b.input("mask", np.where(b.rng.random((batch, 1, q_seq, total)) < 0.9, 0, -1e4)
                               .astype(np.float32)))
        else:
            ins.append("")
        if past:
            ins += [b.x((batch, kv_heads, past, head), "past_k"), b.x((batch, kv_heads, past, head), "past_v")]
        outs = ["y", "present_k", "present_v"] if past else ["y"]
        b.node("Attention", ins if ins[-1] else ins[:-1], outs, is_causal=int(causal))
        for o in outs:
            b.out(o)
    case(f"Attention/{variant}/b{batch}h{q_heads}kv{kv_heads}q{q_seq}k{past + kv_seq}d{head}", fn, f16=True)


def rotary_case(variant, batch, heads, seq, head, positions):
    """RotaryEmbedding (opset 23) on [batch, heads, seq, head] with caches of 2048
    positions indexed by position_ids (`positions`), or caches per token."""
    def fn(b):
        b.opset = 23
        half = head // 2
        ins = [b.x((batch, heads, seq, head))]
        if positions:
            angles = np.arange(2048)[:, None] / (10000 ** (np.arange(half)[None, :] / half))
            ins += [b.const("cos", np.cos(angles).astype(np.float32)), b.const("sin", np.sin(angles).astype(np.float32)),
                    b.input("pos", np.tile(np.arange(seq, dtype=np.int64), (batch, 1)))]
        else:
            angles = b.rng.random((batch, seq, half)) * 6.28
            ins += [b.input("cos", np.cos(angles).astype(np.float32)), b.input("sin", np.sin(angles).astype(np.float32))]
        b.out(b.node("RotaryEmbedding", ins, ["y"]))
    case(f"RotaryEmbedding/{variant}/b{batch}h{heads}s{seq}d{head}", fn, f16=True)


rotary_case("position-ids", 1, 32, 512, 128, True)
rotary_case("per-token", 4, 8, 128, 64, False)

attention_case("encoder", 1, 12, 12, 128, 128, 64)
attention_case("encoder-float-mask", 8, 12, 12, 128, 128, 64, mask="float")
attention_case("causal-gqa", 1, 32, 8, 128, 128, 64, causal=True)
attention_case("decode-past-bool-mask", 4, 32, 8, 1, 1, 64, causal=True, mask="bool", past=511)

# ---------------------------------------------------------------- elementwise unary

UNARY = {
    # op: (attrs, input kind, opset, extra const inputs)
    "Relu": ({}, "normal", None),
    "Sigmoid": ({}, "normal", None),
    "Tanh": ({}, "normal", None),
    "Erf": ({}, "normal", None),
    "Exp": ({}, "normal", None),
    "Log": ({}, "positive", None),
    "Sqrt": ({}, "positive", None),
    "Abs": ({}, "normal", None),
    "Neg": ({}, "normal", None),
    "Softplus": ({}, "normal", None),
    "HardSigmoid": ({"alpha": 1 / 6, "beta": 0.5}, "normal", None),
    "HardSwish": ({}, "normal", None),
    "Mish": ({}, "normal", 18),
    "Clip": ({}, "normal", None),  # ReLU6: min 0, max 6 as initializers
    "LeakyRelu": ({"alpha": 0.1}, "normal", None),
    "Elu": ({"alpha": 1.0}, "normal", None),
}
CNN_ACTIVATIONS = {"Relu", "Sigmoid", "HardSigmoid", "HardSwish", "Mish", "Clip", "LeakyRelu", "Elu", "Tanh"}


def unary_case(op, variant, shape, attrs, kind, opset, f16=True):
    def fn(b):
        if opset:
            b.opset = opset
        ins = [b.x(shape, kind=kind)]
        if op == "Clip":
            ins += [b.const("lo", np.array(0, np.float32)), b.const("hi", np.array(6, np.float32))]
        b.out(b.node(op, ins, ["y"], **attrs))
    case(f"{op}/{variant}/{sname(shape)}", fn, f16=f16)


for op, (attrs, kind, opset) in UNARY.items():
    shapes = ["tok", "tok8"] + (["c112"] if op in CNN_ACTIVATIONS else [])
    for s in shapes:
        unary_case(op, "eltwise", SHP[s], attrs, kind, opset)
for s in ("tok", "tok8"):
    unary_case("Gelu", "erf", SHP[s], {"approximate": "none"}, "normal", 20)
    unary_case("Gelu", "tanh", SHP[s], {"approximate": "tanh"}, "normal", 20)


def silu_case(shape, conv_from=None):
    """SiLU as exporters below opset 24 write it, x·sigmoid(x); after a 1x1
    conv from `conv_from` channels (EfficientNet's and YOLO's blocks) when given."""
    def fn(b):
        x = b.x(shape if conv_from is None else (shape[0], conv_from) + tuple(shape[2:]))
        if conv_from is not None:
            w = b.const("w", b.weight(shape[1], conv_from, 1, 1))
            x = b.node("Conv", [x, w, b.const("b", b.randn(shape[1], scale=0.1))], ["c"], kernel_shape=[1, 1])
        b.out(b.node("Mul", [x, b.node("Sigmoid", [x], ["s"])], ["y"]))
    case(f"SiLU/{'x*sigmoid(x)' if conv_from is None else f'conv1x1-from{conv_from}'}/{sname(shape)}", fn,
         f16=conv_from is None)


for s in ("tok", "tok8", "c112"):
    silu_case(SHP[s])
silu_case((1, 96, 112, 112), conv_from=16)

# ---------------------------------------------------------------- elementwise binary

# pattern: (A shape, B shape, B is an initializer)
BINARY_PATTERNS = [
    ("same", SHP["tok"], SHP["tok"], False),
    ("same", SHP["tok8"], SHP["tok8"], False),
    ("same", SHP["c112"], SHP["c112"], False),
    ("NCHW+C11", SHP["c112"], (1, 64, 1, 1), False),
    ("NCHW+C11", SHP["c14"], (1, 256, 1, 1), False),
    ("BSD+D", SHP["tok"], (768,), True),
    ("BSD+D", SHP["tok8"], (768,), True),
    ("mask", SHP["att"], (1, 1, 128, 128), False),
    ("mask", (8, 12, 128, 128), (1, 1, 128, 128), False),
]


def binary_case(op, variant, ashape, bshape, b_const):
    def fn(b):
        kind_a = "positive" if op == "Pow" else "normal"
        a = b.x(ashape, "a", kind=kind_a)
        if op == "Div":
            arr = (b.rng.random(bshape) + 0.5).astype(np.float32)
        elif op == "Pow":
            arr = (b.rng.random(bshape) * 2).astype(np.float32)
        else:
            arr = b.randn(*bshape)
        bb = b.const("b", arr) if b_const else b.input("b", arr)
        b.out(b.node(op, [a, bb], ["y"]))
    case(f"{op}/{variant}/{sname(ashape)}+{sname(bshape)}", fn, f16=True)


for op in ("Add", "Mul", "Sub", "Div", "Pow", "Max"):
    for variant, a, bs, c in BINARY_PATTERNS:
        binary_case(op, variant, a, bs, c)


def pow_scalar_case(e, shape):
    def fn(b):
        b.out(b.node("Pow", [b.x(shape, "a"), b.const("e", np.array(e, np.float32))], ["y"]))
    case(f"Pow/scalar{e:g}/{sname(shape)}", fn, f16=True)


for e in (2.0, 3.0):
    for s in ("tok", "tok8"):
        pow_scalar_case(e, SHP[s])


def where_case(variant, cshape, xshape, yshape, y_const):
    def fn(b):
        cond = b.input("cond", b.rng.random(cshape) < 0.5)
        x = b.x(xshape, "x")
        y = b.const("y", np.array(-1e4, np.float32).reshape(yshape)) if y_const else b.x(yshape, "y")
        b.out(b.node("Where", [cond, x, y], ["out"]))
    case(f"Where/{variant}/{sname(xshape)}", fn, f16=True)


where_case("same", SHP["tok"], SHP["tok"], SHP["tok"], False)
where_case("same", SHP["tok8"], SHP["tok8"], SHP["tok8"], False)
where_case("mask-scalar", (1, 1, 128, 128), SHP["att"], (), True)
where_case("mask-scalar", (1, 1, 128, 128), (8, 12, 128, 128), (), True)

# ---------------------------------------------------------------- reductions


def reduce_case(op, variant, shape, axes):
    def fn(b):
        x = b.x(shape)
        if op == "ReduceSum":  # axes is an input from opset 13
            y = b.node(op, [x, b.const("axes", np.array(axes, np.int64))], ["y"], keepdims=1)
        else:
            y = b.node(op, [x], ["y"], axes=axes, keepdims=1)
        b.out(y)
    case(f"{op}/{variant}/{sname(shape)}", fn, f16=True)


for op in ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceL2"):
    reduce_case(op, "last", SHP["tok"], [-1])
    reduce_case(op, "last", SHP["tok8"], [-1])
    reduce_case(op, "spatial", SHP["c112"], [2, 3])
    reduce_case(op, "spatial", SHP["c14"], [2, 3])


def argmax_case(variant, shape, axis):
    def fn(b):
        b.out(b.node("ArgMax", [b.x(shape)], ["y"], axis=axis, keepdims=0), TensorProto.INT64)
    case(f"ArgMax/{variant}/{sname(shape)}", fn, f16=True)


argmax_case("last", (128, 1000), -1)
argmax_case("last", (8, 512, 768), -1)
argmax_case("axis1", SHP["c112"], 1)


def topk_case(shape, k):
    def fn(b):
        b.node("TopK", [b.x(shape), b.const("k", np.array([k], np.int64))], ["values", "indices"], axis=-1)
        b.out("values")
        b.out("indices", TensorProto.INT64)
    case(f"TopK/k{k}/{sname(shape)}", fn, f16=True)


topk_case((128, 1000), 5)
topk_case((1, 32000), 5)


def cumsum_case(shape, axis):
    def fn(b):
        b.out(b.node("CumSum", [b.x(shape), b.const("axis", np.array(axis, np.int64))], ["y"]))
    case(f"CumSum/axis{axis}/{sname(shape)}", fn, f16=True)


cumsum_case(SHP["tok"], -1)
cumsum_case(SHP["tok8"], 1)

# ---------------------------------------------------------------- data movement


def concat_case(variant, shape, n, axis):
    def fn(b):
        ins = [b.x(shape, f"x{i}") for i in range(n)]
        b.out(b.node("Concat", ins, ["y"], axis=axis))
    case(f"Concat/{variant}/{n}x{sname(shape)}", fn, f16=True)


concat_case("channel", (1, 64, 56, 56), 2, 1)
concat_case("channel", (1, 128, 14, 14), 4, 1)
concat_case("last", (1, 12, 128, 64), 2, -1)
concat_case("last", SHP["tok8"], 2, -1)


def split_case(variant, shape, n, axis):
    def fn(b):
        size = shape[axis] // n
        outs = [f"y{i}" for i in range(n)]
        b.node("Split", [b.x(shape), b.const("split", np.array([size] * n, np.int64))], outs, axis=axis)
        for o in outs:
            b.out(o)
    case(f"Split/{variant}/{sname(shape)}/{n}", fn, f16=True)


split_case("channel", (1, 128, 56, 56), 2, 1)
split_case("channel", (1, 256, 14, 14), 4, 1)
split_case("last", (1, 128, 2304), 3, 2)
split_case("last", (8, 512, 2304), 3, 2)


def slice_case(variant, shape, axis, start, end, step=1):
    def fn(b):
        ins = [b.x(shape)] + [b.const(n, np.array([v], np.int64)) for n, v in
                              (("starts", start), ("ends", end), ("axes", axis), ("steps", step))]
        b.out(b.node("Slice", ins, ["y"]))
    case(f"Slice/{variant}/{sname(shape)}", fn, f16=True)


slice_case("channel", (1, 128, 56, 56), 1, 0, 64)
slice_case("channel", (1, 512, 14, 14), 1, 256, 512)
slice_case("last", (1, 128, 2304), 2, 768, 1536)
slice_case("last", (8, 512, 2304), 2, 768, 1536)
slice_case("last-step2", SHP["tok8"], 2, 0, 768, 2)


def expand_case(shape, to):
    def fn(b):
        b.out(b.node("Expand", [b.x(shape), b.const("shape", np.array(to, np.int64))], ["y"]))
    case(f"Expand/{sname(shape)}->{sname(to)}/{sname(to)}", fn, f16=True)


expand_case((1, 1, 128, 128), (1, 12, 128, 128))
expand_case((1, 1, 128, 128), (8, 12, 128, 128))
expand_case((1, 1, 768), (8, 512, 768))


def tile_case(shape, reps):
    def fn(b):
        b.out(b.node("Tile", [b.x(shape), b.const("reps", np.array(reps, np.int64))], ["y"]))
    case(f"Tile/{'x'.join(map(str, reps))}/{sname(shape)}", fn, f16=True)


tile_case(SHP["c56"], [1, 2, 1, 1])
tile_case(SHP["tok"], [8, 1, 1])
tile_case((1, 1, 128, 128), [1, 12, 1, 1])


def transpose_case(perm, shape):
    def fn(b):
        b.out(b.node("Transpose", [b.x(shape)], ["y"], perm=list(perm)))
    case(f"Transpose/{''.join(map(str, perm))}/{sname(shape)}", fn, f16=True)


transpose_case((0, 2, 1, 3), (1, 128, 12, 64))
transpose_case((0, 2, 1, 3), (8, 512, 12, 64))
transpose_case((0, 3, 1, 2), (1, 56, 56, 64))
transpose_case((0, 3, 1, 2), (1, 112, 112, 64))
transpose_case((0, 2, 3, 1), SHP["c56"])
transpose_case((0, 1, 3, 2), SHP["att"])


def reshape_case(shape, to):
    def fn(b):
        b.out(b.node("Reshape", [b.x(shape), b.const("shape", np.array(to, np.int64))], ["y"]))
    case(f"Reshape/split-heads/{sname(shape)}", fn, f16=True)


reshape_case(SHP["tok"], (1, 128, 12, 64))
reshape_case(SHP["tok8"], (8, 512, 12, 64))


def pad_case(mode, shape, p):
    def fn(b):
        nd = len(shape)
        pads = [0, 0] + [p] * (nd - 2) + [0, 0] + [p] * (nd - 2)
        ins = [b.x(shape), b.const("pads", np.array(pads, np.int64))]
        if mode == "constant":
            ins.append(b.const("value", np.array(0, np.float32)))
        b.out(b.node("Pad", ins, ["y"], mode=mode))
    case(f"Pad/{mode}{p}/{sname(shape)}", fn, f16=True)


pad_case("constant", SHP["c56"], 1)
pad_case("constant", SHP["c112"], 1)
pad_case("reflect", SHP["c56"], 1)
pad_case("edge", SHP["c56"], 2)


def gather_embedding(vocab, d, ishape):
    def fn(b):
        table = b.const("table", b.randn(vocab, d, scale=0.02))
        ids = b.input("ids", b.rng.integers(0, vocab, ishape).astype(np.int64))
        b.out(b.node("Gather", [table, ids], ["y"], axis=0))
    case(f"Gather/embedding-{vocab}x{d}/{sname(ishape)}", fn, f16=True)


def gather_axis(variant, shape, axis, idx):
    def fn(b):
        b.out(b.node("Gather", [b.x(shape), b.const("idx", np.asarray(idx, np.int64))], ["y"], axis=axis))
    case(f"Gather/{variant}/{sname(shape)}", fn, f16=True)


gather_embedding(30522, 768, (1, 128))
gather_embedding(30522, 768, (8, 512))
gather_axis("axis1-scalar", SHP["tok"], 1, 0)
gather_axis("axis1-scalar", SHP["tok8"], 1, 0)
gather_axis("axis1-128idx", SHP["c14"], 1, np.random.default_rng(3).permutation(256)[:128])


def gather_elements(variant, shape, ishape, axis):
    def fn(b):
        x = b.x(shape)
        idx = b.input("idx", b.rng.integers(0, shape[axis], ishape).astype(np.int64))
        b.out(b.node("GatherElements", [x, idx], ["y"], axis=axis))
    case(f"GatherElements/{variant}/{sname(shape)}", fn, f16=True)


gather_elements("last-k5", (128, 1000), (128, 5), 1)
gather_elements("last-same", SHP["att"], SHP["att"], 3)


def scatternd_case(shape, rows):
    def fn(b):
        x = b.x(shape)
        flat = b.rng.permutation(shape[0] * shape[1])[:rows]
        idx = np.stack([flat // shape[1], flat % shape[1]], axis=1).astype(np.int64)
        idx = b.input("idx", idx)
        upd = b.x((rows, shape[2]), "updates")
        b.out(b.node("ScatterND", [x, idx, upd], ["y"]))
    case(f"ScatterND/rows{rows}/{sname(shape)}", fn, f16=True)


scatternd_case(SHP["tok"], 64)
scatternd_case(SHP["tok8"], 512)


def nonzero_case(shape, dtype):
    def fn(b):
        if dtype == "bool":
            x = b.input("x", b.rng.random(shape) < 0.5)
        else:
            a = b.randn(*shape)
            a[b.rng.random(shape) < 0.5] = 0
            x = b.input("x", a)
        b.out(b.node("NonZero", [x], ["y"]), TensorProto.INT64)
    case(f"NonZero/{dtype}/{sname(shape)}", fn, f16=(dtype == "float"))


nonzero_case(SHP["tok"], "float")
nonzero_case(SHP["c56"], "bool")


def cast_roundtrip(shape):
    def fn(b):
        h = b.node("Cast", [b.x(shape)], to=TensorProto.FLOAT16)
        b.out(b.node("Cast", [h], ["y"], to=TensorProto.FLOAT))
    case(f"Cast/f32-f16-f32/{sname(shape)}", fn)


def cast_int64(shape):
    def fn(b):
        b.x(shape)
        b.feeds["x"] *= 100
        b.out(b.node("Cast", ["x"], ["y"], to=TensorProto.INT64), TensorProto.INT64)
    case(f"Cast/f32-int64/{sname(shape)}", fn)


for s in ("tok", "tok8"):
    cast_roundtrip(SHP[s])
    cast_int64(SHP[s])


def resize_case(variant, shape, scale, **attrs):
    def fn(b):
        nd = len(shape)
        scales = b.const("scales", np.array([1, 1] + [scale] * (nd - 2), np.float32), keep=True)
        b.out(b.node("Resize", [b.x(shape), "", scales], ["y"], **attrs))
    case(f"Resize/{variant}/{sname(shape)}", fn, f16=True)


resize_case("nearest2x", SHP["c56"], 2.0, mode="nearest", coordinate_transformation_mode="asymmetric",
            nearest_mode="floor")
resize_case("nearest2x", SHP["c14"], 2.0, mode="nearest", coordinate_transformation_mode="asymmetric",
            nearest_mode="floor")
resize_case("linear2x-half_pixel", SHP["c56"], 2.0, mode="linear", coordinate_transformation_mode="half_pixel")
resize_case("linear2x-half_pixel", SHP["c14"], 2.0, mode="linear", coordinate_transformation_mode="half_pixel")
resize_case("linear2x-align_corners", SHP["c56"], 2.0, mode="linear",
            coordinate_transformation_mode="align_corners")
resize_case("cubic2x-half_pixel", SHP["c56"], 2.0, mode="cubic", coordinate_transformation_mode="half_pixel",
            cubic_coeff_a=-0.75)
resize_case("cubic2x-half_pixel", SHP["c14"], 2.0, mode="cubic", coordinate_transformation_mode="half_pixel",
            cubic_coeff_a=-0.75)


def grid_sample_case(variant, shape, out_hw, **attrs):
    """GridSample of x [N, C, H, W] at a random grid over (a little past) [-1, 1]: spatial
    transformers, RAFT's correlation lookups."""
    def fn(b):
        grid = (b.rng.random((shape[0], out_hw[0], out_hw[1], 2)) * 2.2 - 1.1).astype(np.float32)
        b.out(b.node("GridSample", [b.x(shape), b.input("grid", grid)], ["y"], **attrs))
    case(f"GridSample/{variant}/{sname(shape)}", fn)


grid_sample_case("bilinear-zeros", SHP["c56"], (56, 56), mode="bilinear", padding_mode="zeros", align_corners=0)
grid_sample_case("bilinear-corr-lookup", (256, 1, 16, 16), (7, 7), mode="bilinear", padding_mode="zeros",
                 align_corners=1)


def einsum_case(shape):
    def fn(b):
        b.out(b.node("Einsum", [b.x(shape, "q"), b.x(shape, "k")], ["y"], equation="bhqd,bhkd->bhqk"))
    case(f"Einsum/bhqd,bhkd->bhqk/{sname(shape)}", fn, f16=True)


einsum_case((1, 12, 128, 64))
einsum_case((8, 12, 128, 64))

# ---------------------------------------------------------------- control flow


def if_case(shape):
    def fn(b):
        cond = b.input("cond", np.array(True))
        x = b.x(shape)
        elem = NP_TO_ONNX[b.dt]
        then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["ty"])], "then", [],
                                   [helper.make_tensor_value_info("ty", elem, None)])
        else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["ey"])], "else", [],
                                   [helper.make_tensor_value_info("ey", elem, None)])
        b.out(b.node("If", [cond], ["y"], then_branch=then_g, else_branch=else_g))
        del x
    case(f"If/scalar-cond-relu|neg/{sname(shape)}", fn, f16=True)


def loop_case(shape, trips):
    def fn(b):
        x = b.x(shape)
        elem = NP_TO_ONNX[b.dt]
        half = numpy_helper.from_array(np.array(0.5, b.dt), "half")
        body = helper.make_graph(
            [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
             helper.make_node("Mul", ["v_in", "half"], ["m"]),
             helper.make_node("Add", ["m", x], ["v_out"])],
            "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
             helper.make_tensor_value_info("v_in", elem, None)],
            [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
             helper.make_tensor_value_info("v_out", elem, None)],
            [half])
        m = b.const("M", np.array(trips, np.int64))
        c = b.const("C", np.array(True))
        b.out(b.node("Loop", [m, c, x], ["y"], body=body), shape=shape)
    case(f"Loop/{trips}iter-mul-add/{sname(shape)}", fn, f16=True)


for s in ("tok", "tok8"):
    if_case(SHP[s])
loop_case(SHP["tok"], 10)


# -------------------------------------------------------- quantized (QDQ) ops
def qdq_binary_case(op, shape, relu):
    """DequantizeLinear of two uint8 tensors, Add or Mul, (Relu), QuantizeLinear:
    the residual join of a statically quantized CNN (ORT: QLinearAdd). Opset 19,
    whose Quantize/DequantizeLinear onnx.reference implements (run_ops.py checks
    8-bit outputs against it where ORT is a step off)."""
    def fn(b):
        b.opset = 19
        a = b.input("a", b.rng.integers(0, 256, shape, dtype=np.uint8))
        c = b.input("c", b.rng.integers(0, 256, shape, dtype=np.uint8))
        f32 = lambda v: np.array(v, np.float32)  # noqa: E731
        da = b.node("DequantizeLinear", [a, b.const("sa", f32(0.021), keep=True), b.const("za", np.array(128, np.uint8))])
        dc = b.node("DequantizeLinear", [c, b.const("sc", f32(0.017), keep=True), b.const("zc", np.array(119, np.uint8))])
        y = b.node(op, [da, dc])
        if relu:
            y = b.node("Relu", [y])
        b.out(b.node("QuantizeLinear", [y, b.const("sy", f32(0.033), keep=True), b.const("zy", np.array(0 if relu else 128, np.uint8))], ["y"]),
              elem=TensorProto.UINT8, shape=shape)
    case(f"QDQ {op}/u8{'-relu' if relu else ''}/{sname(shape)}", fn)


for shape in ([1, 256, 56, 56], [1, 1024, 14, 14]):
    qdq_binary_case("Add", shape, relu=True)
qdq_binary_case("Add", [1, 128, 768], relu=False)
qdq_binary_case("Mul", [1, 128, 768], relu=False)


def qdq_product_weights(b, shape, axis, per):
    """int8 weights (std about 73, zero point 0) dequantized with `per` scales along `axis`."""
    wq = b.rng.integers(-127, 128, shape, dtype=np.int8)
    ws = (0.004 + 0.0005 * (np.arange(per) % 7)).astype(np.float32)
    return b.node("DequantizeLinear", [b.const("wq", wq), b.const("ws", ws, keep=True),
                                       b.const("wz", np.zeros(per, np.int8))], axis=axis), ws


def qdq_conv_case(variant, shape, cout, k, group=1, stride=1):
    """A statically quantized conv as quantize_static writes it: uint8 activations,
    int8 weights per output channel, an int32 bias at scale xs·ws[c], uint8 out
    with zero point 0 (the Relu it absorbs; ORT: QLinearConv). The y scale spans
    about three deviations of the sums."""
    def fn(b):
        b.opset = 19
        cin = shape[1]
        xs = np.float32(0.021)
        a = b.input("x", b.rng.integers(0, 256, shape, dtype=np.uint8))
        da = b.node("DequantizeLinear", [a, b.const("xs", np.array(xs), keep=True), b.const("xz", np.array(128, np.uint8))])
        dw, ws = qdq_product_weights(b, (cout, cin // group, k, k), 0, cout)
        bias = b.rng.integers(-20000, 20000, cout, dtype=np.int32)
        db = b.node("DequantizeLinear", [b.const("bq", bias), b.const("bs", (xs * ws).astype(np.float32), keep=True),
                                         b.const("bz", np.zeros(cout, np.int32))], axis=0)
        y = b.node("Conv", [da, dw, db], kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4, group=group)
        ys = np.float32(np.sqrt(cin // group * k * k) * 74 * 73 * xs * 0.0055 * 3 / 128)
        b.out(b.node("QuantizeLinear", [y, b.const("ys", np.array(ys), keep=True), b.const("yz", np.array(0, np.uint8))], ["y"]),
              elem=TensorProto.UINT8)
    case(f"QDQ Conv/u8-{variant}/{sname(shape)}", fn)


def qdq_matmul_case(shape, n):
    """A statically quantized linear layer: uint8 activations times int8 weights per
    column, uint8 out (ORT: QLinearMatMul)."""
    def fn(b):
        b.opset = 19
        k = shape[-1]
        xs = np.float32(0.021)
        a = b.input("x", b.rng.integers(0, 256, shape, dtype=np.uint8))
        da = b.node("DequantizeLinear", [a, b.const("xs", np.array(xs), keep=True), b.const("xz", np.array(128, np.uint8))])
        dw, _ = qdq_product_weights(b, (k, n), 1, n)
        ys = np.float32(np.sqrt(k) * 74 * 73 * xs * 0.0055 * 3 / 128)
        y = b.node("MatMul", [da, dw])
        b.out(b.node("QuantizeLinear", [y, b.const("ys", np.array(ys), keep=True), b.const("yz", np.array(128, np.uint8))], ["y"]),
              elem=TensorProto.UINT8)
    case(f"QDQ MatMul/u8/{sname(shape)}x{n}", fn)


qdq_conv_case("3x3", SHP["c56"], 64, 3)
qdq_conv_case("3x3", SHP["c14"], 256, 3)
qdq_conv_case("1x1", SHP["c56"], 256, 1)
qdq_conv_case("depthwise3x3", SHP["c112"], 64, 3, group=64)
qdq_matmul_case(SHP["tok"], 768)


def select(filt=None):
    return [c for c in CASES if not filt or filt in c.id]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--filter", default=None)
    ap.add_argument("--check", action="store_true", help="build every model and run onnx.checker on it")
    args = ap.parse_args()
    for c in select(args.filter):
        if args.check:
            m, _ = c.build()
            try:
                onnx.checker.check_model(m)
            except Exception as e:  # noqa: BLE001
                print(f"{c.id}: {e}")
        print(c.id)
    print(f"{len(select(args.filter))} cases", flush=True)


if __name__ == "__main__":
    main()
