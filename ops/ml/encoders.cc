// Categorical encodings of ai.onnx.ml: OneHotEncoder (each value becomes a
// row of zeros with a one at its category's index; numbers are truncated to
// int64 first) and CategoryMapper (strings to int64 or back through two
// parallel lists, the direction given by X's type).
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/misc/numeric_util.h"
#include "ops/ml/ml_ops.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

// ---- OneHotEncoder ----

struct Categories {
  bool strings = false;
  std::map<std::string, int64_t> by_string;
  std::map<int64_t, int64_t> by_int;
  int64_t size = 0;
};

absl::StatusOr<Categories> DecodeCategories(const Node& node) {
  Categories c;
  const std::vector<std::string> s = node.FindAttr("cats_strings") ? node.FindAttr("cats_strings")->strings
                                                                     : std::vector<std::string>();
  const std::vector<int64_t> i = node.GetInts("cats_int64s");
  if (s.empty() == i.empty()) return absl::InvalidArgumentError("exactly one of cats_strings and cats_int64s must be set");
  c.strings = !s.empty();
  // A repeated category keeps its first index.
  for (size_t k = 0; k < s.size(); ++k) c.by_string.emplace(s[k], static_cast<int64_t>(k));
  for (size_t k = 0; k < i.size(); ++k) c.by_int.emplace(i[k], static_cast<int64_t>(k));
  c.size = static_cast<int64_t>(c.strings ? s.size() : i.size());
  return c;
}

bool IsOneHotInput(DType t) {
  return t == DType::kString || t == DType::kInt64 || t == DType::kInt32 || t == DType::kFloat || t == DType::kDouble;
}

absl::Status InferOneHotEncoder(OpContext& ctx) {
  absl::StatusOr<Categories> c = DecodeCategories(ctx.node());
  if (!c.ok()) return ctx.Error(c.status().message());
  const TypeInfo& x = ctx.input_type(0);
  if (x.known() && x.dtype != DType::kUndefined) {
    if (!x.is_tensor() || !IsOneHotInput(x.dtype)) return ctx.Error("X must be a string or numeric tensor, got ", x.ToString());
    if ((x.dtype == DType::kString) != c->strings) {
      return ctx.Error("X is ", DTypeName(x.dtype), " but the categories are ", c->strings ? "strings" : "int64");
    }
  }
  if (!x.known() || !x.shape.has_rank()) {
    ctx.set_output(0, DType::kFloat, Shape::UnknownRank());
    return absl::OkStatus();
  }
  std::vector<Dim> dims = x.shape.dims();
  dims.push_back(Dim(c->size));
  ctx.set_output(0, DType::kFloat, Shape(dims));
  return absl::OkStatus();
}

absl::Status OneHotEncoderKernel(KernelContext& ctx) {
  absl::StatusOr<Categories> c = DecodeCategories(ctx.node());
  if (!c.ok()) return ctx.Error(c.status().message());
  if (!ctx.has_input(0) || !ctx.input_value(0).is_tensor()) return ctx.Error("X must be a tensor");
  const Tensor& x = ctx.input(0);
  if (!IsOneHotInput(x.dtype())) return ctx.Error("X must be string, int32, int64, float or double, got ", DTypeName(x.dtype()));
  if ((x.dtype() == DType::kString) != c->strings) {
    return ctx.Error("X is ", DTypeName(x.dtype()), " but the categories are ", c->strings ? "strings" : "int64");
  }
  const bool zeros = ctx.node().GetInt("zeros", 1) != 0;
  const int64_t n = x.num_elements();
  // Numbers truncate toward zero before the lookup (1.7 → category 1).
  const std::vector<int64_t> keys = c->strings ? std::vector<int64_t>() : TensorToInt64s(x);
  std::vector<float> y(static_cast<size_t>(n * c->size), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    int64_t at = -1;
    if (c->strings) {
      if (auto it = c->by_string.find(x.strings()[static_cast<size_t>(i)]); it != c->by_string.end()) at = it->second;
    } else if (auto it = c->by_int.find(keys[static_cast<size_t>(i)]); it != c->by_int.end()) {
      at = it->second;
    }
    if (at >= 0) y[static_cast<size_t>(i * c->size + at)] = 1.0f;
    else if (!zeros) return ctx.Error("element ", i, " is not a known category and zeros = 0");
  }
  std::vector<int64_t> dims = x.dims();
  dims.push_back(c->size);
  ctx.set_output(0, Tensor::FromVector<float>(y, std::move(dims)));
  return absl::OkStatus();
}

