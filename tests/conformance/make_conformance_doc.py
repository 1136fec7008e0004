#!/usr/bin/env python3
"""Regenerates docs/CONFORMANCE.md from runs of the conformance runner.

usage: make_conformance_doc.py AIC_CONFORMANCE_BINARY OUT.md [--allowlist FILE]

Runs the ONNX 1.12 backend suite through every device of DEVICES (the reference
executor, then the fast CPU executor, side by side), then writes the counts per
set (beside ONNX Runtime's, measured on this machine: ANCHORS.md), the
failing tests of the reference executor grouped by reason, and, per other
device, the tests whose verdict differs from the reference executor's. With
--allowlist FILE it also rewrites the allow-lists of passing tests that CI holds
each device to: FILE for the reference executor, allowlist_<device>.txt beside
it for the others.
"""
import collections
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile

ORT = {"node": (863, 932), "pytorch-converted": (59, 82), "pytorch-operator": (24, 35), "simple": (21, 23)}
SETS = ["node", "pytorch-converted", "pytorch-operator", "simple"]
# Devices of `aic_conformance --device`, the first being the oracle the others are compared with.
DEVICES = ["reference", "cpu"]

# Why a test passes on the reference executor but not on another device, where
# known ((device, test-name prefix) -> note).
KNOWN_DIFF = {}

# Why a failing test cannot pass, where we know it (test-name prefix -> note).
KNOWN = {
    "node/test_bernoulli": "Bernoulli is random; the expected outputs come from numpy's generator "
                           "(unseeded, or seeded with numpy's own stream), which no runtime reproduces.",
    "node/test_adam_multiple": "the expected output was computed with epsilon=1e-2 while the node leaves "
                               "epsilon at the spec default 1e-6; we follow the spec.",
}


def allowlist_for(device, allowlist):
    if allowlist is None:
        return None
    if device == DEVICES[0]:
        return allowlist
    return os.path.join(os.path.dirname(allowlist), f"allowlist_{device}.txt")


def run_all(binary, allowlist, tmp):
    """Runs every device at once (each run forks one test at a time)."""
    procs = {}
    for device in DEVICES:
        js = os.path.join(tmp, f"{device}.json")
        cmd = [binary, "--device", device, "--json", js]
        out = allowlist_for(device, allowlist)
        if out:
            cmd += ["--write-allowlist", out]
        procs[device] = (subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), js)
    runs = {}
    for device, (proc, js) in procs.items():
        stdout, stderr = proc.communicate()
        if proc.returncode != 0:
            sys.exit(f"{binary} --device {device} failed ({proc.returncode}):\n{stderr}")
        runs[device] = (stdout, {r["test"]: r for r in json.load(open(js))["tests"]})
    return runs


def device_section(device, results, reference):
    """The tests whose verdict on `device` differs from the reference executor's."""
    passed = {t for t, r in results.items() if r["status"] == "passed"}
    ref_passed = {t for t, r in reference.items() if r["status"] == "passed"}
    lost = sorted(ref_passed - passed)
    gained = sorted(passed - ref_passed)
    lines = [f"## `--device {device}` against the reference executor", "",
             f"{len(passed)} tests pass on `--device {device}`, {len(ref_passed)} on the reference executor; "
             f"{len(passed & ref_passed)} pass on both. CI holds `--device {device}` to "
             f"`tests/conformance/allowlist_{device}.txt`.", ""]
    cov = collections.Counter(results[t].get("coverage", "") for t in passed)
    lines += [f"What ran the nodes of the passing tests: {cov['fast']} plans with no reference kernel "
              f"(oneDNN or native steps only), {cov['mixed']} mixed, {cov['reference']} on reference "
              f"kernels only (ops or dtypes the device does not accelerate, control flow), "
              f"{cov['folded']} computed entirely at compile time. The suite feeds every operand as a graph "
              f"input (weights, biases, target shapes, slice bounds), so lowerings that need constant operands "
              f"(Conv, Gemm, Reshape, Slice, Resize, ...) fall back to reference kernels here; "
              f"`tests/exec/cpu/backend_node_test.cc` runs the same models with those operands made constants.", ""]
    lines.append(f"### Passing on the reference executor only ({len(lost)})")
    lines.append("")
    for test in lost:
        r = results.get(test, {"category": "not run", "reason": ""})
        note = next((n for (d, prefix), n in KNOWN_DIFF.items() if d == device and test.startswith(prefix)), None)
        reason = r["reason"].replace("|", "\\|")[:200]
        lines.append(f"- `{test}`: [{r['category']}] {reason}" + (f" (why: {note})" if note else ""))
    if not lost:
        lines.append("None.")
    lines += ["", f"### Passing on `--device {device}` only ({len(gained)})", ""]
    for test in gained:
        r = reference[test]
        reason = r["reason"].replace("|", "\\|")[:200]
        lines.append(f"- `{test}` (reference: [{r['category']}] {reason})")
    if not gained:
        lines.append("None.")
    lines.append("")
    return lines


