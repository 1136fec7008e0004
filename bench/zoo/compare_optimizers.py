#!/usr/bin/env python3
"""aic-onnx opt side by side with onnxsim, onnxslim and ONNX Runtime's basic level on
the public model corpus (bench/zoo/make_zoo.py's output, with make_lowp.py's fp16 and
int8 variants) and the PaddleOCR det/rec/cls models. Writes bench/OPT_ZOO.md
(generated: never edit it by hand; rerun this script).

For each model and optimizer:
  - nodes in and out, in the main graph and including subgraph bodies (the graphs in
    If/Loop/Scan attributes, recursively);
  - wall time of the whole process (load + optimize + save, a fresh process each run),
    median over --runs runs, the optimizers taking turns within each round, the order
    reversed every other round. aic-onnx opt runs with its default verification
    (`aic-onnx opt IN OUT --stats FILE`, no --no-verify), so its time includes it; its
    exit 1 (verification mismatch, output written) is measured and flagged. A command
    that fails or runs past --timeout is recorded with its first stderr line (for a
    Python traceback: its last line) and not run again for that model;
  - outputs equal to the original's in ONNX Runtime (graph optimizations off, so that
    each file runs as written) on 2 random input sets drawn from the sidecar
    (bench/zoo/run_zoo.py's make_feeds, seeded by the model's name):
    allclose(rtol=1e-4, atol=1e-5) for fp32, the sidecar's tolerance for the
    low-precision variants (run_zoo.py's output_tolerance: fp16 1e-2 + 1e-2·|ref|,
    int8 QDQ one quantization step on DequantizeLinear outputs, else 1e-2 + 1e-2·|ref|);
    integer outputs exact; max abs diff shown; a bf16 variant (ORT has no bfloat16 Conv/Add
    on the CPU) runs, original and optimized alike, as its float32 twin (float32_twin);
  - value_info entries and the share of nodes that have a name; for aic-onnx opt's output
    also the share whose name is one of the original's node names, and
    onnx.checker.check_model(path, full_check=True) (on the original too, for reference).

Targets (one row per model): (a) aic-onnx opt leaves no more nodes (subgraphs included)
than the best of the peers that succeeded; (b) its outputs match; (c) its whole time is at
most onnxslim's, and at most half of it for the three largest models of the run by file
size; (d) >= 90% of its nodes named, value_info written, full_check passes.

Scikit-learn models (sk_*) are left out unless --with-sklearn.

Run it with the bench venv (onnx, onnxruntime, onnxsim, onnxslim, numpy:
bench/requirements.txt) after the corpus is made:
  build/bench-venv/bin/python bench/zoo/compare_optimizers.py --aic build/aic-onnx
  build/bench-venv/bin/python bench/zoo/compare_optimizers.py --only 'mobilenet*,ppocr_cls' --runs 1
"""
import argparse
import fnmatch
import importlib.util
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from machine import machine_line  # noqa: E402
from run_zoo import compare, make_feeds, output_tolerance  # noqa: E402  (inputs and low-precision tolerance)

# bench/compare_optimizers.py (the PP-OCR comparison) by path: this file has its name.
_spec = importlib.util.spec_from_file_location("bench_compare_optimizers", os.path.join(BENCH, "compare_optimizers.py"))
bench_compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_compare)
tools, node_count = bench_compare.tools, bench_compare.node_count  # the peers' command lines; nodes, domains

AIC = "aic-onnx opt"
PEERS = ["onnxsim", "onnxslim", "ORT basic"]
FP32_RTOL, FP32_ATOL = 1e-4, 1e-5
FEED_SETS = 2
NAMED_TARGET = 0.9
LARGEST = 3  # the largest models (file size) must also be at most half of onnxslim's time
PPOCR = [("ppocr_det", (1, 3, 640, 640)), ("ppocr_rec", (1, 3, 48, 320)), ("ppocr_cls", (1, 3, 48, 192))]


def commands(aic):
    """{optimizer: (src, dst) -> argv}: compare_optimizers.py's, with aic-onnx opt verifying
    (its default) and writing its statistics next to the output."""
    cmds = tools(aic)
    cmds[AIC] = lambda s, d: [aic, "opt", s, d, "--stats", d + ".stats.json"]
    return {t: cmds[t] for t in [AIC] + PEERS}


