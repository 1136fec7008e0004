#!/usr/bin/env python3
"""fuse_attention end to end: small scaled dot-product attention models as exporters
write them (onnx.helper), through `aic-onnx opt`; the optimized model must hold one
Attention node (opset 23: standard; opset 17 with --target aic: ai.aic's alias) and,
for the standard form, ONNX Runtime must give the same outputs on the original and the
optimized model on random inputs. Near misses must come back without an Attention.

usage: attention_vs_ort.py AIC_ONNX_BINARY
Exit 77 (skipped) without onnx/onnxruntime/numpy.
"""
import sys
import tempfile

from fusion_check import ort_max_diff, run_opt

SKIP = 77
B, H, SQ, SKV, D, DV = 2, 2, 3, 5, 4, 6


def main():
    binary = sys.argv[1]
    try:
        import numpy as np
        import onnx
        import onnxruntime  # noqa: F401 (fusion_check runs it; skipped without it)
        from onnx import TensorProto, helper, numpy_helper
    except ImportError as e:
        print(f"skipped: {e}")
        return SKIP

    def sdpa(name, opset=23, scale="div", mask=None, fp16=False, kt_input=False, softmax_axis=-1):
        """Y = MatMul(Softmax(MatMul(Q, Kt) * scale + mask), V) on [B, H, S, D] inputs."""
        elem = TensorProto.FLOAT16 if fp16 else TensorProto.FLOAT
        npt = np.float16 if fp16 else np.float32
        inits, nodes = [], []
        inputs = [helper.make_tensor_value_info("q", elem, [B, H, SQ, D])]
        if kt_input:
            inputs.append(helper.make_tensor_value_info("kt", elem, [B, H, D, SKV]))
        else:
            inputs.append(helper.make_tensor_value_info("k", elem, [B, H, SKV, D]))
            nodes.append(helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]))
        inputs.append(helper.make_tensor_value_info("v", elem, [B, H, SKV, DV]))
        q, kt = "q", "kt"
        if scale == "both":  # torch's SDPA export: √scale on each side
            inits.append(numpy_helper.from_array(np.array(np.sqrt(0.125), npt), "root"))
            nodes += [helper.make_node("Mul", ["q", "root"], ["qs"]), helper.make_node("Mul", ["root", "kt"], ["kts"])]
            q, kt = "qs", "kts"
        nodes.append(helper.make_node("MatMul", [q, kt], ["s"]))
        s = "s"
        if scale == "div":
            inits.append(numpy_helper.from_array(np.array(2.0, npt), "sqrt_d"))
            nodes.append(helper.make_node("Div", ["s", "sqrt_d"], ["s1"]))
            s = "s1"
        elif scale == "mul":
            inits.append(numpy_helper.from_array(np.array(0.3, npt), "alpha"))
            nodes.append(helper.make_node("Mul", ["s", "alpha"], ["s1"]))
            s = "s1"
        if mask == "padding":
            inputs.append(helper.make_tensor_value_info("mask", elem, [B, 1, 1, SKV]))
        elif mask == "last_dim_one":
            inputs.append(helper.make_tensor_value_info("mask", elem, [B, 1, SQ, 1]))
        elif mask == "causal":
            m = np.where(np.arange(SKV)[None, :] > np.arange(SQ)[:, None] + (SKV - SQ), -np.inf, 0.0)
            inits.append(numpy_helper.from_array(m.reshape(1, 1, SQ, SKV).astype(npt), "mask"))
        if mask is not None:
            nodes.append(helper.make_node("Add", [s, "mask"], ["s2"]))
            s = "s2"
        nodes.append(helper.make_node("Softmax", [s], ["p"], axis=softmax_axis))
        nodes.append(helper.make_node("MatMul", ["p", "v"], ["y"]))
        graph = helper.make_graph(nodes, name, inputs, [helper.make_tensor_value_info("y", elem, None)], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 10
        return model

    def bert_block(opset):
        """Projections, heads by Reshape/Transpose, K straight to [B, H, D, S], Div by √D, padding mask."""
        S, E = 7, H * D
        rng = np.random.default_rng(1)
        inits = [numpy_helper.from_array((0.3 * rng.standard_normal((E, E))).astype(np.float32), w)
                 for w in ("wq", "wk", "wv")]
        inits += [numpy_helper.from_array(np.array([B, S, H, D], np.int64), "heads"),
                  numpy_helper.from_array(np.array([B, S, E], np.int64), "merged"),
                  numpy_helper.from_array(np.array(np.sqrt(D), np.float32), "sqrt_d"),
                  numpy_helper.from_array(np.array(1.0, np.float32), "one"),
                  numpy_helper.from_array(np.array(-10000.0, np.float32), "big"),
                  numpy_helper.from_array(np.array([1, 2], np.int64), "axes12")]
        nodes = []
        for name, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])):
            nodes += [helper.make_node("MatMul", ["x", "w" + name], [name + "p"]),
                      helper.make_node("Reshape", [name + "p", "heads"], [name + "r"]),
                      helper.make_node("Transpose", [name + "r"], [name + "h"], perm=perm)]
        # HF's extended mask: (1 - mask) * -10000 over [B, 1, 1, S].
        nodes += [helper.make_node("Unsqueeze", ["attention_mask", "axes12"], ["m4"]),
                  helper.make_node("Sub", ["one", "m4"], ["inv"]),
                  helper.make_node("Mul", ["inv", "big"], ["ext"]),
                  helper.make_node("MatMul", ["qh", "kh"], ["s"]),
                  helper.make_node("Div", ["s", "sqrt_d"], ["s1"]),
                  helper.make_node("Add", ["s1", "ext"], ["s2"]),
                  helper.make_node("Softmax", ["s2"], ["p"], axis=-1),
                  helper.make_node("MatMul", ["p", "vh"], ["ctx"]),
                  helper.make_node("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
                  helper.make_node("Reshape", ["ctx_t", "merged"], ["y"])]
        graph = helper.make_graph(nodes, "bert_block",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, S, E]),
                                   helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT, [B, S])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 10
        return model

    def feeds(model, rng):
        out = {}
        for i in model.graph.input:
            t = i.type.tensor_type
            shape = [d.dim_value for d in t.shape.dim]
            dtype = np.float16 if t.elem_type == TensorProto.FLOAT16 else np.float32
            if i.name == "attention_mask":  # 1 = attend; at least one key per row
                a = (rng.random(shape) > 0.3).astype(dtype)
                a[:, 0] = 1
                out[i.name] = a
            else:
                out[i.name] = rng.standard_normal(shape).astype(dtype)
        return out

    # (model, opt flags, expected Attention domain or None for "not fused", tolerance)
    cases = [
        (sdpa("plain_mul", scale="mul"), [], "", 1e-4),
        (sdpa("div_padding_mask", scale="div", mask="padding"), [], "", 1e-4),
        (sdpa("both_sides_causal", scale="both", mask="causal"), [], "", 1e-4),
        (sdpa("no_scale_kt_input", scale=None, kt_input=True), [], "", 1e-4),
        (sdpa("float16", scale="both", mask="causal", fp16=True), [], "", 2e-2),
        (bert_block(23), [], "", 1e-4),
        (sdpa("opset17_aic", opset=17, mask="padding"), ["--target", "aic"], "ai.aic", None),
        (bert_block(17), ["--target", "aic"], "ai.aic", None),
        (sdpa("opset17_onnx", opset=17, mask="padding"), [], None, 0.0),
        (sdpa("mask_last_dim_one", mask="last_dim_one"), [], None, 0.0),
        (sdpa("softmax_axis_2", softmax_axis=2), [], None, 0.0),
    ]
    failures = []
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        for model, flags, domain, tol in cases:
            name = model.graph.name + f"_opset{model.opset_import[0].version}" + ("_aic" if flags else "")
            src, dst, why = run_opt(binary, model, tmp, name, flags)
            if why:
                failures.append(f"{name}: {why}")
                continue
            opt = onnx.load(dst)
            att = [n for n in opt.graph.node if n.op_type == "Attention"]
            if domain is None:
                if att:
                    failures.append(f"{name}: fused a near miss")
            elif len(att) != 1 or att[0].domain != domain:
                failures.append(f"{name}: expected one Attention in domain '{domain}', got "
                                f"{[(n.op_type, n.domain) for n in opt.graph.node]}")
                continue
            elif not any(a.name == "scale" for a in att[0].attribute):
                failures.append(f"{name}: Attention without an explicit scale")
            if tol is None:  # ai.aic: ONNX Runtime cannot run it
                print(f"{name}: {[(n.op_type, n.domain) for n in opt.graph.node if n.op_type == 'Attention']}")
                continue
            err, why = ort_max_diff(src, dst, lambda r: feeds(model, r), rng, tol)
            if why:
                failures.append(f"{name}: {why}")
            else:
                print(f"{name}: {'fused' if att else 'left as is'}, ONNX Runtime max |diff| {err:.2e}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
