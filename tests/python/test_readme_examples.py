"""The README's Python examples run as written on the built package."""
import sys

from readme_examples import run_all


def test_readme_python_examples_run_as_written():
    results = run_all(sys.executable)
    assert len(results) >= 3
    for code, out in results:
        assert out.strip(), f"an example printed nothing:\n{code}"
