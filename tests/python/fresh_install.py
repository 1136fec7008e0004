#!/usr/bin/env python3
"""`pip install .` into a fresh venv, then what a user does first: import the
package outside the source tree, run the `aic-onnx` command it installs, run
the README's Python examples; and `python -m build` makes a wheel that
installs into a second fresh venv and works there, its extension finding its
libraries without LD_LIBRARY_PATH.

usage: fresh_install.py REPO_ROOT WORK_DIR
Needs PyPI (the build requirements and numpy/onnx) and the system packages of
`make deps`. The compiler cache serves the objects `make build` compiled
(CMakeLists.txt), so the install mostly links. Exit 77 (ctest: skipped) when
venv or pip cannot be had.
"""
import os
import pathlib
import shutil
import subprocess
import sys
import time

SKIP = 77


def run(cmd, **kw):
    print("+", " ".join(str(c) for c in cmd), flush=True)
    t = time.time()
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    print(f"  ({time.time() - t:.0f} s, exit {p.returncode})", flush=True)
    if p.returncode != 0:
        print(p.stdout[-6000:])
        print(p.stderr[-6000:])
        raise SystemExit(f"failed: {' '.join(str(c) for c in cmd)}")
    return p.stdout


def fresh_venv(base_python, path):
    shutil.rmtree(path, ignore_errors=True)
    run([base_python, "-m", "venv", path])
    return path / "bin" / "python"


def check_installed(python, root, env, work):
    """What a user does first, from outside the source tree."""
    outside = work / "elsewhere"
    outside.mkdir(exist_ok=True)
    out = run([python, "-c", "import aic_onnx, sys; print(aic_onnx.__version__, aic_onnx.__file__)"],
              cwd=outside, env=env)
    where = out.split()[1]
    venv = python.parent.parent
    if not pathlib.Path(where).resolve().is_relative_to(venv.resolve()):
        raise SystemExit(f"imported {where}, not the package installed in {venv}")
    print("  import:", out.strip())
    command = python.parent / "aic-onnx"
    version = run([command, "--version"], env=env).strip()
    print("  command:", version)
    if not version.startswith("aic-onnx "):
        raise SystemExit(f"unexpected --version output: {version!r}")
    run([command, "opt", root / "testdata" / "seed_mlp.onnx", work / "seed_mlp.opt.onnx"], env=env)
    core = next(pathlib.Path(where).parent.glob("_core*.so"))
    ldd = run(["ldd", core], env=env)
    missing = [line for line in ldd.splitlines() if "not found" in line]
    if missing:
        raise SystemExit(f"{core.name} does not find: {missing}")
    sys.path.insert(0, str(root / "tests" / "python"))
    from readme_examples import run_all

    results = run_all(str(python), env=env)
    print(f"  README examples: {len(results)} ran")


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    work = pathlib.Path(sys.argv[2]).resolve()
    work.mkdir(parents=True, exist_ok=True)
    base = getattr(sys, "_base_executable", sys.executable)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH", "VIRTUAL_ENV")}
    try:
        python = fresh_venv(base, work / "venv")
    except SystemExit as e:
        print(f"skipped: no venv ({e})")
        return SKIP
    # 1. pip install . in a fresh venv.
    run([python, "-m", "pip", "install", "-q", "--upgrade", "pip"], env=env)
    run([python, "-m", "pip", "install", "-q", root], env=env, cwd=work)
    check_installed(python, root, env, work)
    # 2. python -m build makes a wheel; it installs into another fresh venv.
    run([python, "-m", "pip", "install", "-q", "build"], env=env)
    dist = work / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    run([python, "-m", "build", "--wheel", "--outdir", dist, root], env=env, cwd=work)
    wheels = sorted(dist.glob("aic_onnx-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"expected one wheel in {dist}, found {wheels}")
    print("  wheel:", wheels[0].name, f"{wheels[0].stat().st_size / 1e6:.1f} MB")
    python2 = fresh_venv(base, work / "venv-wheel")
    run([python2, "-m", "pip", "install", "-q", wheels[0]], env=env, cwd=work)
    check_installed(python2, root, env, work)
    print("fresh install: pip install . and the wheel both work")
    return 0


if __name__ == "__main__":
    sys.exit(main())
