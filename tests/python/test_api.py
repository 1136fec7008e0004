"""The aic_onnx package over its whole API: optimize, report, Session, verify,
with good and bad inputs. Outputs are checked against numpy and ONNX Runtime."""
import os
import threading

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import aic_onnx


def tiny_model(opset=17):
    """y = Relu(x @ W + b) then an Identity pair the optimizer removes."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["xw"], name="matmul"),
        helper.make_node("Add", ["xw", "B"], ["h"], name="add"),
        helper.make_node("Identity", ["h"], ["h2"], name="id"),
        helper.make_node("Relu", ["h2"], ["y"], name="relu"),
    ]
    g = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
                          [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), w, b


# -- optimize ------------------------------------------------------------------

def test_optimize_returns_a_smaller_model_that_computes_the_same():
    model, w, b = tiny_model()
    out, stats = aic_onnx.optimize(model, return_stats=True)
    assert isinstance(out, onnx.ModelProto)
    onnx.checker.check_model(out, full_check=True)
    assert stats["nodes_before"] == 4 and stats["nodes_after"] < 4
    assert stats["verify"]["ok"] is True and stats["verify"]["runs"] == 2
    assert "batch" in [d.dim_param for d in out.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    (y,) = aic_onnx.Session(out).run(None, {"x": x})
    np.testing.assert_allclose(y, np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-6)


def rank3_mlp():
    """x [16, 64] @ W [64, 48] with W of rank 3 exactly: low-rank factors it at rank 3."""
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((64, 3)) @ rng.standard_normal((3, 48))).astype(np.float32)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"], name="fc")], "rank3",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 48])],
                          [numpy_helper.from_array(w, "W")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), w


def test_optimize_applies_low_rank_measured_on_the_samples_given():
    model, w = rank3_mlp()
    rng = np.random.default_rng(4)
    samples = [{"x": rng.standard_normal((16, 64)).astype(np.float32)} for _ in range(3)]
    out, stats = aic_onnx.optimize(model, apply=["low-rank"], calib=samples, measure_latency=False,
                                   return_stats=True)
    onnx.checker.check_model(out, full_check=True)
    approx = stats["approximations"]
    assert approx["samples"] == 3 and not approx["random_data"]
    kept = [s for s in approx["steps"] if s["kept"]]
    assert len(kept) == 1 and kept[0]["kind"] == "low-rank" and "rank 3 of 48" in kept[0]["detail"]
    assert kept[0]["params_after"] == 3 * (64 + 48) and approx["final_error"] < 1e-5
    stored = sum(int(np.prod(t.dims)) for t in out.graph.initializer)
    assert stored == 3 * (64 + 48)
    x = rng.standard_normal((16, 64)).astype(np.float32)
    ort = pytest.importorskip("onnxruntime")
    got = ort.InferenceSession(out.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, x @ w, rtol=1e-3, atol=1e-3 * np.abs(x @ w).max())


def test_optimize_apply_refuses_past_the_budget_and_rejects_bad_specs():
    model, _ = rank3_mlp()
    out, stats = aic_onnx.optimize(model, apply=["low-rank=1"], max_error=1e-6, calib="random:2",
                                   measure_latency=False, return_stats=True)
    steps = stats["approximations"]["steps"]
    assert steps and not any(s["kept"] for s in steps) and "budget" in steps[0]["refused"]
    assert "generated" in stats["approximations"]["data"]
    assert sum(int(np.prod(t.dims)) for t in out.graph.initializer) == 64 * 48
    with pytest.raises(ValueError, match="apply: shrink"):
        aic_onnx.optimize(model, apply=["shrink"])
    with pytest.raises(ValueError, match="calib goes with apply"):
        aic_onnx.optimize(model, calib="random:2")


def test_optimize_takes_bytes_and_paths(tmp_path, testdata):
    model, _, _ = tiny_model()
    a = aic_onnx.optimize(model.SerializeToString(), verify=0)
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    b = aic_onnx.optimize(str(path), verify=0)
    c = aic_onnx.optimize(path, verify=0)  # a PathLike
    assert len(a.graph.node) == len(b.graph.node) == len(c.graph.node)


def test_optimize_writes_the_changes_page(tmp_path):
    model, _, _ = tiny_model()
    page = tmp_path / "changes.html"
    out = aic_onnx.optimize(model, html=page)
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "http://" not in html.replace("http://www.w3.org", "")
    # The rules that made the optimized nodes are named (MatMul+Add became a Gemm).
    assert "remove_identity" in html and "fuse_matmul_add_into_gemm" in html
    assert len(out.graph.node) == 2
    with pytest.raises(Exception, match="cannot write"):
        aic_onnx.optimize(model, html=tmp_path / "no" / "such" / "dir" / "c.html")


def test_optimize_fixes_shapes_and_writes_value_info():
    model, _, _ = tiny_model()
    out = aic_onnx.optimize(model, fix_shapes={"x": [2, 4]})
    assert [d.dim_value for d in out.graph.input[0].type.tensor_type.shape.dim] == [2, 4]
    assert [d.dim_value for d in out.graph.output[0].type.tensor_type.shape.dim] == [2, 3]
    out2 = aic_onnx.optimize(model, fix_dims={"batch": 7})
    assert [d.dim_value for d in out2.graph.input[0].type.tensor_type.shape.dim] == [7, 4]


def test_optimize_keeps_node_names_and_writes_shapes(testdata):
    out = aic_onnx.optimize(str(testdata / "encoder.onnx"), test_shapes={"x": [2, 128, 256]})
    named = [n.name for n in out.graph.node if n.name]
    assert len(named) == len(out.graph.node)
    assert len(out.graph.value_info) > 0
    bare = aic_onnx.optimize(str(testdata / "encoder.onnx"), write_shapes=False, verify=0)
    assert len(bare.graph.value_info) == 0


def test_optimize_to_a_path_with_external_data(tmp_path, testdata):
    target = tmp_path / "out.onnx"
    out = aic_onnx.optimize(str(testdata / "resnet_cnn.onnx"), output_path=str(target), external_data=True,
                            verify=0)
    assert target.exists() and (tmp_path / "out.onnx.data").exists()
    assert isinstance(out, onnx.ModelProto)
    assert len(out.graph.initializer) > 0


def test_optimize_verifies_on_given_inputs():
    model, _, _ = tiny_model()
    x = np.ones((3, 4), np.float32)
    _, stats = aic_onnx.optimize(model, test_inputs=[{"x": x}], return_stats=True)
    assert stats["verify"]["ok"] and stats["verify"]["runs"] == 1


def test_optimize_bad_inputs():
    model, _, _ = tiny_model()
    with pytest.raises(ValueError, match="x"):
        aic_onnx.optimize(model, fix_shapes={"x": [1, 2, 3]})  # rank 3 for a rank-2 input
    with pytest.raises(ValueError, match="dim 1 is 4"):
        aic_onnx.optimize(model, fix_shapes={"x": [2, 5]})  # contradicts the fixed 4
    with pytest.raises(ValueError, match="nope"):
        aic_onnx.optimize(model, fix_shapes={"nope": [1, 4]})
    with pytest.raises(ValueError, match="level"):
        aic_onnx.optimize(model, level=7)
    with pytest.raises(ValueError, match="target"):
        aic_onnx.optimize(model, target="tpu")
    with pytest.raises(TypeError):
        aic_onnx.optimize(42)


def test_a_file_that_is_not_a_model(tmp_path):
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00not a model at all\xff" * 10)
    for call in (lambda: aic_onnx.optimize(str(junk)), lambda: aic_onnx.report(str(junk)),
                 lambda: aic_onnx.Session(str(junk))):
        with pytest.raises(ValueError, match="junk.onnx"):
            call()
    with pytest.raises(ValueError, match="model bytes"):
        aic_onnx.Session(b"garbage")
    with pytest.raises(ValueError, match="missing.onnx"):
        aic_onnx.Session(str(tmp_path / "missing.onnx"))


def test_a_model_that_fails_the_verifier_names_the_node():
    model, _, _ = tiny_model()
    model.graph.node[1].input[1] = "undefined_value"
    with pytest.raises(ValueError, match="undefined_value"):
        aic_onnx.Session(model)


# -- Session -------------------------------------------------------------------

def test_session_matches_onnxruntime_shape_of_the_api(testdata):
    ort = pytest.importorskip("onnxruntime")
    path = str(testdata / "encoder.onnx")
    ours = aic_onnx.Session(path)
    theirs = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (i,) = ours.get_inputs()
    (j,) = theirs.get_inputs()
    assert (i.name, i.type, i.shape) == (j.name, j.type, j.shape) == ("x", "tensor(float)", ["batch", 128, 256])
    assert [o.name for o in ours.get_outputs()] == [o.name for o in theirs.get_outputs()]
    x = np.random.default_rng(2).standard_normal((2, 128, 256)).astype(np.float32)
    (a,) = ours.run(None, {"x": x})
    (b,) = theirs.run(None, {"x": x})
    assert a.dtype == np.float32 and a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)
    (c,) = ours.run(["y"], {"x": x})
    np.testing.assert_array_equal(a, c)
    assert ours.get_providers() == ["cpu"]
    assert "cpu, -O2" in ours.describe()


def test_session_reference_device_and_opt_levels(testdata):
    x = np.random.default_rng(3).standard_normal((1, 10)).astype(np.float32)
    path = str(testdata / "seed_mlp.onnx")
    outs = [aic_onnx.Session(path, device=d, opt_level=o).run(None, {"input": x})[0]
            for d, o in (("cpu", None), ("cpu", 0), ("reference", None), ("reference", 2))]
    for o in outs[1:]:
        np.testing.assert_allclose(o, outs[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="device"):
        aic_onnx.Session(path, device="tpu")


def test_session_outputs_are_owned_writable_arrays(testdata):
    s = aic_onnx.Session(str(testdata / "seed_mlp.onnx"))
    x = np.ones((1, 10), np.float32)
    (y,) = s.run(None, {"input": x})
    (y2,) = s.run(None, {"input": x})
    y[...] = 0  # writable, and not the session's arena: the next run is unaffected
    assert not np.shares_memory(y, y2) and np.any(y2 != 0)


def test_session_reads_non_contiguous_inputs_correctly(testdata):
    s = aic_onnx.Session(str(testdata / "seed_mlp.onnx"))
    base = np.random.default_rng(4).standard_normal((10, 2)).astype(np.float32)
    view = base.T[:1]  # not C-contiguous
    (a,) = s.run(None, {"input": view})
    (b,) = s.run(None, {"input": np.ascontiguousarray(view)})
    np.testing.assert_array_equal(a, b)


def test_session_bad_feeds(testdata):
    s = aic_onnx.Session(str(testdata / "seed_mlp.onnx"))
    good = np.ones((1, 10), np.float32)
    with pytest.raises(ValueError, match="input"):
        s.run(None, {})  # missing
    with pytest.raises(ValueError, match="float"):
        s.run(None, {"input": good.astype(np.float64)})  # wrong dtype
    with pytest.raises(ValueError, match="input"):
        s.run(None, {"input": np.ones((1, 11), np.float32)})  # wrong shape
    with pytest.raises(ValueError, match="input"):
        s.run(None, {"input": np.ones((10,), np.float32)})  # wrong rank
    with pytest.raises(ValueError, match="bogus"):
        s.run(None, {"input": good, "bogus": good})  # unknown input
    with pytest.raises(ValueError, match="nonexistent"):
        s.run(["nonexistent"], {"input": good})  # unknown output
    with pytest.raises(ValueError, match="input"):
        s.run(None, {"input": "not an array"})
    s.run(None, {"input": good})  # still usable after the errors


def test_two_threads_run_two_sessions_at_once(testdata):
    """The GIL is released while running: two sessions in two threads overlap
    (each run sees the other in flight), and results match one thread's."""
    path = str(testdata / "encoder.onnx")
    sessions = [aic_onnx.Session(path, threads=1) for _ in range(2)]
    x = np.random.default_rng(5).standard_normal((4, 128, 256)).astype(np.float32)
    expected = sessions[0].run(None, {"x": x})[0]
    in_flight = [0]
    overlapped = [False]
    lock = threading.Lock()
    errors = []

    def work(s):
        try:
            for _ in range(6):
                with lock:
                    in_flight[0] += 1
                (y,) = s.run(None, {"x": x})
                with lock:
                    in_flight[0] -= 1
                np.testing.assert_array_equal(y, expected)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    # A watcher samples how many runs are inside run() at once; with the GIL
    # held through run() it could never see two.
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            with lock:
                if in_flight[0] == 2:
                    overlapped[0] = True
            stop.wait(0.0005)

    threads = [threading.Thread(target=work, args=(s,)) for s in sessions]
    w = threading.Thread(target=watch)
    w.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    w.join()
    assert not errors, errors
    assert overlapped[0], "the two runs never overlapped"


