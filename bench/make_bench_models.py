#!/usr/bin/env python3
"""Generates the benchmark's synthetic models (fixed seeds, so every run measures the same
weights):

  bert_encoder.onnx  BERT-style encoder, x[batch, 128, 256] -> y: 6 post-LN layers, d=256,
                     8 heads, FFN 1024, GELU as exporters write it (Erf form), LayerNormalization,
                     every layer with its own weights (testdata/encoder.onnx ties them to stay small;
                     the graph is otherwise the same, built by the same code).
  resnet18.onnx      ResNet-18 with BatchNormalization after every conv (as a PyTorch export in
                     eval mode before folding): x[1, 3, 224, 224] -> logits[1, 1000]; stem 7x7/2 +
                     BN + ReLU + MaxPool, 4 stages of 2 basic blocks (64, 128, 256, 512 channels,
                     1x1/2 projection + BN on the downsampling shortcuts), global average pool, Gemm.

usage: python bench/make_bench_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "testdata"))
import make_analysis_models as testdata_models  # noqa: E402  (the encoder's builder)


def resnet18():
    rng = np.random.default_rng(20261202)
    b = testdata_models.Builder()

    def conv_bn(x, name, cin, cout, k, stride):
        w = (rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k))).astype(np.float32)
        y = b.op("Conv", [x, b.init(f"{name}.weight", w)], name=f"{name}/conv", strides=[stride, stride],
                 pads=[k // 2] * 4, kernel_shape=[k, k])
        bn = [b.init(f"{name}.bn.scale", (1 + 0.1 * rng.standard_normal(cout)).astype(np.float32)),
              b.init(f"{name}.bn.bias", (0.1 * rng.standard_normal(cout)).astype(np.float32)),
              b.init(f"{name}.bn.mean", (0.1 * rng.standard_normal(cout)).astype(np.float32)),
              b.init(f"{name}.bn.var", (1 + 0.1 * rng.random(cout)).astype(np.float32))]
        return b.op("BatchNormalization", [y] + bn, name=f"{name}/bn", epsilon=1e-5)

    x = conv_bn("x", "stem", 3, 64, 7, 2)
    x = b.op("Relu", [x], name="stem/relu")
    x = b.op("MaxPool", [x], name="stem/pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, cout in enumerate([64, 128, 256, 512]):
        for blk in range(2):
            p = f"layer{stage + 1}.{blk}"
            stride = 2 if stage > 0 and blk == 0 else 1
            h = conv_bn(x, f"{p}.conv1", cin, cout, 3, stride)
            h = b.op("Relu", [h], name=f"{p}/relu1")
            h = conv_bn(h, f"{p}.conv2", cout, cout, 3, 1)
            shortcut = conv_bn(x, f"{p}.downsample", cin, cout, 1, stride) if stride != 1 or cin != cout else x
            x = b.op("Add", [h, shortcut], name=f"{p}/residual")
            x = b.op("Relu", [x], name=f"{p}/relu_out")
            cin = cout
    x = b.op("GlobalAveragePool", [x], name="head/pool")
    x = b.op("Flatten", [x], name="head/flatten", axis=1)
    fw = b.init("fc.weight", (rng.standard_normal((1000, 512)) / np.sqrt(512)).astype(np.float32))
    fb = b.init("fc.bias", (0.01 * rng.standard_normal(1000)).astype(np.float32))
    b.nodes.append(helper.make_node("Gemm", [x, fw, fb], ["logits"], name="fc", transB=1))
    xi = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 224, 224])
    yo = helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])
    graph = helper.make_graph(b.nodes, "resnet18", [xi], [yo], b.inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             producer_name="aic-onnx bench", ir_version=8)


def write_all(out_dir):
    """Writes both models into out_dir; returns {name: path}."""
    os.makedirs(out_dir, exist_ok=True)
    paths = {}
    for name, model in [("bert_encoder.onnx", testdata_models.encoder(tied=False)), ("resnet18.onnx", resnet18())]:
        onnx.checker.check_model(model)
        paths[name] = os.path.join(out_dir, name)
        onnx.save(model, paths[name])
    return paths


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for name, path in write_all(sys.argv[1]).items():
        print("wrote", path, os.path.getsize(path), "bytes")
