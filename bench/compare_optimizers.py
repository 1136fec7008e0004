#!/usr/bin/env python3
"""aic-onnx opt side by side with onnxsim, onnxslim and ONNX Runtime's basic
level on PaddleOCR det/rec/cls, plus the optimizer's time on generated chains
of 1k, 10k and 100k nodes. Writes bench/OPTIMIZERS.md (generated: never edit it
by hand; rerun this script).

For each model and optimizer:
  - nodes left, and whether only standard ONNX domains remain;
  - wall time of the whole process (load + optimize + save), median over
    --runs runs, the optimizers taking turns within each round;
  - ONNX Runtime latency on the output (2 threads, default level, median,
    the models taking turns);
  - outputs equal to the original's in ONNX Runtime within
    allclose(rtol=1e-4, atol=1e-5) on random inputs.

Run it with a Python that has bench/requirements.txt installed:
  python3 -m venv build/bench-venv && build/bench-venv/bin/pip install -r bench/requirements.txt
  build/bench-venv/bin/python bench/compare_optimizers.py --aic build/aic-onnx
"""
import argparse
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

from machine import machine_line

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CASES = [  # file, input shape for checks and latency, ORT basic node count (ANCHORS.md)
    ("ppocr_det.onnx", (1, 3, 640, 640)),
    ("ppocr_rec.onnx", (1, 3, 48, 320)),
    ("ppocr_cls.onnx", (1, 3, 48, 192)),
]
ORT_BASIC = """
import sys, onnxruntime as ort
so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
so.optimized_model_filepath = sys.argv[2]
ort.InferenceSession(sys.argv[1], so, providers=["CPUExecutionProvider"])
"""


def tools(aic):
    bindir = os.path.dirname(sys.executable)
    return {
        "aic-onnx opt": lambda s, d: [aic, "opt", s, d, "--no-verify"],
        "onnxsim": lambda s, d: [os.path.join(bindir, "onnxsim"), s, d],
        "onnxslim": lambda s, d: [os.path.join(bindir, "onnxslim"), s, d],
        "ORT basic": lambda s, d: [sys.executable, "-c", ORT_BASIC, s, d],
    }


def timed(cmd):
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} exited {proc.returncode}: {proc.stderr[-500:]}")
    return seconds


