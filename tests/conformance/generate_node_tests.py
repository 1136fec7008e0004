#!/usr/bin/env python3
"""Writes the backend node tests of the installed `onnx` wheel as test folders.

The wheel ships the cases as Python (onnx/backend/test/case/node/*.py) and
its `backend-test-tools generate-data` writes only the model-level cases, so
this script writes the node cases the way the suite's data/node folder lays
them out (model.onnx, test_data_set_N/{input,output}_K.pb), where
aic_conformance reads them:

    generate_node_tests.py OUT_DIR      -> OUT_DIR/node/test_*/...

The wheel is the one pinned in requirements.txt, so the suite is the same on
every machine; a stamp file names its version, and a folder whose stamp
matches is left as it is (the tests that run it call this script first).
"""
from __future__ import annotations

import os
import shutil
import sys
import warnings


def _write_value(path: str, value, value_info) -> None:
    from onnx import TensorProto, numpy_helper

    t = value_info.type
    if t.HasField("map_type"):
        proto = numpy_helper.from_dict(value, value_info.name)
    elif t.HasField("sequence_type"):
        proto = numpy_helper.from_list(value, value_info.name)
    elif t.HasField("optional_type"):
        proto = numpy_helper.from_optional(value, value_info.name)
    elif isinstance(value, TensorProto):
        proto = value
    else:
        proto = numpy_helper.from_array(value, value_info.name)
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: generate_node_tests.py OUT_DIR", file=sys.stderr)
        return 2
    try:
        import onnx
        import onnx.backend.test.case.node as node_cases
    except ImportError as e:
        print(f"generate_node_tests: the onnx package is missing ({e}); skipped")
        return 77
    out = os.path.join(sys.argv[1], "node")
    stamp = os.path.join(sys.argv[1], "onnx_version.txt")
    if os.path.exists(stamp) and open(stamp).read().strip() == onnx.__version__ and os.path.isdir(out):
        print(f"generate_node_tests: {out} already holds onnx {onnx.__version__}'s node tests")
        return 0
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cases' own overflow/divide warnings
        cases = node_cases.collect_testcases(None)
    for case in cases:
        test_dir = os.path.join(out, case.name)
        os.makedirs(test_dir, exist_ok=True)
        with open(os.path.join(test_dir, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        for i, (inputs, outputs) in enumerate(case.data_sets):
            data_dir = os.path.join(test_dir, f"test_data_set_{i}")
            os.makedirs(data_dir, exist_ok=True)
            for j, value in enumerate(inputs):
                _write_value(os.path.join(data_dir, f"input_{j}.pb"), value, case.model.graph.input[j])
            for j, value in enumerate(outputs):
                _write_value(os.path.join(data_dir, f"output_{j}.pb"), value, case.model.graph.output[j])
    with open(stamp, "w") as f:
        f.write(onnx.__version__ + "\n")
    print(f"generate_node_tests: wrote {len(cases)} node tests of onnx {onnx.__version__} to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
