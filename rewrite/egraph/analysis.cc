// The e-class analyses: what each class knows about its value (the TypeInfo
// of each output via OpDef inference, the value itself via the reference
// kernels, whether it is computed from weights only), how two classes' facts
// join when Union merges them, and how Rebuild carries facts that unions
// taught to the classes reading them. See egraph.h.
#include "rewrite/egraph/egraph.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ops/infer_shapes.h"
#include "ops/evaluate.h"

namespace aic::rewrite {

void EGraph::AnalyzeOp(const ENode& e, EClassData& d) {
  d.is_tuple = e.num_outputs > 1;
  d.types.assign(e.num_outputs, TypeInfo());
  d.values.assign(e.num_outputs, std::nullopt);
  std::vector<TypeInfo> in_types;
  std::vector<const Tensor*> in_consts;
  bool weight_only = true;
  for (ClassId c : e.children) {
    if (c == kNoClass) {
      in_types.emplace_back();
      in_consts.push_back(nullptr);
      continue;
    }
    const EClassData& cd = classes_[Find(c)];
    in_types.push_back(cd.types.empty() ? TypeInfo() : cd.types[0]);
    in_consts.push_back(cd.values.empty() || !cd.values[0] ? nullptr : &*cd.values[0]);
    weight_only = weight_only && cd.weight_only;
  }
  // A quantized weight's float value is never used where folding keeps it
  // quantized (see set_value_dequantized_weights): computing it was most of
  // `opt`'s time on int8 models. Small ones (scales, shape-like) still fold.
  constexpr int64_t kSmallDequantized = 4096;
  if (!value_dequantized_weights_ && e.op->op_type == "DequantizeLinear" && e.op->domain.empty() &&
      !in_consts.empty() && in_consts[0] != nullptr && in_consts[0]->num_elements() > kSmallDequantized) {
    in_consts[0] = nullptr;
  }
  // Constant folding *is* the reference kernel (ops/evaluate.h), bounded so
  // the e-graph never holds huge tensors.
  EvaluateLimits limits;
  limits.max_input_elements = max_fold_elements_;
  limits.max_output_elements = max_fold_elements_;
  Evaluation ev = EvaluateNode(*e.op, opset_, in_types, in_consts, limits,
                               [this] { return absl::StrCat("unk__rw", symbol_counter_++); });
  if (!ev.has_def) return;
  d.weight_only = weight_only && !ev.nondeterministic;
  for (int i = 0; i < e.num_outputs && i < static_cast<int>(ev.types.size()); ++i) {
    d.types[i] = std::move(ev.types[i]);
    d.values[i] = std::move(ev.values[i]);
  }
}

void EGraph::AnalyzeProj(ClassId tuple, int64_t index, EClassData& d) const {
  const EClassData& t = classes_[Find(tuple)];
  d.types = {index < static_cast<int64_t>(t.types.size()) ? t.types[index] : TypeInfo()};
  d.values = {index < static_cast<int64_t>(t.values.size()) ? t.values[index] : std::nullopt};
  d.weight_only = t.weight_only;
}

namespace {

// How much a dim says: a value, then a name from the file or its inference
// ("batch", which other values share), then a fresh name ("unk__rw7", which
// only this class's readers know), then nothing.
int DimRank(const Dim& d) {
  if (d.is_value()) return 3;
  if (!d.is_symbol()) return 0;
  return d.symbol().rfind("unk__", 0) == 0 ? 1 : 2;
}

// Joins what two equal values' types say (they are the same value): a known
// type over an unknown one, a known rank over none, and dim by dim the more
// specific of the two (so [?, 40, ?] and [batch, ?, 120] give [batch, 40,
// 120]). Returns true when `into` learned something.
bool JoinType(TypeInfo& into, const TypeInfo& other) {
  if (!other.known()) return false;
  if (!into.known()) {
    into = other;
    return true;
  }
  if (!into.is_tensor() || !other.is_tensor() || !other.shape.has_rank()) return false;
  if (!into.shape.has_rank()) {
    into.shape = other.shape;
    return true;
  }
  if (into.shape.rank() != other.shape.rank()) return false;  // contradictory facts: keep ours
  std::vector<Dim> dims = into.shape.dims();
  bool learned = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (DimRank(other.shape[i]) > DimRank(dims[i])) {
      dims[i] = other.shape[i];
      learned = true;
    }
  }
  if (learned) into.shape = Shape(std::move(dims));
  return learned;
}

// Whether an imported dim is a fact the e-graph may take: a value, a name
// that is not a fresh one ("batch"), or a fresh name of this run's inference.
bool AdoptableDim(const Dim& d) {
  if (d.is_value()) return true;
  if (!d.is_symbol()) return false;
  return d.symbol().rfind("unk__", 0) != 0 || d.symbol().rfind(kInferredSymbolPrefix, 0) == 0;
}

}  // namespace

