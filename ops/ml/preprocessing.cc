// Numeric feature preprocessing of ai.onnx.ml, what scikit-learn pipelines
// put in front of a model: Scaler (y = (x − offset)·scale per feature),
// Normalizer (each row divided by its max, L1 or L2 norm), Imputer (one
// value, NaN included, replaced per feature) and FeatureVectorizer (inputs
// concatenated along the feature axis, each cut or zero-padded to its
// declared width). X is [N, F] or [F]; per-feature attributes hold one value
// or F.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/misc/numeric_util.h"
#include "ops/ml/ml_common.h"
#include "ops/ml/ml_ops.h"
#include "ops/ml/preprocessing.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

// A per-feature attribute of one value or `features` values (empty: `fallback`).
absl::StatusOr<std::vector<double>> PerFeature(const std::vector<double>& v, const char* name, int64_t features,
                                               double fallback) {
  if (v.empty()) return std::vector<double>(static_cast<size_t>(features), fallback);
  if (v.size() == 1) return std::vector<double>(static_cast<size_t>(features), v[0]);
  if (static_cast<int64_t>(v.size()) != features) {
    return absl::InvalidArgumentError(absl::StrCat(name, " has ", v.size(), " values for ", features, " features"));
  }
  return v;
}

std::vector<double> Floats(const Node& node, const char* name) {
  const std::vector<float> v = node.GetFloats(name);
  return std::vector<double>(v.begin(), v.end());
}

// Output float, X's shape.
absl::Status InferFloatLikeX(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(CheckFeatureInput(ctx));
  const TypeInfo& x = ctx.input_type(0);
  ctx.set_output(0, DType::kFloat, x.known() ? x.shape : Shape::UnknownRank());
  return absl::OkStatus();
}

Traits FeatureTraits(std::string name, std::string meaning, Linearity lin, Invertibility inv, bool elementwise) {
  Traits t;
  t.semantic_name = std::move(name);
  t.meaning = std::move(meaning);
  t.linearity = lin;
  t.invertibility = inv;
  t.elementwise = elementwise;
  return t;
}

// ---- Scaler ----

absl::Status ScalerKernel(KernelContext& ctx) {
  AIC_ASSIGN_OR_RETURN(FeatureRows x, ReadFeatureRows(ctx));
  absl::StatusOr<ScalerModel> m = DecodeScaler(ctx.node(), x.features);
  if (!m.ok()) return ctx.Error(m.status().message());
  std::vector<double> y(x.x.size());
  for (size_t i = 0; i < y.size(); ++i) {
    y[i] = ScaleFeature(*m, x.x[i], static_cast<int64_t>(i % static_cast<size_t>(x.features)));
  }
  ctx.set_output(0, FloatTensor(y, ctx.input(0).dims()));
  return absl::OkStatus();
}

// ---- Normalizer ----

absl::Status NormalizerKernel(KernelContext& ctx) {
  absl::StatusOr<NormKind> norm = DecodeNormalizer(ctx.node());
  if (!norm.ok()) return ctx.Error(norm.status().message());
  AIC_ASSIGN_OR_RETURN(FeatureRows x, ReadFeatureRows(ctx));
  std::vector<double> y = x.x;
  for (int64_t r = 0; r < x.rows; ++r) NormalizeRow(*norm, y.data() + r * x.features, x.features);
  ctx.set_output(0, FloatTensor(y, ctx.input(0).dims()));
  return absl::OkStatus();
}

// ---- Imputer ----

absl::Status InferImputer(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(CheckFeatureInput(ctx));
  ctx.set_output_type(0, ctx.input_type(0));
  return absl::OkStatus();
}

