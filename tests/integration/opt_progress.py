#!/usr/bin/env python3
"""`aic-onnx opt` on a terminal shows what it is doing once a step takes
longer than a second, and erases the line before its summary; off a terminal
(a pipe, a log) it prints nothing of the kind.

usage: opt_progress.py AIC_ONNX_BINARY REPO_ROOT
The terminal is script(1)'s pseudo-terminal; exit 77 (ctest: skipped) without it.
"""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def main():
    binary, root = sys.argv[1], sys.argv[2]
    if shutil.which("script") is None:
        print("skipped: script(1) not found (bsdutils)")
        return SKIP
    model = os.path.join(root, "testdata", "encoder.onnx")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.onnx")
        # Verification at batch 64, four input sets: several seconds here, so the line shows.
        cmd = [binary, "opt", model, out, "--shape", "x=64,128,256", "--verify=4"]
        tty = subprocess.run(["script", "-qefc", shlex.join(cmd), os.devnull], capture_output=True, text=True,
                             timeout=600)
        if tty.returncode != 0:
            print(tty.stdout, tty.stderr)
            return 1
        if "[aic-onnx opt] verifying on 4 input set(s) at x=64,128,256" not in tty.stdout:
            print("no progress line on the terminal:\n" + tty.stdout)
            return 1
        last_progress = tty.stdout.rfind("[aic-onnx opt]")
        erase = tty.stdout.find("\033[K", last_progress)  # text mode reads the \r as a newline
        summary = tty.stdout.find("nodes:")
        if not (0 <= erase < summary):
            print("the progress line is not erased before the summary:\n" + repr(tty.stdout[-800:]))
            return 1
        piped = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if piped.returncode != 0 or "[aic-onnx opt]" in piped.stdout + piped.stderr:
            print("off a terminal: exit", piped.returncode, piped.stdout, piped.stderr)
            return 1
    print("ok: progress on a terminal, none in a pipe")
    return 0


if __name__ == "__main__":
    sys.exit(main())
