"""Fixtures of the Python API tests: the package built in build/python (ctest
sets PYTHONPATH) or installed, the project's testdata and the PaddleOCR models
of ../shared/models (tests that need them skip, saying why, without them)."""
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TESTDATA = ROOT / "testdata"
MODELS = pathlib.Path(os.environ.get("AIC_SHARED_MODELS", ROOT.parent / "shared" / "models"))


@pytest.fixture
def testdata():
    return TESTDATA


@pytest.fixture
def ppocr():
    if not (MODELS / "ppocr_rec.onnx").exists():
        pytest.skip(f"PaddleOCR models not found in {MODELS} (../shared/models)")
    return MODELS
