#!/usr/bin/env python3
"""Regenerates docs/CONFORMANCE.md from runs of the conformance runner.

usage: make_conformance_doc.py AIC_CONFORMANCE_BINARY OUT.md [--wheel-tests DIR] [--write-allowlists]

Two suites: the ONNX 1.12 backend suite of Debian's libonnx-testdata, and the
node tests of the pinned `onnx` wheel (written to DIR by
generate_node_tests.py, default build/onnx-wheel-tests). Each runs through
every device of DEVICES (the reference executor, then the fast CPU executor)
and through ONNX Runtime (run_ort_suite.py, the pinned `onnxruntime`, judged
by the same rule), on this machine, in this run. The page gives the counts per
set side by side, the tests ONNX Runtime passes that a device of ours does not,
the tests whose verdict differs between our devices, and our failures grouped
by reason. With --write-allowlists it also rewrites the allow-lists of passing
tests that CI holds each device to (SUITES' allowlist names, in
tests/conformance/).
"""
import collections
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# Devices of `aic_conformance --device`, the first being the oracle the others are compared with.
DEVICES = ["reference", "cpu"]

# (key, title, root, sets, allow-list stem): the stem gets "_<device>" for devices after the first.
SUITES = [
    ("onnx112", "the ONNX 1.12 backend suite (Debian's libonnx-testdata)", "/usr/share/libonnx-testdata/data",
     ["node", "pytorch-converted", "pytorch-operator", "simple"], "allowlist"),
    ("wheel", None, None, ["node"], "allowlist_wheel"),  # title and root filled in main()
]

# Why a test passes on the reference executor but not on another device, where
# known ((device, test-name prefix) -> note).
KNOWN_DIFF = {}

# Why a failing test cannot pass, where we know it (test-name prefix -> note).
KNOWN = {
    "node/test_bernoulli": "Bernoulli is random; the expected outputs come from numpy's generator "
                           "(unseeded, or seeded with numpy's own stream), which no runtime reproduces.",
    "node/test_adam_multiple": "the expected output was computed with epsilon=1e-2 while the node leaves "
                               "epsilon at the spec default 1e-6; we follow the spec.",
    "node/test_dft_inverse": "the expected output carries float32 rounding error: 1.9e-7 where the exact "
                             "inverse transform of the integer input is 0 (numpy in float64 gives -7e-16; "
                             "the expected values are 1.5e-6 off the exact ones at most), past the suite's "
                             "absolute 1e-7; ours is within 4.5e-7 of the exact values everywhere, 3e-15 there.",
}


def allowlist_path(stem, device):
    suffix = "" if device == DEVICES[0] else f"_{device}"
    return os.path.join(HERE, f"{stem}{suffix}.txt")


