#!/usr/bin/env python3
"""Cross-check of `aic-onnx report`'s parameter and MAC totals against onnx-tool
(PyPI `onnx-tool`) on the PaddleOCR models. The two count by different
conventions (docs/report-schema.md, "Cross-checks"), so the check reconciles
them term by term instead of asking for equal totals:

  Conv MACs      onnx-tool = ours + one MAC per output element of a Conv with bias
  MatMul MACs    equal
  Conv params    equal
  BatchNorm      onnx-tool counts scale, bias, mean and var (4C); ours scale and bias (2C)
  other params   onnx-tool counts every initializer (scalars, shape constants); ours
                 only learned ones: the rest of the difference is under 0.1% of the total
  other MACs     onnx-tool counts elementwise work (Add, Mul, Clip, Softmax...) as MACs;
                 ours counts it in FLOPs only

The PaddleOCR files keep their weights in Constant nodes, which onnx-tool does not
count as parameters, so they are turned into initializers first.

usage: report_vs_onnx_tool.py AIC_ONNX_BINARY MODELS_DIR
Exit 77 (skipped) without onnx_tool or the models.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77
CASES = [
    ("ppocr_det.onnx", (1, 3, 640, 640)),
    ("ppocr_rec.onnx", (1, 3, 48, 320)),
    ("ppocr_cls.onnx", (1, 3, 48, 192)),
]


def onnx_tool_profile(onnx, onnx_tool, np, path, shape, tmp):
    model = onnx.load(path)
    g = model.graph
    kept = []
    for n in g.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            t = onnx.TensorProto()
            t.CopyFrom(n.attribute[0].t)
            t.name = n.output[0]
            g.initializer.append(t)
        else:
            kept.append(n)
    del g.node[:]
    g.node.extend(kept)
    converted = os.path.join(tmp, os.path.basename(path))
    onnx.save(model, converted)
    m = onnx_tool.Model(converted)
    m.graph.shape_infer({g.input[0].name: np.zeros(shape, np.float32)})
    m.graph.profile()
    macs, params = collections.Counter(), collections.Counter()
    for n in m.graph.nodemap.values():
        macs[n.op_type] += int(n.macs[0])
        params[n.op_type] += int(n.params)
    return macs, params, int(m.graph.params)


def ours_by_op(doc):
    macs, params = collections.Counter(), collections.Counter()
    conv_bias_outputs = 0
    mac_ops = ("Conv", "ConvTranspose", "MatMul", "Gemm", "Einsum")
    for n in doc["nodes"]:
        # A group (an Attention's two MatMuls and its softmax) has the MACs of
        # its MAC-carrying members: file it under that op.
        ops = [m["op_type"] for m in n["onnx_nodes"]]
        op = next((o for o in ops if o in mac_ops), ops[0])
        macs[op] += n["macs"] or 0
        params[op] += n["parameters"]
        layer = n["layer"]
        if op == "Conv" and layer:
            weight = 1
            for d in layer["weight_shape"]:
                weight *= d
            if n["parameters"] > weight:  # weight + bias
                out = 1
                for d in n["output_shapes"][0]:
                    out *= d
                conv_bias_outputs += out
    return macs, params, conv_bias_outputs


def main():
    binary, models = sys.argv[1], sys.argv[2]
    try:
        import numpy as np
        import onnx
        import onnx_tool
    except ImportError as e:
        print(f"skipped: {e} (pip install onnx-tool into .venv)")
        return SKIP
    if not os.path.exists(os.path.join(models, CASES[0][0])):
        print("skipped: PaddleOCR models not found")
        return SKIP
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, shape in CASES:
            path = os.path.join(models, name)
            p = subprocess.run([binary, "report", path, "--format", "json", "--no-spectra",
                                "--shape", "x=" + ",".join(map(str, shape))],
                               capture_output=True, text=True)
            if p.returncode != 0:
                failures.append(f"{name}: report exited {p.returncode}: {p.stderr}")
                continue
            doc = json.loads(p.stdout)
            their_macs, their_params, their_total = onnx_tool_profile(onnx, onnx_tool, np, path, shape, tmp)
            our_macs, our_params, bias_outputs = ours_by_op(doc)
            our_total = doc["summary"]["total_parameters"]
            print(f"{name}: params ours {our_total} onnx-tool {their_total}; "
                  f"MACs ours {doc['summary']['total_macs']} onnx-tool {sum(their_macs.values())}")
            for op in sorted(set(their_macs) | set(our_macs), key=lambda o: -their_macs[o]):
                if their_macs[op] or our_macs[op] or their_params[op] or our_params[op]:
                    print(f"  {op:22s} MACs {our_macs[op]:>12d} vs {their_macs[op]:>12d}   "
                          f"params {our_params[op]:>9d} vs {their_params[op]:>9d}")

            def expect(cond, what):
                if not cond:
                    failures.append(f"{name}: {what}")

            expect(their_macs["Conv"] == our_macs["Conv"] + bias_outputs,
                   f"Conv MACs {their_macs['Conv']} != ours {our_macs['Conv']} + bias {bias_outputs}")
            expect(their_macs["MatMul"] == our_macs["MatMul"], "MatMul MACs differ")
            expect(their_params["Conv"] == our_params["Conv"], "Conv params differ")
            expect(their_params["BatchNormalization"] == 2 * our_params["BatchNormalization"],
                   "BatchNorm params are not 4C vs 2C")
            bn_stats = our_params["BatchNormalization"]
            rest = their_total - our_total - bn_stats
            expect(0 <= rest <= 0.001 * their_total,
                   f"unexplained parameter difference {rest} (after {bn_stats} BatchNorm statistics)")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
