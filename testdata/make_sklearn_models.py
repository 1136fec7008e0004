"""Writes testdata/sklearn/: small scikit-learn models converted by skl2onnx
(the ai.onnx.ml operators aic-onnx runs), each NAME.onnx with a fixed input
NAME.input.npy. tests/integration/sklearn_vs_ort.py runs them through
`aic-onnx run` and compares with ONNX Runtime.

Needs its own venv (the project venv has no scikit-learn):
  python3 -m venv /tmp/sk-venv && /tmp/sk-venv/bin/pip install scikit-learn==1.9.1 \
      skl2onnx==1.20.0 onnx==1.23.2 onnxruntime==1.32.0 numpy==2.4.6 protobuf==7.36.2
  /tmp/sk-venv/bin/python testdata/make_sklearn_models.py [OUT_DIR]

Everything is seeded and small (few trees, shallow, few support vectors), so
the folder stays well under 1 MB and the same versions write the same files.
"""

import os
import sys
import warnings

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto, helper
from sklearn.base import is_classifier
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (GradientBoostingClassifier, GradientBoostingRegressor,
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (Binarizer, MaxAbsScaler, MinMaxScaler, Normalizer,
                                   OneHotEncoder, StandardScaler)
from sklearn.svm import SVC, SVR, LinearSVC, OneClassSVM
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from skl2onnx import convert_sklearn
from skl2onnx.common.data_types import FloatTensorType, Int64TensorType

# The converter picks the lowest ai.onnx.ml opset each model needs (1, or 3
# for double trees).
OPSETS = {"": 17, "ai.onnx.ml": 3}
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "sklearn")
N_FEATURES = 4


def data(seed, n=60, features=N_FEATURES, classes=None):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, features)).astype(np.float32)
    if classes is None:
        y = x @ rng.normal(size=features) + 0.1 * rng.normal(size=n)
        return x, y.astype(np.float32)
    # Labels from a linear score so every class is learnable and present.
    score = x @ rng.normal(size=(features, classes))
    return x, np.argmax(score, axis=1)


def save(name, model, x_test, input_type=None, zipmap=False):
    """skl2onnx's conversion of a fitted model (zipmap=False: plain probabilities)."""
    initial = [("X", input_type or FloatTensorType([None, x_test.shape[1]]))]
    # Classifiers give plain probability tensors unless ZipMap is asked for.
    final = model.steps[-1][1] if hasattr(model, "steps") else model
    options = {id(final): {"zipmap": zipmap}} if is_classifier(final) else None
    try:
        onx = convert_sklearn(model, initial_types=initial, target_opset=OPSETS, options=options)
    except NameError:  # a converter without the zipmap option (LinearSVC) never adds ZipMap
        onx = convert_sklearn(model, initial_types=initial, target_opset=OPSETS)
    onx.producer_name = "make_sklearn_models.py"
    # skl2onnx names graphs by a random uuid and lists opsets in set order
    # (sometimes twice): fixed here so that the same versions write the same bytes.
    onx.graph.name = name
    versions = {}
    for o in onx.opset_import:
        versions[o.domain] = max(versions.get(o.domain, 0), o.version)
    del onx.opset_import[:]
    onx.opset_import.extend(helper.make_opsetid(d, v) for d, v in sorted(versions.items()))
    onnx.checker.check_model(onx)
    onnx.save(onx, os.path.join(OUT, name + ".onnx"))
    np.save(os.path.join(OUT, name + ".input.npy"), x_test)


