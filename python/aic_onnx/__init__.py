"""aic-onnx from Python: optimize, explain and run ONNX models in memory.

The same C++ library as the ``aic-onnx`` command (nothing goes through the
command line): ``optimize`` is ``aic-onnx opt``, ``report`` is
``aic-onnx report --format json``, ``Session`` runs a model the way
``onnxruntime.InferenceSession`` does, ``verify`` is ``aic-onnx verify``.

A model is an ``onnx.ModelProto``, its serialized bytes, or a path (a path is
the way for models over protobuf's 2 GB limit, with external data).

Errors are exceptions carrying the command line's one-line message:
``ValueError`` for a bad model, input or argument, ``RuntimeError`` for an
internal failure, ``VerificationError`` when an optimized model does not
compute what the original does.
"""

from __future__ import annotations

import json as _json
import os as _os
import tempfile as _tempfile
import warnings as _warnings
from dataclasses import dataclass as _dataclass, field as _field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union


def _set_process_defaults() -> None:
    """What the command line sets by re-executing itself, set before the
    extension loads its libraries (they read these variables once, at load).

    The user's own settings stand. libgomp (oneDNN's and our kernels'
    threads): a bounded spin (~30 ms), then sleep (exec/cpu/threading.cc explains
    the numbers). OpenBLAS (the report's SVDs): Debian's 0.3.21 takes recent
    x86 cores for pre-AVX2 ones (analysis/spectrum.cc).
    """
    env = _os.environ
    if "OMP_WAIT_POLICY" not in env and "GOMP_SPINCOUNT" not in env:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
        env["GOMP_SPINCOUNT"] = "3000000"
    if "OPENBLAS_CORETYPE" not in env:
        try:
            with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
                flags = set()
                for line in f:
                    if line.startswith("flags"):
                        flags = set(line.split(":", 1)[1].split())
                        break
        except OSError:
            flags = set()
        if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:
            env["OPENBLAS_CORETYPE"] = "SkylakeX"
        elif {"avx2", "fma"} <= flags:
            env["OPENBLAS_CORETYPE"] = "Haswell"


_set_process_defaults()

from . import _core  # noqa: E402  (after the variables above)

__version__ = _core.version().split(" ")[0]
__all__ = ["optimize", "report", "Session", "verify", "NodeArg", "VerifyResult", "OutputError",
           "VerificationError", "__version__"]

ModelLike = Union["onnx.ModelProto", bytes, str, "os.PathLike[str]"]  # noqa: F821

_PROTOBUF_LIMIT = 2**31 - 1


class VerificationError(RuntimeError):
    """The optimized model's outputs differ from the original's beyond the
    tolerance. ``stats`` holds the whole statistics (``stats["verify"]`` the
    per-output errors), ``model`` the optimized model for inspection."""

    def __init__(self, message: str, stats: Dict[str, Any], model: Any = None):
        super().__init__(message)
        self.stats = stats
        self.model = model


def _source(model: ModelLike, base_dir: Optional[str]):
    """(what _core takes: bytes or a path, a name for messages, the folder of
    external data for bytes)."""
    if isinstance(model, (str, _os.PathLike)):
        path = _os.fspath(model)
        return path, path, ""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), "<model bytes>", base_dir or ""
    serialize = getattr(model, "SerializeToString", None)
    if serialize is None:
        raise TypeError(f"a model is an onnx.ModelProto, its serialized bytes or a path, not {type(model).__name__}")
    # Serialized first and sized only when that fails: ByteSize() encodes the
    # whole message too, doubling the cost for every model under the limit.
    try:
        data = serialize()
        size = len(data)
    except Exception:
        size = model.ByteSize()
        if size <= _PROTOBUF_LIMIT:
            raise
        data = None
    if size > _PROTOBUF_LIMIT:
        raise ValueError(f"the ModelProto is {size} bytes, past protobuf's 2 GB limit: save it with external "
                         "data (onnx.save(..., save_as_external_data=True)) and pass the path")
    name = "<ModelProto"
    graph_name = getattr(getattr(model, "graph", None), "name", "")
    name += f" {graph_name!r}>" if graph_name else ">"
    return data, name, base_dir or ""


