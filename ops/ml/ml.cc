// The ai.onnx.ml family's small ops: Binarizer (threshold to 0/1),
// ArrayFeatureExtractor (pick columns of the last axis) and LabelEncoder
// (a key → value table, opset 2 lists and opset 4 tensors alike), and the
// registration of the whole family (the other ops are in their concept
// files, listed in ml_ops.h).
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/misc/numeric_util.h"
#include "ops/ml/ml_ops.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

bool IsBinarizerDType(DType t) {
  return t == DType::kFloat || t == DType::kDouble || t == DType::kInt64 || t == DType::kInt32;
}

// ---- Binarizer ----

absl::Status InferBinarizer(OpContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  if (x.known() && x.is_tensor() && x.dtype != DType::kUndefined && !IsBinarizerDType(x.dtype)) {
    return ctx.Error("X must be float, double, int32 or int64, got ", DTypeName(x.dtype));
  }
  ctx.set_output_type(0, x);
  return absl::OkStatus();
}

absl::Status BinarizerKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0}));
  const Tensor& x = ctx.input(0);
  if (!IsBinarizerDType(x.dtype())) return ctx.Error("X must be float, double, int32 or int64");
  // Compared in float for float X (the attribute is a float), exactly otherwise.
  const float threshold = ctx.node().GetFloat("threshold", 0.0f);
  const std::vector<double> xs = ToDoubles(x);
  std::vector<double> y(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) y[i] = xs[i] > static_cast<double>(threshold) ? 1.0 : 0.0;
  ctx.set_output(0, FromDoubles(y, x.dims(), x.dtype()));
  return absl::OkStatus();
}

// ---- ArrayFeatureExtractor ----

// [..., F] and k indices → [..., k]; a 1-D X gives [1, k], as ONNX Runtime does.
absl::Status InferArrayFeatureExtractor(OpContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  const Shape& y = ctx.input_shape(1);
  if (!x.known() || !x.shape.has_rank()) {
    ctx.set_output(0, x.known() ? x.dtype : DType::kUndefined, Shape::UnknownRank());
    return absl::OkStatus();
  }
  if (x.shape.rank() == 0) return ctx.Error("X must have rank >= 1");
  std::vector<Dim> dims = x.shape.rank() == 1 ? std::vector<Dim>{Dim(1)} : x.shape.dims();
  if (x.shape.rank() > 1) dims.pop_back();
  std::optional<int64_t> k;
  if (y.IsStatic()) k = y.NumElements();
  dims.push_back(k ? Dim(*k) : ctx.FreshDim());
  ctx.set_output(0, x.dtype, Shape(dims));
  return absl::OkStatus();
}

absl::Status ArrayFeatureExtractorKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {1}));
  const Tensor& x = ctx.input(0);
  AIC_RETURN_IF_ERROR(CheckCopyable(ctx, x.dtype()));
  if (x.rank() == 0) return ctx.Error("X must have rank >= 1");
  const std::vector<int64_t> index = TensorToInt64s(ctx.input(1));
  const int64_t features = x.dim(x.rank() - 1);
  for (int64_t i : index) {
    if (i < 0 || i >= features) return ctx.Error("index ", i, " out of range for ", features, " features");
  }
  const int64_t k = static_cast<int64_t>(index.size());
  std::vector<int64_t> dims = x.rank() == 1 ? std::vector<int64_t>{1} : x.dims();
  if (x.rank() > 1) dims.pop_back();
  dims.push_back(k);
  Tensor out(x.dtype(), dims);
  const int64_t rows = features == 0 ? 0 : x.num_elements() / features;
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t j = 0; j < k; ++j) CopyElement(x, row * features + index[j], out, row * k + j);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- LabelEncoder ----

// The table as tensors: keys and values (1-D, equal length) and the default,
// from whichever of the keys_* / values_* / default_* attributes is set.
struct LabelTable {
  Tensor keys;
  Tensor values;
  Tensor fallback;  // one element of values' dtype
};