def main():
    binary, out_md = sys.argv[1], sys.argv[2]
    allowlist = sys.argv[sys.argv.index("--allowlist") + 1] if "--allowlist" in sys.argv else None
    with tempfile.TemporaryDirectory() as tmp:
        runs = run_all(binary, allowlist, tmp)
    stdout, reference = runs[DEVICES[0]]
    summary_line = [l for l in stdout.splitlines() if l.startswith("conformance:")][-1]
    shape_line = [l for l in stdout.splitlines() if "shape inference" in l][-1].strip()

    per_set = {d: collections.defaultdict(collections.Counter) for d in DEVICES}
    for device in DEVICES:
        for r in runs[device][1].values():
            per_set[device][r["test"].split("/", 1)[0]][r["status"]] += 1
    failures = collections.defaultdict(list)
    for r in reference.values():
        if r["status"] != "passed":
            failures[r["category"]].append((r["test"], r["reason"]))

    device_cols = " | ".join(f"`--device {d}` passed" for d in DEVICES[1:])
    lines = [
        "# Conformance: the ONNX 1.12 backend suite",
        "",
        "Generated by `tests/conformance/make_conformance_doc.py` (run `make conformance-docs`); do not edit by hand.",
        "",
        f"Reference executor (`aic-onnx run --device reference`) and the fast executors "
        f"({', '.join(f'`--device {d}`' for d in DEVICES[1:])}: compiled plans, reference kernels for what they "
        f"do not accelerate), judged the ONNX way: output dtype equal, "
        f"|a−b| ≤ 1e-7 + 1e-3·|b|, NaN where NaN. Each test runs in its own process (a crash fails only that test).",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores; generated {datetime.date.today().isoformat()}.",
        "",
        f"**Reference executor: {summary_line}**",
        "",
    ]
    for device in DEVICES[1:]:
        line = [l for l in runs[device][0].splitlines() if l.startswith("conformance:")][-1]
        lines += [f"**`--device {device}`: {line}**", ""]
    lines += [
        f"| set | aic-onnx reference passed | {device_cols} | total | ONNX Runtime 1.30 (CPU) passed |",
        "|---|---|" + "---|" * len(DEVICES[1:]) + "---|---|",
    ]
    for s in SETS:
        c = per_set[DEVICES[0]][s]
        total = sum(c.values())
        others = " | ".join(str(per_set[d][s]["passed"]) for d in DEVICES[1:])
        lines.append(f"| {s} | {c['passed']} | {others} | {total} | {ORT[s][0]} |")
    lines += ["", f"Shape inference, checked on the passing tests against the expected outputs "
              f"(declared output types are erased first): {shape_line.split(': ', 1)[1]}.", ""]
    for device in DEVICES[1:]:
        lines += device_section(device, runs[device][1], reference)
    lines += ["## Failing tests of the reference executor, by reason", ""]
    for category, items in sorted(failures.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines.append(f"### {category} ({len(items)})")
        lines.append("")
        for test, reason in sorted(items):
            reason = reason.replace("|", "\\|")
            note = next((n for prefix, n in KNOWN.items() if test.startswith(prefix)), None)
            lines.append(f"- `{test}`: {reason[:200]}" + (f" (why: {note})" if note else ""))
        lines.append("")
    with open(out_md, "w") as f:
        f.write("\n".join(lines))
    print(summary_line)
    for device in DEVICES[1:]:
        print(f"--device {device}:", [l for l in runs[device][0].splitlines() if l.startswith("conformance:")][-1])


if __name__ == "__main__":
    main()
