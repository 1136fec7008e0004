#!/usr/bin/env bash
# Packs what the CUDA device check (bench/gpu_check.sh, docs/CUDA.md "The device check")
# needs on a GPU machine that has CUDA and PyTorch but none of our Debian -dev packages:
# a Release build with the CUDA backend (aic-onnx, exec_cuda_test, aic_conformance,
# cli_test, and aic-onnx-cuda where the build makes that companion; stripped, each behind
# a wrapper that sets LD_LIBRARY_PATH), every shared library they load that such a machine lacks (abseil, protobuf, onnx, oneDNN, OpenBLAS,
# LAPACK, gfortran, OpenCL loader, ...), the ONNX backend-suite tests named by the CPU
# allow-list, the testdata/ models, and env.sh, which finds the CUDA libraries there
# (cuBLASLt, cuDNN: from the toolkit or PyTorch's nvidia-* wheels). glibc, libstdc++ and
# libgcc_s come from the machine (libstdc++/libgcc_s are also packed in lib-fallback/,
# used only when the machine's are too old). Run here, not on the GPU machine:
#
#   bench/gpu_bundle.sh [OUT_DIR]        (default OUT_DIR: .gpu, ignored by git)
#
# Writes OUT_DIR/bundle.tar.xz (or .tar.zst / .tar.gz as a fallback), then unpacks it into
# a scratch folder and checks with ldd that each binary resolves every library from the
# bundle, the allowed system set or the CUDA set. Environment: AIC_BUNDLE_BUILD (build
# folder, default build-bundle), JOBS (default 2), SUITE (default
# /usr/share/libonnx-testdata/data), ALLOWLIST (default tests/conformance/allowlist_cpu.txt).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/.gpu}
BUILD=${AIC_BUNDLE_BUILD:-$ROOT/build-bundle}
JOBS=${JOBS:-2}
SUITE=${SUITE:-/usr/share/libonnx-testdata/data}
ALLOW=${ALLOWLIST:-$ROOT/tests/conformance/allowlist_cpu.txt}
NAME=aic-gpu-bundle
# Libraries the GPU machine provides itself: glibc's, the C++ runtime (newer there), and
# CUDA's (the driver; the toolkit or PyTorch's wheels for the rest; cudart is static).
SYSTEM_RE='^(linux-vdso|ld-linux-x86-64|libc|libm|libdl|libpthread|librt|libresolv|libutil|libmvec)\.so'
CXXRT_RE='^(libstdc\+\+|libgcc_s)\.so'
CUDA_RE='^(libcuda|libcudart|libcublas|libcublasLt|libcudnn[a-z_]*|libnvrtc[a-z-]*|libnvJitLink)\.so'
BINARIES=("aic-onnx:$BUILD/aic-onnx" "exec_cuda_test:$BUILD/tests/exec_cuda_test"
          "aic_conformance:$BUILD/tests/aic_conformance" "cli_test:$BUILD/tests/cli_test")

log() { echo "gpu_bundle: $*" >&2; }

# 1. Configure and build (Release, CUDA on, sm_90 only).
mkdir -p "$BUILD"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DAIC_BUILD_TESTS=ON -DAIC_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 > "$BUILD/bundle-configure.log" 2>&1 || { cat "$BUILD/bundle-configure.log"; exit 1; }
grep -q "CUDA backend: on" "$BUILD/bundle-configure.log" || { log "CUDA backend not configured (no nvcc?)"; exit 1; }
log "building in $BUILD (-j$JOBS)"
cmake --build "$BUILD" -j "$JOBS" --target aic-onnx exec_cuda_test aic_conformance cli_test > "$BUILD/bundle-build.log" 2>&1 \
  || { tail -40 "$BUILD/bundle-build.log"; exit 1; }
# aic-onnx hands --device cuda to its companion aic-onnx-cuda, found next to it, when the
# build makes one (cli/cuda_device.cc).
if [[ $(cmake --build "$BUILD" --target help) == *" aic-onnx-cuda"* ]]; then
  BINARIES+=("aic-onnx-cuda:$BUILD/aic-onnx-cuda")
fi

STAGE=$(mktemp -d /tmp/aic-bundle-stage.XXXXXX)
trap 'rm -rf "$STAGE"' EXIT
B=$STAGE/$NAME
mkdir -p "$B/bin" "$B/libexec" "$B/lib" "$B/lib-fallback" "$B/suite" "$B/testdata"