absl::StatusOr<Tensor> TableColumn(const Node& node, const char* prefix) {
  const std::string p = prefix;
  std::optional<Tensor> found;
  int set = 0;
  if (const Attribute* a = node.FindAttr(p + "_tensor"); a != nullptr && a->type == AttrType::kTensor) {
    found = a->t.WithDims({a->t.num_elements()});
    ++set;
  }
  if (const Attribute* a = node.FindAttr(p + "_strings"); a != nullptr && a->type == AttrType::kStrings) {
    found = Tensor::FromStrings(a->strings, {static_cast<int64_t>(a->strings.size())});
    ++set;
  }
  if (const Attribute* a = node.FindAttr(p + "_int64s"); a != nullptr && a->type == AttrType::kInts) {
    found = Tensor::FromVector<int64_t>(a->ints, {static_cast<int64_t>(a->ints.size())});
    ++set;
  }
  if (const Attribute* a = node.FindAttr(p + "_floats"); a != nullptr && a->type == AttrType::kFloats) {
    found = Tensor::FromVector<float>(a->floats, {static_cast<int64_t>(a->floats.size())});
    ++set;
  }
  if (set != 1) return absl::InvalidArgumentError(absl::StrCat("exactly one of ", p, "_* must be set, got ", set));
  return *found;
}

absl::StatusOr<LabelTable> DecodeLabelTable(const Node& node) {
  LabelTable t;
  AIC_ASSIGN_OR_RETURN(t.keys, TableColumn(node, "keys"));
  AIC_ASSIGN_OR_RETURN(t.values, TableColumn(node, "values"));
  if (t.keys.num_elements() != t.values.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat(t.keys.num_elements(), " keys but ", t.values.num_elements(), " values"));
  }
  const DType vt = t.values.dtype();
  if (const Attribute* a = node.FindAttr("default_tensor"); a != nullptr && a->type == AttrType::kTensor) {
    if (a->t.num_elements() != 1 || a->t.dtype() != vt) {
      return absl::InvalidArgumentError("default_tensor must hold one value of the values' dtype");
    }
    t.fallback = a->t.WithDims({1});
  } else if (vt == DType::kString) {
    t.fallback = Tensor::FromStrings({node.GetString("default_string", "_Unused")}, {1});
  } else if (vt == DType::kFloat && node.FindAttr("values_floats") != nullptr) {
    t.fallback = Tensor::FromVector<float>({node.GetFloat("default_float", -0.0f)}, {1});
  } else if (vt == DType::kInt64 && node.FindAttr("values_int64s") != nullptr) {
    t.fallback = Tensor::FromVector<int64_t>({node.GetInt("default_int64", -1)}, {1});
  } else {
    // The spec's defaults for a values_tensor without default_tensor.
    const bool is_float = vt == DType::kFloat || vt == DType::kDouble || vt == DType::kFloat16;
    t.fallback = FromDoubles({is_float ? -0.0 : -1.0}, {1}, vt);
  }
  return t;
}

absl::Status InferLabelEncoder(OpContext& ctx) {
  absl::StatusOr<LabelTable> t = DecodeLabelTable(ctx.node());
  if (!t.ok()) return ctx.Error(t.status().message());
  const TypeInfo& x = ctx.input_type(0);
  if (x.known() && x.dtype != DType::kUndefined &&
      (x.dtype == DType::kString) != (t->keys.dtype() == DType::kString)) {
    return ctx.Error("X is ", DTypeName(x.dtype), " but the keys are ", DTypeName(t->keys.dtype()));
  }
  ctx.set_output(0, t->values.dtype(), x.known() ? x.shape : Shape::UnknownRank());
  return absl::OkStatus();
}

