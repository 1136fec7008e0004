#!/usr/bin/env python3
"""`aic-onnx --device cuda` against PyTorch eager on the same weights (read from the ONNX
files), for bench/gpu_check.sh. Per model: first the outputs agree (PyTorch vs aic-onnx on
the same input, and vs ONNX Runtime when it is installed), then both are timed the same
way: CUDA events around host->device input copy, the model, device->host output copy
(pinned buffers both sides), after warm-up, medians of many runs, each run on one of 8
fresh random inputs. TF32 is off on both sides (full fp32, as the reference executor).
Also: a large fp32 GEMM through aic-onnx (one MatMul, I/O kept tiny) against cuBLAS
itself (torch.matmul). Writes results.md and results.json into --out; exit 1 when a
target is missed or outputs disagree.

usage: torch_compare.py --aic build/aic-onnx --out DIR [--root REPO]
       torch_compare.py --cpu-check [--root REPO]
       torch_compare.py --dry-cpu --aic build/aic-onnx --out DIR
--cpu-check needs no GPU and no aic-onnx: it runs the PyTorch mirrors of the models on the
CPU against ONNX Runtime (so that a wrong mirror is found before device time is spent).
--dry-cpu runs the whole comparison with both sides on the CPU (aic-onnx --device cpu,
wall-clock timers, fewer runs): a rehearsal of this script without a GPU, not a result.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_lite  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
DEV = "cuda"         # PyTorch's device; "cpu" under --cpu-check / --dry-cpu
AIC_DEVICE = "cuda"  # aic-onnx's --device; "cpu" under --dry-cpu


class _WallEvent:
    """torch.cuda.Event's timing surface over the wall clock, for --dry-cpu."""

    def record(self):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return (end.t - self.t) * 1e3


def timing_events():
    if DEV == "cuda":
        return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    return _WallEvent(), _WallEvent()


def pinned(t):
    return t.pin_memory() if DEV == "cuda" else t
INPUT_SETS = 8


def load_weights(path):
    return {k: torch.from_numpy(np.ascontiguousarray(v)).to(DEV) for k, v in onnx_lite.load_initializers(path).items()}


def seed_mlp(w):
    def fwd(x):
        return F.linear(F.relu(F.linear(x, w["fc1.weight"], w["fc1.bias"])), w["fc2.weight"], w["fc2.bias"])
    return fwd


def encoder(w, layers=6, heads=8, d=256):
    # MatMul weights are stored [in, out]; F.linear wants [out, in].
    lin = {k: (w[f"enc.{k}.weight"].t().contiguous(), w[f"enc.{k}.bias"])
           for k in ("attn.q", "attn.k", "attn.v", "attn.o", "ffn.fc1", "ffn.fc2")}
    scale = float(w["attn_scale"])

    def fwd(x):
        b, s, _ = x.shape
        for i in range(layers):
            def split(key):
                return F.linear(x, *lin[key]).view(b, s, heads, d // heads).transpose(1, 2)
            q, k, v = split("attn.q"), split("attn.k"), split("attn.v")
            p = torch.softmax((q @ k.transpose(-1, -2)) * scale, dim=-1)
            ctx = (p @ v).transpose(1, 2).reshape(b, s, d)
            x1 = F.layer_norm(x + F.linear(ctx, *lin["attn.o"]), (d,), w[f"layer{i}.ln1.weight"],
                              w[f"layer{i}.ln1.bias"], 1e-5)
            h = F.linear(F.gelu(F.linear(x1, *lin["ffn.fc1"])), *lin["ffn.fc2"])
            x = F.layer_norm(x1 + h, (d,), w[f"layer{i}.ln2.weight"], w[f"layer{i}.ln2.bias"], 1e-5)
        return x
    return fwd


def resnet_cnn(w):
    def conv_bn(x, name, stride=1, pad=0):
        y = F.conv2d(x, w[f"{name}.weight"], None, stride, pad)
        return F.batch_norm(y, w[f"{name}.bn.mean"], w[f"{name}.bn.var"], w[f"{name}.bn.scale"],
                            w[f"{name}.bn.bias"], False, 0.0, 1e-5)

    def fwd(x):
        x = F.max_pool2d(F.relu(conv_bn(x, "stem", 2, 3)), 3, 2, 1)
        for blk in range(2):
            h = F.relu(conv_bn(x, f"block{blk}.expand"))
            h = F.relu(conv_bn(h, f"block{blk}.mid", 1, 1))
            x = F.relu(x + conv_bn(h, f"block{blk}.contract"))
        return F.linear(F.adaptive_avg_pool2d(x, 1).flatten(1), w["head.fc.weight"], w["head.fc.bias"])
    return fwd


def time_torch(fwd, dims, warmup, iters, seed=0):
    rng = np.random.default_rng(seed)
    hosts = [pinned(torch.from_numpy(rng.standard_normal(dims).astype(np.float32))) for _ in range(INPUT_SETS)]
    with torch.inference_mode():
        out_host = pinned(torch.empty_like(fwd(hosts[0].to(DEV)), device="cpu"))
        start, stop = timing_events()
        ms = []
        for i in range(warmup + iters):
            start.record()
            y = fwd(hosts[i % INPUT_SETS].to(DEV, non_blocking=True))
            out_host.copy_(y, non_blocking=True)
            stop.record()
            stop.synchronize()
            if i >= warmup:
                ms.append(start.elapsed_time(stop))
    return float(np.median(ms))


def aic_bench(aic, model, shape, warmup, iters):
    cmd = [aic, "bench", model, "--device", AIC_DEVICE, "--json", "--iters", str(iters), "--warmup", str(warmup)]
    if shape:
        cmd += ["--shape", shape]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stdout}{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def aic_run(aic, model, input_name, x, tmp):
    path = os.path.join(tmp, "x.npy")
    np.save(path, x)
    out = tempfile.mkdtemp(dir=tmp)  # fresh per call: an earlier model's outputs must not be read
    r = subprocess.run([aic, "run", model, "--device", AIC_DEVICE, "--input", f"{input_name}={path}", "--out", out],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stdout + r.stderr)
    files = sorted(f for f in os.listdir(out) if f.endswith(".npy"))
    return np.load(os.path.join(out, files[0]))


def ort_run(model, input_name, x):
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    return ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {input_name: x})[0]