def test_one_session_from_two_threads_stays_correct(testdata):
    s = aic_onnx.Session(str(testdata / "encoder.onnx"))
    rng = np.random.default_rng(6)
    xs = [rng.standard_normal((1, 128, 256)).astype(np.float32) for _ in range(2)]
    expected = [s.run(None, {"x": x})[0] for x in xs]
    errors = []

    def work(k):
        try:
            for _ in range(5):
                np.testing.assert_array_equal(s.run(None, {"x": xs[k]})[0], expected[k])
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_session_on_paddleocr_matches_onnxruntime(ppocr):
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(7)
    for name, shape in (("ppocr_det.onnx", (1, 3, 320, 320)), ("ppocr_rec.onnx", (1, 3, 48, 320)),
                        ("ppocr_cls.onnx", (1, 3, 48, 192))):
        path = str(ppocr / name)
        x = rng.standard_normal(shape).astype(np.float32)
        (ours,) = aic_onnx.Session(path).run(None, {"x": x})
        (theirs,) = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})
        np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=1e-4, err_msg=name)


def test_optimize_on_paddleocr_rec_in_memory_runs_in_onnxruntime(ppocr):
    ort = pytest.importorskip("onnxruntime")
    original = onnx.load(str(ppocr / "ppocr_rec.onnx"))
    out, stats = aic_onnx.optimize(original, return_stats=True)
    assert stats["nodes_after"] < stats["nodes_before"] and stats["verify"]["ok"]
    onnx.checker.check_model(out, full_check=True)
    x = np.random.default_rng(8).standard_normal((1, 3, 48, 320)).astype(np.float32)
    a = ort.InferenceSession(original.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    b = ort.InferenceSession(out.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


# -- report --------------------------------------------------------------------

def test_report_is_the_json_schema(testdata):
    r = aic_onnx.report(str(testdata / "seed_mlp.onnx"), calib=8)
    assert r["schema"] == "aic-onnx.report/1"
    assert r["summary"]["total_parameters"] == sum(n["parameters"] for n in r["nodes"]) > 0
    assert all(n["onnx_nodes"] for n in r["nodes"])
    calibration = r["summary"]["calibration"]
    assert calibration["ran"] and calibration["random"] and calibration["samples"] == 8
    assert any(n["activation"] for n in r["nodes"])
    text = aic_onnx.report(str(testdata / "seed_mlp.onnx"), format="text")
    assert isinstance(text, str) and "param" in text.lower()
    page = aic_onnx.report(str(testdata / "seed_mlp.onnx"), format="html")
    assert page.lstrip().lower().startswith("<!doctype html") and "</html>" in page
    assert "<title>seed_mlp.onnx" in page and "Linear" in page and "https://" not in page
    with pytest.raises(ValueError, match="format"):
        aic_onnx.report(str(testdata / "seed_mlp.onnx"), format="svg")


def test_report_calibration_from_arrays_and_shapes(testdata):
    x = [{"x": np.random.default_rng(k).standard_normal((1, 128, 256)).astype(np.float32)} for k in range(2)]
    r = aic_onnx.report(str(testdata / "encoder.onnx"), calib=x, spectra=False)
    assert r["summary"]["calibration"]["ran"] and r["summary"]["calibration"]["samples"] == 2
    r1 = aic_onnx.report(str(testdata / "encoder.onnx"), spectra=False)  # batch analysed at 1
    r4 = aic_onnx.report(str(testdata / "encoder.onnx"), shapes={"x": [4, 128, 256]}, spectra=False)
    assert r4["summary"]["total_macs"] == 4 * r1["summary"]["total_macs"] > 0
    assert r4["summary"]["symbolic"]["dims"][0] == {"name": "batch", "analysed_at": 4, "given": True}


def test_report_calibration_from_a_folder(tmp_path, testdata):
    x = np.random.default_rng(10).standard_normal((1, 10)).astype(np.float32)
    for k in range(3):
        (tmp_path / f"s{k}").mkdir()
        np.save(tmp_path / f"s{k}" / "input.npy", x + k)
    r = aic_onnx.report(str(testdata / "seed_mlp.onnx"), calib=tmp_path)  # a PathLike folder
    assert r["summary"]["calibration"]["ran"] and r["summary"]["calibration"]["samples"] == 3
    assert r["summary"]["calibration"]["random"] is False


def test_report_bad_inputs(testdata):
    with pytest.raises(ValueError, match="energy"):
        aic_onnx.report(str(testdata / "seed_mlp.onnx"), energy=2)
    with pytest.raises(ValueError, match="input"):
        aic_onnx.report(str(testdata / "seed_mlp.onnx"), shapes={"input": [1, 11]})
    with pytest.raises(ValueError, match="not a directory"):
        aic_onnx.report(str(testdata / "seed_mlp.onnx"), calib="/nonexistent/folder")


# -- verify --------------------------------------------------------------------

def test_verify_agrees_and_finds_a_difference(tmp_path):
    model, w, b = tiny_model()
    opt = aic_onnx.optimize(model, verify=0)
    r = aic_onnx.verify(model, opt)
    assert r and r.ok and r.runs == 2 and r.outputs[0].name == "y"
    broken = onnx.ModelProto()
    broken.CopyFrom(model)
    broken.graph.initializer[1].CopyFrom(numpy_helper.from_array(b + 1.0, "B"))
    r = aic_onnx.verify(model, broken, inputs={"x": np.ones((2, 4), np.float32)})
    assert not r and not r.outputs[0].ok and r.outputs[0].max_abs > 0.1


def test_optimize_raises_when_verification_fails(testdata):
    """A mismatch is an exception carrying the stats and the model: Conv+BatchNorm
    folding rounds differently, which a zero tolerance cannot accept."""
    with pytest.raises(aic_onnx.VerificationError, match="logits max abs") as caught:
        aic_onnx.optimize(str(testdata / "resnet_cnn.onnx"), rtol=0.0, atol=0.0)
    assert caught.value.stats["verify"]["ok"] is False
    assert isinstance(caught.value.model, onnx.ModelProto)
    aic_onnx.optimize(str(testdata / "resnet_cnn.onnx"))  # the default tolerance accepts it


def test_models_with_external_data(tmp_path, testdata):
    """A model whose weights live beside it (how models over 2 GB are stored):
    by path, and as a ModelProto whose external data is not loaded, with the
    folder it resolves against."""
    model = onnx.load(str(testdata / "resnet_cnn.onnx"))
    path = tmp_path / "ext.onnx"
    onnx.save(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location="ext.data",
              size_threshold=0)
    x = np.random.default_rng(9).standard_normal((1, 3, 224, 224)).astype(np.float32)
    expected = aic_onnx.Session(str(testdata / "resnet_cnn.onnx")).run(None, {"x": x})[0]
    np.testing.assert_array_equal(aic_onnx.Session(str(path)).run(None, {"x": x})[0], expected)
    out = aic_onnx.optimize(str(path))
    assert len(out.graph.node) < len(model.graph.node)
    shell = onnx.load(str(path), load_external_data=False)
    np.testing.assert_array_equal(aic_onnx.Session(shell, base_dir=str(tmp_path)).run(None, {"x": x})[0], expected)
    with pytest.raises(ValueError, match="external"):
        aic_onnx.Session(shell)


@pytest.mark.parametrize("dtype,onnx_type", [
    (np.float32, TensorProto.FLOAT), (np.float64, TensorProto.DOUBLE), (np.float16, TensorProto.FLOAT16),
    (np.int8, TensorProto.INT8), (np.int16, TensorProto.INT16), (np.int32, TensorProto.INT32),
    (np.int64, TensorProto.INT64), (np.uint8, TensorProto.UINT8), (np.uint16, TensorProto.UINT16),
    (np.uint32, TensorProto.UINT32), (np.uint64, TensorProto.UINT64), (np.bool_, TensorProto.BOOL)])
def test_every_numpy_dtype_goes_in_and_comes_out(dtype, onnx_type):
    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "id",
                          [helper.make_tensor_value_info("x", onnx_type, [3])],
                          [helper.make_tensor_value_info("y", onnx_type, [3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    x = np.array([1, 0, 1]).astype(dtype)
    (y,) = aic_onnx.Session(m).run(None, {"x": x})
    assert y.dtype == x.dtype
    np.testing.assert_array_equal(y, x)
    assert not np.shares_memory(y, x)  # an input passed through comes back as a copy
