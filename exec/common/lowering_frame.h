// The frame every compiling backend's lowering shares (exec/cpu, exec/cuda):
// the table of per-value facts over the shape-specialized graph, the walk
// in topological order, compile-time folding of nodes whose inputs are known,
// the reference kernel behind a fallback, and the table that maps an op (by
// domain, type and opset range, an ai.aic alias as its standard op) to the
// backend's lowering. A backend derives its Lowerer from LoweringFrame and
// contributes only what is its own: slots, steps and its lowerings.
#pragma once

#include <climits>
#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "graph/model.h"
#include "ops/fused/standard_aliases.h"
#include "ops/op_def.h"

namespace aic::exec {

// What a lowering knows of one value.
struct ValueFacts {
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;
  bool is_static = false;
  const Tensor* constant = nullptr;     // known at compile time (initializer or folded); read it through Const()
  const Node* deferred_fold = nullptr;  // a large dequantized weight, folded when first asked for (Const)
  int slot = -1;                       // where the backend keeps it, once produced
  std::vector<const Node*> consumers;  // one entry per use; a body's outer reads count
  bool graph_output = false;
};

class LoweringFrame {
 public:
  // `model` is the shape-specialized graph; folded values are kept in
  // `constants` (the plan's: a deque, so their addresses stay put).
  LoweringFrame(const Model& model, std::deque<Tensor>& constants) : model_(model), constants_(constants) {}
  virtual ~LoweringFrame() = default;

  // The whole pass: facts, a slot per graph input (BindInput), every node in
  // topological order (folded when compile time can compute it, else
  // LowerNode), then each graph output (BindOutput).
  absl::Status LowerGraph();

  ValueFacts& V(const Value* v) { return values_[v]; }
  // The opset n's definition is looked up at (an ai.aic alias: the standard version it carries).
  int64_t OpsetOf(const Node& n) const;
  // v's value when compile time knows it (an initializer or a folded value;
  // a deferred fold runs here), else null.
  const Tensor* Const(const Value* v);
  // A one-element float or double constant.
  std::optional<float> ScalarConst(const Value* v);
  // An int32/int64 constant's values (Slice starts, Reduce axes, ...).
  std::optional<std::vector<int64_t>> IntsConst(const Value* v);
  // A standard DequantizeLinear of constants to float, per tensor or along
  // one axis (no blocks): int8, uint8 or int32 values, float scales, zero
  // points (if any) of the values' type and the scales' count.
  struct ConstantDequantize {
    const Tensor* x = nullptr;
    const Tensor* scale = nullptr;
    const Tensor* zero = nullptr;  // null: none
    int64_t axis = 0;              // normalized; the scales' axis when there are several
  };
  std::optional<ConstantDequantize> DequantizeOfConstants(const Node& n);
  bool Done(const Node* n) const { return done_.contains(n); }
  // n was computed as part of another node's step (the backend counts it as fused).
  void MarkDone(const Node* n) { done_.insert(n); }
  // v's only consumer when v has exactly one use, is not a graph output, and that consumer is not done.
  const Node* SoleConsumer(const Value* v);
  int folded_nodes() const { return folded_nodes_; }

 protected:
  // --- what a backend contributes ---
  // A feed slot for graph input `in` (not an initializer).
  virtual absl::Status BindInput(const Value* in) = 0;
  // Steps for n (n is not done and not foldable).
  virtual absl::Status LowerNode(const Node& n) = 0;
  // Graph output `out`, computed (or constant), handed to the caller.
  virtual absl::Status BindOutput(const Value* out) = 0;
  // `v` was computed at compile time as `t`; the backend may adjust how it
  // stores it (the CPU backend rounds a value declared half, widened to f32).
  virtual void Folded(const Value* v, Tensor& t) {}

  // The definition whose reference kernel runs n as a fallback; null for a
  // call of a model-local function (the reference interpreter runs it);
  // Unimplemented naming the node when neither exists.
  absl::StatusOr<const OpDef*> FallbackDef(const Node& n) const;
  // Internal error when input `v` of n has no value yet (`what`: "input", "outer value").
  absl::Status RequireComputed(const Node& n, const Value* v, const char* what);
  // The operand slots of a fallback step for n: `input_slot` of each present
  // input once it has a value, `output_slot` of each present output, -1 for
  // omitted ones.
  using SlotFn = std::function<absl::StatusOr<int>(const Value*)>;
  absl::Status FallbackSlots(const Node& n, const SlotFn& input_slot, const SlotFn& output_slot, std::vector<int>& ins,
                             std::vector<int>& outs);

  const Model& model_;

 private:
  void CollectFacts();
  bool FoldConstant(const Node& n);
  bool DeferFold(const Node& n);

  std::deque<Tensor>& constants_;
  absl::flat_hash_map<const Value*, ValueFacts> values_;
  absl::flat_hash_set<const Node*> done_;
  int folded_nodes_ = 0;
};

// A backend's lowerings, keyed by (domain, op_type) and an opset range, so a
// lowering written for one version of an op never sees another.
template <typename Fn>
class LoweringTable {
 public:
  struct Entry {
    std::string op_type;
    Fn lower;
    std::string domain = "";
    int min_opset = 1;
    int max_opset = INT_MAX;
  };
  LoweringTable(std::initializer_list<Entry> entries) {
    for (const Entry& e : entries) entries_[{e.domain, e.op_type}].push_back(e);
  }
  // The lowering for n at `opset` (OpsetOf(n)); an ai.aic alias of a standard
  // op finds the standard op's lowering. Null when there is none.
  Fn Find(const Node& n, int64_t opset) const {
    const std::string& domain = IsAicAlias(n) ? std::string() : n.domain;
    auto it = entries_.find(std::make_pair(domain, n.op_type));
    if (it == entries_.end()) return nullptr;
    for (const Entry& e : it->second) {
      if (opset >= e.min_opset && opset <= e.max_opset) return e.lower;
    }
    return nullptr;
  }
  // The ai.aic ops this table lowers: its own entries of that domain, and the
  // aliases of standard ops it has an entry for (what the backend declares
  // to the session's rewriter).
  std::set<std::string> AicOps() const {
    std::set<std::string> ops;
    for (const auto& [key, entries] : entries_) {
      if (key.first == kAicDomain) ops.insert(key.second);
      if (!key.first.empty()) continue;
      std::optional<int> version = AicAliasVersion(key.second);
      if (!version) continue;
      for (const Entry& e : entries) {
        if (*version >= e.min_opset && *version <= e.max_opset) ops.insert(key.second);
      }
    }
    return ops;
  }

 private:
  absl::flat_hash_map<std::pair<std::string, std::string>, std::vector<Entry>> entries_;
};

}  // namespace aic::exec