def run_suite(binary, root, sets, stem, write_allowlists, tmp, key):
    """Runs every device and ONNX Runtime at once (each forks one test at a time)."""
    procs = {}
    for device in DEVICES:
        js = os.path.join(tmp, f"{key}-{device}.json")
        cmd = [binary, "--device", device, "--root", root, "--sets", ",".join(sets), "--json", js]
        if write_allowlists:
            cmd += ["--write-allowlist", allowlist_path(stem, device)]
        procs[device] = (subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), js)
    ort_json = os.path.join(tmp, f"{key}-ort.json")
    ort = subprocess.Popen([sys.executable, os.path.join(HERE, "run_ort_suite.py"), root, ",".join(sets), ort_json],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    runs = {}
    for device, (proc, js) in procs.items():
        stdout, stderr = proc.communicate()
        if proc.returncode != 0:
            sys.exit(f"{binary} --device {device} --root {root} failed ({proc.returncode}):\n{stderr}")
        runs[device] = (stdout, {r["test"]: r for r in json.load(open(js))["tests"]})
    _, stderr = ort.communicate()
    if ort.returncode != 0:
        sys.exit(f"run_ort_suite.py failed ({ort.returncode}):\n{stderr}")
    ort_run = json.load(open(ort_json))
    return runs, ort_run


def summary(stdout):
    return [l for l in stdout.splitlines() if l.startswith("conformance:")][-1]


def cell(reason):
    return reason.replace("|", "\\|")[:200]


def device_section(device, results, reference, stem):
    """The tests whose verdict on `device` differs from the reference executor's."""
    passed = {t for t, r in results.items() if r["status"] == "passed"}
    ref_passed = {t for t, r in reference.items() if r["status"] == "passed"}
    lost = sorted(ref_passed - passed)
    gained = sorted(passed - ref_passed)
    lines = [f"### `--device {device}` against the reference executor", "",
             f"{len(passed)} tests pass on `--device {device}`, {len(ref_passed)} on the reference executor; "
             f"{len(passed & ref_passed)} pass on both. CI holds `--device {device}` to "
             f"`tests/conformance/{os.path.basename(allowlist_path(stem, device))}`.", ""]
    cov = collections.Counter(results[t].get("coverage", "") for t in passed)
    lines += [f"What ran the nodes of the passing tests: {cov['fast']} plans with no reference kernel "
              f"(oneDNN or native steps only), {cov['mixed']} mixed, {cov['reference']} on reference "
              f"kernels only (ops or dtypes the device does not accelerate, control flow), "
              f"{cov['folded']} computed entirely at compile time. The suite feeds every operand as a graph "
              f"input (weights, biases, target shapes, slice bounds), so lowerings that need constant operands "
              f"(Conv, Gemm, Reshape, Slice, Resize, ...) fall back to reference kernels here; "
              f"`tests/exec/cpu/backend_node_test.cc` runs the same models with those operands made constants.", ""]
    lines += [f"Passing on the reference executor only ({len(lost)}):", ""]
    for test in lost:
        r = results.get(test, {"category": "not run", "reason": ""})
        note = next((n for (d, prefix), n in KNOWN_DIFF.items() if d == device and test.startswith(prefix)), None)
        lines.append(f"- `{test}`: [{r['category']}] {cell(r['reason'])}" + (f" (why: {note})" if note else ""))
    if not lost:
        lines.append("None.")
    lines += ["", f"Passing on `--device {device}` only ({len(gained)}):", ""]
    for test in gained:
        r = reference[test]
        lines.append(f"- `{test}` (reference: [{r['category']}] {cell(r['reason'])})")
    if not gained:
        lines.append("None.")
    lines.append("")
    return lines


def suite_section(title, sets, stem, runs, ort_run):
    stdout, reference = runs[DEVICES[0]]
    ort = ort_run["tests"]
    ort_version = ort_run["onnxruntime"]
    ort_passed = {t for t, v in ort.items() if v["status"] == "passed"}
    lines = [f"## {title}", "", f"**Reference executor: {summary(stdout)}**", ""]
    for device in DEVICES[1:]:
        lines += [f"**`--device {device}`: {summary(runs[device][0])}**", ""]
    lines += [f"**ONNX Runtime {ort_version} (CPU, the pinned wheel, judged by the same rule): "
              f"{len(ort_passed)} of {len(ort)} passed**", ""]
    per_set = {d: collections.defaultdict(collections.Counter) for d in DEVICES}
    for device in DEVICES:
        for r in runs[device][1].values():
            per_set[device][r["test"].split("/", 1)[0]][r["status"]] += 1
    ort_set = collections.Counter(t.split("/", 1)[0] for t in ort_passed)
    device_cols = " | ".join(f"`--device {d}` passed" for d in DEVICES[1:])
    lines += [f"| set | aic-onnx reference passed | {device_cols} | total | ONNX Runtime {ort_version} passed |",
              "|---|---|" + "---|" * len(DEVICES[1:]) + "---|---|"]
    for s in sets:
        c = per_set[DEVICES[0]][s]
        others = " | ".join(str(per_set[d][s]["passed"]) for d in DEVICES[1:])
        lines.append(f"| {s} | {c['passed']} | {others} | {sum(c.values())} | {ort_set[s]} |")
    shape_line = [l for l in stdout.splitlines() if "shape inference" in l][-1].strip()
    lines += ["", f"Shape inference, checked on the passing tests against the expected outputs "
              f"(declared output types are erased first): {shape_line.split(': ', 1)[1]}.", ""]
    for device in [DEVICES[0]] + DEVICES[1:]:
        results = runs[device][1]
        missed = sorted(t for t in ort_passed if results.get(t, {}).get("status") != "passed")
        name = "the reference executor" if device == DEVICES[0] else f"`--device {device}`"
        lines += [f"### Passed by ONNX Runtime, not by {name} ({len(missed)})", ""]
        for t in missed:
            r = results.get(t, {"category": "not run", "reason": ""})
            lines.append(f"- `{t}`: [{r['category']}] {cell(r['reason'])}")
        if not missed:
            lines.append("None.")
        lines.append("")
    for device in DEVICES[1:]:
        lines += device_section(device, runs[device][1], reference, stem)
    failures = collections.defaultdict(list)
    for r in reference.values():
        if r["status"] != "passed":
            failures[r["category"]].append((r["test"], r["reason"]))
    lines += ["### Failing tests of the reference executor, by reason", ""]
    for category, items in sorted(failures.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines += [f"#### {category} ({len(items)})", ""]
        for test, reason in sorted(items):
            note = next((n for prefix, n in KNOWN.items() if test.startswith(prefix)), None)
            lines.append(f"- `{test}`: {cell(reason)}" + (f" (why: {note})" if note else ""))
        lines.append("")
    return lines


def main():
    binary, out_md = sys.argv[1], sys.argv[2]
    wheel_dir = (sys.argv[sys.argv.index("--wheel-tests") + 1] if "--wheel-tests" in sys.argv
                 else os.path.join(REPO, "build", "onnx-wheel-tests"))
    write_allowlists = "--write-allowlists" in sys.argv
    gen = subprocess.run([sys.executable, os.path.join(HERE, "generate_node_tests.py"), wheel_dir],
                         capture_output=True, text=True)
    if gen.returncode != 0:
        sys.exit(f"generate_node_tests.py failed ({gen.returncode}):\n{gen.stdout}{gen.stderr}")
    import onnx

    suites = []
    for key, title, root, sets, stem in SUITES:
        if key == "wheel":
            title = f"the node tests of the pinned onnx {onnx.__version__} wheel"
            root = wheel_dir
        suites.append((key, title, root, sets, stem))
    lines = [
        "# Conformance: the ONNX backend test suites",
        "",
        "Generated by `tests/conformance/make_conformance_doc.py` (run `make conformance-docs`); do not edit by hand.",
        "",
        f"Reference executor (`aic-onnx run --device reference`) and the fast executors "
        f"({', '.join(f'`--device {d}`' for d in DEVICES[1:])}: compiled plans, reference kernels for what they "
        f"do not accelerate), and ONNX Runtime beside them, all judged the ONNX way: output dtype equal, "
        f"|a−b| ≤ 1e-7 + 1e-3·|b|, NaN where NaN. Each of our tests runs in its own process (a crash fails only "
        f"that test). The onnx wheel's node tests are written out by `tests/conformance/generate_node_tests.py` "
        f"from the cases the wheel ships (`onnx/backend/test/case/node`). ONNX Runtime runs through its Python "
        f"binding (`tests/conformance/run_ort_suite.py`), which cannot feed or return numpy's float8/int4 "
        f"stand-ins: those tests count as failed for it.",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores; generated {datetime.date.today().isoformat()}.",
        "",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for key, title, root, sets, stem in suites:
            runs, ort_run = run_suite(binary, root, sets, stem, write_allowlists, tmp, key)
            lines += suite_section(title[0].upper() + title[1:], sets, stem, runs, ort_run)
            print(f"{title}: reference {summary(runs[DEVICES[0]][0])}; " +
                  "; ".join(f"--device {d} {summary(runs[d][0])}" for d in DEVICES[1:]) +
                  f"; onnxruntime {sum(v['status'] == 'passed' for v in ort_run['tests'].values())} passed")
    with open(out_md, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
