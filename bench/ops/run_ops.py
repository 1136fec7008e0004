#!/usr/bin/env python3
"""Op-level benchmark: every one-op model of bench/ops/op_models.py timed by
aic-onnx's fast CPU executor and by ONNX Runtime side by side, checked against
each other, written to bench/OPS.md.

Per case: the model and its seeded inputs are written to a temporary folder;
`aic-onnx run --device cpu` computes its outputs once and they are compared
with ORT's (|Δ| ≤ atol + rtol·|ORT|, rtol = atol = 1e-3 for f32, 1e-2 for
f16; ArgMax/TopK indices compare the input values they pick, so ties are not
flagged; an 8-bit output of a QDQ case one step from ORT's passes where it
equals onnx.reference's); `aic-onnx bench --plan --iters 1 --warmup 0` gives the compiled
plan (the step kinds, and oneDNN's implementation where the plan line ends in
` impl=NAME`); then, per thread count, rounds alternate `aic-onnx bench
--json` (a fresh process each round, in-process C++ timing, field median_ms)
and ORT (ORT_ENABLE_ALL, intra-op threads = T, inter-op 1, through its Python
binding in this process; a fresh session each round, deleted before the next
aic-onnx run so its worker threads cannot spin against it) on the same inputs
and the same number of iterations; each cell is the median of the per-round
medians. A row over 1.1, or one whose per-round medians spread by more than
25% for either engine (the machine is shared: a neighbour's burst can take a
whole round), is timed again with as many rounds after the first pass, and
its cells are the medians over all its rounds. ORT's per-call Python overhead is measured on an Identity model and
subtracted in one column.

f16 cases run only where ORT's CPU provider has a float16 kernel for the op:
where ORT would insert Casts to float32 around it (its InsertCastTransformer),
the case is skipped and listed with that note.

usage: .venv/bin/python bench/ops/run_ops.py [--aic build/ops/aic-onnx] [--threads 1,2]
           [--rounds N] [--quick] [--filter SUBSTR] [--out bench/OPS.md]
(--quick: 1 round, ~15 ms of timed runs per engine per round instead of ~100)
"""
import argparse
import datetime
import gc
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import op_models  # noqa: E402
import run_bench  # noqa: E402  (its Identity model)
from machine import machine_line  # noqa: E402

import onnxruntime as ort  # noqa: E402


def ort_session(model_path, threads, optimized_path=None):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3
    if optimized_path:
        so.optimized_model_filepath = optimized_path
    return ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])


def ort_time(session, feeds, iters, warmup):
    for _ in range(warmup):
        session.run(None, feeds)
    ts = []
    for _ in range(iters):
        t = time.perf_counter()
        session.run(None, feeds)
        ts.append((time.perf_counter() - t) * 1e3)
    return float(np.median(ts))


def ort_round(model_path, threads, feeds, iters, warmup):
    s = ort_session(model_path, threads)
    ms = ort_time(s, feeds, iters, warmup)
    del s
    gc.collect()
    return ms


def identity_overhead(tmp, threads, iters):
    path = os.path.join(tmp, "identity.onnx")
    run_bench.make_identity(path)
    feeds = {"x": np.zeros((1, 10), np.float32)}
    return {t: ort_round(path, t, feeds, iters, 200) for t in threads}


def first_line(text):
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    return "; ".join(lines)[:160] or "no message"


def aic_bench(aic, model, input_args, threads, iters, warmup, plan=False):
    cmd = [aic, "bench", model, "--json", "--threads", str(threads), "--iters", str(iters),
           "--warmup", str(warmup)] + (["--plan"] if plan else []) + input_args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"aic bench exit {p.returncode}: {first_line(p.stderr or p.stdout)}")
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


def parse_plan(stderr):
    """[(kind, op, impl)] per plan step, and the rewriter's rules line."""
    steps, rules = [], None
    for line in stderr.splitlines():
        if line.startswith("graph:") and "rules:" in line:
            rules = line.split("rules:", 1)[1].strip()
            continue
        if "\t" not in line:
            continue
        kind, label = line.split("\t", 1)
        impl = None
        if " impl=" in label:
            label, impl = label.rsplit(" impl=", 1)
            impl = impl.strip()
        op = label.split(" ", 1)[0] if label else ""
        steps.append((kind.strip(), op, impl))
    return steps, rules