void EGraph::AdoptImportedTypes(ClassId id, const std::vector<TypeInfo>& types) {
  EClassData& d = classes_[Find(id)];
  for (size_t i = 0; i < d.types.size() && i < types.size(); ++i) {
    TypeInfo& into = d.types[i];
    const TypeInfo& other = types[i];
    if (!into.is_tensor() || !other.is_tensor() || !other.shape.has_rank()) continue;
    if (into.dtype != DType::kUndefined && other.dtype != DType::kUndefined && into.dtype != other.dtype) continue;
    if (!into.shape.has_rank()) {
      std::vector<Dim> dims = other.shape.dims();
      bool all = std::all_of(dims.begin(), dims.end(), AdoptableDim);
      if (all) into.shape = other.shape;
      continue;
    }
    if (into.shape.rank() != other.shape.rank()) continue;  // contradictory facts: keep ours
    std::vector<Dim> dims = into.shape.dims();
    bool learned = false;
    for (size_t k = 0; k < dims.size(); ++k) {
      const Dim& o = other.shape[k];
      if (dims[k].is_value() || !AdoptableDim(o) || o.SameAs(dims[k])) continue;
      // A name from a file or from the analysis itself beats a fresh name of the graph's inference.
      if (!o.is_value() && DimRank(dims[k]) > DimRank(o)) continue;
      dims[k] = o;
      learned = true;
    }
    if (learned) into.shape = Shape(std::move(dims));
  }
}

void EGraph::MergeAnalyses(ClassId root, ClassId merged) {
  if (dirty_.size() < classes_.size()) dirty_.resize(classes_.size(), 0);
  dirty_[root] = 1;
  EClassData& da = classes_[root];
  const EClassData& db = classes_[merged];
  for (size_t i = 0; i < da.types.size() && i < db.types.size(); ++i) JoinType(da.types[i], db.types[i]);
  for (size_t i = 0; i < da.values.size() && i < db.values.size(); ++i) {
    if (!da.values[i] && db.values[i]) da.values[i] = db.values[i];
  }
  da.weight_only = da.weight_only || db.weight_only;
}

void EGraph::PropagateAnalyses() {
  // Unions can make a class's inputs known (a folded constant, a sharper
  // shape): recompute what those ops' classes know. Children mostly precede
  // parents in node order, so one sweep carries facts far; a second catches
  // the rest.
  // Only e-nodes reading a dirty class are redone: an e-node was analyzed
  // when it was added, with its children as they were then, and only unions
  // and this propagation make children know more. (Redoing every e-node on
  // every rebuild was a third of the optimizer's time.)
  dirty_.resize(classes_.size(), 0);
  std::vector<char> next_dirty(classes_.size(), 0);
  for (int sweep = 0; sweep < 2; ++sweep) {
    bool changed = false;
    std::fill(next_dirty.begin(), next_dirty.end(), 0);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const ENode& n = nodes_[i];
      if (n.kind != ENodeKind::kOp) continue;
      bool reads_dirty = false;
      for (ClassId c : n.children) {
        if (c != kNoClass && dirty_[Find(c)]) {
          reads_dirty = true;
          break;
        }
      }
      if (!reads_dirty) continue;
      EClassData& d = classes_[Find(node_class_[i])];
      bool missing_value = false;
      for (const auto& v : d.values) missing_value = missing_value || !v.has_value();
      bool weak_type = false;
      for (const TypeInfo& t : d.types) weak_type = weak_type || !t.is_tensor() || !t.shape.IsStatic();
      if (!missing_value && !weak_type) continue;
      // A dirty input may have learned a value or a dim (JoinType): infer again.
      EClassData fresh;
      AnalyzeOp(n, fresh);
      ClassId root = Find(node_class_[i]);
      EClassData& target = classes_[root];
      bool updated = false;
      for (size_t k = 0; k < target.values.size() && k < fresh.values.size(); ++k) {
        if (!target.values[k] && fresh.values[k]) {
          target.values[k] = std::move(fresh.values[k]);
          updated = true;
        }
      }
      for (size_t k = 0; k < target.types.size() && k < fresh.types.size(); ++k) {
        updated = JoinType(target.types[k], fresh.types[k]) || updated;
      }
      if (fresh.weight_only && !target.weight_only) {
        target.weight_only = true;
        updated = true;
      }
      if (updated) {
        changed = true;
        dirty_[root] = 1;
        next_dirty[root] = 1;
      }
    }
    // The next sweep (or, after the last, the next rebuild) redoes only the
    // readers of what this sweep taught.
    dirty_ = next_dirty;
    if (!changed) break;
  }
}

}  // namespace aic::rewrite