def first_line(text):
    """The first non-empty line; for a Python traceback the exception line at its end."""
    lines = [l.strip() for l in (text or "").strip().splitlines() if l.strip()]
    if not lines:
        return "no message"
    if lines[0].startswith("Traceback"):
        return lines[-1][:300]
    return lines[0][:300]


def timed_run(cmd, timeout):
    """compare_optimizers.timed() with a timeout that never raises:
    (seconds, returncode or None on timeout, stderr)."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - t0, None, ""
    except OSError as e:
        return time.perf_counter() - t0, -1, str(e)
    return time.perf_counter() - t0, proc.returncode, proc.stderr or proc.stdout


def read_stats(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def verify_text(stats):
    """aic-onnx opt's own verification, from its --stats JSON."""
    if stats is None:
        return "no stats"
    v = stats.get("verify")
    if v is None:
        return "off"
    if "skipped" in v:
        return f"skipped ({v['skipped']})"
    worst = max((o.get("max_abs", 0) for o in v.get("outputs", [])), default=0)
    return (f"{'ok' if v.get('ok') else 'MISMATCH'} ({v.get('runs')} runs on {v.get('device')}"
            f"{', at ' + v['shapes'] if v.get('shapes') else ''}; max abs {worst:.2g})")


def graphs(g):
    """g and every graph in its nodes' attributes, recursively."""
    import onnx
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from graphs(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sub in a.graphs:
                    yield from graphs(sub)


def graph_info(path):
    """Main-graph nodes and non-standard domains (compare_optimizers.node_count), nodes
    including subgraph bodies, node names (all graphs) and value_info entries (all graphs)."""
    import onnx
    main, domains = node_count(path)
    m = onnx.load(path, load_external_data=False)
    names, value_info, total = [], 0, 0
    for g in graphs(m.graph):
        total += len(g.node)
        names += [n.name for n in g.node]
        value_info += len(g.value_info)
    return dict(main=main, total=total, domains=domains, names=names, value_info=value_info)


def full_check(path):
    import onnx
    try:
        onnx.checker.check_model(path, full_check=True)
        return None
    except Exception as e:  # noqa: BLE001 - any failure is the finding
        return first_line(f"{type(e).__name__}: {e}")


def float32_twin(path):
    """The model at PATH with every bfloat16 tensor, type and Cast made float32 (values
    unchanged), serialized: what ORT runs of a bf16 model, whose CPU provider has no bfloat16
    Conv/Add. Original and optimized model are compared as twins, on the same arithmetic."""
    import ml_dtypes
    import onnx
    from onnx import numpy_helper
    BF16, FLOAT = onnx.TensorProto.BFLOAT16, onnx.TensorProto.FLOAT

    def widened(t):
        raw = np.frombuffer(t.raw_data, dtype=np.uint16) if t.raw_data else np.array(t.int32_data, np.uint16)
        a = raw.view(ml_dtypes.bfloat16).astype(np.float32).reshape(tuple(t.dims))
        return numpy_helper.from_array(a, t.name)

    m = onnx.load(path)
    for g in graphs(m.graph):
        for i, t in enumerate(g.initializer):
            if t.data_type == BF16:
                g.initializer[i].CopyFrom(widened(t))
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == BF16:
                    a.t.CopyFrom(widened(a.t))
                if a.type == onnx.AttributeProto.INT and a.name in ("to", "dtype") and a.i == BF16:
                    a.i = FLOAT
        for v in list(g.value_info) + list(g.input) + list(g.output):
            if v.type.tensor_type.elem_type == BF16:
                v.type.tensor_type.elem_type = FLOAT
    return m.SerializeToString()


def session(path, meta=None):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    model = float32_twin(path) if meta and meta.get("variant") == "bf16" else path
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def tolerance(meta, name):
    """(atol, rtol) for one output: the sidecar's for a low-precision variant, else fp32's."""
    if meta.get("tolerance"):
        atol, rtol, _ = output_tolerance(meta["tolerance"], name)
        return atol, rtol
    return FP32_ATOL, FP32_RTOL


def reference(src, meta, name):
    """(output names, feed sets, original's outputs per set) or raises."""
    sess = session(src, meta)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    feed_sets = [make_feeds(meta["inputs"], rng) for _ in range(FEED_SETS)]
    names = [o.name for o in sess.get_outputs()]
    return names, feed_sets, [sess.run(None, f) for f in feed_sets]


def check_outputs(path, ref, meta):
    """(ok, max abs diff, note) of an optimized model against the original's outputs."""
    names, feed_sets, wants = ref
    try:
        sess = session(path, meta)
    except Exception as e:  # noqa: BLE001
        return False, None, "ORT cannot load it: " + first_line(str(e))
    inputs = {i.name for i in sess.get_inputs()}
    have = {o.name for o in sess.get_outputs()}
    missing = [n for n in names if n not in have]
    if missing:
        return False, None, f"outputs missing: {', '.join(missing)}"
    if inputs - set(feed_sets[0]):
        return False, None, f"new inputs: {', '.join(sorted(inputs - set(feed_sets[0])))}"
    ok, worst, notes = True, 0.0, []
    for feeds, want in zip(feed_sets, wants):
        try:
            got = sess.run(names, {k: v for k, v in feeds.items() if k in inputs})
        except Exception as e:  # noqa: BLE001
            return False, None, "ORT cannot run it: " + first_line(str(e))
        for n, g, w in zip(names, got, want):
            atol, rtol = tolerance(meta, n)
            d, o, note = compare(np.asarray(g), np.asarray(w), atol, rtol)
            worst = d if np.isnan(d) or np.isnan(worst) else max(worst, d)
            ok = ok and o
            if note and f"{n}: {note}" not in notes:
                notes.append(f"{n}: {note}")
    return ok, worst, "; ".join(notes)


def list_models(args):
    """[(name, path, meta)] in the run, and notes on what was left out."""
    only = [p for p in args.only.split(",") if p]
    picked = (lambda n: any(fnmatch.fnmatch(n, p) for p in only)) if only else (lambda n: True)
    models, notes = [], []
    if not os.path.exists(os.path.join(args.zoo, "zoo_index.json")):
        notes.append(f"{args.zoo}/zoo_index.json is missing: the corpus may be incomplete")
    sidecars = sorted(f[:-5] for f in os.listdir(args.zoo) if f.endswith(".json")
                      and f not in ("zoo_index.json", "lowp_index.json")) if os.path.isdir(args.zoo) else []
    if not os.path.isdir(args.zoo):
        notes.append(f"{args.zoo} not found: no corpus models")
    sk = []
    for name in sidecars:
        if not picked(name):
            continue
        with open(os.path.join(args.zoo, name + ".json")) as f:
            meta = json.load(f)
        path = os.path.join(args.zoo, meta.get("file", name + ".onnx"))
        if not os.path.exists(path):
            continue
        if name.startswith("sk_") and not args.with_sklearn:
            sk.append(name)
            continue
        models.append((name, path, meta))
    if sk:
        notes.append(f"scikit-learn models left out (--with-sklearn takes them): {', '.join(sk)}")
    for name, shape in PPOCR:
        if not picked(name):
            continue
        path = os.path.join(args.models, name + ".onnx")
        if not os.path.exists(path):
            notes.append(f"{name}: {path} not found, skipped")
            continue
        meta = dict(inputs=[dict(name="x", dtype="float32", shape=list(shape), fill="normal")],
                    exporter="PaddleOCR (paddle2onnx)")
        models.append((name, path, meta))
    return models, notes


def measure(name, src, meta, cmds, args, tmp):
    """Everything about one model: {optimizer: result} plus the model's own facts."""
    outs = {t: os.path.join(tmp, f"{t.split()[0]}__{name}.onnx") for t in cmds}
    res = {t: dict(times=[], error=None, verify=None, stats=None) for t in cmds}
    for r in range(args.runs):
        order = list(cmds) if r % 2 == 0 else list(reversed(list(cmds)))
        for t in order:
            rec = res[t]
            if rec["error"]:
                continue
            for stale in (outs[t], outs[t] + ".stats.json"):
                if os.path.exists(stale):
                    os.remove(stale)
            seconds, rc, err = timed_run(cmds[t](src, outs[t]), args.timeout)
            stats = read_stats(outs[t] + ".stats.json") if t == AIC else None
            mismatch = (t == AIC and rc == 1 and stats and (stats.get("verify") or {}).get("ok") is False
                        and os.path.exists(outs[t]))
            if rc is None:
                rec["error"] = f"timed out after {args.timeout:g} s"
            elif rc != 0 and not mismatch:
                rec["error"] = f"exit {rc}: {first_line(err)}"
            elif not os.path.exists(outs[t]):
                rec["error"] = "exit 0 but no output file"
            else:
                rec["times"].append(seconds)
                rec["stats"] = stats
    orig = graph_info(src)
    try:
        ref = reference(src, meta, name)
        ref_error = None
    except Exception as e:  # noqa: BLE001
        ref, ref_error = None, "ORT cannot run the original: " + first_line(str(e))
    orig_names = {n for n in orig["names"] if n}
    for t, rec in res.items():
        if rec["error"] and not rec["times"]:
            continue
        try:
            info = graph_info(outs[t])
        except Exception as e:  # noqa: BLE001
            rec["error"] = "cannot read its output: " + first_line(str(e))
            continue
        n = max(len(info["names"]), 1)
        rec.update(info, named=sum(1 for x in info["names"] if x) / n,
                   kept=sum(1 for x in info["names"] if x and x in orig_names) / n,
                   median=statistics.median(rec["times"]), lo=min(rec["times"]), hi=max(rec["times"]))
        if ref is None:
            rec.update(ok=None, worst=None, note=ref_error)
        else:
            rec["ok"], rec["worst"], rec["note"] = check_outputs(outs[t], ref, meta)
        if t == AIC:
            rec["verify"] = verify_text(rec["stats"])
            rec["check"] = full_check(outs[t])
    return dict(name=name, src=src, meta=meta, size=os.path.getsize(src), orig=orig, res=res,
                orig_check=full_check(src), ref_error=ref_error)


def fmt_s(x):
    return "—" if x is None else f"{x:.3f}"


def fmt_pct(x):
    return "—" if x is None else f"{100 * x:.0f}%"


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def targets(m, largest):
    """[(met: True/False/None (not judged), text)] for (a)..(d)."""
    res, aic = m["res"], m["res"][AIC]
    done = "median" in aic
    out = []
    # (a) nodes
    peers = {t: res[t]["total"] for t in PEERS if "total" in res[t]}
    if not done:
        out.append((False, f"aic-onnx opt failed: {aic['error']}"))
    elif not peers:
        out.append((None, f"{aic['total']}; no peer succeeded"))
    else:
        best = min(peers, key=lambda t: (peers[t], PEERS.index(t)))
        met = aic["total"] <= peers[best]
        out.append((met, f"{aic['total']} {'≤' if met else '>'} {peers[best]} ({best})"))
    # (b) outputs
    if not done:
        out.append((False, "no output"))
    elif aic["ok"] is None:
        out.append((None, aic["note"]))
    else:
        out.append((aic["ok"], f"max abs {aic['worst']:.2g}" if aic["worst"] is not None else aic["note"]))
    # (c) whole time against onnxslim
    slim = res["onnxslim"]
    if not done:
        out.append((False, "no time"))
    elif "median" not in slim:
        out.append((None, f"{aic['median']:.3f} s; onnxslim failed"))
    else:
        ratio = aic["median"] / slim["median"]
        bound = 0.5 if m["name"] in largest else 1.0
        met = ratio <= bound
        out.append((met, f"{aic['median']:.3f} s vs {slim['median']:.3f} s = {ratio:.2f}x"
                    + (" (largest: ≤ 0.5x)" if bound < 1 else "")))
    # (d) names, shapes, full_check
    if not done:
        out.append((False, "no output"))
    else:
        met = aic["named"] >= NAMED_TARGET and aic["value_info"] > 0 and aic["check"] is None
        out.append((met, f"named {fmt_pct(aic['named'])}, kept {fmt_pct(aic['kept'])}, value_info "
                    f"{aic['value_info']}, full_check {'ok' if aic['check'] is None else 'FAILS'}"))
    return out


def write_md(args, command, machine, notes, models):
    largest = {m["name"] for m in sorted(models, key=lambda m: -m["size"])[:LARGEST]}
    rows = [(m, targets(m, largest)) for m in models]
    lines = ["# aic-onnx opt vs onnxsim, onnxslim and ONNX Runtime's basic level on the model corpus", "",
             "Generated by `bench/zoo/compare_optimizers.py`; do not edit by hand.", "",
             f"- machine: {machine}; load average {os.getloadavg()[0]:.1f} at the end",
             f"- command: `{command}`",
             f"- models: every NAME.json + NAME.onnx in `{os.path.relpath(args.zoo, ROOT)}` "
             "(bench/zoo/make_zoo.py, make_lowp.py) and PaddleOCR det/rec/cls from "
             f"`{os.path.relpath(os.path.abspath(args.models), ROOT)}`"
             + (f", selected by `--only {args.only}`" if args.only else "") + f": {len(models)} models",
             f"- whole-process times: median of {args.runs} run(s), the four optimizers taking turns (order "
             "reversed every other round); each a fresh process that loads, optimizes and saves. aic-onnx opt "
             "runs with its default verification (no `--no-verify`), so its time includes it; ONNX Runtime: "
             "a Python process creating a basic-level session with `optimized_model_filepath`. "
             f"Timeout {args.timeout:g} s per command; a failed command is not run again.",
             f"- outputs: ONNX Runtime with graph optimizations off, original vs optimized, on {FEED_SETS} "
             "random input sets from the sidecar (seeded by the model's name); fp32 "
             f"`allclose(rtol={FP32_RTOL:g}, atol={FP32_ATOL:g})`, low-precision variants the sidecar's "
             "tolerance (fp16: 1e-2 + 1e-2·|ref|; int8 QDQ: one quantization step on outputs of a "
             "DequantizeLinear, else 1e-2 + 1e-2·|ref|); integer outputs exact",
             "- nodes: the main graph; 'with subgraphs' adds the bodies of If/Loop/Scan (recursively), and is "
             "what target (a) compares; names and value_info count over all graphs",
             ""]
    lines += [f"- note: {n}" for n in notes] + ([""] if notes else [])
    lines += ["## Targets", "",
              "(a) aic-onnx opt's nodes (with subgraphs) ≤ the fewest of onnxsim, onnxslim, ORT basic (those "
              "that succeeded); (b) its outputs match the original's; (c) its whole time ≤ onnxslim's, and ≤ "
              f"0.5 × onnxslim's for the {LARGEST} largest models of this run by file size "
              f"({', '.join(sorted(largest))}); (d) ≥ {NAMED_TARGET:.0%} of its nodes named, value_info written "
              "and `onnx.checker.check_model(full_check=True)` passes. — : not judged.", "",
              "| model | MB | (a) nodes | (b) outputs | (c) whole time | (d) names, shapes, check |",
              "|---|---|---|---|---|---|"]
    for m, ts in rows:
        cells = [("—" if met is None else "yes" if met else "**NO**") + f": {cell(text)}" for met, text in ts]
        lines.append(f"| {m['name']} | {m['size'] / 1e6:.1f} | " + " | ".join(cells) + " |")
    met = [sum(1 for _, ts in rows if ts[i][0]) for i in range(4)]
    judged = [sum(1 for _, ts in rows if ts[i][0] is not None) for i in range(4)]
    every = sum(1 for _, ts in rows if all(t[0] for t in ts))
    lines += ["", "Met: " + ", ".join(f"({k}) {met[i]} of {len(rows)}"
                                      + (f" ({len(rows) - judged[i]} not judged)" if judged[i] < len(rows) else "")
                                      for i, k in enumerate("abcd")) + f"; all four: {every} of {len(rows)}.", ""]
    lines += ["## Nodes, outputs and whole-process time", "",
              "| model | optimizer | nodes in | nodes out | with subgraphs | outputs match | max abs diff | "
              "median s | min–max s | vs aic | value_info | named | names kept | note |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in models:
        o, aic = m["orig"], m["res"][AIC]
        nin = f"{o['main']}" + (f" ({o['total']})" if o["total"] != o["main"] else "")
        for t, r in m["res"].items():
            if "median" not in r:
                lines.append(f"| {m['name']} | {t} | {nin} | failed | | | | | | | | | | {cell(r['error'])} |")
                continue
            match = "—" if r["ok"] is None else "yes" if r["ok"] else "**NO**"
            vs = f"{r['median'] / aic['median']:.1f}x" if "median" in aic else "—"
            note = "; ".join(x for x in [f"a later run failed: {r['error']}" if r["error"] else "",
                                         r.get("note") or "",
                                         f"verify {r['verify']}" if t == AIC else "",
                                         f"domains {', '.join(r['domains'])}" if r["domains"] else ""] if x)
            lines.append(f"| {m['name']} | {t} | {nin} | {r['main']} | {r['total']} | {match} | "
                         f"{'—' if r['worst'] is None else format(r['worst'], '.2g')} | {r['median']:.3f} | "
                         f"{r['lo']:.3f}–{r['hi']:.3f} | {vs} | {r['value_info']} | {fmt_pct(r['named'])} | "
                         f"{fmt_pct(r['kept'])} | {cell(note)} |")
    lines += ["", "## aic-onnx opt's output", "",
              "verify: aic-onnx opt's own check (`--stats` JSON `verify`); full_check: "
              "`onnx.checker.check_model(path, full_check=True)` on its output and on the original; names kept: "
              "share of its nodes whose name is one of the original's node names; optimize s: the time it "
              "reports for the rewrite alone.", "",
              "| model | verify | full_check | full_check (original) | named | names kept | value_info | optimize s |",
              "|---|---|---|---|---|---|---|---|"]
    for m in models:
        r = m["res"][AIC]
        orig_check = "ok" if m["orig_check"] is None else cell(m["orig_check"])
        if "median" not in r:
            lines.append(f"| {m['name']} | failed: {cell(r['error'])} | | {orig_check} | | | | |")
            continue
        seconds = (r["stats"] or {}).get("seconds")
        lines.append(f"| {m['name']} | {cell(r['verify'])} | {'ok' if r['check'] is None else cell(r['check'])} | "
                     f"{orig_check} | {fmt_pct(r['named'])} | {fmt_pct(r['kept'])} | {r['value_info']} | "
                     f"{fmt_s(seconds)} |")
    fails = [f"{m['name']}, {t}: {r['error']}" for m in models for t, r in m["res"].items() if r["error"]]
    fails += [f"{m['name']}: {m['ref_error']}" for m in models if m["ref_error"]]
    lines += ["", "## Failures", ""] + ([f"- {cell(f)}" for f in fails] or ["none"]) + [""]
    with open(args.out, "w") as f:
        f.write("\n".join(lines))


def progress(m):
    parts = []
    for t, r in m["res"].items():
        if "median" in r:
            ok = "—" if r["ok"] is None else "ok" if r["ok"] else "MISMATCH"
            parts.append(f"{t} {r['total']} nodes {r['median']:.2f} s {ok}")
        else:
            parts.append(f"{t} FAILED ({r['error'][:80]})")
    return f"{m['name']}: {m['orig']['total']} nodes in; " + "; ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aic", default=os.path.join(ROOT, "build", "aic-onnx"))
    ap.add_argument("--zoo", default=os.path.join(ROOT, "build", "zoo"))
    ap.add_argument("--models", default=os.path.join(ROOT, "..", "shared", "models"),
                    help="folder with ppocr_{det,rec,cls}.onnx")
    ap.add_argument("--only", default="", help="comma-separated fnmatch patterns of model names")
    ap.add_argument("--runs", type=int, default=3, help="whole-process runs per optimizer and model")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per command")
    ap.add_argument("--out", default=os.path.join(BENCH, "OPT_ZOO.md"))
    ap.add_argument("--with-sklearn", action="store_true", help="also the sk_* models")
    args = ap.parse_args()
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as e:
        sys.exit(f"{e}: run with a Python that has bench/requirements.txt (see --help)")
    aic = os.path.abspath(args.aic)
    if not os.access(aic, os.X_OK):
        sys.exit(f"{aic}: not an executable (--aic)")
    exe = sys.executable
    if os.path.abspath(exe).startswith(ROOT + os.sep):
        exe = os.path.relpath(exe, ROOT)
    command = shlex.join([exe, os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)] + sys.argv[1:])
    machine = machine_line(["onnxruntime", "onnx", "onnxsim", "onnxslim"])
    models, notes = list_models(args)
    for n in notes:
        print("note:", n, flush=True)
    if not models:
        sys.exit("no models selected")
    cmds = commands(aic)
    done = []
    with tempfile.TemporaryDirectory(prefix="aic_optzoo_") as tmp:
        for name, path, meta in models:
            m = measure(name, path, meta, cmds, args, tmp)
            done.append(m)
            print(progress(m), flush=True)
            for f in os.listdir(tmp):  # the outputs of big models add up
                os.remove(os.path.join(tmp, f))
    write_md(args, command, machine, notes, done)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