def kernels_text(steps, rules):
    toks = []
    for kind, op, impl in steps:
        t = kind
        if kind != "reorder" and op and op.lower() != kind and op[:1].isupper():
            t += f":{op}"
        if impl:
            t += f"[{impl}]"
        if toks and toks[-1][0] == t:
            toks[-1][1] += 1
        else:
            toks.append([t, 1])
    s = ", ".join(t if n == 1 else f"{t}×{n}" for t, n in toks)
    if rules and rules != "none":
        s += f" (rules: {rules})"
    return s or "—"


def compare(case, model, feeds, want_names, want, out_dir):
    """(ok, max |Δ|, note) of aic-onnx's outputs in out_dir against ORT's."""
    tol = 1e-2 if case.dt == "f16" else 1e-3
    worst, ok, notes = 0.0, True, []
    reference = {}  # onnx.reference's outputs, computed once when a QDQ output needs them
    for i, (name, w) in enumerate(zip(want_names, want)):
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
        path = os.path.join(out_dir, safe + ".npy")
        if not os.path.exists(path):
            return False, float("nan"), f"no output {name}"
        got = np.load(path)
        if got.shape != w.shape:
            return False, float("nan"), f"{name}: shape {got.shape} vs ORT {w.shape}"
        if got.dtype != w.dtype:
            notes.append(f"{name}: dtype {got.dtype} vs ORT {w.dtype}")
            ok = False
        if case.op in ("ArgMax", "TopK") and np.issubdtype(w.dtype, np.integer):
            x = next(iter(feeds.values())).astype(np.float64)
            axis = -1
            if case.op == "ArgMax":
                axis = next(a.i for a in model.graph.node[0].attribute if a.name == "axis")
                gx = np.take_along_axis(x, np.expand_dims(got.astype(np.int64), axis), axis)
                wx = np.take_along_axis(x, np.expand_dims(w.astype(np.int64), axis), axis)
            else:
                gx = np.take_along_axis(x, got.astype(np.int64), axis)
                wx = np.take_along_axis(x, w.astype(np.int64), axis)
            if not np.array_equal(gx, wx):
                ok = False
                notes.append(f"{name}: picks other values")
            elif not np.array_equal(got, w):
                notes.append(f"{name}: ties picked differently")
            continue
        if np.issubdtype(w.dtype, np.floating) or np.issubdtype(got.dtype, np.floating):
            g64, w64 = got.astype(np.float64), w.astype(np.float64)
            both_nan = np.isnan(g64) & np.isnan(w64)
            d = np.where(both_nan, 0.0, np.abs(g64 - w64))
            d = np.where(np.isinf(w64) & (g64 == w64), 0.0, d)
            if d.size:
                worst = max(worst, float(np.nanmax(d)) if not np.all(np.isnan(d)) else float("nan"))
            bad = ~(d <= tol + tol * np.abs(w64))
            if np.any(bad):
                ok = False
                notes.append(f"{name}: {int(bad.sum())}/{bad.size} outside tolerance")
        else:
            if not np.array_equal(got, w):
                differ = int((got != w).sum())
                # A quantized output: ORT's fused QLinear kernels round in
                # their own order and may land one step from the QDQ graph's
                # float32 result, which onnx.reference computes as the spec does.
                # A product (QDQ Conv/MatMul): without VNNI ORT's u8·s8 pair
                # sums saturate in int16, so it lands several steps off; the
                # exact integer sum requantized once may still sit one step
                # from onnx.reference's float32 sums at a tie.
                product = case.op in ("QDQ Conv", "QDQ MatMul")
                ort_steps = int(np.max(np.abs(got.astype(np.int64) - w.astype(np.int64))))
                as_reference, ties = False, 0
                if case.op.startswith("QDQ") and (ort_steps <= 1 or product):
                    reference = reference or reference_outputs(model, feeds)
                    r = reference[name].astype(np.int64)
                    steps = np.abs(got.astype(np.int64) - r)
                    ties = int((steps != 0).sum())
                    as_reference = ties == 0 or (product and int(steps.max()) <= 1 and ties * 1000 <= r.size)
                if as_reference:
                    tie_note = f"; one step from onnx.reference on {ties} (ties of its float32 sums)" if ties else \
                        "; equal to onnx.reference"
                    notes.append(f"{name}: ORT off on {differ}/{w.size} (up to {ort_steps} steps){tie_note}")
                else:
                    ok = False
                    notes.append(f"{name}: {differ}/{w.size} differ")
    return ok, worst, "; ".join(notes)


