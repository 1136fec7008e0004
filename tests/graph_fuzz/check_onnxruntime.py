#!/usr/bin/env python3
"""ONNX Runtime as the graph fuzzer's last oracle.

`aic_graph_fuzz --ort-dir DIR` writes, per model, DIR/<seed>/model.onnx, its
`opt` outputs for --target onnx (opt_O1.onnx .. opt_O3.onnx), the feeds
(inputs/<name>.npy) and what our reference executor computed
(expected/<k>.npy). This script judges each case:

- the original must pass onnx.checker (full_check) and run in ONNX Runtime
  with outputs equal to our reference executor's, within the fuzzer's
  tolerance (|a - b| <= atol * max(1, max|a|) + rtol * |a|; looser for the
  outputs the model's metadata marks as having gone through float16);
- every opt output must pass onnx.checker (full_check) where the original
  does, and run in ONNX Runtime with the original's outputs.

A model ONNX Runtime does not implement (an fp16 kernel it lacks) is
counted, not a finding. Each case runs in a forked child: ONNX Runtime
aborting on a model (an assertion of its own) ends that case, not the check.
An abort on the original is ONNX Runtime's bug, counted as a note; an abort
on an opt output whose original ran is a finding. Exit status 1 when there is a finding, 77 when
onnx/onnxruntime are missing (ctest's skip), else 0.
"""
import argparse
import json
import os
import re
import sys

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
except ImportError as e:  # pragma: no cover
    print(f"check_onnxruntime: skipped ({e})")
    sys.exit(77)

LOOSE_KEY = "aic.graph_fuzz.loose_outputs"
ort.set_default_logger_severity(4)


def tolerance(name, dtype, loose):
    if name in loose or dtype == np.float16:
        return 1e-2, 1e-2
    return 1e-3, 1e-4


def compare(names, want, got, loose):
    """'' when equal within tolerance, else what differs."""
    if len(want) != len(got):
        return f"{len(got)} outputs instead of {len(want)}"
    for name, a, b in zip(names, want, got):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return f"output '{name}': shape {list(a.shape)} vs {list(b.shape)}"
        if a.dtype != b.dtype:
            return f"output '{name}': dtype {a.dtype} vs {b.dtype}"
        if a.dtype.kind in "fc":
            rtol, atol = tolerance(name, a.dtype, loose)
            x, y = a.astype(np.float64), b.astype(np.float64)
            scale = max(1.0, float(np.max(np.abs(x))) if x.size else 1.0)
            nan = np.isnan(x) | np.isnan(y)
            bad = ~nan & ~(np.abs(x - y) <= atol * scale + rtol * np.abs(x))
            bad |= np.isnan(x) != np.isnan(y)
        else:
            bad = a != b
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            return f"output '{name}' element {i}: {a.ravel()[i]} vs {b.ravel()[i]}"
    return ""


def session(path, optimize=True):
    so = ort.SessionOptions()
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 4
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def lost_outer_cast(model, msg):
    """ONNX Runtime's cast elimination (it runs even with its optimizer off)
    removes a lossless Cast pair (float -> double -> float) without
    rewiring the If/Loop bodies that read the result from the outer graph,
    which then fail with "Missing Input: <value>". True for that case."""
    m = re.search(r"Missing Input: (\S+)", msg)
    if not m:
        return False
    return any(n.op_type == "Cast" and m.group(1) in n.output for n in model.graph.node)


def ceil_mode_pool_disagreement(path, err):
    """onnx's C++ shape inference still counts, under ceil_mode, a last pool
    window that would start in the end padding; the spec (MaxPool's own doc
    in the same wheel: "Sliding windows that would start in the right padded
    region are ignored"), ONNX Runtime and we drop it. True when that is
    what the checker complains about."""
    if "Inferred shape and existing shape differ" not in err:
        return False
    m = re.search(r"op_type:(MaxPool|AveragePool|LpPool), node name: ([^)]*)\)", err)
    if not m:
        return False
    for n in onnx.load(path).graph.node:
        if n.name == m.group(2):
            return any(a.name == "ceil_mode" and a.i == 1 for a in n.attribute)
    return False


def checker_error(path):
    try:
        onnx.checker.check_model(onnx.load(path), full_check=True)
        return ""
    except Exception as e:  # noqa: BLE001 - any checker complaint is the answer
        return str(e).splitlines()[0][:300]


def step(what):
    """Where check_case is (replaced in the child with a report to the parent)."""


