"""The README's Python examples, run as written: every ```python block of its
"## Python" section, each in a fresh interpreter, in a scratch folder that has
the repository's testdata/ (the examples' paths are relative to the root).
Used by test_readme_examples.py (the built package) and fresh_install.py (a
package installed with pip)."""
import os
import pathlib
import re
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]


def examples():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^## Python\n(.*?)(?=^## )", text, re.S | re.M)
    if match is None:
        raise AssertionError("README.md has no '## Python' section")
    blocks = re.findall(r"^```python\n(.*?)^```", match.group(1), re.S | re.M)
    if not blocks:
        raise AssertionError("README.md's Python section has no ```python block")
    return blocks


def run_all(python, env=None, timeout=600):
    """Runs every example with `python`; returns [(example, stdout)]; raises
    AssertionError with the example and its stderr when one fails."""
    results = []
    with tempfile.TemporaryDirectory(prefix="aic_readme_") as scratch:
        os.symlink(ROOT / "testdata", pathlib.Path(scratch) / "testdata")
        for code in examples():
            p = subprocess.run([python, "-c", code], cwd=scratch, env=env, capture_output=True, text=True,
                               timeout=timeout)
            if p.returncode != 0:
                raise AssertionError(f"README example failed (exit {p.returncode}):\n{code}\n--- stderr:\n{p.stderr}")
            results.append((code, p.stdout))
    return results
