#!/usr/bin/env bash
# Regenerates docs/CONFORMANCE.md and the allow-lists (allowlist*.txt for the
# reference executor, allowlist*_cpu.txt for --device cpu; the ONNX 1.12 suite
# and the pinned onnx wheel's node tests) from fresh runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --build build --target aic_conformance -j "$(nproc)"
.venv/bin/python tests/conformance/make_conformance_doc.py build/tests/aic_conformance docs/CONFORMANCE.md \
  --wheel-tests build/onnx-wheel-tests --write-allowlists