def check_case(case):
    """Returns (findings, notes) for one case folder."""
    findings, notes = [], []
    model_path = os.path.join(case, "model.onnx")
    model = onnx.load(model_path)
    loose = set()
    for p in model.metadata_props:
        if p.key == LOOSE_KEY:
            loose = set(p.value.split(","))
    names = [o.name for o in model.graph.output]
    feeds = {i.name: np.load(os.path.join(case, "inputs", i.name + ".npy")) for i in model.graph.input}
    expected = []
    for k in range(len(names)):
        path = os.path.join(case, "expected", f"{k}.npy")
        expected.append(np.load(path) if os.path.exists(path) else None)

    original_valid = checker_error(model_path)
    if original_valid:
        notes.append(f"original rejected by onnx.checker: {original_valid}")
    optimize = True
    step("the original")
    try:
        ort_out = session(model_path).run(None, feeds)
    except Exception as e:  # noqa: BLE001
        full = str(e)
        msg = full.splitlines()[0][:300]
        try:
            # ONNX Runtime's own graph optimizer has broken some models (its
            # GELU and attention fusions on unusual spellings): its kernels
            # alone are still an oracle.
            ort_out = session(model_path, optimize=False).run(None, feeds)
            optimize = False
            notes.append("onnxruntime's graph optimizer fails on the original (its kernels alone run it): " + msg)
        except Exception:  # noqa: BLE001
            if lost_outer_cast(model, full):
                notes.append("onnxruntime loses an outer-scope Cast output (its bug): " + msg)
                return findings, notes
            notes.append(("not implemented in onnxruntime: " if "NOT_IMPLEMENTED" in msg or "Could not find an implementation" in msg
                          else "onnxruntime refuses the original: ") + msg)
            return findings, notes
    if all(e is not None for e in expected):
        diff = compare(names, ort_out, expected, loose)
        if diff:
            # A third vote: onnx's own reference implementation. Where it sides
            # with ours, ONNX Runtime reads the spec differently (Resize's
            # coordinates when the output size is rounded): a note, not a bug of ours.
            try:
                from onnx.reference import ReferenceEvaluator
                onnx_ref = ReferenceEvaluator(model).run(None, feeds)
                ours_agree = not compare(names, onnx_ref, expected, loose)
            except Exception:  # noqa: BLE001 - onnx.reference lacks some ops
                ours_agree = False
            # A fourth: ONNX Runtime's kernels without its graph optimizer. Its
            # QDQ fusions run int8 kernels whose u8·s8 pair products saturate
            # in int16 on x86 CPUs without VNNI (DequantizeLinear -> MatMul
            # with a constant weight: 0.065 off on a Zen 3); where its plain
            # kernels agree with ours, the difference is that rewrite's.
            unoptimized_agree = False
            if not ours_agree and optimize:
                try:
                    plain = session(model_path, optimize=False).run(None, feeds)
                    unoptimized_agree = not compare(names, plain, expected, loose)
                except Exception:  # noqa: BLE001 - the optimized session ran; this is only a vote
                    unoptimized_agree = False
            if ours_agree:
                notes.append(f"onnxruntime differs from onnx.reference, which agrees with ours: {diff}")
            elif unoptimized_agree:
                notes.append(f"onnxruntime's graph optimizer changes the original's result (its kernels alone "
                             f"agree with ours): {diff}")
            else:
                findings.append(f"reference executor vs onnxruntime on the original: {diff}")
    for level in (1, 2, 3):
        path = os.path.join(case, f"opt_O{level}.onnx")
        if not os.path.exists(path):
            continue
        if not original_valid:
            err = checker_error(path)
            if err and ceil_mode_pool_disagreement(path, err):
                notes.append(f"onnx shape inference keeps a ceil_mode window the spec drops, opt -O{level}: {err}")
            elif err:
                findings.append(f"opt -O{level} output rejected by onnx.checker: {err}")
        step(f"opt -O{level}")
        try:
            got = session(path, optimize).run(None, feeds)
        except Exception as e:  # noqa: BLE001
            msg = str(e).splitlines()[0][:300]
            got = None
            if optimize:
                try:
                    got = session(path, optimize=False).run(None, feeds)
                    notes.append(f"onnxruntime's graph optimizer fails on an opt output (its kernels alone run it), "
                                 f"opt -O{level}: {msg}")
                except Exception:  # noqa: BLE001
                    got = None
            if got is None:
                if lost_outer_cast(onnx.load(path), str(e)):
                    notes.append(f"onnxruntime loses an outer-scope Cast output (its bug), opt -O{level}: {msg}")
                else:
                    findings.append(f"opt -O{level} output refused by onnxruntime: {msg}")
                continue
        diff = compare(names, ort_out, got, loose)
        if diff:
            findings.append(f"opt -O{level} output vs the original in onnxruntime: {diff}")
    return findings, notes


def check_case_in_child(case):
    """check_case in a forked child; (findings, notes), also when the child dies."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report each step, then the result, as JSON lines
        os.close(r)
        out = os.fdopen(w, "w")

        def report(kind, value):
            out.write(json.dumps([kind, value]) + "\n")
            out.flush()

        global step
        step = lambda what: report("step", what)  # noqa: E731
        try:
            report("result", check_case(case))
        except Exception as e:  # noqa: BLE001 - a case the harness cannot read is a finding too
            report("result", [[f"harness: {e}"], []])
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as lines:
        messages = [json.loads(line) for line in lines if line.strip()]
    _, status = os.waitpid(pid, 0)
    for kind, value in messages:
        if kind == "result":
            return value[0], value[1]
    last = next((value for kind, value in reversed(messages) if kind == "step"), "loading the case")
    how = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}"
    if last == "the original":
        return [], [f"onnxruntime aborts on the original (its bug): {how}"]
    if last.startswith("opt -O"):
        return [f"onnxruntime aborts on the {last} output, which the original did not: {how}"], []
    return [f"harness: the check died {last}: {how}"], []


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", help="what aic_graph_fuzz --ort-dir wrote")
    ap.add_argument("--max-notes", type=int, default=5)
    args = ap.parse_args()
    cases = sorted(os.path.join(args.dir, d) for d in os.listdir(args.dir)
                   if os.path.exists(os.path.join(args.dir, d, "model.onnx")))
    found, notes_by_kind, ran = [], {}, 0
    for case in cases:
        findings, notes = check_case_in_child(case)
        ran += 1
        for f in findings:
            found.append(f"{case}: {f}")
        for n in notes:
            notes_by_kind.setdefault(n.split(":")[0], []).append(f"{case}: {n}")
    for kind, items in sorted(notes_by_kind.items()):
        print(f"{len(items)} cases: {kind}")
        for n in items[: args.max_notes]:
            print(f"  {n}")
    for f in found:
        print(f"finding: {f}")
    print(f"onnxruntime check: {ran} models, {len(found)} findings")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
