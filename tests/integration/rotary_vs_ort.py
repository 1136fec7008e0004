#!/usr/bin/env python3
"""fuse_rotary_embedding end to end: rotary position embeddings as HF transformers export
them (rotate_half: Concat(Neg(x[..., D/2:]), x[..., :D/2]); q * cos + rotate_half(q) * sin,
cos/sin with equal halves), written with onnx.helper, through `aic-onnx opt`. At opset 23
the optimized model must hold RotaryEmbedding nodes and ONNX Runtime must give the same
outputs on the original and the optimized model on random inputs; at opset 17 with
--target aic the nodes are ai.aic's alias (ONNX Runtime cannot run it; `opt`'s own
verification checks it). Partial rotation (GPT-NeoX's rotary_pct) must come back as
RotaryEmbedding with rotary_embedding_dim. Near misses must come back without a RotaryEmbedding and with
ONNX Runtime's outputs unchanged.

usage: rotary_vs_ort.py AIC_ONNX_BINARY
Exit 77 (skipped) without onnx/onnxruntime/numpy.
"""
import sys
import tempfile

from fusion_check import ort_max_diff, run_opt

SKIP = 77
B, H, S, D = 2, 4, 6, 16
INT64_MAX = 2**63 - 1


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

    def llama(name, opset=23, cache="positions", batch=B, swapped=False, mirrored=False, partial=False):
        """q, k [batch, H, S, D] rotated by cos/sin from position ids (HF's rotary_emb) or a constant table;
        partial: GPT-NeoX's rotary_pct, the first R features rotated and the rest concatenated back."""
        R = D // 2 if partial else D  # the rotated width
        inits = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
                 (("zero", [0]), ("half", [R // 2]), ("rot", [R]), ("end", [INT64_MAX]), ("last", [3]),
                  ("one", [1]), ("ax1", [1]), ("ax_last", [-1]))]
        nodes = []
        inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [batch, H, S, D]) for n in ("q", "k")]
        if cache == "positions":
            # HF: freqs = position_ids[..., None] * inv_freq; emb = cat(freqs, freqs); cos = emb.cos() * scaling.
            inv_freq = 1.0 / (10000 ** (np.arange(0, R, 2, dtype=np.float32) / R))
            inits += [numpy_helper.from_array(inv_freq.astype(np.float32), "inv_freq"),
                      numpy_helper.from_array(np.array(1.0, np.float32), "scaling")]
            inputs.append(helper.make_tensor_value_info("position_ids", TensorProto.INT64, [batch, S]))
            nodes += [helper.make_node("Cast", ["position_ids"], ["pos_f"], to=TensorProto.FLOAT),
                      helper.make_node("Unsqueeze", ["pos_f", "ax_last"], ["pos3"]),
                      helper.make_node("Mul", ["pos3", "inv_freq"], ["freqs"]),
                      helper.make_node("Concat", ["freqs", "freqs"], ["emb"], axis=-1)]
            for f in ("Cos", "Sin"):
                low = f.lower()
                nodes += [helper.make_node(f, ["emb"], [low + "_raw"]),
                          helper.make_node("Mul", [low + "_raw", "scaling"], [low + "_scaled"]),
                          helper.make_node("Unsqueeze", [low + "_scaled", "ax1"], [low])]
        else:  # a constant [1, 1, S, D] table, as a static-cache export folds it
            ang = np.arange(S, dtype=np.float32)[:, None] * (0.3 + np.arange(R // 2, dtype=np.float32))[None, :]
            emb = np.concatenate([ang, ang], axis=-1)[None, None]
            inits += [numpy_helper.from_array(np.cos(emb).astype(np.float32), "cos"),
                      numpy_helper.from_array(np.sin(emb).astype(np.float32), "sin")]
        for full in ("q", "k"):
            x = full + "_r" if partial else full
            if partial:
                nodes += [helper.make_node("Slice", [full, "zero", "rot", "last", "one"], [x]),
                          helper.make_node("Slice", [full, "rot", "end", "last", "one"], [full + "_pass"])]
            nodes += [helper.make_node("Slice", [x, "zero", "half", "last", "one"], [x + "1"]),
                      helper.make_node("Slice", [x, "half", "end", "last", "one"], [x + "2"]),
                      helper.make_node("Neg", [x + "2"], [x + "2n"])]
            halves = [x + "1", x + "2n"] if swapped else [x + "2n", x + "1"]
            nodes.append(helper.make_node("Concat", halves, [x + "_rot"], axis=-1))
            if mirrored:
                nodes += [helper.make_node("Mul", ["cos", x], [x + "_c"]),
                          helper.make_node("Mul", ["sin", x + "_rot"], [x + "_s"]),
                          helper.make_node("Add", [x + "_s", x + "_c"], [x + "_embed"])]
            else:
                nodes += [helper.make_node("Mul", [x, "cos"], [x + "_c"]),
                          helper.make_node("Mul", [x + "_rot", "sin"], [x + "_s"]),
                          helper.make_node("Add", [x + "_c", x + "_s"], [x + "_embed"])]
            if partial:
                nodes.append(helper.make_node("Concat", [x + "_embed", full + "_pass"], [full + "_embed"], axis=-1))
        outputs = [helper.make_tensor_value_info(x + "_embed", TensorProto.FLOAT, None) for x in ("q", "k")]
        graph = helper.make_graph(nodes, name, inputs, outputs, inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 10
        return model

    def feeds(model, rng):
        out = {}
        for i in model.graph.input:
            shape = [d.dim_value if d.dim_value > 0 else 3 for d in i.type.tensor_type.shape.dim]
            if i.type.tensor_type.elem_type == TensorProto.INT64:
                out[i.name] = rng.integers(0, 64, shape).astype(np.int64)
            else:
                out[i.name] = rng.standard_normal(shape).astype(np.float32)
        return out

    # (model, opt flags, expected RotaryEmbedding domain or None for "not fused", tolerance)
    cases = [
        (llama("hf_positions"), [], "", 1e-5),
        (llama("hf_positions_mirrored", mirrored=True), [], "", 1e-5),
        (llama("constant_table"), [], "", 1e-5),
        (llama("constant_table_symbolic_batch", batch="batch"), [], "", 1e-5),
        (llama("partial_rotary", partial=True), [], "", 1e-5),
        (llama("partial_rotary_constant_table_symbolic_batch", cache="table", batch="batch", partial=True), [], "",
         1e-5),
        (llama("hf_positions_opset17_aic", opset=17), ["--target", "aic"], "ai.aic", None),
        (llama("hf_positions_opset17_onnx", opset=17), [], None, 1e-5),
        (llama("halves_swapped", swapped=True), [], None, 1e-5),
    ]
    failures = []
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        for model, flags, domain, tol in cases:
            name = model.graph.name
            src, dst, why = run_opt(binary, model, tmp, name, flags)
            if why:
                failures.append(f"{name}: {why}")
                continue
            opt = onnx.load(dst)
            ropes = [n for n in opt.graph.node if n.op_type == "RotaryEmbedding"]
            if domain is None:
                if ropes:
                    failures.append(f"{name}: fused a near miss")
            elif len(ropes) != 2 or any(n.domain != domain for n in ropes):
                failures.append(f"{name}: expected two RotaryEmbedding in domain '{domain}', got "
                                f"{[(n.op_type, n.domain) for n in opt.graph.node]}")
                continue
            elif "partial" in name and any(
                    [a.i for a in n.attribute if a.name == "rotary_embedding_dim"] != [D // 2] for n in ropes):
                failures.append(f"{name}: expected rotary_embedding_dim {D // 2} on every RotaryEmbedding")
            elif any(n.op_type in ("Neg", "Add") for n in opt.graph.node):
                failures.append(f"{name}: the pattern's Neg/Add are still there: "
                                f"{[n.op_type for n in opt.graph.node]}")
            if tol is None:  # ai.aic: ONNX Runtime cannot run it
                print(f"{name}: {[(n.op_type, n.domain) for n in ropes]}")
                continue
            err, why = ort_max_diff(src, dst, lambda r: feeds(model, r), rng, tol)
            if why:
                failures.append(f"{name}: {why}")
            else:
                print(f"{name}: {'fused' if ropes else 'left as is'}, ONNX Runtime max |diff| {err:.2e}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