def reference_outputs(model, feeds):
    """The outputs onnx's reference evaluator computes, by name."""
    from onnx.reference import ReferenceEvaluator

    names = [o.name for o in model.graph.output]
    return dict(zip(names, ReferenceEvaluator(model).run(None, feeds)))


def ort_needs_casts(model_path, tmp):
    """The ops ORT's CPU provider has no float16 kernel for (it inserts Casts around them)."""
    opt = os.path.join(tmp, "ort_opt.onnx")
    s = ort_session(model_path, 1, opt)
    del s
    m = onnx.load(opt, load_external_data=False)
    orig = onnx.load(model_path, load_external_data=False)
    casts = sum(n.op_type == "Cast" for n in m.graph.node) - sum(n.op_type == "Cast" for n in orig.graph.node)
    return casts > 0


def write_case(case, tmp, idx):
    """The case's model and seeded inputs in their own folder: (model, feeds, folder, model path,
    the `--input` arguments of aic-onnx)."""
    model, feeds = case.build()
    d = os.path.join(tmp, f"c{idx}")
    os.makedirs(d, exist_ok=True)
    model_path = os.path.join(d, "model.onnx")
    onnx.save(model, model_path)
    input_args = []
    for name, arr in feeds.items():
        p = os.path.join(d, f"in_{name}.npy")
        np.save(p, arr)
        input_args += ["--input", f"{name}={p}"]
    return model, feeds, d, model_path, input_args


