#!/usr/bin/env bash
# The CUDA backend's device check (docs/CUDA.md, "The device check"), for a machine with a
# CUDA GPU and PyTorch: runs the CUDA tests (none may skip there), bench/torch_compare.py
# (seed MLP, encoder at batch 1 and 32, ResNet CNN vs PyTorch eager on the same weights; a
# large GEMM vs cuBLAS), and the ONNX backend suite's CPU allow-list on --device cuda (in
# parallel shards). Two modes:
#   bundle: the binaries, libraries, suite tests and models come from an archive made here by
#           bench/gpu_bundle.sh (for the lent GPU machine, which lacks our Debian packages);
#           nothing is built. Chosen by --bundle, or when .gpu/bundle.tar.* exists and the
#           Debian packages (abseil, onnx) do not.
#   build:  configure + build in AIC_GPU_BUILD (default build-gpu), on a machine that has them.
# Meant to finish in under 8 minutes (TOTAL_S caps the stages' time together).
#
#   bench/gpu_check.sh [--bundle ARCHIVE] OUT_DIR
#
# Writes into OUT_DIR: SUMMARY.md (one line per stage, then the timing table), results.md /
# results.json (torch_compare.py), logs.tar.gz (every log), and the logs of failed stages;
# at most 8 files (what the device tool brings back). Prints the failed stages' log tails,
# then the summary, last. Exit status: 0 when every stage passed.
# Environment: STAGES (comma-separated subset of exec_cuda_test, cli_cuda_test,
# torch_compare, conformance_cuda; default all), TOTAL_S (default 450), PYTHON (default
# python3), CONF_SHARDS (default 12),
# AIC_GPU_BUILD, BUILD_TYPE (default Release), JOBS (default nproc), SUITE (the backend
# suite's data folder, default /usr/share/libonnx-testdata/data) for build mode;
# AIC_CUDA_LIBS (folders searched first for the CUDA libraries) for bundle mode.
set -u
usage() { echo "usage: bench/gpu_check.sh [--bundle ARCHIVE] OUT_DIR" >&2; exit 2; }
ARCHIVE=""
if [ "${1:-}" = "--bundle" ]; then
  [ $# -ge 3 ] || usage
  ARCHIVE=$2
  shift 2
fi
OUT=${1:-}
[ -n "$OUT" ] || usage
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
START=$SECONDS
TOTAL_S=${TOTAL_S:-450}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
LOGS=$OUT/logs
rm -rf "$LOGS" "$OUT"/*.log "$OUT"/results.* "$OUT"/logs.tar.gz
mkdir -p "$LOGS"
SUMMARY="$OUT/SUMMARY.md"
ROWS=""      # the summary table's rows
FAILED=()    # logs of failed stages
status=0

if [ -z "$ARCHIVE" ] && { [ ! -e /usr/lib/x86_64-linux-gnu/cmake/absl/abslConfig.cmake ] ||
                          [ ! -e /usr/include/onnx/onnx_pb.h ]; }; then
  ARCHIVE=$(ls "$ROOT"/.gpu/bundle.tar.* 2> /dev/null | head -1)
fi
MODE=build
[ -n "$ARCHIVE" ] && MODE=bundle
echo "# gpu_check $(date -u +%FT%TZ), $MODE mode" > "$SUMMARY"

# stage NAME LIMIT_S LOG CMD...: runs CMD (a program under `timeout`, or a shell function,
# which applies its own limits) with output to logs/LOG; the limit is cut to what is left
# of TOTAL_S. Records the verdict.
stage() {
  local name=$1 limit=$2 logname=$3 log=$LOGS/$3
  shift 3
  if [ -n "${STAGES:-}" ] && [[ ",$STAGES,unpack,bundle_libs,configure,build," != *",$name,"* ]]; then
    echo "- $name: not selected (STAGES=$STAGES)" >> "$SUMMARY"
    return 0
  fi
  local left=$((TOTAL_S - (SECONDS - START) - 10))
  [ "$left" -lt "$limit" ] && limit=$left
  local t0=$SECONDS rc
  if [ "$limit" -le 0 ]; then
    echo "no time left (TOTAL_S=$TOTAL_S)" > "$log"; rc=124
  elif [ "$(type -t "$1")" = function ]; then
    STAGE_LIMIT=$limit "$@" > "$log" 2>&1; rc=$?
  else
    timeout -k 5 "$limit" "$@" > "$log" 2>&1; rc=$?
  fi
  local verdict=passed
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then verdict="TIMED OUT (${limit} s)"; elif [ $rc -ne 0 ]; then verdict="FAILED (exit $rc)"; fi
  [ $rc -eq 0 ] || { status=1; FAILED+=("$log"); }
  echo "- $name: $verdict in $((SECONDS - t0)) s (logs/$logname)" >> "$SUMMARY"
  ROWS+="| $name | $verdict | $((SECONDS - t0)) | $(note_for "$name" "$log") |"$'\n'
  return $rc
}

# One line of the stage's result for the table.
note_for() {
  case $1 in
    exec_cuda_test|cli_cuda_test)
      grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$2" | sed 's/\[ *//; s/ *\]//; s/[,.].*//' | paste -sd, ;;
    torch_compare) echo "$(grep -c '"meets_target": true' "$2")/$(grep -c '"meets_target"' "$2") targets met" ;;
    conformance_cuda) grep '^conformance' "$2" | tail -1 ;;
    unpack) sed -n 's/^built=/built /p' "$2" ;;
    bundle_libs) grep -o '\(libcublasLt\|libcudnn\)[^ ]* => [^ ]*' "$2" | sort -u | paste -sd' ' ;;
    *) tail -1 "$2" | cut -c1-100 ;;
  esac
}