absl::Status LabelEncoderKernel(KernelContext& ctx) {
  if (!ctx.has_input(0)) return ctx.Error("X is required");
  absl::StatusOr<LabelTable> t = DecodeLabelTable(ctx.node());
  if (!t.ok()) return ctx.Error(t.status().message());
  const Tensor& x = ctx.input(0);
  AIC_RETURN_IF_ERROR(CheckCopyable(ctx, t->values.dtype()));
  const bool strings = t->keys.dtype() == DType::kString;
  if ((x.dtype() == DType::kString) != strings) {
    return ctx.Error("X is ", DTypeName(x.dtype()), " but the keys are ", DTypeName(t->keys.dtype()));
  }
  const bool exact_ints = !strings && IsInteger(t->keys.dtype()) && IsInteger(x.dtype());
  if (!strings && !exact_ints && (!IsRealFloat(t->keys.dtype()) && !IsInteger(t->keys.dtype()))) {
    return ctx.Unimplemented("keys of ", DTypeName(t->keys.dtype()));
  }
  // Later keys overwrite earlier ones: the last repeated key wins. A NaN key
  // matches every NaN input.
  const int64_t n = t->keys.num_elements();
  std::map<std::string, int64_t> by_string;
  std::map<int64_t, int64_t> by_int;
  std::map<double, int64_t> by_double;
  std::optional<int64_t> nan_row;
  const std::vector<int64_t> int_keys = exact_ints ? TensorToInt64s(t->keys) : std::vector<int64_t>();
  const std::vector<double> double_keys = !strings && !exact_ints ? ToDoubles(t->keys) : std::vector<double>();
  for (int64_t i = 0; i < n; ++i) {
    if (strings) by_string[t->keys.strings()[i]] = i;
    else if (exact_ints) by_int[int_keys[i]] = i;
    else if (std::isnan(double_keys[i])) nan_row = i;
    else by_double[double_keys[i]] = i;
  }
  const std::vector<int64_t> int_x = exact_ints ? TensorToInt64s(x) : std::vector<int64_t>();
  const std::vector<double> double_x = !strings && !exact_ints ? ToDoubles(x) : std::vector<double>();
  Tensor out(t->values.dtype(), x.dims());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    std::optional<int64_t> row;
    if (strings) {
      if (auto it = by_string.find(x.strings()[i]); it != by_string.end()) row = it->second;
    } else if (exact_ints) {
      if (auto it = by_int.find(int_x[i]); it != by_int.end()) row = it->second;
    } else if (std::isnan(double_x[i])) {
      row = nan_row;
    } else if (auto it = by_double.find(double_x[i]); it != by_double.end()) {
      row = it->second;
    }
    if (row) CopyElement(t->values, *row, out, i);
    else CopyElement(t->fallback, 0, out, i);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

Traits MlTraits(std::string name, std::string meaning, Linearity linearity, Invertibility inv,
                CollapseKind collapse, std::string how) {
  Traits t;
  t.semantic_name = std::move(name);
  t.meaning = std::move(meaning);
  t.linearity = linearity;
  t.invertibility = inv;
  t.collapse = collapse;
  t.collapse_how = std::move(how);
  return t;
}

}  // namespace

void RegisterMlOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = kMlDomain,
      .op_type = "Binarizer",
      .since_version = 1,
      .infer = InferBinarizer,
      .traits = [](const OpContext& ctx) {
        Traits t = MlTraits("Binarizer", absl::StrCat("y = x > ", ctx.node().GetFloat("threshold", 0.0f), " ? 1 : 0"),
                            Linearity::kNonlinear, Invertibility::kIrreversible, CollapseKind::kQuantizes,
                            "every value mapped to 0 or 1");
        t.elementwise = true;
        return t;
      },
      .cost = [](const OpContext& ctx) { return ElementwiseCost(ctx, 1); },
      .kernel = BinarizerKernel,
  });
  r.Register(OpDef{
      .domain = kMlDomain,
      .op_type = "ArrayFeatureExtractor",
      .since_version = 1,
      .infer = InferArrayFeatureExtractor,
      .traits = [](const OpContext& ctx) {
        return SelectTraits(ctx, "ArrayFeatureExtractor", "z = x[..., indices]", false,
                            "features not indexed are dropped");
      },
      .cost = MovementCost,
      .kernel = ArrayFeatureExtractorKernel,
  });
  // Opset 2 (lists), opset 4 (tensors): one decoder reads both spellings.
  for (int since : {2, 4}) {
    r.Register(OpDef{
        .domain = kMlDomain,
        .op_type = "LabelEncoder",
        .since_version = since,
        .infer = InferLabelEncoder,
        .traits = [](const OpContext&) {
          Traits t = MlTraits("LabelEncoder", "y = table[x], default when absent", Linearity::kNonlinear,
                              Invertibility::kIrreversible, CollapseKind::kQuantizes,
                              "keys not in the table all map to the default");
          t.elementwise = true;
          return t;
        },
        .cost = MovementCost,
        .kernel = LabelEncoderKernel,
    });
  }
  RegisterTreeEnsembleOps(r);
  RegisterTreeEnsembleClassicOps(r);
  RegisterLinearModelOps(r);
  RegisterSvmOps(r);
  RegisterPreprocessingOps(r);
  RegisterEncoderOps(r);
  RegisterZipMapOps(r);
}

}  // namespace aic