def warmup_for(iters):
    return int(min(50, max(2, iters // 5)))


def time_rounds(args, model_path, input_args, feeds, threads, iters):
    """args.rounds rounds alternating aic-onnx (a fresh process) and ORT (a fresh session): the
    per-round medians of each, the last aic-onnx JSON, and aic-onnx's error if it failed."""
    warmup = warmup_for(iters)
    aic_ms, ort_ms, last, err = [], [], None, None
    for r in range(args.rounds):
        order = ("aic", "ort") if r % 2 == 0 else ("ort", "aic")
        for who in order:
            if who == "aic" and err is None:
                try:
                    last, _ = aic_bench(args.aic, model_path, input_args, threads, iters, warmup)
                    aic_ms.append(last["median_ms"])
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    err = str(e)
            elif who == "ort":
                ort_ms.append(ort_round(model_path, threads, feeds, iters, warmup))
    return aic_ms, ort_ms, last, err


def set_medians(row, overhead):
    """A row's cells from its rounds: medians, ORT less its binding overhead, the ratios."""
    row["ort"] = float(np.median(row["ort_rounds"]))
    row["aic"] = float(np.median(row["aic_rounds"]))
    row["ort_net"] = max(row["ort"] - overhead, 1e-6)
    row["ratio"] = row["aic"] / row["ort"]
    row["ratio_net"] = row["aic"] / row["ort_net"]


def run_case(args, case, threads_list, overhead, tmp, idx):
    res = dict(id=case.id, op=case.op, dt=case.dt, rows={}, skip=None, error=None, ok=None, worst=None,
               note="")
    model, feeds, d, model_path, input_args = write_case(case, tmp, idx)
    try:
        if case.dt == "f16" and ort_needs_casts(model_path, d):
            res["skip"] = "ORT's CPU provider has no float16 kernel (it inserts Casts to float32)"
            return res
        ref = ort_session(model_path, threads_list[0])
        want_names = [o.name for o in ref.get_outputs()]
        want = ref.run(None, feeds)
        t_ort = ort_time(ref, feeds, 3, 1)
        del ref
        gc.collect()
    except Exception as e:  # noqa: BLE001 - reported in the table
        res["error"] = f"ORT: {first_line(str(e))}"
        return res
    # Correctness: one `aic-onnx run` on the same inputs.
    out_dir = os.path.join(d, "out")
    p = subprocess.run([args.aic, "run", model_path, "--device", "cpu", "--threads", str(threads_list[0]),
                        "--out", out_dir] + input_args, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        res["error"] = f"aic run exit {p.returncode}: {first_line(p.stderr or p.stdout)}"
        res["ok"] = False
    else:
        res["ok"], res["worst"], res["note"] = compare(case, model, feeds, want_names, want, out_dir)
    shutil.rmtree(out_dir, ignore_errors=True)
    del want
    # Plans (per thread count) and a cold single run for the iteration count.
    plans, t_aic = {}, None
    for t in threads_list:
        try:
            j, err = aic_bench(args.aic, model_path, input_args, t, 1, 0, plan=True)
            steps, rules = parse_plan(err)
            plans[t] = (kernels_text(steps, rules), j)
            t_aic = j["median_ms"] if t_aic is None else min(t_aic, j["median_ms"])
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            plans[t] = (None, str(e))
    if t_aic is None:
        res["error"] = (res["error"] + "; " if res["error"] else "") + plans[threads_list[0]][1]
        return res
    if t_aic < 200:
        # The plan run is one cold run (page faults, first-touch): time a few warm ones to size the rounds.
        try:
            j, _ = aic_bench(args.aic, model_path, input_args, threads_list[0], 5, 2)
            t_aic = j["median_ms"]
        except (RuntimeError, subprocess.TimeoutExpired):
            pass
    t_est = max(t_ort, t_aic, 1e-3)
    iters = int(min(3000, max(3, round(args.target_ms / t_est))))
    for t in threads_list:
        kern, j = plans[t]
        if kern is None:
            res["rows"][t] = dict(error=j)
            continue
        aic_ms, ort_ms, last, err = time_rounds(args, model_path, input_args, feeds, t, iters)
        row = dict(kernels=kern, iters=iters, ort=float(np.median(ort_ms)), error=err, ort_rounds=ort_ms,
                   aic_rounds=aic_ms, aic_threads=j.get("threads"), steps=j.get("steps"),
                   fallback=j.get("fallback_steps"))
        if err is None:
            set_medians(row, overhead[t])
            row["steps"], row["fallback"] = last["steps"], last["fallback_steps"]
            row["aic_threads"] = last.get("threads")
        res["rows"][t] = row
    shutil.rmtree(d, ignore_errors=True)
    return res


def needs_confirmation(x):
    """Over 1.1, or rounds that disagree: one more set of rounds decides."""
    if not x or x.get("ratio") is None:
        return False
    def spread(v):
        return max(v) / max(min(v), 1e-9) if v else 1.0
    return x["ratio"] > 1.1 or spread(x.get("aic_rounds")) > 1.25 or spread(x.get("ort_rounds")) > 1.25


def confirm(args, cases, results, overhead, tmp, t0):
    """Times the rows needs_confirmation picks again, after the first pass (minutes later: a
    neighbour's burst is over or has moved), and merges the rounds: cells are medians over all."""
    todo = [(i, [t for t, x in r["rows"].items() if needs_confirmation(x)]) for i, r in enumerate(results)]
    todo = [(i, ts) for i, ts in todo if ts]
    print(f"confirming {sum(len(ts) for _, ts in todo)} rows", file=sys.stderr, flush=True)
    for n, (i, ts) in enumerate(todo):
        # Only the timed rounds again, at the first pass's iteration count: its correctness
        # check, plans and sizing stand.
        _, feeds, d, model_path, input_args = write_case(cases[i], tmp, i)
        for t in ts:
            x = results[i]["rows"][t]
            aic_ms, ort_ms, _, err = time_rounds(args, model_path, input_args, feeds, t, x["iters"])
            if err is not None:
                continue
            x["aic_rounds"] = list(x["aic_rounds"]) + aic_ms
            x["ort_rounds"] = list(x["ort_rounds"]) + ort_ms
            set_medians(x, overhead[t])
        shutil.rmtree(d, ignore_errors=True)
        print(f"[confirm {n + 1}/{len(todo)} {time.time() - t0:.0f}s] {cases[i].id}: "
              + " ".join(f"{t}t {results[i]['rows'][t]['ratio']:.2f}" for t in ts), file=sys.stderr, flush=True)


def cell(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def fmt_ms(v):
    return f"{v:.4f}" if v < 1 else f"{v:.3f}" if v < 100 else f"{v:.1f}"


def correctness_text(r):
    if r["ok"] is None:
        return "—"
    if r["ok"]:
        w = r["worst"]
        s = f"ok {w:.1e}" if w is not None and not math.isnan(w) else "ok"
        return s + (f" ({r['note']})" if r["note"] else "")
    if r["error"] and r["error"].startswith("aic run"):
        return "**aic error**"
    w = r["worst"]
    return f"**WRONG** {'' if w is None or math.isnan(w) else f'{w:.1e} '}({r['note']})"


def write_report(args, results, overhead, machine, threads_list, wall_s, cmd):
    lines = [
        "# Op-level benchmark: aic-onnx (`--device cpu`) vs ONNX Runtime, one op per model",
        "",
        f"Generated by `{cmd}` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC} "
        f"in {wall_s / 60:.1f} min. Do not edit by hand.",
        "",
        f"Machine: {machine}; load average {os.getloadavg()[0]:.1f} at the end (the cores are shared: "
        "timings at 2 threads depend on what else runs).",
        "",
        "Method: bench/ops/op_models.py builds one-op models (fixed seeds; shapes from BERT-base, attention, "
        "ResNet-style CNNs; data operands are graph inputs, weights and parameters initializers). For each case "
        "and thread count T, rounds alternate `aic-onnx bench MODEL --json --threads T` (a fresh process per "
        "round, timed in-process in C++) and ONNX Runtime (ORT_ENABLE_ALL, intra-op threads = T, inter-op 1, "
        "a fresh session per round through its Python binding) on the same inputs with the same iteration "
        f"count (~{args.target_ms:g} ms of timed runs per engine per round, 3 to 3000 runs); "
        f"{args.rounds} round(s); each cell is the median of the per-round medians; rows over 1.1 or whose "
        "per-round medians spread by more than 25% for either engine (the machine is shared) are timed again "
        f"with {args.rounds} more rounds after the first pass, their cells the medians over all rounds (`×N "
        "rounds` in the kernels column). ORT's per-call binding "
        "overhead, measured on an Identity model on 1×10, is "
        + ", ".join(f"{overhead[t] * 1000:.1f} µs at {t} thread(s)" for t in sorted(overhead))
        + "; `ORT − binding` subtracts it. Ratio = aic-onnx / ORT (> 1: aic-onnx slower); rows sorted by "
        "it, worst first. Kernels: aic-onnx's compiled plan (`aic-onnx bench --plan`), one entry per step: "
        "step kind (`:Op` where the op is not the kind's name, `[impl]` oneDNN's implementation where the "
        "plan names it, `×n` repeats; `fallback` = the reference kernel); `(ran on 1t)` where aic-onnx ran "
        "on fewer threads than asked. Correctness: `aic-onnx run --device cpu` at "
        f"{threads_list[0]} thread(s) against ORT on the same inputs, |Δ| ≤ tol + tol·|ORT| with tol 1e-3 "
        "(f32) or 1e-2 (f16); ArgMax/TopK indices are compared by the values they select.",
        "",
    ]
    timed = [r for r in results if r["skip"] is None]
    for t in threads_list:
        rows = [(r, r["rows"].get(t)) for r in timed]
        good = sorted([(r, x) for r, x in rows if x and x.get("ratio") is not None],
                      key=lambda rx: -rx[1]["ratio"])
        bad = [(r, x) for r, x in rows if not x or x.get("ratio") is None]
        ratios = [x["ratio"] for _, x in good]
        nets = [x["ratio_net"] for _, x in good]
        gm = math.exp(sum(math.log(v) for v in ratios) / len(ratios)) if ratios else float("nan")
        gmn = math.exp(sum(math.log(v) for v in nets) / len(nets)) if nets else float("nan")
        lines += [f"## {t} thread(s)", "",
                  f"{len(good)} cases timed: {sum(v > 1.1 for v in ratios)} with ratio > 1.1 "
                  f"({sum(v > 1.1 for v in nets)} against ORT − binding), {sum(v > 1.0 for v in ratios)} > 1.0, "
                  f"{sum(v < 0.9 for v in ratios)} < 0.9; geometric mean ratio {gm:.3f} "
                  f"({gmn:.3f} against ORT − binding)"
                  + (f"; {len(bad)} not timed (errors below)" if bad else "")
                  + (f"; aic-onnx ran {sum(1 for _, x in good if (x.get('aic_threads') or t) < t)} of them on "
                     "fewer threads than asked (its plan's `threads`)" if t > 1 else "") + ".", "",
                  "| case | aic-onnx ms | ORT ms | ORT − binding ms | ratio | ratio vs ORT − binding | "
                  "aic-onnx kernels (steps) | correctness |",
                  "|---|---|---|---|---|---|---|---|"]
        for r, x in good + bad:
            if not x or x.get("ratio") is None:
                err = (x or {}).get("error") or r["error"] or "not timed"
                lines.append(f"| {cell(r['id'])} | — | {fmt_ms(x['ort']) if x and 'ort' in x else '—'} | — | — | — | "
                             f"{cell((x or {}).get('kernels') or '—')} | {cell(correctness_text(r))}: "
                             f"{cell(err)} |")
                continue
            kern = x["kernels"]
            if x.get("aic_threads") is not None and x["aic_threads"] < t:
                kern += f" (ran on {x['aic_threads']}t)"
            if len(x.get("aic_rounds") or []) > args.rounds:
                kern += f" ×{len(x['aic_rounds'])} rounds"
            lines.append(f"| {cell(r['id'])} | {fmt_ms(x['aic'])} | {fmt_ms(x['ort'])} | {fmt_ms(x['ort_net'])} | "
                         f"**{x['ratio']:.2f}** | {x['ratio_net']:.2f} | {cell(kern)} | "
                         f"{cell(correctness_text(r))} |")
        lines.append("")
    wrong = [r for r in timed if r["ok"] is False or r["error"]]
    lines += ["## Wrong answers and errors", ""]
    if wrong:
        for r in wrong:
            lines.append(f"- `{r['id']}`: {cell(r['error'] or correctness_text(r))}")
    else:
        lines.append("None.")
    skipped = [r for r in results if r["skip"]]
    lines += ["", "## Skipped", ""]
    if skipped:
        by_op = {}
        for r in skipped:
            by_op.setdefault(r["skip"], []).append(r["op"])
        for why, ops in by_op.items():
            lines.append(f"- f16 variants of {', '.join(sorted(set(ops)))}: {why}; "
                         f"{len(ops)} case(s).")
    else:
        lines.append("None.")
    lines.append("")
    with open(args.out, "w") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aic", default=os.path.join(ROOT, "build", "ops", "aic-onnx"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=None, help="default 3, 1 with --quick")
    ap.add_argument("--quick", action="store_true", help="1 round and ~15 ms of timed runs per engine per round")
    ap.add_argument("--filter", default=None, help="only cases whose id contains SUBSTR")
    ap.add_argument("--target-ms", type=float, default=None, help="timed run length per engine per round")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "OPS.md"))
    ap.add_argument("--json", default=None, help="also write the raw results here")
    args = ap.parse_args()
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    if args.target_ms is None:
        args.target_ms = 15.0 if args.quick else 100.0
    cmd = "python bench/ops/run_ops.py " + " ".join(sys.argv[1:])
    threads_list = [int(t) for t in args.threads.split(",")]
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="aic_ops_")
    # A private copy: the binary under test cannot change under a running benchmark.
    aic = os.path.join(tmp, "aic-onnx")
    shutil.copy2(args.aic, aic)
    args.aic = aic
    machine = machine_line(["onnxruntime", "numpy", "onnx"])
    cases = op_models.select(args.filter)
    print(f"{len(cases)} cases, threads {threads_list}, {args.rounds} round(s)", file=sys.stderr, flush=True)
    overhead = identity_overhead(tmp, threads_list, 300 if args.quick else 2000)
    results = []
    try:
        for i, c in enumerate(cases):
            tc = time.time()
            r = run_case(args, c, threads_list, overhead, tmp, i)
            results.append(r)
            summary = r["skip"] or r["error"] or " ".join(
                f"{t}t {x['ratio']:.2f}" if x.get("ratio") else f"{t}t err" for t, x in r["rows"].items())
            print(f"[{i + 1}/{len(cases)} {time.time() - t0:.0f}s] {c.id}: {summary} ({time.time() - tc:.1f}s)",
                  file=sys.stderr, flush=True)
        if args.rounds > 1:
            confirm(args, cases, results, overhead, tmp, t0)
    finally:
        wall = time.time() - t0
        if args.json:
            with open(args.json, "w") as f:
                json.dump(dict(results=results, overhead=overhead, machine=machine, wall_s=wall), f, indent=1)
        write_report(args, results, overhead, machine, threads_list, wall, cmd)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"wrote {args.out} ({wall:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
