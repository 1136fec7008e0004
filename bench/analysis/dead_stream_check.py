#!/usr/bin/env python3
"""prune-dead across residual streams, on a real export: torchvision's ResNet-18 (random
weights) with channels 3, 17 and 40 of layer1's residual stream dead by construction (the stem
BatchNorm's and both layer1 blocks' bn2 shift at -100, so the stream's ReLUs never pass them).
`aic-onnx opt --apply prune-dead --max-error 0` must remove them from every layer on the stream
(the stem conv's and both blocks' conv2 rows; the blocks' conv1 and layer2.0's conv1 and
downsample columns) in one step, and ONNX Runtime must give the original's logits on fresh
inputs. Exit 1 when either fails.

usage: build/zoo-venv/bin/python bench/analysis/dead_stream_check.py --aic build/aic-onnx [--work DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torchvision

DEAD = [3, 17, 40]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aic", required=True)
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="dead_stream_")
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(0)
    m = torchvision.models.resnet18(weights=None).eval()
    with torch.no_grad():
        for bn in (m.bn1, m.layer1[0].bn2, m.layer1[1].bn2):
            bn.bias[DEAD] = -100.0
    src, out = os.path.join(work, "resnet18_dead.onnx"), os.path.join(work, "pruned.onnx")
    torch.onnx.export(m, torch.randn(1, 3, 224, 224), src, input_names=["input"], output_names=["logits"],
                      opset_version=17, dynamo=False)
    rng = np.random.default_rng(1)
    calib = os.path.join(work, "calib")
    for i in range(8):
        d = os.path.join(calib, f"s{i}")
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, "input.npy"), rng.standard_normal((1, 3, 224, 224)).astype(np.float32))
    stats = os.path.join(work, "stats.json")
    p = subprocess.run([args.aic, "opt", src, out, "--apply", "prune-dead", "--calib", calib, "--max-error", "0",
                        "--no-latency", "--stats", stats], capture_output=True, text=True)
    print(p.stdout[p.stdout.find("approximations"):] if "approximations" in p.stdout else p.stdout + p.stderr)
    if p.returncode != 0:
        return 1
    steps = json.load(open(stats))["approximations"]["steps"]
    stream = [s for s in steps if s["kept"] and "residual Add" in s["where"] and "'/conv1/Conv'" in s["where"]]
    ok = len(stream) == 1 and stream[0]["detail"].startswith(f"{len(DEAD)} dead of 64 units")
    print("layer1 stream step:", stream[0]["detail"] if stream else "none")
    onnx.checker.check_model(out)
    a, b = ort.InferenceSession(src), ort.InferenceSession(out)
    x = np.random.default_rng(5).standard_normal((1, 3, 224, 224)).astype(np.float32)
    ya, yb = a.run(None, {"input": x})[0], b.run(None, {"input": x})[0]
    rel = float(np.linalg.norm(ya - yb) / np.linalg.norm(ya))
    print(f"ORT logits, original vs pruned, fresh input: relative L2 {rel:.2e}")
    ok = ok and rel < 1e-4
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