def rel_err(a, b):
    return float(np.max(np.abs(a - b)) / max(1e-6, float(np.max(np.abs(b)))))


def gemm_check(aic, n, tmp, iters):
    """aic-onnx fp32 GEMM of n x n x n vs cuBLAS (torch.matmul), in TFLOP/s. The model is
    Expand(s) @ W then a row mean, so its input and output are tiny and the GEMM dominates."""
    w = (np.random.default_rng(n).standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)  # f32 after NEP 50
    nodes = [onnx_lite.node("Expand", ["s", "shape"], ["a"], "expand"),
             onnx_lite.node("MatMul", ["a", "w"], ["m"], "gemm"),
             onnx_lite.node("ReduceMean", ["m"], ["y"], "mean", axes=[1], keepdims=1)]
    path = os.path.join(tmp, f"gemm{n}.onnx")
    with open(path, "wb") as f:
        f.write(onnx_lite.model(nodes, {"w": w, "shape": np.array([n, n], np.int64)}, [("s", [1])], [("y", [n, 1])]))
    flops = 2.0 * n ** 3
    aic_ms = aic_bench(aic, path, None, 3, iters)["median_ms"]
    a = torch.randn(n, n, device=DEV)
    b = torch.from_numpy(w).to(DEV)
    start, stop = timing_events()
    ms = []
    for i in range(3 + iters):
        start.record()
        torch.matmul(a, b)
        stop.record()
        stop.synchronize()
        if i >= 3:
            ms.append(start.elapsed_time(stop))
    cublas_ms = float(np.median(ms))
    return {"n": n, "aic_ms": aic_ms, "cublas_ms": cublas_ms, "aic_tflops": flops / aic_ms / 1e9,
            "cublas_tflops": flops / cublas_ms / 1e9, "ratio": cublas_ms / aic_ms}


CASES = [  # name, file, input, dims, torch builder, --shape, warmup, iters, speedup target
    ("seed MLP", "seed_mlp.onnx", "input", (1, 10), seed_mlp, None, 50, 500, 1.0),
    ("encoder b1", "encoder.onnx", "x", (1, 128, 256), encoder, "x=1,128,256", 30, 300, 1.5),
    ("encoder b32", "encoder.onnx", "x", (32, 128, 256), encoder, "x=32,128,256", 10, 100, 1.0),
    ("ResNet CNN", "resnet_cnn.onnx", "x", (1, 3, 224, 224), resnet_cnn, None, 30, 300, 1.0),
]