def _shapes(shapes: Optional[Mapping[str, Sequence[int]]], what: str) -> Optional[Dict[str, List[int]]]:
    if shapes is None:
        return None
    if not isinstance(shapes, Mapping):
        raise TypeError(f"{what} is a dict of input name -> dims")
    out = {}
    for name, dims in shapes.items():
        try:
            out[str(name)] = [int(d) for d in dims]
        except (TypeError, ValueError):
            raise ValueError(f"{what}: '{name}' needs a list of ints, got {dims!r}") from None
    return out


def _load_onnx():
    try:
        import onnx
    except ImportError as e:  # pragma: no cover - onnx is a dependency
        raise RuntimeError("aic_onnx needs the onnx package to return ModelProtos") from e
    return onnx


def optimize(model: ModelLike, *, level: int = 2, target: str = "onnx",
             fix_shapes: Optional[Mapping[str, Sequence[int]]] = None,
             fix_dims: Optional[Mapping[str, int]] = None,
             verify: int = 2,
             test_shapes: Optional[Mapping[str, Sequence[int]]] = None,
             test_inputs: Optional[Sequence[Mapping[str, Any]]] = None,
             rtol: float = 1e-3, atol: float = 1e-4,
             fold_limit: int = 0, fold_dequantize: bool = False,
             write_shapes: bool = True,
             output_path: Optional[str] = None, external_data: bool = False,
             base_dir: Optional[str] = None,
             html: Optional[str] = None,
             apply: Optional[Sequence[str]] = None, max_error: float = 1e-2,
             calib: Any = None, min_activation: float = 0.0, keep_slower: bool = False,
             measure_latency: bool = True, seed: int = 0,
             return_stats: bool = False):
    """Optimizes a model with the e-graph rewriter; returns an ``onnx.ModelProto``
    (``(model, stats)`` with ``return_stats=True``). ``aic-onnx opt`` in memory.

    level: 0 nothing, 1 exact rules, 2 (default) + rules equal up to rounding
        (Conv+BatchNorm, ...), 3 + more of those.
    target: ``"onnx"`` standard ops at the model's opset; ``"aic"`` also
        aic-onnx's fused ops (domain ai.aic).
    fix_shapes: ``{"x": [1, 3, 224, 224]}`` gives inputs concrete dims (-1 keeps
        a dim); checked against the input's rank and fixed dims.
    fix_dims: ``{"batch": 1}`` fixes a symbolic dim everywhere it appears.
    verify: number of random input sets the result is compared with the
        original on (0: none), both run on the fast CPU executor. A mismatch
        raises VerificationError; a verification that cannot run is a warning.
    test_shapes: the shapes verification feeds (the model keeps its symbolic
        dims); default: fixed shapes, else a realistic size per symbolic dim.
    test_inputs: feed dicts (name -> numpy array) to verify on instead.
    rtol, atol: the verification tolerance (a model that quantizes activations
        is compared at no less than 1e-2 / 1e-2: one rounding step moved by a
        reassociating rule).
    fold_limit: bytes constant folding may add to the weights.
    fold_dequantize: fold DequantizeLinear of constant weights into floats.
    write_shapes: write every inferred shape as value_info.
    output_path: also write the model there (``external_data`` to keep its
        tensors in a ``.data`` file beside it).
    base_dir: where a ModelProto's or bytes' external data lives.
    html: also write what the rewriter changed to this path, as one
        self-contained page (``aic-onnx opt --html``): the original and
        optimized graphs side by side, each optimized node linked to the
        nodes it replaced and the rule that made it.
    apply: approximate transformations after the exact optimization
        (``aic-onnx opt --apply``), never by default: ``"low-rank"`` (each
        layer's rank chosen on the samples), ``"low-rank=0.95"`` (an energy
        share), ``"low-rank=64"`` (a rank), ``"prune-dead"``,
        ``"merge-linear"``. Each candidate is measured on the calibration
        samples against the original and refused when an output's relative L2
        error passes ``max_error``, or (``measure_latency``, unless
        ``keep_slower``) when it runs more than 3% slower; the steps are in
        ``stats["approximations"]``.
    calib: what ``apply`` measures on: None (8 random samples at the
        verification shapes, generated data), ``"random:N"``, a folder of
        samples (as ``report``), or a list of feed dicts.
    min_activation: ``prune-dead`` also removes units active on at most this
        share of positions.
    seed: of the random calibration samples.
    return_stats: also return the statistics of ``aic-onnx opt --stats``
        (nodes before/after, rules fired, op types, times, verification,
        approximations).
    """
    src, name, bdir = _source(model, base_dir)
    if test_inputs is not None and isinstance(test_inputs, Mapping):
        test_inputs = [test_inputs]
    onnx = _load_onnx()
    with _tempfile.TemporaryDirectory(prefix="aic_onnx_") as spill_dir:
        spill = _os.path.join(spill_dir, "model.onnx")
        data, stats_text = _core.optimize(
            src, name, bdir, int(level), str(target), _shapes(fix_shapes, "fix_shapes"),
            dict(fix_dims) if fix_dims is not None else None, int(fold_limit), bool(fold_dequantize),
            int(verify) if test_inputs is None else max(int(verify), 1), _shapes(test_shapes, "test_shapes"),
            list(test_inputs) if test_inputs is not None else None, float(rtol), float(atol),
            bool(write_shapes), _os.fspath(output_path) if output_path else "", spill, bool(external_data),
            _os.fspath(html) if html else "", [str(a) for a in (apply or [])], float(max_error),
            _os.fspath(calib) if isinstance(calib, _os.PathLike) else calib, float(min_activation),
            bool(keep_slower), bool(measure_latency), int(seed))
        if data is not None:
            result = onnx.ModelProto.FromString(data)
        elif output_path:
            result = onnx.load(_os.fspath(output_path))
        else:
            result = onnx.load(spill)  # past 2 GB: the external data loaded into memory
    stats = _json.loads(stats_text)
    checked = stats.get("verify")
    if checked is not None:
        if "skipped" in checked:
            _warnings.warn(f"aic_onnx.optimize: verification skipped ({checked['skipped']})", RuntimeWarning,
                           stacklevel=2)
        elif not checked.get("ok", True):
            bad = [o for o in checked.get("outputs", []) if not o.get("ok", True)]
            worst = ", ".join(f"{o['name']} max abs {o['max_abs']:.3g} max rel {o['max_rel']:.3g}" for o in bad)
            where = f" on {checked['shapes']}" if checked.get("shapes") else ""
            raise VerificationError(f"{name}: the optimized model differs from the original{where}: {worst} "
                                    f"(rtol {checked.get('rtol', rtol):g} atol {checked.get('atol', atol):g})", stats, result)
    return (result, stats) if return_stats else result


