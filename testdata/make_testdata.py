#!/usr/bin/env python3
"""Generates the small models in testdata/ (deterministic: fixed seeds).

  seed_mlp.onnx          the seed's graph: x[1,10] -> Linear 10->20 -> ReLU -> Linear 20->5,
                         Linear as Gemm (transB=1, as torch.onnx exports nn.Linear with opset >= 9)
  seed_mlp_matmul.onnx   the same function the other way PyTorch exports it: MatMul + Add

Run with any python that has `onnx` and `numpy`: python3 testdata/make_testdata.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def seed_weights():
    rng = np.random.default_rng(20261130)
    w1 = rng.standard_normal((20, 10)).astype(np.float32) / np.sqrt(10)
    b1 = rng.standard_normal(20).astype(np.float32) * 0.1
    w2 = rng.standard_normal((5, 20)).astype(np.float32) / np.sqrt(20)
    b2 = rng.standard_normal(5).astype(np.float32) * 0.1
    return w1, b1, w2, b2


def io():
    x = helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 10])
    y = helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 5])
    return x, y


def save(model, name):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))
    print("wrote", name)


def seed_mlp_gemm():
    w1, b1, w2, b2 = seed_weights()
    inits = [numpy_helper.from_array(a, n) for a, n in
             [(w1, "fc1.weight"), (b1, "fc1.bias"), (w2, "fc2.weight"), (b2, "fc2.bias")]]
    nodes = [
        helper.make_node("Gemm", ["input", "fc1.weight", "fc1.bias"], ["fc1_out"], name="fc1", transB=1),
        helper.make_node("Relu", ["fc1_out"], ["relu_out"], name="relu"),
        helper.make_node("Gemm", ["relu_out", "fc2.weight", "fc2.bias"], ["output"], name="fc2", transB=1),
    ]
    x, y = io()
    graph = helper.make_graph(nodes, "seed_mlp", [x], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             producer_name="aic-onnx testdata", ir_version=8)


def seed_mlp_matmul():
    w1, b1, w2, b2 = seed_weights()
    # PyTorch stores the transposed weight for MatMul exports.
    inits = [numpy_helper.from_array(a, n) for a, n in
             [(w1.T.copy(), "fc1.weight_t"), (b1, "fc1.bias"), (w2.T.copy(), "fc2.weight_t"), (b2, "fc2.bias")]]
    nodes = [
        helper.make_node("MatMul", ["input", "fc1.weight_t"], ["fc1_mm"], name="fc1/MatMul"),
        helper.make_node("Add", ["fc1_mm", "fc1.bias"], ["fc1_out"], name="fc1/Add"),
        helper.make_node("Relu", ["fc1_out"], ["relu_out"], name="relu"),
        helper.make_node("MatMul", ["relu_out", "fc2.weight_t"], ["fc2_mm"], name="fc2/MatMul"),
        helper.make_node("Add", ["fc2_mm", "fc2.bias"], ["output"], name="fc2/Add"),
    ]
    x, y = io()
    graph = helper.make_graph(nodes, "seed_mlp", [x], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             producer_name="aic-onnx testdata", ir_version=8)


if __name__ == "__main__":
    save(seed_mlp_gemm(), "seed_mlp.onnx")
    save(seed_mlp_matmul(), "seed_mlp_matmul.onnx")
