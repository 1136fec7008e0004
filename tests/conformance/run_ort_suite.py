#!/usr/bin/env python3
"""Runs backend-suite test folders through ONNX Runtime and judges them the
way aic_conformance does (output dtype equal, |a-b| <= 1e-7 + 1e-3*|b|, NaN
where NaN), so docs/CONFORMANCE.md sets ONNX Runtime's count beside ours
from the same machine and the same tests, and names every test ONNX Runtime
passes that aic-onnx does not.

    run_ort_suite.py SUITE_ROOT SET[,SET...] OUT.json

Tests run in worker processes, a chunk at a time; a chunk whose worker dies
(ONNX Runtime aborting on a model) is rerun one test per process, so a crash
fails one test only.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

CHUNK = 64


def _load_value(path: str, value_info):
    import onnx
    from onnx import numpy_helper

    t = value_info.type
    data = open(path, "rb").read()
    if t.HasField("sequence_type"):
        p = onnx.SequenceProto()
        p.ParseFromString(data)
        return numpy_helper.to_list(p)
    if t.HasField("optional_type"):
        p = onnx.OptionalProto()
        p.ParseFromString(data)
        return numpy_helper.to_optional(p)
    if t.HasField("map_type"):
        p = onnx.MapProto()
        p.ParseFromString(data)
        return numpy_helper.to_dict(p)
    p = onnx.TensorProto()
    p.ParseFromString(data)
    return numpy_helper.to_array(p)


def _close(got, want) -> str | None:
    """None when `got` matches `want`, else why not."""
    import numpy as np

    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return "sequence length differs"
        for g, w in zip(got, want):
            why = _close(g, w)
            if why:
                return why
        return None
    if want is None:
        return None if got is None else "expected an empty optional"
    if isinstance(want, dict):
        return None if got == want else "map differs"
    got = np.asarray(got)
    want = np.asarray(want)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} != expected {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape} != expected {want.shape}"
    if want.dtype.kind in "OUS" or want.dtype == bool or want.dtype.kind in "iu":
        return None if np.array_equal(got, want) else "values differ"
    g = got.astype(np.float64) if want.dtype.kind != "c" else got.astype(np.complex128)
    w = want.astype(np.float64) if want.dtype.kind != "c" else want.astype(np.complex128)
    nan = np.isnan(w)
    if not np.array_equal(np.isnan(g), nan):
        return "NaN where none expected (or none where expected)"
    ok = np.abs(g - w) <= 1e-7 + 1e-3 * np.abs(w)
    ok |= nan | (g == w)  # equal infinities
    return None if ok.all() else f"max abs error {np.nanmax(np.abs(g - w)[~ok]):.3g}"


def run_one(test_dir: str) -> tuple[str, str]:
    import onnx
    import onnxruntime as ort

    try:
        model = onnx.load(os.path.join(test_dir, "model.onnx"))
        opts = ort.SessionOptions()
        opts.log_severity_level = 4
        sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 (ONNX Runtime's refusals are many kinds)
        return "failed", "load: " + str(e).splitlines()[0][:200] if str(e) else "load failed"
    sets = sorted(d for d in os.listdir(test_dir) if d.startswith("test_data_set_"))
    inputs = [i for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    for ds in sets:
        d = os.path.join(test_dir, ds)
        feeds = {}
        for j, vi in enumerate(inputs):
            p = os.path.join(d, f"input_{j}.pb")
            if os.path.exists(p):
                feeds[vi.name] = _load_value(p, vi)
        try:
            got = sess.run(None, feeds)
        except Exception as e:  # noqa: BLE001
            return "failed", "run: " + (str(e).splitlines()[0][:200] if str(e) else "failed")
        for j, vo in enumerate(model.graph.output):
            p = os.path.join(d, f"output_{j}.pb")
            if not os.path.exists(p):
                continue
            why = _close(got[j], _load_value(p, vo))
            if why:
                return "failed", f"output '{vo.name}': {why}"
    return "passed", ""


def worker(dirs: list[str]) -> None:
    for d in dirs:
        status, reason = run_one(d)
        print(json.dumps([d, status, reason]), flush=True)


def run_chunk(dirs: list[str]) -> dict[str, tuple[str, str]]:
    proc = subprocess.run([sys.executable, __file__, "--worker", *dirs], capture_output=True, text=True,
                          timeout=1200)
    done = {}
    for line in proc.stdout.splitlines():
        try:
            d, status, reason = json.loads(line)
        except ValueError:
            continue
        done[d] = (status, reason)
    if proc.returncode != 0:
        for d in dirs:
            if d in done:
                continue
            if len(dirs) == 1:
                done[d] = ("failed", f"ONNX Runtime's process died (exit {proc.returncode})")
            else:
                done.update(run_chunk([d]))
    return done


def main() -> int:
    if len(sys.argv) >= 2 and sys.argv[1] == "--worker":
        worker(sys.argv[2:])
        return 0
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    root, sets, out = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
    dirs = []
    for s in sets:
        base = os.path.join(root, s)
        if os.path.isdir(base):
            dirs += [os.path.join(base, t) for t in sorted(os.listdir(base))
                     if os.path.exists(os.path.join(base, t, "model.onnx"))]
    results = {}
    for i in range(0, len(dirs), CHUNK):
        results.update(run_chunk(dirs[i:i + CHUNK]))
    import onnxruntime as ort

    tests = {os.path.relpath(d, root): {"status": s, "reason": r} for d, (s, r) in results.items()}
    with open(out, "w") as f:
        json.dump({"onnxruntime": ort.__version__, "tests": tests}, f, indent=0, sort_keys=True)
    passed = sum(1 for v in tests.values() if v["status"] == "passed")
    print(f"onnxruntime {ort.__version__}: {passed} of {len(tests)} passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