def report(model: ModelLike, *, calib: Union[None, int, str, Sequence[Mapping[str, Any]]] = None,
           energy: float = 0.99, shapes: Optional[Mapping[str, Sequence[int]]] = None,
           spectra: bool = True, seed: int = 0, rare: float = 0.01, max_svd_dim: int = 4096,
           format: str = "json", base_dir: Optional[str] = None):
    """The model explained op by op, then as a graph: ``aic-onnx report``.
    Returns the JSON report as a dict (schema: docs/report-schema.md), or the
    text/Markdown report as a str with ``format="text"``/``"md"``, or the
    self-contained HTML page (``aic-onnx report --format html``) with
    ``format="html"``.

    calib: calibration data for activation ratios and dead units: ``N`` or
        ``"random:N"`` random samples, a folder (as ``--calib DIR``), or a list
        of feed dicts (name -> numpy array).
    energy: spectral energy a low-rank candidate keeps.
    shapes: sizes to analyse inputs with symbolic dims at (``{"x": [1, 3, 640, 640]}``).
    spectra: compute the weights' singular values (the slow part on large models).
    """
    src, name, bdir = _source(model, base_dir)
    if isinstance(calib, _os.PathLike):
        calib = _os.fspath(calib)
    if calib is not None and isinstance(calib, Mapping):
        calib = [calib]
    if calib is not None and not isinstance(calib, (int, str)):
        calib = list(calib)
    text = _core.report(src, name, bdir, _shapes(shapes, "shapes"), calib, float(energy), bool(spectra), int(seed),
                        float(rare), int(max_svd_dim), str(format))
    return _json.loads(text) if format == "json" else text