def session(path, threads=2):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def node_count(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    domains = {n.domain for n in m.graph.node} - {"", "ai.onnx"}
    return len(m.graph.node), sorted(domains)


def compare_outputs(src, dst, shape, rng):
    import numpy as np
    ref, new = session(src, 1), session(dst, 1)
    worst, ok = 0.0, True
    for _ in range(3):
        x = rng.standard_normal(shape).astype(np.float32)
        a_out = ref.run(None, {ref.get_inputs()[0].name: x})
        b_out = new.run(None, {new.get_inputs()[0].name: x})
        for a, b in zip(a_out, b_out):
            if a.shape != b.shape:
                return False, float("inf")
            ok = ok and bool(np.allclose(b, a, rtol=1e-4, atol=1e-5))
            worst = max(worst, float(np.max(np.abs(a.astype(np.float64) - b))))
    return ok, worst


def latencies(paths, shape, rounds, per_round, rng):
    """Median ms per model; the models take turns each round."""
    import numpy as np
    sessions = {k: session(p) for k, p in paths.items()}
    x = rng.standard_normal(shape).astype(np.float32)
    feeds = {k: {s.get_inputs()[0].name: x} for k, s in sessions.items()}
    for k, s in sessions.items():  # warm-up
        s.run(None, feeds[k])
    samples = {k: [] for k in sessions}
    for _ in range(rounds):
        for k, s in sessions.items():
            for _ in range(per_round):
                t0 = time.perf_counter()
                s.run(None, feeds[k])
                samples[k].append((time.perf_counter() - t0) * 1e3)
    return {k: statistics.median(v) for k, v in samples.items()}


def make_chain(path, nodes, seed=0):
    """A chain of `nodes` nodes over a [1, 64] input: blocks of Add(const),
    Identity, Mul(by 1), Relu, Transpose pair, so that every block has work for
    the optimizer (3 of its 6 nodes go)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)
    width = 64
    inits, graph_nodes = [], []
    one = numpy_helper.from_array(np.ones([1], np.float32), "one")
    inits.append(one)
    cur = "x"
    k = 0
    while len(graph_nodes) < nodes:
        c = f"c{k}"
        inits.append(numpy_helper.from_array(rng.standard_normal([width]).astype(np.float32), c))
        block = [
            ("Add", [cur, c], {}),
            ("Identity", None, {}),
            ("Mul", ["one"], {}),
            ("Relu", None, {}),
            ("Transpose", None, {"perm": [1, 0]}),
            ("Transpose", None, {"perm": [1, 0]}),
        ]
        for j, (op, extra, attrs) in enumerate(block):
            if len(graph_nodes) >= nodes:
                break
            out = f"t{k}_{j}"
            ins = extra if op == "Add" else [cur] + (extra or [])
            graph_nodes.append(helper.make_node(op, ins, [out], name=f"n{k}_{j}", **attrs))
            cur = out
        k += 1
    graph_nodes.append(helper.make_node("Identity", [cur], ["y"], name="out"))
    g = helper.make_graph(graph_nodes, "chain",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aic", default=os.path.join(ROOT, "build", "aic-onnx"))
    ap.add_argument("--models", default=os.path.join(ROOT, "..", "shared", "models"))
    ap.add_argument("--runs", type=int, default=7, help="whole-process runs per optimizer and model")
    ap.add_argument("--latency-rounds", type=int, default=10)
    ap.add_argument("--chains", default="1000,10000,100000")
    ap.add_argument("--out", default=os.path.join(HERE, "OPTIMIZERS.md"))
    args = ap.parse_args()
    try:
        import numpy as np
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as e:
        sys.exit(f"{e}: run with a Python that has bench/requirements.txt (see --help)")
    rng = np.random.default_rng(0)
    exe = sys.executable
    if os.path.abspath(exe).startswith(ROOT + os.sep):
        exe = os.path.relpath(exe, ROOT)
    command = shlex.join([exe, os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)] + sys.argv[1:])
    machine = machine_line(["onnxruntime", "onnx", "onnxsim", "onnxslim"])
    opts = tools(os.path.abspath(args.aic))
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        model_rows, speed_rows, lat_rows, notes = [], [], [], []
        for name, shape in CASES:
            src = os.path.join(args.models, name)
            if not os.path.exists(src):
                sys.exit(f"{src} not found")
            outs = {t: os.path.join(tmp, f"{t.split()[0]}_{name}") for t in opts}
            times = {t: [] for t in opts}
            for r in range(args.runs):
                order = list(opts) if r % 2 == 0 else list(reversed(list(opts)))
                for t in order:
                    times[t].append(timed(opts[t](src, outs[t])))
            nodes_in, _ = node_count(src)
            paths = {"original": src}
            for t in opts:
                n, domains = node_count(outs[t])
                ok, worst = compare_outputs(src, outs[t], shape, rng)
                med = statistics.median(times[t])
                model_rows.append((name, t, nodes_in, n, domains, ok, worst))
                speed_rows.append((name, t, med, min(times[t]), max(times[t])))
                paths[t] = outs[t]
            lat = latencies(paths, shape, args.latency_rounds, 5 if "det" in name else 20, rng)
            lat_rows.append((name, lat))
            print(name, {t: round(statistics.median(v), 3) for t, v in times.items()}, flush=True)

        chain_rows = []
        for count in [int(c) for c in args.chains.split(",") if c]:
            path = os.path.join(tmp, f"chain_{count}.onnx")
            make_chain(path, count)
            dst = os.path.join(tmp, f"chain_{count}.opt.onnx")
            samples, internal, cpu = [], [], []
            for _ in range(3):
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                proc = subprocess.run(opts["aic-onnx opt"](path, dst), capture_output=True, text=True)
                samples.append(time.perf_counter() - t0)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu.append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
                if proc.returncode != 0:
                    sys.exit(f"chain {count}: {proc.stderr}")
                for line in proc.stdout.splitlines():
                    if line.startswith("time:"):
                        internal.append(float(line.split()[1]))
            n_after, _ = node_count(dst)
            chain_rows.append((count, n_after, statistics.median(samples), statistics.median(internal),
                               statistics.median(cpu)))
            print("chain", count, chain_rows[-1], flush=True)

    lines += ["# aic-onnx opt vs onnxsim, onnxslim and ONNX Runtime's basic level", "",
              "Generated by `bench/compare_optimizers.py`; do not edit by hand.", "",
              f"- machine: {machine}",
              f"- command: `{command}`",
              f"- whole-process times: median of {args.runs} runs, the four optimizers taking turns "
              "(order reversed every other round); each is a fresh process that loads the model, "
              "optimizes it and saves the result (ONNX Runtime: a Python process creating a "
              "basic-level session with `optimized_model_filepath`).",
              "- outputs: ONNX Runtime on 3 random inputs, original vs optimized, "
              "`allclose(rtol=1e-4, atol=1e-5)`; max abs diff shown.",
              f"- latency: ONNX Runtime, 2 intra-op threads, default optimization level, median over "
              f"{args.latency_rounds} rounds in which the models take turns.", ""]
    # The targets, judged on these numbers.
    med = {(n, t): m for n, t, m, _, _ in speed_rows}
    nodes = {(n, t): k for n, t, _, k, _, _, _ in model_rows}
    oks = {(n, t): ok for n, t, _, _, _, ok, _ in model_rows}
    rec = "ppocr_rec.onnx"
    checks = [
        (f"{rec}: aic-onnx opt takes at most half the time of ORT basic "
         f"({med[rec, 'aic-onnx opt']:.3f} s vs {med[rec, 'ORT basic']:.3f} s, "
         f"ratio {med[rec, 'aic-onnx opt'] / med[rec, 'ORT basic']:.2f})",
         med[rec, "aic-onnx opt"] <= 0.5 * med[rec, "ORT basic"]),
        (f"{rec}: aic-onnx opt faster than onnxsim ({med[rec, 'onnxsim']:.3f} s) and onnxslim "
         f"({med[rec, 'onnxslim']:.3f} s)",
         med[rec, "aic-onnx opt"] < min(med[rec, "onnxsim"], med[rec, "onnxslim"])),
    ]
    for name, _ in CASES:
        ours = nodes[name, "aic-onnx opt"]
        checks.append((f"{name}: {ours} nodes <= 0.9 x ORT basic ({nodes[name, 'ORT basic']}) and <= onnxsim "
                       f"({nodes[name, 'onnxsim']}), onnxslim ({nodes[name, 'onnxslim']})",
                       ours <= 0.9 * nodes[name, "ORT basic"] and ours <= nodes[name, "onnxsim"]
                       and ours <= nodes[name, "onnxslim"]))
        checks.append((f"{name}: outputs match the original", oks[name, "aic-onnx opt"]))
        lat = next(v for n, v in lat_rows if n == name)
        checks.append((f"{name}: ORT latency on our output {lat['aic-onnx opt']:.3f} ms <= original "
                       f"{lat['original']:.3f} ms", lat["aic-onnx opt"] <= lat["original"]))
    if len(chain_rows) >= 2:
        # From the second size up: at 1k nodes the process start-up (~10 ms) dominates.
        (n0, _, _, _, c0), (n1, _, _, _, c1) = chain_rows[min(1, len(chain_rows) - 2)], chain_rows[-1]
        growth = (c1 / c0) / (n1 / n0) if c0 > 0 else float("inf")
        checks.append((f"chains: CPU time per node (whole process) at {n1} nodes is {growth:.1f}x that at "
                       f"{n0} (about linear: within 3x)", growth <= 3))
    lines += ["## Targets (issue 5)", "", "| target | met |", "|---|---|"]
    for text, ok in checks:
        lines.append(f"| {text} | {'yes' if ok else 'NO'} |")
    lines += [""]
    lines += ["## Nodes and outputs", "",
              "| model | optimizer | nodes in | nodes out | non-standard domains | outputs match | max abs diff |",
              "|---|---|---|---|---|---|---|"]
    for name, t, nin, n, domains, ok, worst in model_rows:
        lines.append(f"| {name} | {t} | {nin} | {n} | {', '.join(domains) or 'none'} | "
                     f"{'yes' if ok else 'NO'} | {worst:.2g} |")
    lines += ["", "## Whole-process time (load + optimize + save)", "",
              "| model | optimizer | median s | min s | max s | vs aic-onnx opt |", "|---|---|---|---|---|---|"]
    aic_med = {n: m for n, t, m, _, _ in speed_rows if t == "aic-onnx opt"}
    for name, t, med, lo, hi in speed_rows:
        lines.append(f"| {name} | {t} | {med:.3f} | {lo:.3f} | {hi:.3f} | {med / aic_med[name]:.1f}x |")
    lines += ["", "## ONNX Runtime latency on each optimizer's output (ms, median)", "",
              "| model | " + " | ".join(lat_rows[0][1].keys()) + " |",
              "|---|" + "---|" * len(lat_rows[0][1])]
    for name, lat in lat_rows:
        lines.append(f"| {name} | " + " | ".join(f"{v:.3f}" for v in lat.values()) + " |")
    lines += ["", "## aic-onnx opt on generated chains", "",
              "Blocks of Add(const), Identity, Mul(by 1), Relu, Transpose, Transpose over a [1, 64] "
              "input (half of each block is removable). Median of 3 runs; 'optimize' is the time "
              "`aic-onnx opt` reports for the rewrite alone (wall clock), 'whole process' adds load "
              "and save; CPU is the process's user + system time, which a busy machine disturbs "
              "less than wall time.", "",
              "| nodes in | nodes out | whole process s | whole process CPU s | CPU µs per node "
              "| optimize s | optimize µs per node |",
              "|---|---|---|---|---|---|---|"]
    for count, n_after, whole, internal, cpu_s in chain_rows:
        lines.append(f"| {count} | {n_after} | {whole:.3f} | {cpu_s:.3f} | {cpu_s / count * 1e6:.1f} "
                     f"| {internal:.3f} | {internal / count * 1e6:.1f} |")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
