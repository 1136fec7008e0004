#!/usr/bin/env python3
"""Generates the models that `aic-onnx report`'s tests check numbers on (fixed seeds).

  encoder.onnx     BERT-style encoder: input x[batch, 128, 256] (embeddings), 6 post-LN layers,
                   d=256, 8 heads of 32, FFN 1024 with GELU written the way exporters emit it
                   (0.5·x·(1 + Erf(x/√2))), LayerNormalization (opset 17), Linear layers as
                   MatMul + bias Add. The attention and FFN weights are shared by the 6 layers
                   (ALBERT-style) so the file stays small (~3.2 MB) and the report's "shared
                   initializers counted once" rule has something to count; each layer has its
                   own LayerNorm parameters. W_q is built with rank exactly 16, so its numerical
                   rank must be 16.
  resnet_cnn.onnx  ResNet-style CNN on 1x3x224x224: stem Conv 3→16 7x7/2 + BatchNorm + ReLU +
                   MaxPool, then two bottleneck blocks (1x1 expand 16→64, BN, ReLU, 3x3 64→64,
                   BN, ReLU, 1x1 contract 64→16, BN, residual Add, ReLU), global average pool,
                   Flatten, Linear 16→10. The first block's 3x3 weight has rank exactly 8 as a
                   [64, 64·3·3] matrix. Narrow on purpose: small file, fast reference runs.

Run with any python that has `onnx` and `numpy`: python3 testdata/make_analysis_models.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))

D, HEADS, FF, SEQ, LAYERS = 256, 8, 1024, 128, 6
Q_RANK = 16
CONV_RANK = 8


class Builder:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def init(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type, inputs, name=None, **attrs):
        self.n += 1
        name = name or f"{op_type.lower()}_{self.n}"
        out = f"{name}_out"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=name, **attrs))
        return out


def low_rank(rng, rows, cols, rank):
    u = rng.standard_normal((rows, rank)).astype(np.float32)
    v = rng.standard_normal((rank, cols)).astype(np.float32)
    return (u @ v / np.sqrt(rows * rank)).astype(np.float32)


def encoder(tied=True):
    """tied=False gives every layer its own attention/FFN weights (BERT proper; the
    benchmark's model, bench/make_bench_models.py); the test model ties them."""
    rng = np.random.default_rng(20261130)
    b = Builder()

    def dense(rows, cols):
        return (rng.standard_normal((rows, cols)) / np.sqrt(rows)).astype(np.float32)

    def bias(n):
        return (rng.standard_normal(n) * 0.02).astype(np.float32)

    def layer_weights(prefix):
        # Stored as [in, out], the MatMul export layout.
        w = {
            "q": b.init(f"{prefix}.attn.q.weight", low_rank(rng, D, D, Q_RANK)),
            "k": b.init(f"{prefix}.attn.k.weight", dense(D, D)),
            "v": b.init(f"{prefix}.attn.v.weight", dense(D, D)),
            "o": b.init(f"{prefix}.attn.o.weight", dense(D, D)),
            "ff1": b.init(f"{prefix}.ffn.fc1.weight", dense(D, FF)),
            "ff2": b.init(f"{prefix}.ffn.fc2.weight", dense(FF, D)),
        }
        bs = {k: b.init(f"{w[k][:-7]}.bias", bias(FF if k == "ff1" else D)) for k in w}
        return w, bs

    shared = layer_weights("enc") if tied else None
    split_shape = b.init("split_heads_shape", np.array([0, 0, HEADS, D // HEADS], np.int64))
    merge_shape = b.init("merge_heads_shape", np.array([0, 0, D], np.int64))
    scale = b.init("attn_scale", np.array(1.0 / np.sqrt(D // HEADS), np.float32))
    half = b.init("gelu_half", np.array(0.5, np.float32))
    one = b.init("gelu_one", np.array(1.0, np.float32))
    sqrt2 = b.init("gelu_sqrt2", np.array(np.sqrt(2.0), np.float32))

    x = "x"
    for layer in range(LAYERS):
        p = f"layer{layer}"
        w, bs = shared if tied else layer_weights(f"enc.layer{layer}")

        def linear(x, key, prefix):
            mm = b.op("MatMul", [x, w[key]], name=f"{prefix}/MatMul")
            return b.op("Add", [mm, bs[key]], name=f"{prefix}/Add")

        heads = {}
        for key in ("q", "k", "v"):
            h = linear(x, key, f"{p}/attn/{key}")
            h = b.op("Reshape", [h, split_shape], name=f"{p}/attn/{key}/split")
            perm = [0, 2, 3, 1] if key == "k" else [0, 2, 1, 3]
            heads[key] = b.op("Transpose", [h], name=f"{p}/attn/{key}/heads", perm=perm)
        scores = b.op("MatMul", [heads["q"], heads["k"]], name=f"{p}/attn/scores")
        scores = b.op("Mul", [scores, scale], name=f"{p}/attn/scale")
        probs = b.op("Softmax", [scores], name=f"{p}/attn/softmax", axis=-1)
        ctx = b.op("MatMul", [probs, heads["v"]], name=f"{p}/attn/context")
        ctx = b.op("Transpose", [ctx], name=f"{p}/attn/merge_t", perm=[0, 2, 1, 3])
        ctx = b.op("Reshape", [ctx, merge_shape], name=f"{p}/attn/merge")
        attn = linear(ctx, "o", f"{p}/attn/o")
        x1 = b.op("Add", [x, attn], name=f"{p}/attn/residual")
        g1 = b.init(f"{p}.ln1.weight", (1 + 0.1 * rng.standard_normal(D)).astype(np.float32))
        b1 = b.init(f"{p}.ln1.bias", bias(D))
        x1 = b.op("LayerNormalization", [x1, g1, b1], name=f"{p}/ln1", axis=-1, epsilon=1e-5)
        h = linear(x1, "ff1", f"{p}/ffn/fc1")
        # GELU(h) = 0.5·h·(1 + erf(h/√2)), as torch.onnx exports it below opset 20.
        e = b.op("Div", [h, sqrt2], name=f"{p}/ffn/gelu/div")
        e = b.op("Erf", [e], name=f"{p}/ffn/gelu/erf")
        e = b.op("Add", [e, one], name=f"{p}/ffn/gelu/add")
        h = b.op("Mul", [h, e], name=f"{p}/ffn/gelu/mul")
        h = b.op("Mul", [h, half], name=f"{p}/ffn/gelu/half")
        h = linear(h, "ff2", f"{p}/ffn/fc2")
        x2 = b.op("Add", [x1, h], name=f"{p}/ffn/residual")
        g2 = b.init(f"{p}.ln2.weight", (1 + 0.1 * rng.standard_normal(D)).astype(np.float32))
        b2 = b.init(f"{p}.ln2.bias", bias(D))
        x = b.op("LayerNormalization", [x2, g2, b2], name=f"{p}/ln2", axis=-1, epsilon=1e-5)
    b.nodes.append(helper.make_node("Identity", [x], ["y"], name="output"))
    xi = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", SEQ, D])
    yo = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", SEQ, D])
    graph = helper.make_graph(b.nodes, "encoder", [xi], [yo], b.inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             producer_name="aic-onnx testdata", ir_version=8)


def resnet_cnn():
    rng = np.random.default_rng(20261201)
    b = Builder()

    def conv_w(cout, cin, k):
        return (rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k))).astype(np.float32)

    def conv_bn(x, name, weight, stride=1, pad=0):
        cout = weight.shape[0]
        wn = b.init(f"{name}.weight", weight)
        y = b.op("Conv", [x, wn], name=f"{name}/conv", strides=[stride, stride], pads=[pad] * 4,
                 kernel_shape=list(weight.shape[2:]))
        scale = b.init(f"{name}.bn.scale", (1 + 0.1 * rng.standard_normal(cout)).astype(np.float32))
        shift = b.init(f"{name}.bn.bias", (0.1 * rng.standard_normal(cout)).astype(np.float32))
        mean = b.init(f"{name}.bn.mean", (0.1 * rng.standard_normal(cout)).astype(np.float32))
        var = b.init(f"{name}.bn.var", (1 + 0.1 * rng.random(cout)).astype(np.float32))
        return b.op("BatchNormalization", [y, scale, shift, mean, var], name=f"{name}/bn", epsilon=1e-5)

    x = conv_bn("x", "stem", conv_w(16, 3, 7), stride=2, pad=3)
    x = b.op("Relu", [x], name="stem/relu")
    x = b.op("MaxPool", [x], name="stem/pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    for blk in range(2):
        p = f"block{blk}"
        mid = conv_w(64, 64, 3)
        if blk == 0:
            mid = low_rank(rng, 64, 64 * 9, CONV_RANK).reshape(64, 64, 3, 3) * 3.0
        h = conv_bn(x, f"{p}.expand", conv_w(64, 16, 1))
        h = b.op("Relu", [h], name=f"{p}/relu1")
        h = conv_bn(h, f"{p}.mid", mid, pad=1)
        h = b.op("Relu", [h], name=f"{p}/relu2")
        h = conv_bn(h, f"{p}.contract", conv_w(16, 64, 1))
        x = b.op("Add", [x, h], name=f"{p}/residual")
        x = b.op("Relu", [x], name=f"{p}/relu_out")
    x = b.op("GlobalAveragePool", [x], name="head/pool")
    x = b.op("Flatten", [x], name="head/flatten", axis=1)
    fw = b.init("head.fc.weight", (rng.standard_normal((10, 16)) / 4).astype(np.float32))
    fb = b.init("head.fc.bias", (0.1 * rng.standard_normal(10)).astype(np.float32))
    b.nodes.append(helper.make_node("Gemm", [x, fw, fb], ["logits"], name="head/fc", transB=1))
    xi = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 224, 224])
    yo = helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])
    graph = helper.make_graph(b.nodes, "resnet_cnn", [xi], [yo], b.inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             producer_name="aic-onnx testdata", ir_version=8)


def save(model, name):
    onnx.checker.check_model(model)
    path = os.path.join(HERE, name)
    onnx.save(model, path)
    print("wrote", name, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    save(encoder(), "encoder.onnx")
    save(resnet_cnn(), "resnet_cnn.onnx")