absl::Status ImputerKernel(KernelContext& ctx) {
  AIC_ASSIGN_OR_RETURN(FeatureRows x, ReadFeatureRows(ctx));
  const Node& node = ctx.node();
  const DType dt = ctx.input(0).dtype();
  const bool ints = dt == DType::kInt64 || dt == DType::kInt32;
  // Integers replace and impute with the *_int64 attributes, floats with *_float(s).
  std::vector<double> imputed;
  double replaced = 0;
  if (ints) {
    for (int64_t v : node.GetInts("imputed_value_int64s")) imputed.push_back(static_cast<double>(v));
    replaced = static_cast<double>(node.GetInt("replaced_value_int64", 0));
  } else {
    imputed = Floats(node, "imputed_value_floats");
    replaced = node.GetFloat("replaced_value_float", 0.0f);
  }
  if (imputed.empty()) {
    return ctx.Error(ints ? "imputed_value_int64s" : "imputed_value_floats", " must be set for ", DTypeName(dt), " X");
  }
  absl::StatusOr<std::vector<double>> value = PerFeature(imputed, "the imputed values", x.features, 0.0);
  if (!value.ok()) return ctx.Error(value.status().message());
  std::vector<double> y = x.x;
  for (size_t i = 0; i < y.size(); ++i) {
    const bool hit = std::isnan(replaced) ? std::isnan(y[i]) : y[i] == replaced;
    if (hit) y[i] = (*value)[i % static_cast<size_t>(x.features)];
  }
  ctx.set_output(0, FromDoubles(y, ctx.input(0).dims(), dt));
  return absl::OkStatus();
}

// ---- FeatureVectorizer ----

absl::Status InferFeatureVectorizer(OpContext& ctx) {
  const std::vector<int64_t> widths = ctx.node().GetInts("inputdimensions");
  if (widths.size() != ctx.num_inputs()) {
    return ctx.Error("inputdimensions has ", widths.size(), " entries for ", ctx.num_inputs(), " inputs");
  }
  int64_t total = 0;
  for (int64_t w : widths) {
    if (w < 0) return ctx.Error("inputdimensions has a negative width");
    total += w;
  }
  Dim rows;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const TypeInfo& t = ctx.input_type(i);
    if (t.known() && (!t.is_tensor() || (t.dtype != DType::kUndefined && !IsMlNumeric(t.dtype)))) {
      return ctx.Error("input ", i, " must be a float, double, int32 or int64 tensor, got ", t.ToString());
    }
    if (i == 0 && t.shape.has_rank()) rows = t.shape.rank() <= 1 ? Dim(1) : t.shape[0];
  }
  ctx.set_output(0, DType::kFloat, Shape({rows.is_unknown() ? ctx.FreshDim() : rows, Dim(total)}));
  return absl::OkStatus();
}

absl::Status FeatureVectorizerKernel(KernelContext& ctx) {
  const std::vector<int64_t> widths = ctx.node().GetInts("inputdimensions");
  if (widths.size() != ctx.num_inputs()) {
    return ctx.Error("inputdimensions has ", widths.size(), " entries for ", ctx.num_inputs(), " inputs");
  }
  int64_t total = 0, rows = -1;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i) || !ctx.input_value(i).is_tensor() || !IsMlNumeric(ctx.input(i).dtype())) {
      return ctx.Error("input ", i, " must be a float, double, int32 or int64 tensor");
    }
    // [C] is one row; [N, ...] is N rows of everything after the first axis.
    const Tensor& t = ctx.input(i);
    const int64_t n = t.rank() <= 1 ? 1 : t.dim(0);
    if (rows >= 0 && n != rows) return ctx.Error("input ", i, " has ", n, " rows, input 0 has ", rows);
    rows = n;
    if (widths[i] < 0) return ctx.Error("inputdimensions has a negative width");
    total += widths[i];
  }
  rows = std::max<int64_t>(rows, 0);
  std::vector<double> y(static_cast<size_t>(rows * total), 0.0);
  int64_t at = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& t = ctx.input(i);
    const std::vector<double> v = ToDoubles(t);
    const int64_t cols = rows == 0 ? 0 : t.num_elements() / rows;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < std::min(cols, widths[i]); ++j) y[static_cast<size_t>(r * total + at + j)] = v[static_cast<size_t>(r * cols + j)];
    }
    at += widths[i];
  }
  ctx.set_output(0, FloatTensor(y, {rows, total}));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ScalerModel> DecodeScaler(const Node& node, int64_t features) {
  ScalerModel m;
  AIC_ASSIGN_OR_RETURN(m.scale, PerFeature(Floats(node, "scale"), "scale", features, 1.0));
  AIC_ASSIGN_OR_RETURN(m.offset, PerFeature(Floats(node, "offset"), "offset", features, 0.0));
  return m;
}