# Unpacks the bundle into /tmp (GNU tar, else Python's tarfile where xz/zstd are missing).
unpack_bundle() {
  local dest=/tmp/aic-gpu-check
  rm -rf "$dest" && mkdir -p "$dest"
  echo "unpacking $ARCHIVE ($(stat -c %s "$ARCHIVE") bytes) into $dest"
  tar -C "$dest" -xf "$ARCHIVE" || "$PY" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="tar")' \
    "$ARCHIVE" "$dest" || return 1
  cat "$dest/aic-gpu-bundle/MANIFEST"
}

# The bundled binaries, with the libraries they will load.
bundle_libs() {
  local bad=0 f
  for f in "$B"/libexec/*; do
    echo "== $f"
    LD_LIBRARY_PATH=$AIC_BUNDLE_LD_PATH ldd "$f" | grep -v "$B/lib/" || true
    LD_LIBRARY_PATH=$AIC_BUNDLE_LD_PATH ldd "$f" | grep -q 'not found' && bad=1
  done
  echo "== system libstdc++: $(/sbin/ldconfig -p | awk '$1 == "libstdc++.so.6" {print $NF; exit}')," \
       "newest GLIBCXX: $(strings "$(/sbin/ldconfig -p | awk '$1 == "libstdc++.so.6" {print $NF; exit}')" 2> /dev/null | grep -o '^GLIBCXX_[0-9.]*' | sort -uV | tail -1)"
  "$B/bin/aic-onnx" --help > /dev/null || bad=1
  return $bad
}

# The allow-listed backend-suite tests on --device cuda in CONF_SHARDS parallel runners
# (each test is a forked child that initializes CUDA, so one runner is slow): each shard
# takes every CONF_SHARDS-th allow-listed test name by an anchored --filter. Fails on a
# crash, a timeout, or a regression other than a host-stage [unimplemented].
conformance_sharded() {
  local n=${CONF_SHARDS:-12} dir i pids=() rc=0 p=0 f=0 s=0 r=0 a b c
  [ "$STAGE_LIMIT" -gt 10 ] || return 124
  dir=$(mktemp -d /tmp/aic-conf.XXXXXX)
  grep -v '^#' "$ALLOW" | grep -v '^$' | sed 's|.*/||' | sort -u > "$dir/names"
  echo "$(wc -l < "$dir/names") allow-listed tests in $n shards, suite $SUITE, limit ${STAGE_LIMIT}s"
  for ((i = 0; i < n; i++)); do
    local pattern
    pattern="^($(awk -v n="$n" -v i="$i" 'NR % n == i' "$dir/names" | paste -sd'|'))\$"
    timeout -k 5 "$((STAGE_LIMIT - 5))" "$TESTS/aic_conformance" --device cuda --root "$SUITE" --allowlist "$ALLOW" \
      --filter "$pattern" --timeout 30 --verbose > "$dir/shard$i.log" 2>&1 &
    pids+=($!)
  done
  for ((i = 0; i < n; i++)); do  # exit 1 is "regressions", judged below
    wait "${pids[$i]}"
    local e=$?
    [ $e -le 1 ] || { echo "shard $i: exit $e"; rc=1; }
  done
  for ((i = 0; i < n; i++)); do
    echo "=== shard $i"
    cat "$dir/shard$i.log"
    read -r a b c < <(sed -n 's/^conformance: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$dir/shard$i.log")
    p=$((p + ${a:-0})) f=$((f + ${b:-0})) s=$((s + ${c:-0}))
    r=$((r + $(sed -n 's/^allow-list: \([0-9]*\) regressions$/\1/p' "$dir/shard$i.log" | head -1 | grep . || echo 0)))
  done
  echo "conformance (cuda, $n shards): $p passed, $f failed, $s skipped; $r allow-list regressions" \
    "($(sed -n 's/^REGRESSION [^ ]*: \[\([^]]*\)\].*/\1/p' "$dir"/shard*.log | sed 's/: .*//' | sort | uniq -c | sort -rn |
        awk '{c = $1; $1 = ""; printf "%s%s:%s", sep, substr($0, 2), c; sep = ", "}'))"
  # A test the backend declines at the host stage ([unimplemented]: no static shape, ...)
  # is coverage, known without a GPU; any other regression fails the stage.
  local hard
  hard=$(cat "$dir"/shard*.log | grep '^REGRESSION' | grep -vc '\[unimplemented\]')
  echo "regressions other than [unimplemented]: $hard"
  [ "$hard" -eq 0 ] || rc=1
  rm -rf "$dir"
  return $rc
}