def save_as_tensor(name, model, x_test):
    """The float model's tree node at opset 3: double X, *_as_tensor attributes."""
    options = {id(model): {"zipmap": False}} if is_classifier(model) else None
    onx = convert_sklearn(model, initial_types=[("X", FloatTensorType([None, x_test.shape[1]]))],
                          target_opset=OPSETS, options=options)
    for node in onx.graph.node:
        if not node.op_type.startswith("TreeEnsemble"):
            continue
        attrs = []
        for a in node.attribute:
            if a.name in ("nodes_values", "base_values", "target_weights", "class_weights", "nodes_hitrates"):
                attrs.append(helper.make_attribute(
                    a.name + "_as_tensor", onnx.numpy_helper.from_array(np.array(a.floats, dtype=np.float64))))
            else:
                attrs.append(a)
        del node.attribute[:]
        node.attribute.extend(attrs)
    onx.graph.input[0].type.tensor_type.elem_type = TensorProto.DOUBLE
    del onx.opset_import[:]
    onx.opset_import.extend([helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)])
    onx.producer_name = "make_sklearn_models.py"
    onx.graph.name = name  # skl2onnx names graphs by a random uuid
    onnx.checker.check_model(onx)
    onnx.save(onx, os.path.join(OUT, name + ".onnx"))
    np.save(os.path.join(OUT, name + ".input.npy"), x_test)


def save_handmade(name, node, x_test, in_type, out_types, ml_opset=1):
    """A one-node model for an op skl2onnx does not emit on its own."""
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("X", in_type, [None] + list(x_test.shape[1:]))],
        [helper.make_tensor_value_info(o, t, shape) for o, t, shape in out_types])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                helper.make_opsetid("ai.onnx.ml", ml_opset)])
    m.ir_version = 8
    m.producer_name = "make_sklearn_models.py"
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(OUT, name + ".onnx"))
    np.save(os.path.join(OUT, name + ".input.npy"), x_test)