absl::StatusOr<NormKind> DecodeNormalizer(const Node& node) {
  const std::string norm = node.GetString("norm", "MAX");
  if (norm == "MAX") return NormKind::kMax;
  if (norm == "L1") return NormKind::kL1;
  if (norm == "L2") return NormKind::kL2;
  return absl::InvalidArgumentError(absl::StrCat("norm '", norm, "' is not one of MAX, L1, L2"));
}

void NormalizeRow(NormKind norm, double* row, int64_t n) {
  double d = 0;
  if (norm == NormKind::kMax) {
    d = n > 0 ? *std::max_element(row, row + n) : 0.0;
  } else {
    for (int64_t j = 0; j < n; ++j) d += norm == NormKind::kL1 ? std::abs(row[j]) : row[j] * row[j];
    if (norm == NormKind::kL2) d = std::sqrt(d);
  }
  if (d == 0) return;
  for (int64_t j = 0; j < n; ++j) row[j] /= d;
}

void RegisterPreprocessingOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = kMlDomain,
      .op_type = "Scaler",
      .since_version = 1,
      .infer = InferFloatLikeX,
      .traits = [](const OpContext&) {
        return FeatureTraits("Scaler", "y = (x − offset) · scale per feature", Linearity::kAffine,
                             Invertibility::kUnknown, true);
      },
      .cost = [](const OpContext& ctx) { return ElementwiseCost(ctx, 2); },
      .kernel = ScalerKernel,
  });
  r.Register(OpDef{
      .domain = kMlDomain,
      .op_type = "Normalizer",
      .since_version = 1,
      .infer = InferFloatLikeX,
      .traits = [](const OpContext& ctx) {
        Traits t = FeatureTraits("Normalizer", absl::StrCat("y = x / ", ctx.node().GetString("norm", "MAX"), "(row)"),
                                 Linearity::kNonlinear, Invertibility::kIrreversible, false);
        t.collapse = CollapseKind::kProjects;
        t.collapse_how = "rows along one ray map to one point";
        return t;
      },
      .cost = [](const OpContext& ctx) { return ElementwiseCost(ctx, 3); },
      .kernel = NormalizerKernel,
  });
  r.Register(OpDef{
      .domain = kMlDomain,
      .op_type = "Imputer",
      .since_version = 1,
      .infer = InferImputer,
      .traits = [](const OpContext&) {
        Traits t = FeatureTraits("Imputer", "y = x, or the feature's imputed value where x is the replaced value",
                                 Linearity::kNonlinear, Invertibility::kIrreversible, true);
        t.collapse = CollapseKind::kQuantizes;
        t.collapse_how = "the replaced value and the imputed one both map to the imputed one";
        return t;
      },
      .cost = [](const OpContext& ctx) { return ElementwiseCost(ctx, 1); },
      .kernel = ImputerKernel,
  });
  r.Register(OpDef{
      .domain = kMlDomain,
      .op_type = "FeatureVectorizer",
      .since_version = 1,
      .infer = InferFeatureVectorizer,
      .traits = [](const OpContext&) {
        return FeatureTraits("FeatureVectorizer", "y = concat(x₀[:, :d₀], x₁[:, :d₁], ...) zero-padded",
                             Linearity::kLinear, Invertibility::kUnknown, false);
      },
      .cost = MovementCost,
      .kernel = FeatureVectorizerKernel,
  });
}

}  // namespace aic