# 2. Binaries, stripped, each behind a wrapper that loads env.sh (cli_test runs aic-onnx
# by its build path, which gpu_check.sh links to the wrapper).
for entry in "${BINARIES[@]}"; do
  name=${entry%%:*} path=${entry#*:}
  strip --strip-unneeded -o "$B/libexec/$name" "$path"
  cat > "$B/bin/$name" <<EOF
#!/usr/bin/env bash
# Runs the bundled $name with the bundle's libraries and the machine's CUDA libraries.
B=\$(cd "\$(dirname "\$(readlink -f "\${BASH_SOURCE[0]}")")/.." && pwd)
[ -n "\${AIC_BUNDLE_LD_PATH:-}" ] || source "\$B/env.sh" >&2
export LD_LIBRARY_PATH=\$AIC_BUNDLE_LD_PATH
exec "\$B/libexec/$name" "\$@"
EOF
  chmod +x "$B/bin/$name"
done

# 3. Shared libraries: everything ldd resolves outside the system and CUDA sets.
declare -A bundled=() cuda=() cxxrt=()
for entry in "${BINARIES[@]}"; do
  while read -r so _ target _; do
    [ "$target" = "not" ] && { log "$so: not found here"; exit 1; }
    if [[ $so =~ $SYSTEM_RE ]]; then continue
    elif [[ $so =~ $CXXRT_RE ]]; then cxxrt[$so]=$target
    elif [[ $so =~ $CUDA_RE ]]; then cuda[$so]=$target
    else bundled[$so]=$target
    fi
  done < <(ldd "${entry#*:}" | awk '$2 == "=>" {print $1, $2, $3, $4}')
done
for so in "${!bundled[@]}"; do cp -L "${bundled[$so]}" "$B/lib/$so"; done
for so in "${!cxxrt[@]}"; do cp -L "${cxxrt[$so]}" "$B/lib-fallback/$so"; done
# Dependencies of dependencies are in ldd's list already (it resolves the whole tree);
# check that nothing in lib/ still needs an unbundled non-system library.
for f in "$B"/lib/*.so*; do
  for need in $(objdump -p "$f" | awk '$1 == "NEEDED" {print $2}'); do
    [ -e "$B/lib/$need" ] || [[ $need =~ $SYSTEM_RE|$CXXRT_RE|$CUDA_RE ]] || { log "$f needs $need, not bundled"; exit 1; }
  done
done

# 4. The backend-suite tests named by the allow-list, the allow-list, the testdata models.
tests=$(grep -v '^#' "$ALLOW" | grep -v '^$')
for t in $tests; do
  [ -d "$SUITE/$t" ] || { log "allow-listed $t not in $SUITE"; exit 1; }
  mkdir -p "$B/suite/$(dirname "$t")"
  cp -r "$SUITE/$t" "$B/suite/$t"
done
cp "$ALLOW" "$B/allowlist_cpu.txt"
cp "$ROOT"/testdata/*.onnx "$B/testdata/"

# 5. env.sh: sourced on the GPU machine to find its CUDA libraries.
{
  echo "# Sourced by the bundle's wrappers and bench/gpu_check.sh on the GPU machine: sets"
  echo "# AIC_BUNDLE_LD_PATH to the bundle's lib/, the folders holding the CUDA libraries the"
  echo "# binaries need (first found of AIC_CUDA_LIBS, the toolkit's, the system's, PyTorch's"
  echo "# nvidia-* wheels, then anywhere under /usr or /opt), and lib-fallback/ when the"
  echo "# machine's libstdc++ is too old."
  echo "AIC_BUNDLE_CUDA_SONAMES=\"$(printf '%s ' "${!cuda[@]}" | sed 's/ $//') libnvrtc.so.13\""
  echo "AIC_BUNDLE_GLIBCXX=$(objdump -T "$B"/libexec/* "$B"/lib/* 2>/dev/null | grep -o 'GLIBCXX_[0-9.]*' | sort -uV | tail -1)"
  cat <<'EOF'
_b=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_cands=()
for _d in ${AIC_CUDA_LIBS:+${AIC_CUDA_LIBS//:/ }} /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda-*/lib64 \
          /usr/local/cuda-*/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu; do
  [ -d "$_d" ] && _cands+=("$_d")
done
for _py in "${PYTHON:-python3}" /opt/torch/.venv/bin/python3; do
  _sp=$("$_py" -c 'import site, sys; print(" ".join(site.getsitepackages()))' 2>/dev/null) || continue
  for _s in $_sp; do
    for _d in "$_s"/nvidia/*/lib "$_s"/nvidia/cu13/lib "$_s"/torch/lib; do [ -d "$_d" ] && _cands+=("$_d"); done
  done
done
_dirs=()
for _so in $AIC_BUNDLE_CUDA_SONAMES; do
  _hit=""
  for _d in "${_cands[@]}"; do
    if [ -e "$_d/$_so" ]; then _hit=$_d; break; fi
  done
  if [ -z "$_hit" ]; then  # last resort: anywhere under /usr or /opt
    _hit=$(find /usr /opt -name "$_so" -print -quit 2> /dev/null)
    _hit=${_hit%/*}
  fi
  if [ -z "$_hit" ]; then
    echo "env.sh: $_so: not found (set AIC_CUDA_LIBS)"
  else
    echo "env.sh: $_so: $_hit"
    case " ${_dirs[*]} " in *" $_hit "*) ;; *) _dirs+=("$_hit") ;; esac
  fi
done
AIC_BUNDLE_LD_PATH=$_b/lib
for _d in "${_dirs[@]}"; do AIC_BUNDLE_LD_PATH=$AIC_BUNDLE_LD_PATH:$_d; done
_cxx=$(/sbin/ldconfig -p 2>/dev/null | awk '$1 == "libstdc++.so.6" {print $NF; exit}')
if [ -n "$_cxx" ] && ! grep -aq "$AIC_BUNDLE_GLIBCXX" "$_cxx"; then
  echo "env.sh: $_cxx lacks $AIC_BUNDLE_GLIBCXX: using lib-fallback/"
  AIC_BUNDLE_LD_PATH=$AIC_BUNDLE_LD_PATH:$_b/lib-fallback
fi
export AIC_BUNDLE_LD_PATH
unset _b _cands _py _sp _s _d _dirs _so _hit _cxx
EOF
} > "$B/env.sh"

# 6. MANIFEST: where the binaries look for things, what is bundled, what the machine gives.
{
  echo "built=$(date -u +%FT%TZ) commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
       "dirty=$(git -C "$ROOT" status --porcelain 2>/dev/null | grep -c . || true)"
  echo "AIC_SOURCE_DIR=$ROOT"
  echo "AIC_BINARY_DIR=$BUILD"
  echo "tests=$(echo "$tests" | wc -l)"
  for v in GLIBC_ GLIBCXX_ CXXABI_ GCC_; do
    echo "needs_max_${v%_}=$(objdump -T "$B"/libexec/* "$B"/lib/* 2>/dev/null | grep -o "\b${v}[0-9.]*" | sort -uV | tail -1)"
  done
  echo "bundled: $(cd "$B/lib" && ls | tr '\n' ' ')"
  echo "fallback: $(cd "$B/lib-fallback" && ls | tr '\n' ' ')"
  echo "from_device: ${!cuda[*]} (and libcuda.so.1, the driver; glibc; libstdc++/libgcc_s)"
} > "$B/MANIFEST"

# 7. Pack, the strongest compressor available.
mkdir -p "$OUT"
rm -f "$OUT"/bundle.tar.*
if command -v xz > /dev/null; then ARCHIVE=$OUT/bundle.tar.xz; tar -C "$STAGE" -cf - "$NAME" | xz -9e -T"$JOBS" > "$ARCHIVE"
elif command -v zstd > /dev/null; then ARCHIVE=$OUT/bundle.tar.zst; tar -C "$STAGE" -cf - "$NAME" | zstd -19 -q > "$ARCHIVE"
else ARCHIVE=$OUT/bundle.tar.gz; tar -C "$STAGE" -czf "$ARCHIVE" "$NAME"
fi
size=$(stat -c %s "$ARCHIVE")
log "$ARCHIVE: $((size / 1024)) KiB (unpacked $(du -sk "$B" | cut -f1) KiB)"
[ "$size" -lt $((48 * 1024 * 1024)) ] || { log "bundle over 48 MiB: too close to the 64 MiB tree limit"; exit 1; }

# 8. Self-check on a fresh unpack: every library resolves to the bundle, the system set or
# CUDA (with the machine's toolkit here standing in for the GPU machine's).
CHECK=$(mktemp -d /tmp/aic-bundle-check.XXXXXX)
trap 'rm -rf "$STAGE" "$CHECK"' EXIT
tar -C "$CHECK" -xf "$ARCHIVE"
U=$CHECK/$NAME
source "$U/env.sh" > /dev/null
bad=0
for entry in "${BINARIES[@]}"; do
  name=${entry%%:*}
  while read -r so _ target _; do
    if [ "$target" = "not" ]; then log "$name: $so not found"; bad=1
    elif [[ $target != "$U"/* ]] && ! [[ $so =~ $SYSTEM_RE|$CXXRT_RE|$CUDA_RE ]]; then
      log "$name: $so resolves outside the bundle ($target)"; bad=1
    fi
  done < <(LD_LIBRARY_PATH=$AIC_BUNDLE_LD_PATH ldd "$U/libexec/$name" | awk '$2 == "=>" {print $1, $2, $3, $4}')
done
"$U/bin/aic-onnx" --help > /dev/null 2>&1 || { log "bundled aic-onnx --help failed"; bad=1; }
[ $bad -eq 0 ] || exit 1
sed -n '1,8p' "$U/MANIFEST" >&2
log "ok: $(ls "$U/lib" | wc -l) libraries bundled; from the device: ${!cuda[*]}"
echo "$ARCHIVE"
