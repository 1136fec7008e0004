#include "exec/cpu/widen_half.h"

#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/topo.h"
#include "ops/util/float_convert.h"
#include "support/half.h"

namespace aic::cpu {

namespace {

bool IsHalf(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

// Attributes holding a dtype: Cast's `to`, `dtype` (EyeLike, Random*,
// Multinomial, Bernoulli), `output_dtype` (QuantizeLinear-21 and friends).
void WidenDtypeAttrs(Node& n) {
  for (const char* name : {"to", "dtype", "output_dtype"}) {
    Attribute* a = n.FindAttr(name);
    if (a != nullptr && a->type == AttrType::kInt && IsHalf(static_cast<DType>(a->i))) {
      a->i = static_cast<int64_t>(DType::kFloat);
    }
  }
  for (const char* name : {"value"}) {  // Constant, ConstantOfShape
    Attribute* a = n.FindAttr(name);
    if (a != nullptr && a->type == AttrType::kTensor && a->t.defined() && IsHalf(a->t.dtype())) {
      a->t = WidenToFloat(a->t);
    }
  }
}

// Ops the CPU backend runs on elements of any size (exec/cpu/ops_native_tensor.cc,
// ops_native_indexing.cc): on half inputs they need no f32.
bool MovesHalfValues(const Node& n) {
  static const auto* ops = new absl::flat_hash_set<std::string>{
      "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Slice", "Gather", "Concat",
      "Split", "Expand", "Tile", "GatherElements", "GatherND", "ScatterND", "ScatterElements"};
  return n.domain.empty() && ops->contains(n.op_type);
}

// Whether `n` is a Cast from another type to `t`, whose output is exactly a
// `t` value already (a Cast to half inside the graph keeps its rounding,
// below; one from `t` itself is an identity and rounds nothing). Asked
// before the types widen.
bool IsCastTo(const Node* n, DType t) {
  if (n == nullptr || n->op_type != "Cast" || !n->domain.empty() || n->input(0) == nullptr) return false;
  const Attribute* to = n->FindAttr("to");
  return to != nullptr && to->type == AttrType::kInt && static_cast<DType>(to->i) == t && n->input(0)->dtype() != t;
}

// A half-precision weight as float, widened when first read: the lowering
// reads each weight once to pack it and may release the float bytes then
// (Lowerer::ReleasePlainCopy), so widening them all up front held every
// weight in float at once beside the half originals (vit_tiny bf16: 22 MB
// more at its peak). Small ones are widened now.
Tensor WidenedWeight(const Tensor& half) {
  constexpr size_t kDeferredBytes = 64 * 1024;
  const int64_t count = half.num_elements();
  const size_t bytes = static_cast<size_t>(count) * sizeof(float);
  if (bytes < kDeferredBytes) return WidenToFloat(half);
  auto fill = [half, count](uint8_t* dst) {
    float* out = reinterpret_cast<float*>(dst);
    const uint16_t* in = static_cast<const uint16_t*>(half.raw_data());
    if (half.dtype() == DType::kBFloat16) {
      for (int64_t i = 0; i < count; ++i) out[i] = BFloat16ToFloat(in[i]);
    } else {
      for (int64_t i = 0; i < count; ++i) out[i] = HalfToFloat(in[i]);
    }
  };
  return Tensor(DType::kFloat, half.dims(), Buffer::Deferred(bytes, std::move(fill)));
}

TypeInfo AsFloat(const TypeInfo& t) {
  TypeInfo w = t;
  w.dtype = DType::kFloat;
  return w;
}

}  // namespace

bool DeclaresHalfPrecision(const Model& model) {
  const Graph& g = *model.graph;
  for (const auto& v : g.values()) {
    if (v->type().is_tensor() && IsHalf(v->dtype())) return true;
  }
  for (const auto& n : g.nodes()) {
    for (const Attribute& a : n->attributes) {
      if (a.type == AttrType::kInt && (a.name == "to" || a.name == "dtype" || a.name == "output_dtype") &&
          IsHalf(static_cast<DType>(a.i))) {
        return true;
      }
      if (a.type == AttrType::kTensor && a.t.defined() && IsHalf(a.t.dtype())) return true;
    }
  }
  return false;
}

int WidenHalfToFloat(Model& model, WidenedHalf* widened_half) {
  StoredHalfValues* stored = widened_half != nullptr ? &widened_half->stored : nullptr;
  Graph& g = *model.graph;
  bool any_half = false;
  for (const auto& v : g.values()) any_half = any_half || (v->type().is_tensor() && IsHalf(v->dtype()));
  for (const auto& n : g.nodes()) {
    if (!n->Subgraphs().empty()) return 0;  // bodies read outer values by their types: left alone
  }
  if (!any_half) return 0;
  // The model's own nodes, before any Cast is added around them.
  std::vector<Node*> model_nodes;
  for (const auto& n : g.nodes()) model_nodes.push_back(n.get());
  // Values that stay half: the graph's half inputs, half initializers read
  // only by data movement, and what data movement makes of them alone (a
  // Gather from an fp16 embedding table, a Transpose of an fp16 input): they
  // move 2-byte elements (kept_nodes), and only a computing reader gets a
  // float copy.
  absl::flat_hash_set<const Value*> kept;
  absl::flat_hash_set<const Node*> kept_nodes;
  absl::flat_hash_map<const Value*, std::vector<Node*>> readers;  // each model node once per value it reads
  for (Node* n : model_nodes) {
    for (const Value* in : n->inputs()) {
      if (in != nullptr && (readers[in].empty() || readers[in].back() != n)) readers[in].push_back(n);
    }
  }
  {
    for (Value* in : g.inputs()) {
      if (in->type().is_tensor() && IsHalf(in->dtype()) && !in->is_initializer()) kept.insert(in);
    }
    for (const auto& v : g.values()) {
      if (!v->is_initializer() || !v->type().is_tensor() || !IsHalf(v->dtype())) continue;
      const std::vector<Node*>& r = readers[v.get()];
      if (!r.empty() && absl::c_all_of(r, [](const Node* n) { return MovesHalfValues(*n); })) kept.insert(v.get());
    }
    absl::StatusOr<std::vector<Node*>> topo = TopologicalOrder(g);
    for (Node* n : topo.ok() ? *topo : std::vector<Node*>()) {
      if (!MovesHalfValues(*n)) continue;
      bool all_kept = true;
      for (const Value* in : n->inputs()) {
        bool floating = in != nullptr && in->type().is_tensor() && IsFloatingPoint(in->dtype());
        if (floating && !kept.contains(in)) all_kept = false;  // a computed value: widened, so is n
      }
      for (const Value* out : n->outputs()) {
        if (out != nullptr && (!out->type().is_tensor() || !IsHalf(out->dtype()))) all_kept = false;
      }
      if (!all_kept) continue;
      kept_nodes.insert(n);
      for (const Value* out : n->outputs()) {
        if (out != nullptr) kept.insert(out);
      }
    }
  }
  std::vector<Node*> entry, exit;
  // A kept value read by a node that computes: one float copy, made right
  // after the value is (before everything, for inputs and initializers);
  // such readers read the copy. A copy of an initializer folds at compile time.
  absl::flat_hash_map<const Node*, std::vector<Node*>> copies_after;
  std::vector<Value*> kept_values;  // in the graph's order: the plan is the same every time
  for (const auto& v : g.values()) {
    if (kept.contains(v.get())) kept_values.push_back(v.get());
  }
  for (Value* v : kept_values) {
    std::vector<Node*> computing;
    for (Node* n : readers[v]) {
      if (!kept_nodes.contains(n)) computing.push_back(n);
    }
    if (computing.empty()) continue;
    Value* wide = g.AddValue(absl::StrCat(v->name(), "/f32"), AsFloat(v->type()));
    Node* cast = g.AddNode("Cast", {v}, {wide}, absl::StrCat(v->name(), "/widen"));
    cast->SetAttr(Attribute::Int("to", static_cast<int64_t>(DType::kFloat)));
    for (Node* n : computing) {
      for (size_t i = 0; i < n->num_inputs(); ++i) {
        if (n->input(i) == v) n->set_input(i, wide);
      }
    }
    (v->producer() != nullptr ? copies_after[v->producer()] : entry).push_back(cast);
    if (widened_half != nullptr) widened_half->declared[wide] = v->dtype();
  }
  // Graph outputs: the value the producer writes is renamed and widened
  // below; a new value of the declared name and type, narrowed from it by
  // one Cast, takes its place among the outputs (a kept one is already that).
  std::vector<Value*> outputs = g.outputs();
  for (Value*& out : outputs) {
    if (!out->type().is_tensor() || !IsHalf(out->dtype()) || out->producer() == nullptr || kept.contains(out)) continue;
    std::string name = out->name();
    out->set_name(absl::StrCat(name, "/f32"));
    Value* narrow = g.AddValue(name, out->type());
    Node* cast = g.AddNode("Cast", {out}, {narrow}, absl::StrCat(name, "/narrow"));
    cast->SetAttr(Attribute::Int("to", static_cast<int64_t>(out->dtype())));
    exit.push_back(cast);
    out = narrow;
  }
  g.set_outputs(outputs);
  absl::flat_hash_set<const Value*> stays_half(outputs.begin(), outputs.end());
  for (const Value* v : kept) stays_half.insert(v);
  // Where the model reads a value it computed in half as half, the island's
  // f32 value is rounded to half once: a Cast from it (to float, double, an
  // integer) and the graph's outputs. Without the rounding a later step can
  // magnify the difference: GroupNormalization over nearly equal Tanh
  // outputs (the graph fuzzer, seed 15) came out 0.04 apart. A float16 value
  // gets a Cast to half before it (exact for float16: round to nearest; the
  // exit Cast rounds the same way); a bfloat16 value is rounded to nearest
  // where its step writes it (half_storage.h), since Cast to bfloat16
  // truncates, as the model's own Casts do. Found before the types widen.
  absl::flat_hash_map<const Node*, DType> rounds_its_input;
  // A Cast from a half type to the same type is an identity of the model
  // (the optimizer drops it at -O1): it rounds nothing, so the answer does
  // not depend on the optimization level. The Attention function body casts
  // its float16 scores and probabilities to float16 three times.
  absl::flat_hash_set<const Node*> same_type_casts;
  for (Node* n : model_nodes) {
    const Attribute* to = n->FindAttr("to");
    Value* in = n->input(0);
    if (n->op_type == "Cast" && n->domain.empty() && to != nullptr && to->type == AttrType::kInt &&
        in != nullptr && in->type().is_tensor() && IsHalf(in->dtype()) && static_cast<DType>(to->i) == in->dtype()) {
      same_type_casts.insert(n);
    }
    if (n->op_type == "Cast" && n->domain.empty() && to != nullptr && to->type == AttrType::kInt &&
        !IsHalf(static_cast<DType>(to->i)) && in != nullptr && in->type().is_tensor() && IsHalf(in->dtype()) &&
        !in->is_graph_input() && !in->is_initializer() && !kept.contains(in) && !IsCastTo(in->producer(), in->dtype())) {
      if (in->dtype() == DType::kFloat16) {
        rounds_its_input[n] = in->dtype();
      } else if (stored != nullptr) {
        (*stored)[in] = in->dtype();
      }
    }
  }
  if (stored != nullptr) {
    for (Node* cast : exit) {
      if (cast->input(0)->dtype() == DType::kBFloat16) (*stored)[cast->input(0)] = DType::kBFloat16;
    }
  }
  int widened = 0;
  for (const auto& v : g.values()) {
    if (!v->type().is_tensor() || !IsHalf(v->dtype()) || (v->is_graph_input() && !v->is_initializer())) continue;
    if (stays_half.contains(v.get())) continue;
    if (v->is_initializer()) {
      Tensor half = *v->initializer();
      Tensor wide = WidenedWeight(half);
      if (widened_half != nullptr && wide.buffer() != half.buffer()) {
        widened_half->originals[wide.buffer().get()] = std::move(half);
      }
      g.SetInitializer(v.get(), std::move(wide));
    }
    if (widened_half != nullptr) widened_half->declared[v.get()] = v->dtype();
    v->set_type(AsFloat(v->type()));
    ++widened;
  }
  // A Cast to half inside the graph still rounds to half, as the model asks:
  // Cast(x, to=half) becomes Cast(Cast(x, to=half), to=float), the first
  // producing a half value that stays half.
  absl::flat_hash_map<const Node*, Node*> rounding_before;  // model node -> the rounding cast feeding it
  for (Node* n : model_nodes) {
    const Attribute* to = n->FindAttr("to");
    const auto from_half = rounds_its_input.find(n);
    if (n->op_type == "Cast" && n->domain.empty() && to != nullptr && to->type == AttrType::kInt &&
        n->input(0) != nullptr && !same_type_casts.contains(n) &&
        (IsHalf(static_cast<DType>(to->i)) || from_half != rounds_its_input.end())) {
      auto half = from_half != rounds_its_input.end() ? from_half->second : static_cast<DType>(to->i);
      TypeInfo ht = n->output(0) != nullptr ? n->output(0)->type() : TypeInfo();
      ht.dtype = half;
      Value* rounded = g.AddValue(absl::StrCat(n->input(0)->name(), "/", DTypeName(half)), ht);
      Node* round = g.AddNode("Cast", {n->input(0)}, {rounded}, absl::StrCat(n->name, "/round"));
      round->SetAttr(Attribute::Int("to", static_cast<int64_t>(half)));
      n->set_input(0, rounded);
      rounding_before[n] = round;
    }
    WidenDtypeAttrs(*n);
  }
  // Entry casts first, exit casts last, the model's nodes in their order
  // between, each rounding cast just before the cast it feeds.
  std::vector<Node*> order(entry.begin(), entry.end());
  for (Node* n : model_nodes) {
    if (auto it = rounding_before.find(n); it != rounding_before.end()) order.push_back(it->second);
    order.push_back(n);
    if (auto it = copies_after.find(n); it != copies_after.end()) order.insert(order.end(), it->second.begin(), it->second.end());
  }
  order.insert(order.end(), exit.begin(), exit.end());
  g.SetNodeOrder(order);
  return widened;
}

}  // namespace aic::cpu