@_dataclass(frozen=True)
class NodeArg:
    """A graph input or output as ``onnxruntime.NodeArg`` shows it: ``name``,
    ``type`` (``"tensor(float)"``) and ``shape`` (ints, symbolic dims as
    their names, None for an unknown dim; None for an unknown rank)."""
    name: str
    type: str
    shape: Optional[List[Union[int, str, None]]]


class Session:
    """Runs a model: ``onnxruntime.InferenceSession`` with the same calls.

    device: ``"cpu"`` (the fast executor: oneDNN and our kernels, after the
        rewriter's fusions) or ``"reference"`` (the oracle interpreter).
    threads: threads a run uses (None: the core count; small models take 1).
    opt_level: the rewriter's -O level (None: the device's default, 2 on cpu,
        0 on reference; 0 runs the graph as loaded).

    ``run`` releases the GIL; separate sessions run in parallel from
    separate threads, one session runs one call at a time. Inputs that are
    C-contiguous and aligned numpy arrays are read in place, not copied.
    """

    def __init__(self, model: ModelLike, *, device: str = "cpu", threads: Optional[int] = None,
                 opt_level: Optional[int] = None, base_dir: Optional[str] = None, providers: Any = None):
        del providers  # accepted so ONNX Runtime code switches with one line
        src, name, bdir = _source(model, base_dir)
        self._core = _core.Session(src, name, bdir, str(device), int(threads or 0),
                                   None if opt_level is None else int(opt_level))
        self._inputs = [NodeArg(*io) for io in self._core.inputs()]
        self._outputs = [NodeArg(*io) for io in self._core.outputs()]

    def run(self, output_names: Optional[Sequence[str]], input_feed: Mapping[str, Any],
            run_options: Any = None) -> List[Any]:
        """The outputs named (all for None), in that order, as numpy arrays.
        A missing, unknown, wrongly typed or shaped input is a ValueError
        naming it and what the model declares."""
        del run_options
        if not isinstance(input_feed, dict):
            input_feed = dict(input_feed)
        return self._core.run(output_names, input_feed)

    def get_inputs(self) -> List[NodeArg]:
        """The graph inputs a caller feeds (without initializer defaults)."""
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        return list(self._outputs)

    def get_providers(self) -> List[str]:
        return [self._core.device()]

    def describe(self) -> str:
        """What the rewriter did for this device ("cpu, -O2: 199 -> 174 nodes; rules: ...")."""
        return self._core.describe()


@_dataclass(frozen=True)
class OutputError:
    name: str
    max_abs: float
    max_rel: float
    ok: bool
    problem: str = ""


@_dataclass(frozen=True)
class VerifyResult:
    """Whether two models agree: ``ok`` (also the truth value), the worst
    error per output over all input sets, where they ran."""
    ok: bool
    runs: int
    device: str
    outputs: List[OutputError] = _field(default_factory=list)
    shapes: str = ""
    fallback: str = ""

    def __bool__(self) -> bool:
        return self.ok


def verify(a: ModelLike, b: ModelLike, *, inputs: Union[None, Mapping[str, Any], Sequence[Mapping[str, Any]]] = None,
           runs: int = 2, shapes: Optional[Mapping[str, Sequence[int]]] = None, rtol: float = 1e-3,
           atol: float = 1e-4, device: str = "cpu", seed: int = 1000) -> VerifyResult:
    """Runs both models on the same inputs (``inputs``: a feed dict or a list of
    them; else ``runs`` random sets at ``shapes``, realistic sizes for other
    symbolic dims) and compares every output: ``|a - b| <= atol + rtol *
    max(|a|, peak / 100)`` (peak: the output's largest finite ``|a|``).
    ``aic-onnx verify``. Both run as given (no rewriting) on ``device``."""
    sa, na, da = _source(a, None)
    sb, nb, db = _source(b, None)
    if inputs is not None and not isinstance(inputs, Mapping):
        inputs = list(inputs)
    r = _core.verify(sa, sb, na, nb, da, db, inputs, int(runs), _shapes(shapes, "shapes"), float(rtol), float(atol),
                     str(device), int(seed))
    return VerifyResult(ok=r["ok"], runs=r["runs"], device=r["device"], shapes=r["shapes"], fallback=r["fallback"],
                        outputs=[OutputError(**o) for o in r["outputs"]])