def cpu_check(td):
    """The PyTorch mirrors on the CPU against ONNX Runtime; 0 when every model agrees."""
    global DEV
    DEV = "cpu"
    ok = True
    for name, file, inp, dims, build, *_ in CASES:
        model = os.path.join(td, file)
        x = np.random.default_rng(123).standard_normal(dims).astype(np.float32)
        with torch.inference_mode():
            got = build(load_weights(model))(torch.from_numpy(x)).numpy()
        want = ort_run(model, inp, x)
        if want is None:
            print("cpu-check needs onnxruntime")
            return 1
        err = rel_err(got, want)
        ok &= err < 1e-4
        print(f"{name}: PyTorch (CPU) vs ONNX Runtime rel. err {err:.1e} {'ok' if err < 1e-4 else 'MISMATCH'}")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aic")
    ap.add_argument("--out")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--cpu-check", action="store_true")
    ap.add_argument("--dry-cpu", action="store_true")
    args = ap.parse_args()
    global DEV, AIC_DEVICE
    if args.dry_cpu:
        DEV = AIC_DEVICE = "cpu"
    td = os.path.join(args.root, "testdata")
    if args.cpu_check:
        return cpu_check(td)
    if not args.aic or not args.out:
        ap.error("--aic and --out are required")
    os.makedirs(args.out, exist_ok=True)
    # --dry-cpu: a few runs each, and GEMMs small enough for a CPU.
    cases = [c[:6] + (2, 5) + c[8:] if args.dry_cpu else c for c in CASES]
    gemm_sizes = (256, 512) if args.dry_cpu else (4096, 8192)
    rows, ok = [], True
    with tempfile.TemporaryDirectory() as tmp:
        for name, file, inp, dims, build, shape, warmup, iters, target in cases:
            model = os.path.join(td, file)
            row = {"model": name, "target_speedup": target}
            try:
                fwd = build(load_weights(model))
                x = np.random.default_rng(123).standard_normal(dims).astype(np.float32)
                with torch.inference_mode():
                    want = fwd(torch.from_numpy(x).to(DEV)).cpu().numpy()
                ours = aic_run(args.aic, model, inp, x, tmp)
                row["err_vs_aic"] = rel_err(ours, want)
                ort_out = ort_run(model, inp, x)
                row["err_vs_ort"] = None if ort_out is None else rel_err(ort_out, want)
                row["agree"] = row["err_vs_aic"] < 1e-3 and (ort_out is None or row["err_vs_ort"] < 1e-3)
                bench = aic_bench(args.aic, model, shape, warmup, iters)
                row.update(aic_ms=bench["median_ms"], cuda_graph=bench.get("cuda_graph"),
                           fallback_steps=bench["fallback_steps"])
                row["torch_ms"] = time_torch(fwd, dims, warmup, iters)
                row["speedup"] = row["torch_ms"] / row["aic_ms"]
                row["meets_target"] = row["agree"] and row["speedup"] >= target
            except Exception as e:  # one failing model must not hide the others
                row.update(error=str(e)[-500:], meets_target=False)
            ok &= row["meets_target"]
            rows.append(row)
            print(json.dumps(row), flush=True)
        gemms = []
        for n in gemm_sizes:
            try:
                g = gemm_check(args.aic, n, tmp, 5 if args.dry_cpu else 20)
                g["meets_target"] = g["ratio"] >= 0.70
            except Exception as e:
                g = {"n": n, "error": str(e)[-500:], "meets_target": False}
            ok &= g["meets_target"]
            gemms.append(g)
            print(json.dumps(g), flush=True)
    try:
        gpu = torch.cuda.get_device_name(0) if DEV == "cuda" else "CPU dry run, not a result"
    except Exception as e:  # no device: the rows say why
        gpu = f"no GPU: {str(e)[:80]}"
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"models": rows, "gemm": gemms, "gpu": gpu,
                   "torch": torch.__version__}, f, indent=1)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(f"# aic-onnx --device {AIC_DEVICE} vs PyTorch eager ({gpu}, torch {torch.__version__})\n\n")
        f.write("Median of CUDA-event times per run (input copy in, model, output copy out; fp32, TF32 off;\n"
                "fresh random inputs cycled; warm-up excluded). Speedup = PyTorch / aic-onnx.\n\n")
        f.write("| model | aic-onnx ms | PyTorch ms | speedup | target | CUDA Graph | rel. err vs aic / ORT | ok |\n")
        f.write("|---|---:|---:|---:|---:|---|---|---|\n")
        for r in rows:
            if "error" in r:
                f.write(f"| {r['model']} | error | | | {r['target_speedup']}x | | | no: {r['error'][:120]} |\n")
                continue
            ort_err = "n/a" if r["err_vs_ort"] is None else f"{r['err_vs_ort']:.1e}"
            f.write(f"| {r['model']} | {r['aic_ms']:.4f} | {r['torch_ms']:.4f} | {r['speedup']:.2f}x | "
                    f"{r['target_speedup']}x | {r['cuda_graph']} | {r['err_vs_aic']:.1e} / {ort_err} | "
                    f"{'yes' if r['meets_target'] else 'NO'} |\n")
        f.write("\n| fp32 GEMM n×n×n | aic-onnx TFLOP/s | cuBLAS TFLOP/s | ratio | target | ok |\n")
        f.write("|---:|---:|---:|---:|---:|---|\n")
        for g in gemms:
            if "error" in g:
                f.write(f"| {g['n']} | error | | | 0.70 | no: {g['error'][:120]} |\n")
                continue
            f.write(f"| {g['n']} | {g['aic_tflops']:.1f} | {g['cublas_tflops']:.1f} | {g['ratio']:.2f} | 0.70 | "
                    f"{'yes' if g['meets_target'] else 'NO'} |\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
