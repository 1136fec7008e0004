#include "exec/cpu/widen_half.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ops/util/float_convert.h"

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

void ReplaceUses(Graph& g, Value* from, Value* to, const Node* except) {
  for (const auto& n : g.nodes()) {
    if (n.get() == except) continue;
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      if (n->input(i) == from) n->set_input(i, to);
    }
  }
}

// Ops whose outputs are some of their inputs' elements (moved, repeated or
// selected) or an exact function of one (Relu, Abs, Neg): on half inputs
// they produce values that are already half, so rounding them again would
// only cost a pass over memory.
bool KeepsHalfValuesExact(const Node& n) {
  static const auto* ops = new absl::flat_hash_set<std::string>{
      "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Slice", "Gather", "GatherElements",
      "GatherND", "Concat", "Split", "Expand", "Tile", "Pad", "Where", "Relu", "Abs", "Neg", "Max", "Min",
      "MaxPool", "GlobalMaxPool", "ReduceMax", "ReduceMin", "Dropout", "DepthToSpace", "SpaceToDepth",
      "Floor", "Ceil", "Round", "Sign", "Resize"};
  if (!n.domain.empty() || !ops->contains(n.op_type)) return false;
  // Resize only in nearest mode; Pad's constant value is an input (half when the data is).
  if (n.op_type == "Resize") {
    const Attribute* mode = n.FindAttr("mode");
    if (mode == nullptr || mode->s != "nearest") return false;
  }
  return true;
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
  std::vector<Node*> entry, exit;
  // Graph inputs: keep the declared type; the graph reads a float copy.
  for (Value* in : std::vector<Value*>(g.inputs())) {
    if (!in->type().is_tensor() || !IsHalf(in->dtype()) || in->is_initializer()) continue;
    Value* wide = g.AddValue(absl::StrCat(in->name(), "/f32"), AsFloat(in->type()));
    Node* cast = g.AddNode("Cast", {in}, {wide}, absl::StrCat(in->name(), "/widen"));
    cast->SetAttr(Attribute::Int("to", static_cast<int64_t>(DType::kFloat)));
    ReplaceUses(g, in, wide, cast);
    entry.push_back(cast);
    if (widened_half != nullptr) widened_half->declared[wide] = in->dtype();
  }
  // Graph outputs: the value the producer writes is renamed and widened
  // below; a new value of the declared name and type, narrowed from it by
  // one Cast, takes its place among the outputs.
  std::vector<Value*> outputs = g.outputs();
  for (Value*& out : outputs) {
    if (!out->type().is_tensor() || !IsHalf(out->dtype()) || out->producer() == nullptr) continue;
    std::string name = out->name();
    out->set_name(absl::StrCat(name, "/f32"));
    Value* narrow = g.AddValue(name, out->type());
    Node* cast = g.AddNode("Cast", {out}, {narrow}, absl::StrCat(name, "/narrow"));
    cast->SetAttr(Attribute::Int("to", static_cast<int64_t>(out->dtype())));
    exit.push_back(cast);
    out = narrow;
  }
  g.set_outputs(outputs);
  absl::flat_hash_set<const Value*> graph_outputs(outputs.begin(), outputs.end());
  // A Cast from a half value the graph computed (to float, double, an
  // integer) reads what the model computed in half: the island's f32 value
  // rounded to half once. Without the rounding a later step can magnify the
  // difference: GroupNormalization over nearly equal Tanh outputs (the graph
  // fuzzer, seed 15) came out 0.04 apart. Found before the types widen.
  // With `stored`, the steps store that value rounded already.
  absl::flat_hash_map<const Node*, DType> rounds_its_input;
  for (Node* n : stored != nullptr ? std::vector<Node*>() : model_nodes) {
    const Attribute* to = n->FindAttr("to");
    const Value* in = n->input(0);
    if (n->op_type == "Cast" && n->domain.empty() && to != nullptr && to->type == AttrType::kInt &&
        !IsHalf(static_cast<DType>(to->i)) && in != nullptr && in->type().is_tensor() && IsHalf(in->dtype()) &&
        !in->is_graph_input() && !in->is_initializer()) {
      rounds_its_input[n] = in->dtype();
    }
  }
  // What a step computes into a half value is rounded to half where it is
  // written (half_storage.h): found before the types widen, since whether an
  // op's inputs are all half decides whether its result needs it.
  if (stored != nullptr) {
    absl::flat_hash_set<const Value*> half_inputs;  // the entry Casts' float copies hold half values
    for (Node* cast : entry) half_inputs.insert(cast->output(0));
    for (Node* n : model_nodes) {
      bool exact = KeepsHalfValuesExact(*n);
      for (const Value* in : n->inputs()) {
        if (in != nullptr && in->type().is_tensor() && IsFloatingPoint(in->dtype()) && !IsHalf(in->dtype()) &&
            !half_inputs.contains(in)) {
          exact = false;  // a float or double operand: the result is not a half value
        }
      }
      bool cast = n->op_type == "Cast" && n->domain.empty();  // rounds itself (below)
      for (Value* out : n->outputs()) {
        if (out != nullptr && out->type().is_tensor() && IsHalf(out->dtype()) && !cast) {
          (*stored)[out] = {out->dtype(), exact};
        }
      }
    }
    // A float16 graph output read by nothing but its exit Cast is rounded by
    // that Cast. Not a bfloat16 one: Cast to bfloat16 truncates (as the
    // reference's Cast does), while a computed bfloat16 value rounds to nearest.
    absl::flat_hash_set<const Value*> read_inside;
    for (Node* n : model_nodes) {
      for (const Value* in : n->inputs()) read_inside.insert(in);
    }
    for (Node* cast : exit) {
      auto it = stored->find(cast->input(0));
      if (it != stored->end() && it->second.type == DType::kFloat16 && !read_inside.contains(cast->input(0))) {
        stored->erase(it);
      }
    }
  }
  int widened = 0;
  for (const auto& v : g.values()) {
    if (!v->type().is_tensor() || !IsHalf(v->dtype()) || (v->is_graph_input() && !v->is_initializer())) continue;
    if (graph_outputs.contains(v.get())) continue;
    if (v->is_initializer()) {
      g.SetInitializer(v.get(), WidenToFloat(*v->initializer()));
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
        n->input(0) != nullptr && (IsHalf(static_cast<DType>(to->i)) || from_half != rounds_its_input.end())) {
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
  }
  order.insert(order.end(), exit.begin(), exit.end());
  g.SetNodeOrder(order);
  return widened;
}

}  // namespace aic::cpu