// ---- CategoryMapper ----

struct CategoryTable {
  std::vector<std::string> strings;
  std::vector<int64_t> ints;
};

absl::StatusOr<CategoryTable> DecodeTable(const Node& node) {
  CategoryTable t;
  if (const Attribute* a = node.FindAttr("cats_strings"); a != nullptr) t.strings = a->strings;
  t.ints = node.GetInts("cats_int64s");
  if (t.strings.size() != t.ints.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cats_strings has ", t.strings.size(), " entries, cats_int64s ", t.ints.size()));
  }
  return t;
}

absl::Status InferCategoryMapper(OpContext& ctx) {
  absl::StatusOr<CategoryTable> t = DecodeTable(ctx.node());
  if (!t.ok()) return ctx.Error(t.status().message());
  const TypeInfo& x = ctx.input_type(0);
  if (!x.known() || x.dtype == DType::kUndefined) {
    ctx.set_output(0, DType::kUndefined, x.known() ? x.shape : Shape::UnknownRank());
    return absl::OkStatus();
  }
  if (!x.is_tensor() || (x.dtype != DType::kString && x.dtype != DType::kInt64)) {
    return ctx.Error("X must be a string or int64 tensor, got ", x.ToString());
  }
  ctx.set_output(0, x.dtype == DType::kString ? DType::kInt64 : DType::kString, x.shape);
  return absl::OkStatus();
}

absl::Status CategoryMapperKernel(KernelContext& ctx) {
  absl::StatusOr<CategoryTable> t = DecodeTable(ctx.node());
  if (!t.ok()) return ctx.Error(t.status().message());
  if (!ctx.has_input(0) || !ctx.input_value(0).is_tensor()) return ctx.Error("X must be a tensor");
  const Tensor& x = ctx.input(0);
  const int64_t n = x.num_elements();
  if (x.dtype() == DType::kString) {
    std::map<std::string, int64_t> table;
    for (size_t k = 0; k < t->strings.size(); ++k) table.emplace(t->strings[k], t->ints[k]);
    const int64_t fallback = ctx.node().GetInt("default_int64", -1);
    std::vector<int64_t> y(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      auto it = table.find(x.strings()[static_cast<size_t>(i)]);
      y[static_cast<size_t>(i)] = it == table.end() ? fallback : it->second;
    }
    ctx.set_output(0, Tensor::FromVector<int64_t>(y, x.dims()));
    return absl::OkStatus();
  }
  if (x.dtype() != DType::kInt64) return ctx.Error("X must be string or int64, got ", DTypeName(x.dtype()));
  std::map<int64_t, std::string> table;
  for (size_t k = 0; k < t->ints.size(); ++k) table.emplace(t->ints[k], t->strings[k]);
  const std::string fallback = ctx.node().GetString("default_string", "_Unused");
  std::vector<std::string> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    auto it = table.find(x.data<int64_t>()[i]);
    y[static_cast<size_t>(i)] = it == table.end() ? fallback : it->second;
  }
  ctx.set_output(0, Tensor::FromStrings(std::move(y), x.dims()));
  return absl::OkStatus();
}

Traits LookupTraits(std::string name, std::string meaning) {
  Traits t;
  t.semantic_name = std::move(name);
  t.meaning = std::move(meaning);
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = CollapseKind::kQuantizes;
  t.collapse_how = "values outside the table all map to the default";
  return t;
}

}  // namespace

void RegisterEncoderOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = kMlDomain,
      .op_type = "OneHotEncoder",
      .since_version = 1,
      .infer = InferOneHotEncoder,
      .traits = [](const OpContext& ctx) {
        Traits t = LookupTraits("OneHotEncoder", "y[..., c] = (x == category c)");
        t.effect_detail = ShapeChange(ctx);
        return t;
      },
      .cost = [](const OpContext& ctx) { return ElementwiseCost(ctx, 1); },
      .kernel = OneHotEncoderKernel,
  });
  r.Register(OpDef{
      .domain = kMlDomain,
      .op_type = "CategoryMapper",
      .since_version = 1,
      .infer = InferCategoryMapper,
      .traits = [](const OpContext&) {
        Traits t = LookupTraits("CategoryMapper", "y = the paired int64 or string of x, default when absent");
        t.elementwise = true;
        return t;
      },
      .cost = MovementCost,
      .kernel = CategoryMapperKernel,
  });
}

}  // namespace aic