finish() {
  [ -f "$OUT/results.md" ] && { echo; cat "$OUT/results.md"; } >> "$SUMMARY"
  # At most 8 files come back from the device tool: one archive of all logs, plus the
  # logs of the first failed stages.
  tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs
  local kept=0 l
  for l in "${FAILED[@]}"; do
    [ $kept -lt 4 ] && [ -f "$l" ] && { cp "$l" "$OUT/"; kept=$((kept + 1)); }
  done
  rm -rf "$LOGS"
  for l in "${FAILED[@]}"; do
    echo "----- tail of $(basename "$l")"
    [ -f "$OUT/$(basename "$l")" ] && tail -n 25 "$OUT/$(basename "$l")" | cut -c1-300
  done
  echo
  cat "$SUMMARY"
  echo
  echo "| stage | verdict | s | result |"
  echo "|---|---|---:|---|"
  printf '%s' "$ROWS"
  echo "gpu_check: $MODE mode, $((SECONDS - START)) s, exit $status; full logs in $OUT/logs.tar.gz"
  exit $status
}

(nvidia-smi || true) > "$LOGS/machine.log" 2>&1

if [ $MODE = bundle ]; then
  ARCHIVE=$(cd "$(dirname "$ARCHIVE")" && pwd)/$(basename "$ARCHIVE")
  stage unpack 60 unpack.log unpack_bundle || finish
  B=/tmp/aic-gpu-check/aic-gpu-bundle
  # shellcheck source=/dev/null
  source "$B/env.sh" >> "$LOGS/machine.log" 2>&1
  echo "AIC_BUNDLE_LD_PATH=$AIC_BUNDLE_LD_PATH" >> "$LOGS/machine.log"
  # The tests look for testdata/ and aic-onnx where they were built: link those paths.
  src=$(sed -n 's/^AIC_SOURCE_DIR=//p' "$B/MANIFEST") bin=$(sed -n 's/^AIC_BINARY_DIR=//p' "$B/MANIFEST")
  [ -e "$src/testdata/seed_mlp.onnx" ] || { mkdir -p "$src" && ln -sfn "$B/testdata" "$src/testdata"; }
  [ -e "$bin/aic-onnx" ] || { mkdir -p "$bin" && ln -sfn "$B/bin/aic-onnx" "$bin/aic-onnx"; }
  echo "compiled-in paths: $src/testdata -> $(readlink -f "$src/testdata"), $bin/aic-onnx -> $(readlink -f "$bin/aic-onnx")" >> "$LOGS/machine.log"
  AIC=$B/bin/aic-onnx TESTS=$B/bin SUITE=$B/suite ALLOW=$B/allowlist_cpu.txt DATA_ROOT=$B
  stage bundle_libs 30 bundle_libs.log bundle_libs || finish
else
  BUILD=${AIC_GPU_BUILD:-$ROOT/build-gpu}
  stage configure 120 configure.log cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
    -DAIC_BUILD_TESTS=ON -DAIC_CUDA=ON || finish
  grep -q "CUDA backend: on" "$LOGS/configure.log" || { echo "- CUDA backend not configured (no nvcc?)" >> "$SUMMARY"; status=1; finish; }
  stage build 300 build.log cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target aic-onnx exec_cuda_test \
    aic_conformance cli_test || finish
  AIC=$BUILD/aic-onnx TESTS=$BUILD/tests SUITE=${SUITE:-/usr/share/libonnx-testdata/data} DATA_ROOT=$ROOT
  ALLOW=$ROOT/tests/conformance/allowlist_cpu.txt
fi

# Every CUDA test must run here: a skip means the device probe failed.
stage exec_cuda_test 120 exec_cuda_test.log "$TESTS/exec_cuda_test"
if grep -qs "SKIPPED \] CudaGpuTest" "$LOGS/exec_cuda_test.log"; then
  echo "- exec_cuda_test: GPU tests SKIPPED on a GPU machine" >> "$SUMMARY"
  ROWS+="| exec_cuda_test | GPU tests SKIPPED | | no device seen |"$'\n'
  status=1
fi
stage cli_cuda_test 40 cli_cuda_test.log "$TESTS/cli_test" --gtest_filter='CudaCliTest.*'
# The timings before the broad conformance run, which TOTAL_S may then cut short.
stage torch_compare 180 torch_compare.log env PYTHONUNBUFFERED=1 "$PY" "$ROOT/bench/torch_compare.py" \
  --aic "$AIC" --out "$OUT" --root "$DATA_ROOT"
stage conformance_cuda 180 conformance_cuda.log conformance_sharded
finish
