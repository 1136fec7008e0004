#!/usr/bin/env python3
"""`opt --apply` over the public model corpus (bench/zoo, random weights): a generality check,
not a quality one (random weights have flat spectra and no dead units). For each model:
`aic-onnx opt MODEL OUT --apply merge-linear --apply prune-dead --apply low-rank --calib random:8
--max-error BUDGET --no-latency --stats S.json`; exit status, seconds, steps kept / tried, params
saved, opt's error on the samples decided on and held out; then ONNX Runtime loads OUT and runs it
on the sidecar's inputs with the original's output shapes. Prints one Markdown table.

usage: build/zoo-venv/bin/python bench/analysis/apply_zoo.py --aic build/aic-onnx --zoo build/zoo
           [--budget 0.01] [--only NAME,..] [--timeout S]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "zoo"))
import run_zoo  # noqa: E402  (make_feeds: the sidecar's inputs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aic", required=True)
    ap.add_argument("--zoo", required=True)
    ap.add_argument("--budget", type=float, default=0.01)
    ap.add_argument("--only", default="")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per model")
    args = ap.parse_args()
    import onnxruntime as ort
    only = set(filter(None, args.only.split(",")))
    rows, problems = [], 0
    names = sorted(f[:-5] for f in os.listdir(args.zoo) if f.endswith(".json")
                   and os.path.exists(os.path.join(args.zoo, f[:-5] + ".onnx")))
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            if only and name not in only:
                continue
            model = os.path.join(args.zoo, name + ".onnx")
            with open(os.path.join(args.zoo, name + ".json")) as f:
                spec = json.load(f)
            out, stats = os.path.join(tmp, name + ".onnx"), os.path.join(tmp, name + ".json")
            t0 = time.time()
            try:
                p = subprocess.run([args.aic, "opt", model, out, "--apply", "merge-linear", "--apply", "prune-dead",
                                    "--apply", "low-rank", "--calib", "random:8", "--max-error", f"{args.budget:g}",
                                    "--no-latency", "--stats", stats], capture_output=True, text=True,
                                   timeout=args.timeout)
            except subprocess.TimeoutExpired:
                rows.append(f"| {name} | timed out after {args.timeout} s | | | | |")
                print(rows[-1], flush=True)
                continue
            seconds = time.time() - t0
            if p.returncode != 0:
                problems += p.returncode not in (0, 2)
                rows.append(f"| {name} | exit {p.returncode}: {(p.stderr or p.stdout).strip().splitlines()[-1][:120]} "
                            "| | | | |")
                continue
            with open(stats) as f:
                a = json.load(f).get("approximations", {})
            steps = a.get("steps", [])
            kept = [s for s in steps if s.get("kept")]
            saved = sum(s["params_before"] - s["params_after"] for s in kept)
            check = "ok"
            if kept:
                try:
                    so = ort.SessionOptions()
                    so.log_severity_level = 3
                    feeds = run_zoo.make_feeds(spec["inputs"], np.random.default_rng(0))
                    want = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"]).run(None, feeds)
                    got = ort.InferenceSession(out, so, providers=["CPUExecutionProvider"]).run(None, feeds)
                    if [np.shape(x) for x in got] != [np.shape(x) for x in want]:
                        check, problems = "output shapes differ", problems + 1
                except Exception as e:  # noqa: BLE001
                    check, problems = "ORT: " + (str(e).splitlines() or ["?"])[0][:100], problems + 1
            held = f"{a['holdout_error']:.3g}" if "holdout_error" in a else "–"
            rows.append(f"| {name} | {len(kept)} / {len(steps)} | {saved} | {a.get('final_error', 0):.3g} / {held} "
                        f"| {seconds:.0f} s | {check} |")
            print(rows[-1], flush=True)
    print(f"\nopt --apply on {len(rows)} corpus models at budget {args.budget:g}, random:8 calibration:\n")
    print("| model | kept / tried | params saved | error: decided on / held out | opt time | ORT on the result |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"\nproblems: {problems}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
