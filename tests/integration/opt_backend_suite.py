#!/usr/bin/env python3
"""`aic-onnx opt` over every model of the ONNX backend suite: opt succeeds (or
leaves the model unchanged, saying why) and never crashes, and every test our
executor passes on the original model still passes on the optimized one.

usage: opt_backend_suite.py AIC_ONNX AIC_CONFORMANCE [SUITE_ROOT] [--filter REGEX]
Exit 77 (ctest: skipped) when the suite is not installed.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

SKIP = 77
SETS = ["node", "pytorch-converted", "pytorch-operator", "simple"]


def optimize_one(binary, src_dir, dst_dir):
    os.makedirs(dst_dir, exist_ok=True)
    for entry in os.listdir(src_dir):
        if entry.startswith("test_data_set_"):
            os.symlink(os.path.join(src_dir, entry), os.path.join(dst_dir, entry))
    proc = subprocess.run([binary, "opt", os.path.join(src_dir, "model.onnx"),
                           os.path.join(dst_dir, "model.onnx"), "--no-verify"],
                          capture_output=True, text=True, timeout=300)
    return proc


def checker_fails(path):
    """None when onnx.checker accepts the model (or onnx is not installed), else the error."""
    try:
        import onnx
    except ImportError:
        return None
    try:
        onnx.checker.check_model(path)
        return None
    except Exception as e:  # noqa: BLE001 - any checker complaint counts
        return str(e).splitlines()[0] if str(e) else type(e).__name__


def run_suite(conformance, root, json_path, regex):
    cmd = [conformance, "--root", root, "--json", json_path]
    if regex:
        cmd += ["--filter", regex]
    subprocess.run(cmd, capture_output=True, text=True)
    with open(json_path) as f:
        return {t["test"]: t for t in json.load(f)["tests"]}


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--filter")]
    regex = None
    for i, a in enumerate(sys.argv):
        if a == "--filter":
            regex = sys.argv[i + 1]
            args.remove(regex)
    binary, conformance = args[0], args[1]
    root = args[2] if len(args) > 2 else "/usr/share/libonnx-testdata/data"
    if not os.path.isdir(os.path.join(root, "node")):
        print(f"skipped: backend suite not found at {root}")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        before = run_suite(conformance, root, os.path.join(tmp, "before.json"), regex)
        opt_root = os.path.join(tmp, "opt")
        jobs = []
        for s in SETS:
            set_dir = os.path.join(root, s)
            if not os.path.isdir(set_dir):
                continue
            for test in sorted(os.listdir(set_dir)):
                if regex and not re.search(regex, test):
                    continue
                if os.path.exists(os.path.join(set_dir, test, "model.onnx")):
                    jobs.append((s, test))
        crashes, unchanged, errors, changed, checker_regressions = [], [], [], 0, []
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            futures = {pool.submit(optimize_one, binary, os.path.join(root, s, t),
                                   os.path.join(opt_root, s, t)): (s, t) for s, t in jobs}
            for fut, (s, t) in futures.items():
                proc = fut.result()
                key = f"{s}/{t}"
                if proc.returncode < 0 or proc.returncode > 2:
                    crashes.append(f"{key}: exit {proc.returncode} {proc.stderr.strip()[-300:]}")
                elif proc.returncode == 2:
                    errors.append(f"{key}: {proc.stderr.strip()}")
                elif "left unchanged" in proc.stdout:
                    unchanged.append(f"{key}: {proc.stdout.strip()}")
                else:
                    changed += 1
                if proc.returncode == 0 and checker_fails(os.path.join(root, s, t, "model.onnx")) is None:
                    err = checker_fails(os.path.join(opt_root, s, t, "model.onnx"))
                    if err is not None:
                        checker_regressions.append(f"{key}: {err}")
        after = run_suite(conformance, opt_root, os.path.join(tmp, "after.json"), regex)
        regressions = []
        for key, t in before.items():
            if t["status"] != "passed":
                continue
            a = after.get(key)
            if a is None or a["status"] != "passed":
                regressions.append(f"{key}: {a['category'] + ': ' + a['reason'] if a else 'missing'}")
        passed_before = sum(t["status"] == "passed" for t in before.values())
        passed_after = sum(t["status"] == "passed" for t in after.values())
        print(f"models: {len(jobs)}; optimized {changed}, left unchanged {len(unchanged)}, "
              f"rejected input {len(errors)}, crashed {len(crashes)}")
        print(f"backend tests passing: {passed_before} original, {passed_after} optimized; "
              f"regressions {len(regressions)}")
        for line in unchanged[:40]:
            print("  unchanged:", line)
        for line in errors[:20]:
            print("  rejected:", line)
        for line in crashes:
            print("  CRASH:", line)
        for line in regressions:
            print("  REGRESSION:", line)
        print(f"onnx.checker: {len(checker_regressions)} optimized models rejected where the input passed")
        for line in checker_regressions[:40]:
            print("  CHECKER:", line)
        return 1 if crashes or regressions or checker_regressions else 0


if __name__ == "__main__":
    sys.exit(main())
