// Lowerings of the ai.onnx.ml ops that scikit-learn pipelines export
// (skl2onnx) onto our own kernels: the tree ensembles (TreeEnsembleClassifier
// / TreeEnsembleRegressor of ml opsets 1 and 3, TreeEnsemble of opset 5)
// over a forest packed once at compile time (kernels/tree_ensemble.h), and
// the per-row models (Scaler, Normalizer, LinearClassifier, LinearRegressor,
// SVMClassifier, SVMRegressor, whose row arithmetic is ops/ml's own, run
// here over rows in parallel) and ArrayFeatureExtractor (a gather along the
// last axis). Attributes are decoded by the same ops/ml functions as the
// reference kernels' and each row is finished by them too, so results are
// the reference's bit for bit, except an SVM's kernel row (AVX-512 sums with
// fused multiply-adds, RBF's exp within 2 ulp of libm's). Each lowering
// takes f32 X of static shape ([N, F] or [F]) and returns false (nothing
// emitted) for anything else: string class labels (the arena holds no
// strings), other X dtypes, set-membership splits, malformed attributes; the
// reference kernel then runs and reports what is wrong.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/container/inlined_vector.h"

#include "absl/strings/str_cat.h"
#include "exec/cpu/kernels/gather.h"
#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/svm_kernel.h"
#include "exec/cpu/kernels/tree_ensemble.h"
#include "exec/cpu/native_step.h"
#include "ops/ml/linear_models.h"
#include "ops/ml/preprocessing.h"
#include "ops/ml/svm_models.h"
#include "ops/ml/tree_models.h"