def main():
    # SVC(probability=True) is deprecated in 1.9 but is what deployed models use.
    warnings.simplefilter("ignore", FutureWarning)
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith((".onnx", ".npy")):
            os.remove(os.path.join(OUT, f))
    x2, y2 = data(1, classes=2)
    x3, y3 = data(2, classes=3)
    xr, yr = data(3)
    xt = data(4, n=12)[0]
    names3 = np.array(["ant", "bee", "cat"])

    # Linear models: LinearClassifier / LinearRegressor.
    save("logreg_binary", LogisticRegression().fit(x2, y2 * 5 + 2), xt)
    m = LogisticRegression().fit(x3, names3[y3])
    save("logreg_multi_strings", m, xt)
    m = LinearSVC().fit(x3, y3)
    save("linear_svc_multi", m, xt)
    m = LinearSVC().fit(x2, y2)
    save("linear_svc_binary", m, xt)
    save("linear_regression", LinearRegression().fit(xr, yr), xt)
    save("ridge_two_targets", Ridge().fit(xr, np.stack([yr, -2 * yr + 1], axis=1)), xt)

    # SVMs: SVMClassifier / SVMRegressor.
    m = SVC(probability=True, random_state=0).fit(x2[:30], y2[:30])
    save("svc_rbf_proba_binary", m, xt)
    m = SVC(probability=True, random_state=0).fit(x3[:40], names3[y3[:40]])
    save("svc_rbf_proba_multi", m, xt)
    m = SVC(kernel="poly", degree=3, gamma=0.5, coef0=1.0).fit(x3[:40], y3[:40])
    save("svc_poly_multi", m, xt)
    m = SVC(kernel="linear").fit(x2[:30], y2[:30])
    save("svc_linear_binary", m, xt)
    m = SVC(kernel="sigmoid", gamma=0.1).fit(x3[:40], y3[:40] + 10)
    save("svc_sigmoid_multi", m, xt)
    save("svr_rbf", SVR().fit(xr[:30], yr[:30]), xt)
    save("one_class_svm", OneClassSVM(gamma=0.5).fit(xr[:30]), xt)

    # Trees: TreeEnsembleClassifier / TreeEnsembleRegressor.
    m = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0).fit(x2, y2)
    save("rf_binary", m, xt)
    m = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0).fit(x2, y2 * 3 + 7)
    save("rf_binary_labels", m, xt)
    m = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0).fit(x3, names3[y3])
    save("rf_multi_strings", m, xt)
    m = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(x3, y3)
    save("rf_multi_ints", m, xt)
    m = GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0).fit(x2, y2)
    save("gb_binary", m, xt)
    m = GradientBoostingClassifier(n_estimators=4, max_depth=2, random_state=0).fit(x3, names3[y3])
    save("gb_multi_strings", m, xt)
    save("gb_regressor", GradientBoostingRegressor(n_estimators=5, max_depth=2, random_state=0).fit(xr, yr), xt)
    save("rf_regressor", RandomForestRegressor(n_estimators=4, max_depth=3, random_state=0).fit(xr, yr), xt)
    save("rf_regressor_two_targets",
         RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(xr, np.stack([yr, yr * yr], 1)), xt)
    # Missing values: trees trained with NaN learn which branch NaN takes.
    xn = xr.copy()
    xn[::5, 0] = np.nan
    xtn = xt.copy()
    xtn[::3, 0] = np.nan
    m = DecisionTreeClassifier(max_depth=3, random_state=0).fit(xn, (yr > 0).astype(np.int64))
    save("tree_nan_classifier", m, xtn)
    save("tree_nan_regressor", DecisionTreeRegressor(max_depth=3, random_state=0).fit(xn, yr), xtn)
    # ai.onnx.ml opset 3: double inputs with the *_as_tensor (double)
    # attributes. skl2onnx writes double trees at opset 1 with double outputs,
    # which ONNX Runtime rejects, so these are its float models rewritten.
    xtd = xt.astype(np.float64)
    save_as_tensor("rf_regressor_double",
                   RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(xr, yr), xtd)
    save_as_tensor("gb_multi_double",
                   GradientBoostingClassifier(n_estimators=4, max_depth=2, random_state=0).fit(x3, y3), xtd)
    save_as_tensor("gb_binary_double",
                   GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(x2, y2), xtd)

    # Preprocessing: Scaler, Normalizer, Imputer, OneHotEncoder, Binarizer.
    save("standard_scaler_normalizer", make_pipeline(StandardScaler(), Normalizer()).fit(xr), xt)
    save("minmax_normalizer_l1", make_pipeline(MinMaxScaler(), Normalizer(norm="l1")).fit(xr), xt)
    save("maxabs_normalizer_max", make_pipeline(MaxAbsScaler(), Normalizer(norm="max")).fit(xr), xt)
    xi = xr.copy()
    xi[::4, 1] = np.nan
    xti = xt.copy()
    xti[::2, 1] = np.nan
    save("simple_imputer_mean", SimpleImputer(strategy="mean").fit(xi), xti)
    save("binarizer", Binarizer(threshold=0.25).fit(xr), xt)
    rng = np.random.default_rng(5)
    cats = rng.integers(0, 4, size=(40, 3)).astype(np.int64)
    cats_test = rng.integers(0, 5, size=(10, 3)).astype(np.int64)  # 4 is unseen
    save("onehot_int", OneHotEncoder(handle_unknown="ignore").fit(cats), cats_test,
         input_type=Int64TensorType([None, 3]))
    # A pipeline over column groups: imputer + scaler on some, one-hot on others.
    xc = np.concatenate([xr[:40], cats.astype(np.float32)], axis=1)
    xtc = np.concatenate([xti[:10], cats_test.astype(np.float32)], axis=1)
    pre = ColumnTransformer([("num", make_pipeline(SimpleImputer(), StandardScaler()), [0, 1, 2, 3]),
                             ("cat", OneHotEncoder(handle_unknown="ignore"), [4, 5, 6])])
    m = make_pipeline(pre, LogisticRegression()).fit(np.nan_to_num(xc), y3[:40])
    save("pipeline_columns_logreg", m, xtc)

    # The converter's default: probabilities as a list of {label: p} (ZipMap).
    save("logreg_multi_zipmap", LogisticRegression().fit(x3, names3[y3]), xt, zipmap=True)
    save("rf_binary_zipmap", RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(x2, y2), xt,
         zipmap=True)

    # Ops the converters emit in other setups, as one-node models.
    cm_x = np.array([["a"], ["b"], ["zz"], ["c"]])  # numpy unicode: what aic-onnx reads
    save_handmade("category_mapper_s2i",
                  helper.make_node("CategoryMapper", ["X"], ["Y"], domain="ai.onnx.ml",
                                   cats_strings=["a", "b", "c"], cats_int64s=[3, 1, 7], default_int64=-5),
                  cm_x, TensorProto.STRING, [("Y", TensorProto.INT64, [None, 1])])
    save_handmade("feature_vectorizer",
                  helper.make_node("FeatureVectorizer", ["X", "X"], ["Y"], domain="ai.onnx.ml",
                                   inputdimensions=[2, 3]),
                  xt[:, :3].copy(), TensorProto.FLOAT, [("Y", TensorProto.FLOAT, [None, 5])])

    # Every node mode, NaN routed by nodes_missing_value_tracks_true (which
    # skl2onnx does not write for these estimators), each aggregate function,
    # base values and two targets; inputs sit on the thresholds.
    tree = dict(
        nodes_treeids=[0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1],
        nodes_nodeids=[0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6],
        nodes_featureids=[0, 1, 2, 0, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0],
        nodes_modes=["BRANCH_LT", "BRANCH_GTE", "BRANCH_EQ", "LEAF", "LEAF", "LEAF", "LEAF",
                     "BRANCH_GT", "BRANCH_NEQ", "BRANCH_LEQ", "LEAF", "LEAF", "LEAF", "LEAF"],
        nodes_values=[0.5, 0.0, 1.0, 0, 0, 0, 0, 0.0, 2.0, -1.0, 0, 0, 0, 0],
        nodes_truenodeids=[1, 3, 5, 0, 0, 0, 0, 1, 3, 5, 0, 0, 0, 0],
        nodes_falsenodeids=[2, 4, 6, 0, 0, 0, 0, 2, 4, 6, 0, 0, 0, 0],
        nodes_missing_value_tracks_true=[1, 0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0],
        target_treeids=[0, 0, 0, 0, 0, 1, 1, 1, 1, 1],
        target_nodeids=[3, 4, 5, 6, 6, 3, 4, 5, 6, 6],
        target_ids=[0, 0, 1, 0, 1, 1, 0, 1, 0, 1],
        target_weights=[1.5, -2.0, 0.25, 3.0, -1.0, 0.75, -0.5, 2.5, 1.0, -3.0])
    xm = np.array([[0.5, 0.0, 1.0], [np.nan, -1.0, 2.0], [0.4, np.nan, 1.0], [2.0, 1.0, np.nan],
                   [-1.0, -1.0, -1.0], [2.0, -2.0, 0.0], [np.nan, np.nan, np.nan]], dtype=np.float32)
    for agg in ["SUM", "AVERAGE", "MIN", "MAX"]:
        save_handmade(f"tree_modes_{agg.lower()}",
                      helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain="ai.onnx.ml", n_targets=2,
                                       aggregate_function=agg, base_values=[0.5, -0.5], **tree),
                      xm, TensorProto.FLOAT, [("Y", TensorProto.FLOAT, [None, 2])])
    cls = {k.replace("target_", "class_"): v for k, v in tree.items()}
    save_handmade("tree_modes_classifier_softmax_zero",
                  helper.make_node("TreeEnsembleClassifier", ["X"], ["Y", "Z"], domain="ai.onnx.ml",
                                   classlabels_strings=["no", "yes"], post_transform="SOFTMAX_ZERO", **cls),
                  xm, TensorProto.FLOAT, [("Y", TensorProto.STRING, [None]), ("Z", TensorProto.FLOAT, [None, 2])])

    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"wrote {len(os.listdir(OUT))} files, {total} bytes, to {OUT}")


if __name__ == "__main__":
    main()
