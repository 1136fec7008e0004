#!/usr/bin/env bash
# Regenerates docs/CONFORMANCE.md and the allow-lists (allowlist.txt for the
# reference executor, allowlist_cpu.txt for --device cpu) from fresh runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --build build --target aic_conformance -j "$(nproc)"
python3 tests/conformance/make_conformance_doc.py build/tests/aic_conformance docs/CONFORMANCE.md \
  --allowlist tests/conformance/allowlist.txt