namespace aic::cpu {

namespace {

// X [N, F] or [F] of static f32 dims: its rows and features.
bool FeatureDims(Lowerer& L, const Value* x, int64_t* rows, int64_t* features) {
  if (!L.IsF32(x) || !NativeReady(L, x)) return false;
  const std::vector<int64_t>& d = L.V(x).dims;
  if (d.size() != 1 && d.size() != 2) return false;
  *rows = d.size() == 2 ? d[0] : 1;
  *features = d.back();
  return *rows > 0 && *features > 0;
}

bool HasDims(Lowerer& L, const Value* v, DType dtype, const std::vector<int64_t>& dims) {
  return v == nullptr || (L.V(v).dtype == dtype && L.V(v).is_static && L.V(v).dims == dims);
}

// One row's scores, on the stack for the usual few classes.
using RowBuffer = absl::InlinedVector<double, 16>;

const Value* OptionalOutput(const Node& n, size_t i) { return n.num_outputs() > i ? n.output(i) : nullptr; }

}  // namespace

bool LowerTreeEnsemble(Lowerer& L, const Node& n) {
  if (n.num_inputs() != 1) return false;
  int64_t rows = 0, features = 0;
  if (!FeatureDims(L, n.input(0), &rows, &features)) return false;
  const int64_t opset = L.OpsetOf(n);
  int in = -1;
  auto pack = [&](const Forest& f) -> std::shared_ptr<const kernels::PackedForest> {
    if (f.max_feature >= features) return nullptr;
    std::optional<kernels::PackedForest> p = kernels::PackForest(f);
    if (!p) return nullptr;
    in = L.PlainSlot(n.input(0));
    return std::make_shared<const kernels::PackedForest>(std::move(*p));
  };

  if (n.op_type == "TreeEnsembleClassifier") {
    absl::StatusOr<TreeClassifier> k = DecodeTreeClassifier(n, opset);
    if (!k.ok() || k->labels.strings) return false;
    const int64_t classes = k->labels.size();
    const Value* label = OptionalOutput(n, 0);
    const Value* prob = OptionalOutput(n, 1);
    if (!HasDims(L, label, DType::kInt64, {rows}) || !HasDims(L, prob, DType::kFloat, {rows, classes})) return false;
    auto forest = pack(k->c.forest);
    if (forest == nullptr) return false;
    int label_slot = NativeOutSlot(L, label), prob_slot = NativeOutSlot(L, prob);
    auto model = std::make_shared<const TreeClassifier>(std::move(*k));
    NativeStep* step = AddNativeStep(L, n, {in}, {label_slot, prob_slot},
                                     [=](const void* const* ins, void* const* outs) {
      auto* labels = static_cast<int64_t*>(outs[0]);
      auto* z = static_cast<float*>(outs[1]);
      kernels::ScoreForestRows(*forest, Aggregate::kSum, static_cast<const float*>(ins[0]), rows, features,
                               [&](int64_t r, TargetScores& s) {
        RowBuffer row(static_cast<size_t>(std::max<int64_t>(classes, 2)));
        double* zr = row.data();
        TreeClassifierPick pick = FinishTreeClassifierRow(*model, s, zr);
        if (labels != nullptr) labels[r] = TreeClassifierIntLabel(*model, pick);
        for (int64_t j = 0; z != nullptr && j < classes; ++j) z[r * classes + j] = static_cast<float>(zr[j]);
      });
      return absl::OkStatus();
    });
    step->kind = "tree_ensemble";
    return true;
  }

  // The regressors: one output [N, n_targets] of f32.
  const Value* y = n.output(0);
  std::shared_ptr<const kernels::PackedForest> forest;
  std::function<void(const TargetScores&, double*)> finish;
  Aggregate agg = Aggregate::kSum;
  int64_t targets = 0;
  if (n.op_type == "TreeEnsembleRegressor") {
    absl::StatusOr<ClassicForest> c = DecodeTreeRegressor(n, opset);
    if (!c.ok()) return false;
    auto model = std::make_shared<const ClassicForest>(std::move(*c));
    forest = pack(model->forest);
    agg = model->aggregate;
    targets = model->forest.n_targets;
    finish = [model](const TargetScores& s, double* out) { FinishTreeRegressorRow(*model, s, out); };
  } else {
    absl::StatusOr<TreeEnsembleModel> e = DecodeTreeEnsemble(n);
    if (!e.ok()) return false;
    auto model = std::make_shared<const TreeEnsembleModel>(std::move(*e));
    forest = pack(model->forest);
    agg = model->aggregate;
    targets = model->forest.n_targets;
    finish = [model](const TargetScores& s, double* out) { FinishTreeEnsembleRow(*model, s, out); };
  }
  if (forest == nullptr || !HasDims(L, y, DType::kFloat, {rows, targets})) return false;
  int slot = NativeOutSlot(L, y);
  if (slot < 0) return false;
  NativeStep* step = AddNativeStep(L, n, {in}, slot, [=](const void* const* ins, void* out) {
    auto* z = static_cast<float*>(out);
    kernels::ScoreForestRows(*forest, agg, static_cast<const float*>(ins[0]), rows, features,
                             [&](int64_t r, TargetScores& s) {
      RowBuffer row(static_cast<size_t>(targets));
      finish(s, row.data());
      for (int64_t t = 0; t < targets; ++t) z[r * targets + t] = static_cast<float>(row[static_cast<size_t>(t)]);
    });
    return absl::OkStatus();
  });
  step->kind = "tree_ensemble";
  return true;
}

namespace {

// f(r) for every row, spread over threads for large batches.
template <typename F>
void ForRows(int64_t rows, int64_t work_per_row, F&& f) {
  kernels::ParallelFor(rows, work_per_row, f);
}

}  // namespace

bool LowerScaler(Lowerer& L, const Node& n) {
  int64_t rows = 0, features = 0;
  if (n.num_inputs() != 1 || !FeatureDims(L, n.input(0), &rows, &features)) return false;
  absl::StatusOr<ScalerModel> m = DecodeScaler(n, features);
  if (!m.ok() || !L.IsF32(n.output(0)) || L.V(n.output(0)).dims != L.V(n.input(0)).dims) return false;
  int in = L.PlainSlot(n.input(0));
  int slot = NativeOutSlot(L, n.output(0));
  if (slot < 0) return false;
  auto model = std::make_shared<const ScalerModel>(std::move(*m));
  NativeStep* step = AddNativeStep(L, n, {in}, slot, [=](const void* const* ins, void* out) {
    const auto* x = static_cast<const float*>(ins[0]);
    auto* y = static_cast<float*>(out);
    ForRows(rows, features, [&](int64_t r) {
      for (int64_t f = 0; f < features; ++f) {
        y[r * features + f] = static_cast<float>(ScaleFeature(*model, x[r * features + f], f));
      }
    });
    return absl::OkStatus();
  });
  step->kind = "scaler";
  step->inplace_ok = true;
  return true;
}

bool LowerNormalizer(Lowerer& L, const Node& n) {
  int64_t rows = 0, features = 0;
  if (n.num_inputs() != 1 || !FeatureDims(L, n.input(0), &rows, &features)) return false;
  absl::StatusOr<NormKind> norm = DecodeNormalizer(n);
  if (!norm.ok() || !L.IsF32(n.output(0)) || L.V(n.output(0)).dims != L.V(n.input(0)).dims) return false;
  int in = L.PlainSlot(n.input(0));
  int slot = NativeOutSlot(L, n.output(0));
  if (slot < 0) return false;
  const NormKind kind = *norm;
  NativeStep* step = AddNativeStep(L, n, {in}, slot, [=](const void* const* ins, void* out) {
    const auto* x = static_cast<const float*>(ins[0]);
    auto* y = static_cast<float*>(out);
    ForRows(rows, features, [&](int64_t r) {
      RowBuffer row(x + r * features, x + (r + 1) * features);
      NormalizeRow(kind, row.data(), features);
      for (int64_t f = 0; f < features; ++f) y[r * features + f] = static_cast<float>(row[static_cast<size_t>(f)]);
    });
    return absl::OkStatus();
  });
  step->kind = "normalizer";
  step->inplace_ok = true;
  return true;
}

bool LowerLinearModel(Lowerer& L, const Node& n) {
  int64_t rows = 0, features = 0;
  if (n.num_inputs() != 1 || !FeatureDims(L, n.input(0), &rows, &features)) return false;
  if (n.op_type == "LinearRegressor") {
    absl::StatusOr<LinearModel> m = DecodeLinearRegressor(n);
    if (!m.ok() || m->features != features || !HasDims(L, n.output(0), DType::kFloat, {rows, m->targets})) return false;
    int in = L.PlainSlot(n.input(0));
    int slot = NativeOutSlot(L, n.output(0));
    if (slot < 0) return false;
    auto model = std::make_shared<const LinearModel>(std::move(*m));
    NativeStep* step = AddNativeStep(L, n, {in}, slot, [=](const void* const* ins, void* out) {
      const auto* x = static_cast<const float*>(ins[0]);
      auto* y = static_cast<float*>(out);
      const int64_t k = model->targets;
      ForRows(rows, features * k, [&](int64_t r) {
        RowBuffer s(static_cast<size_t>(k));
        LinearScoreRow(*model, x + r * features, s.data());
        FinishLinearRegressorRow(*model, s.data());
        for (int64_t t = 0; t < k; ++t) y[r * k + t] = static_cast<float>(s[static_cast<size_t>(t)]);
      });
      return absl::OkStatus();
    });
    step->kind = "linear_model";
    return true;
  }
  absl::StatusOr<LinearClassifierModel> m = DecodeLinearClassifier(n);
  if (!m.ok() || m->labels.strings || m->linear.features != features) return false;
  const int64_t cols = m->columns();
  const Value* label = OptionalOutput(n, 0);
  const Value* prob = OptionalOutput(n, 1);
  if (!HasDims(L, label, DType::kInt64, {rows}) || !HasDims(L, prob, DType::kFloat, {rows, cols})) return false;
  int in = L.PlainSlot(n.input(0));
  int label_slot = NativeOutSlot(L, label), prob_slot = NativeOutSlot(L, prob);
  auto model = std::make_shared<const LinearClassifierModel>(std::move(*m));
  NativeStep* step = AddNativeStep(L, n, {in}, {label_slot, prob_slot}, [=](const void* const* ins, void* const* outs) {
    const auto* x = static_cast<const float*>(ins[0]);
    auto* labels = static_cast<int64_t*>(outs[0]);
    auto* z = static_cast<float*>(outs[1]);
    const int64_t k = model->linear.targets;
    ForRows(rows, features * k, [&](int64_t r) {
      RowBuffer s(static_cast<size_t>(k)), zr(static_cast<size_t>(cols));
      LinearScoreRow(model->linear, x + r * features, s.data());
      const int64_t pick = FinishLinearClassifierRow(*model, s.data(), zr.data());
      if (labels != nullptr) labels[r] = model->labels.ints[static_cast<size_t>(pick)];
      for (int64_t j = 0; z != nullptr && j < cols; ++j) z[r * cols + j] = static_cast<float>(zr[static_cast<size_t>(j)]);
    });
    return absl::OkStatus();
  });
  step->kind = "linear_model";
  return true;
}

// The models decoded once here (the reference kernel decodes on every run),
// rows in parallel with a scratch per block of rows, the kernel row by
// kernels/svm_kernel.h (the same sums; RBF's exp within 2 ulp of libm's).
bool LowerSvm(Lowerer& L, const Node& n) {
  const SvmKernelRowFn kernel_row = kernels::FastSvmKernelRow();
  int64_t rows = 0, features = 0;
  if (n.num_inputs() != 1 || !FeatureDims(L, n.input(0), &rows, &features)) return false;
  // A row block's share of the work: a kernel per support vector.
  auto block_rows = [](int64_t vectors, int64_t features) {
    return std::clamp<int64_t>(kernels::kMinParallelWork / std::max<int64_t>(1, vectors * features), 1, 64);
  };
  if (n.op_type == "SVMRegressor") {
    absl::StatusOr<SvmRegressorModel> m = DecodeSvmRegressor(n);
    if (!m.ok() || m->svm.features != features || !HasDims(L, n.output(0), DType::kFloat, {rows, 1})) return false;
    int in = L.PlainSlot(n.input(0));
    int slot = NativeOutSlot(L, n.output(0));
    if (slot < 0) return false;
    auto model = std::make_shared<const SvmRegressorModel>(std::move(*m));
    const int64_t block = block_rows(model->svm.vectors, features);
    NativeStep* step = AddNativeStep(L, n, {in}, slot, [=](const void* const* ins, void* out) {
      const auto* x = static_cast<const float*>(ins[0]);
      auto* y = static_cast<float*>(out);
      ForRows((rows + block - 1) / block, block * features * std::max<int64_t>(1, model->svm.vectors), [&](int64_t b) {
        SvmScratch scratch;
        RowBuffer row(static_cast<size_t>(features));
        for (int64_t r = b * block; r < std::min(rows, (b + 1) * block); ++r) {
          std::copy(x + r * features, x + (r + 1) * features, row.begin());
          y[r] = static_cast<float>(SvmRegressRow(*model, row.data(), scratch, kernel_row));
        }
      });
      return absl::OkStatus();
    });
    step->kind = "svm";
    return true;
  }
  absl::StatusOr<SvmClassifierModel> m = DecodeSvmClassifier(n);
  if (!m.ok() || m->labels.strings || m->svm.features != features) return false;
  const int64_t cols = m->columns();
  const Value* label = OptionalOutput(n, 0);
  const Value* prob = OptionalOutput(n, 1);
  if (!HasDims(L, label, DType::kInt64, {rows}) || !HasDims(L, prob, DType::kFloat, {rows, cols})) return false;
  int in = L.PlainSlot(n.input(0));
  int label_slot = NativeOutSlot(L, label), prob_slot = NativeOutSlot(L, prob);
  auto model = std::make_shared<const SvmClassifierModel>(std::move(*m));
  const int64_t vectors = std::max<int64_t>(model->svm.vectors, model->classes());
  const int64_t block = block_rows(vectors, features);
  NativeStep* step = AddNativeStep(L, n, {in}, {label_slot, prob_slot}, [=](const void* const* ins, void* const* outs) {
    const auto* x = static_cast<const float*>(ins[0]);
    auto* labels = static_cast<int64_t*>(outs[0]);
    auto* z = static_cast<float*>(outs[1]);
    ForRows((rows + block - 1) / block, block * features * vectors, [&](int64_t b) {
      SvmScratch scratch;
      RowBuffer row(static_cast<size_t>(features)), zr(static_cast<size_t>(cols));
      for (int64_t r = b * block; r < std::min(rows, (b + 1) * block); ++r) {
        std::copy(x + r * features, x + (r + 1) * features, row.begin());
        const int64_t pick = SvmClassifyRow(*model, row.data(), zr.data(), scratch, kernel_row);
        if (labels != nullptr) labels[r] = model->labels.ints[static_cast<size_t>(pick)];
        for (int64_t j = 0; z != nullptr && j < cols; ++j) z[r * cols + j] = static_cast<float>(zr[static_cast<size_t>(j)]);
      }
    });
    return absl::OkStatus();
  });
  step->kind = "svm";
  return true;
}

// Z [..., k] = X[..., indices] (X of rank 1 reads as [1, F]); the indices
// are data, checked on every run before anything is written.
bool LowerArrayFeatureExtractor(Lowerer& L, const Node& n) {
  if (n.num_inputs() != 2 || n.num_outputs() != 1) return false;
  const Value* x = n.input(0);
  const Value* index = n.input(1);
  const Value* z = n.output(0);
  if (!NativeReady(L, x) || !NativeReady(L, index) || L.V(index).dtype != DType::kInt64) return false;
  const std::vector<int64_t>& xd = L.V(x).dims;
  if (xd.empty() || !L.V(z).is_static || L.V(z).dtype != L.V(x).dtype) return false;
  const int64_t features = xd.back();
  const int64_t k = NumElements(L.V(index).dims);
  const int64_t rows = features == 0 ? 0 : NumElements(xd) / features;
  std::vector<int64_t> want = xd.size() == 1 ? std::vector<int64_t>{1} : xd;
  if (xd.size() > 1) want.pop_back();
  want.push_back(k);
  if (L.V(z).dims != want || rows <= 0 || k <= 0) return false;
  const size_t elem = ElementSize(L.V(x).dtype);
  int ins_x = L.PlainSlot(x), ins_i = L.PlainSlot(index);
  int slot = NativeOutSlot(L, z);
  if (slot < 0) return false;
  const std::string where = n.Describe();
  NativeStep* step = AddNativeStep(L, n, {ins_x, ins_i}, slot, [=](const void* const* ins, void* out) {
    const auto* idx = static_cast<const int64_t*>(ins[1]);
    for (int64_t j = 0; j < k; ++j) {
      if (idx[j] < 0 || idx[j] >= features) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": index ", idx[j], " out of range for ", features, " features"));
      }
    }
    kernels::Gather(ins[0], idx, sizeof(int64_t), k, out, rows, features, elem);  // indices checked above
    return absl::OkStatus();
  });
  step->kind = "gather";
  return true;
}

}  // namespace aic::cpu
