#include "analysis/logical_graph.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "analysis/attention.h"
#include "analysis/node_facts.h"
#include "analysis/parameters.h"
#include "analysis/partitions.h"
#include "ops/registry.h"
#include "ops/util/cost_util.h"
#include "session/input_kinds.h"

namespace aic::analysis {

namespace {

using Facts = NodeFacts;  // analysis/node_facts.h

// The floating-point weights an If/Loop/Scan node's bodies hold (their
// initializers and Constant nodes' tensors, nested bodies included): the
// model stores them, whichever branch runs, so they are the node's
// parameters. Per-op costs see only the node itself.
int64_t BodyParameters(const Node& n) {
  int64_t total = 0;
  for (const Graph* body : n.Subgraphs()) {
    for (const Value* v : body->initializers()) {
      if (IsFloatingPoint(v->initializer()->dtype()) && v->initializer()->rank() > 0) total += v->initializer()->num_elements();
    }
    for (const auto& inner : body->nodes()) {
      const Attribute* value = inner->op_type == "Constant" && inner->domain.empty() ? inner->FindAttr("value") : nullptr;
      if (value != nullptr && value->type == AttrType::kTensor && IsFloatingPoint(value->t.dtype()) && value->t.rank() > 0) {
        total += value->t.num_elements();
      }
      total += BodyParameters(*inner);
    }
  }
  return total;
}

// Where a layer's weight is and what matrix it is: Linear (Gemm/MatMul with a
// constant 2-D weight) maps K -> N; Conv maps Cin -> Cout with the weight seen
// as [Cout, Cin/group·kh·kw]. This reads ONNX's weight layouts, so it names
// the three op types whose layout it knows.
struct Geometry {
  bool ok = false;
  std::string kind;
  const Value* weight_value = nullptr;
  const Tensor* weight = nullptr;
  int64_t in = 0, out = 0, group = 1;
  bool pointwise = false;
};

Geometry LayerGeometry(const Node& node, const Traits& traits, const ConstantValues& constants) {
  Geometry g;
  auto constant = [&](size_t i) -> const Tensor* {
    const Tensor* t = constants.Find(node.input(i));
    return t != nullptr && IsFloatingPoint(t->dtype()) ? t : nullptr;
  };
  if (traits.semantic_name == "Linear" && (node.op_type == "Gemm" || node.op_type == "MatMul")) {
    bool gemm = node.op_type == "Gemm";
    bool trans_a = gemm && node.GetInt("transA", 0) != 0;
    bool trans_b = gemm && node.GetInt("transB", 0) != 0;
    if (const Tensor* b = constant(1); b != nullptr && b->rank() == 2) {
      g.weight_value = node.input(1);
      g.weight = b;
      g.in = b->dim(trans_b ? 1 : 0);
      g.out = b->dim(trans_b ? 0 : 1);
    } else if (const Tensor* a = constant(0); a != nullptr && a->rank() == 2) {
      g.weight_value = node.input(0);
      g.weight = a;
      g.in = a->dim(trans_a ? 0 : 1);
      g.out = a->dim(trans_a ? 1 : 0);
    } else {
      return g;
    }
    g.kind = "Linear";
    g.ok = g.in > 0 && g.out > 0;
    return g;
  }
  if (traits.semantic_name == "Conv" && node.op_type == "Conv") {
    const Tensor* w = constant(1);
    if (w == nullptr || w->rank() < 3) return g;
    g.kind = "Conv";
    g.weight_value = node.input(1);
    g.weight = w;
    g.group = std::max<int64_t>(1, node.GetInt("group", 1));
    g.out = w->dim(0);
    g.in = w->dim(1) * g.group;
    int64_t kernel = 1;
    for (int64_t d = 2; d < w->rank(); ++d) kernel *= w->dim(d);
    bool unit_strides = true, no_pads = true;
    for (int64_t s : node.GetInts("strides")) unit_strides &= s == 1;
    for (int64_t p : node.GetInts("pads")) no_pads &= p == 0;
    std::string auto_pad = node.GetString("auto_pad", "NOTSET");
    g.pointwise =
        kernel == 1 && unit_strides && no_pads && (auto_pad == "NOTSET" || auto_pad == "VALID");
    g.ok = g.in > 0 && g.out > 0;
  }
  return g;
}

// A bias that adds one value per output feature of a Linear (shape [N] or [1, N]).
bool IsFeatureBias(const Node& add, const Traits& traits, const Value* from,
                   const ConstantValues& constants, int64_t out_features) {
  if (traits.semantic_name != "Bias" || add.num_inputs() != 2) return false;
  const Value* other = add.input(0) == from ? add.input(1) : add.input(0);
  const Tensor* b = constants.Find(other);
  if (b == nullptr || b->rank() < 1 || b->dim(b->rank() - 1) != out_features) return false;
  for (int64_t d = 0; d + 1 < b->rank(); ++d) {
    if (b->dim(d) != 1) return false;
  }
  return true;
}

// Graph inputs that carry the model's data: floating-point tensors, and
// 8- and 16-bit integers (pixels, PCM samples, quantized values). 32/64-bit
// integers and booleans are ids, positions and masks: an id enters the data
// through an Embedding; a mask's arithmetic stays off the path.
bool IsDataInput(DType d) { return IsFloatingPoint(d) || session::HoldsSamples(d); }

// Ops whose output depends on their input's shape only.
bool ReadsOnlyShape(const Node& n) {
  return n.domain.empty() && (n.op_type == "Shape" || n.op_type == "Size");
}

int64_t StaticBytes(const Value* v) {
  if (v == nullptr || !v->type().is_tensor()) return 0;
  auto n = v->shape().NumElements();
  return n ? static_cast<int64_t>(ByteSizeOf(v->dtype(), *n)) : 0;
}

// The 8-bit tensor a DequantizeLinear turns into `v`, or null.
const Value* EightBitSource(const Value* v) {
  const Node* p = v != nullptr ? v->producer() : nullptr;
  if (p == nullptr || p->op_type != "DequantizeLinear" || !p->domain.empty() || p->input(0) == nullptr ||
      !p->input(0)->type().is_tensor() || !IsEightBitInteger(p->input(0)->dtype())) {
    return nullptr;
  }
  return p->input(0);
}

// How many bytes fewer a quantized op moves than its float cost counts, or
// -1 when `m` does not compute on 8-bit operands. QOperator ops read and
// write their integer types already (0); a QDQ Conv/ConvTranspose/MatMul/Gemm
// (both operands dequantized from 8-bit tensors) reads the stored 8-bit
// tensors and the int32 bias, and writes what the QuantizeLinear after it
// stores when that is its only reader.
int64_t QuantizedByteSavings(const Node& m, const absl::flat_hash_map<const Value*, std::vector<const Node*>>& readers,
                             int64_t* written_savings) {
  *written_savings = 0;
  static const absl::flat_hash_set<std::string> kQOperator = {"QLinearConv", "QLinearMatMul", "ConvInteger",
                                                              "MatMulInteger"};
  static const absl::flat_hash_set<std::string> kQdqCompute = {"Conv", "ConvTranspose", "MatMul", "Gemm"};
  if (!m.domain.empty()) return -1;
  if (kQOperator.contains(m.op_type)) return 0;
  if (!kQdqCompute.contains(m.op_type) || m.num_inputs() < 2) return -1;
  const Value* a = EightBitSource(m.input(0));
  const Value* b = EightBitSource(m.input(1));
  if (a == nullptr || b == nullptr) return -1;
  int64_t read = StaticBytes(m.input(0)) - StaticBytes(a) + StaticBytes(m.input(1)) - StaticBytes(b);
  if (m.has_input(2)) {
    const Node* p = m.input(2)->producer();
    if (p != nullptr && p->op_type == "DequantizeLinear" && p->input(0) != nullptr) {
      read += StaticBytes(m.input(2)) - StaticBytes(p->input(0));
    }
  }
  const Value* out = m.output(0);
  auto it = out != nullptr ? readers.find(out) : readers.end();
  if (it != readers.end() && it->second.size() == 1) {
    const Node* q = it->second[0];
    if (q->op_type == "QuantizeLinear" && q->domain.empty() && q->input(0) == out && q->output(0) != nullptr &&
        q->output(0)->type().is_tensor() && IsEightBitInteger(q->output(0)->dtype())) {
      *written_savings = StaticBytes(out) - StaticBytes(q->output(0));
    }
  }
  return read;
}

}  // namespace

absl::StatusOr<LogicalGraph> BuildLogicalGraph(
    const Model& model, const ConstantValues& constants, const std::vector<Node*>& order,
    const absl::flat_hash_map<const Node*, Idiom>* idioms) {
  const Graph& graph = *model.graph;
  absl::flat_hash_map<const Value*, std::vector<const Node*>> readers;
  for (const Node* n : order) {
    if (constants.IsFolded(n)) continue;
    for (const Value* v : n->inputs()) {
      if (v != nullptr) readers[v].push_back(n);
    }
    for (const Value* v : n->ImplicitInputs()) readers[v].push_back(n);
  }
  absl::flat_hash_set<const Value*> graph_outputs(graph.outputs().begin(), graph.outputs().end());
  absl::flat_hash_map<const Node*, Facts> facts;
  auto facts_of = [&](const Node* n) -> const Facts& {
    auto it = facts.find(n);
    if (it == facts.end()) {
      it = facts.emplace(n, FactsOf(model, *n, [&](const Value* v) { return constants.Find(v); })).first;
    }
    return it->second;
  };

  LogicalGraph lg;
  absl::flat_hash_set<const Node*> absorbed;
  absl::flat_hash_set<const Value*> counted_params;
  std::vector<const Value*> counted_in_order;
  int64_t anonymous_params = 0;
  // Several ONNX nodes seen as one op: an idiom the rewriter names (keyed by
  // its root), an attention (keyed by its product with V), a partition
  // (keyed by its first piece). The key is where the group is listed; its
  // other members are skipped where they occur. A group sharing a node with
  // one found before it is dropped.
  struct Group {
    std::vector<const Node*> members;  // in execution order, folded ones left out
    Traits traits;
  };
  absl::flat_hash_map<const Node*, Group> groups;
  auto add_group = [&](const Node* key, const std::vector<const Node*>& members, Traits traits) {
    Group g;
    for (const Node* m : members) {
      if (absorbed.contains(m) || groups.contains(m)) return;
      if (!constants.IsFolded(m)) g.members.push_back(m);
    }
    for (const Node* m : g.members) {
      if (m != key) absorbed.insert(m);
    }
    g.traits = std::move(traits);
    groups.emplace(key, std::move(g));
  };
  if (idioms != nullptr) {
    for (const auto& [root, idiom] : *idioms) add_group(root, idiom.members, idiom.traits);
  }
  for (const Node* n : order) {
    if (constants.IsFolded(n)) continue;
    if (auto m = MatchAttention(model, *n, constants, readers, graph_outputs)) {
      add_group(m->members.back(), m->members, m->traits);
    }
  }
  for (const auto& [first, pieces] : Partitions(model, order, constants)) {
    add_group(first, pieces, PartitionTraits(pieces.size()));
  }
  for (const Node* node : order) {
    if (constants.IsFolded(node) || absorbed.contains(node)) continue;
    Facts f = facts_of(node);  // a copy: facts_of() may rehash the map
    Geometry geo = LayerGeometry(*node, f.traits, constants);
    std::vector<const Node*> members = {node};
    if (auto group = groups.find(node); group != groups.end()) {
      members = group->second.members;
      f.traits = group->second.traits;
      geo = Geometry{};
    }
    // MatMul + per-feature bias Add, the way PyTorch exports nn.Linear: one Linear.
    if (geo.ok && geo.kind == "Linear" && node->op_type == "MatMul") {
      const Value* mm_out = node->output(0);
      auto it = readers.find(mm_out);
      if (mm_out != nullptr && !graph_outputs.contains(mm_out) && it != readers.end() &&
          it->second.size() == 1) {
        const Node* add = it->second[0];
        if (IsFeatureBias(*add, facts_of(add).traits, mm_out, constants, geo.out)) {
          members.push_back(add);
          absorbed.insert(add);
        }
      }
    }

    ReportNode rn;
    rn.index = static_cast<int>(lg.nodes.size());
    rn.traits = f.traits;
    if (members.size() > 1 && geo.ok) {
      rn.traits.linearity = Linearity::kAffine;
      rn.traits.meaning = "y = x·W + b";
    }
    rn.name = rn.traits.semantic_name;
    rn.properties = rn.traits.PropertyWords();
    absl::flat_hash_set<const Value*> internal;
    for (const Node* m : members) {
      for (const Value* v : m->outputs()) {
        if (v != nullptr) internal.insert(v);
      }
    }
    std::vector<const Value*> data_inputs, outputs;
    int64_t internal_bytes = 0;
    rn.cost_known = true;
    for (const Node* m : members) {
      rn.sources.push_back({m->op_type, m->name});
      Facts mf = facts_of(m);
      // Parameters are learned weights: a fixed constant operand (GELU's 0.5,
      // attention's 1/√d) is counted by the op's cost but is not trainable.
      if (!mf.traits.trainable) mf.cost.params = 0;
      rn.cost_known &= mf.cost.known;
      rn.macs += mf.cost.macs;
      rn.flops += mf.cost.flops;
      rn.bytes_read += mf.cost.bytes_read;
      rn.bytes_written += mf.cost.bytes_written;
      int64_t written_savings = 0;
      if (int64_t read_savings = QuantizedByteSavings(*m, readers, &written_savings); read_savings >= 0) {
        rn.int8 = true;
        rn.bytes_read -= read_savings;
        rn.bytes_written -= written_savings;
      }
      if (int64_t body = BodyParameters(*m); body > 0) {
        rn.params += body;
        anonymous_params += body;
      }
      // Parameters: the constant inputs the op counted, by value, so a weight
      // shared by two nodes counts once in the total.
      if (mf.cost.params > 0) {
        int64_t sum = 0;
        std::vector<const Value*> params;
        for (const Value* v : m->inputs()) {
          const Tensor* t = constants.Find(v);
          if (t == nullptr || std::find(params.begin(), params.end(), v) != params.end()) continue;
          params.push_back(v);
          sum += t->num_elements();
        }
        if (sum == mf.cost.params) {
          // The node reads what it reads (a slice of a table counts as the
          // slice); the total counts the stored tensors behind it, once. A
          // constant with no learned origin (computed, or traced from Python)
          // is not a parameter at either level.
          for (const Value* v : params) {
            bool learned = false;
            for (const Value* o : constants.Origins(v)) {
              if (!IsLearnedOrigin(model, o, *constants.Find(o))) continue;
              learned = true;
              if (counted_params.insert(o).second) {
                lg.total_params += constants.Find(o)->num_elements();
                counted_in_order.push_back(o);
              }
            }
            if (learned) rn.params += constants.Find(v)->num_elements();
          }
        } else {
          rn.params += mf.cost.params;
          anonymous_params += mf.cost.params;
        }
      }
      for (const Value* v : m->inputs()) {
        if (v == nullptr || constants.Find(v) != nullptr) continue;
        if (internal.contains(v)) {
          internal_bytes += StaticBytes(v);
          continue;
        }
        if (std::find(data_inputs.begin(), data_inputs.end(), v) == data_inputs.end()) {
          data_inputs.push_back(v);
        }
      }
    }
    for (const Node* m : members) {
      for (const Value* v : m->outputs()) {
        if (v == nullptr) continue;
        auto it = readers.find(v);
        bool outside = graph_outputs.contains(v) || members.size() == 1;
        if (it != readers.end()) {
          for (const Node* r : it->second) {
            outside |= std::find(members.begin(), members.end(), r) == members.end();
          }
        }
        if (outside) outputs.push_back(v);
      }
    }
    // A value passed inside the group is neither read from nor written to memory.
    rn.bytes_read -= internal_bytes;
    rn.bytes_written -= internal_bytes;
    for (const Value* v : data_inputs) {
      rn.input_shapes.push_back(v->shape());
      rn.input_values.push_back(v->name());
      rn.floating |= IsFloatingPoint(v->dtype());
    }
    for (const Value* v : outputs) {
      rn.output_shapes.push_back(v->shape());
      rn.output_values.push_back(v->name());
    }
    if (geo.ok) {
      rn.is_layer = true;
      rn.layer_kind = geo.kind;
      rn.weight_name = geo.weight_value->name();
      rn.weight_dims = geo.weight->dims();
      rn.in_features = geo.in;
      rn.out_features = geo.out;
      rn.group = geo.group;
      rn.pointwise = geo.pointwise;
    }
    for (const Node* m : members) lg.index_of[m] = rn.index;
    lg.nodes.push_back(std::move(rn));
    lg.members.push_back(std::move(members));
    lg.data_inputs.push_back(std::move(data_inputs));
    // The largest value passed inside the group when it is larger than the
    // group's output (an attention's [H, S, S] scores): it is alive while the
    // group runs, on top of what is alive around it. One no larger than the
    // output (a Linear's product before its bias, a GELU's steps) fits where
    // the output goes in any executor that computes in place.
    int64_t largest_inside = 0, output_bytes = 0;
    for (const Value* v : outputs) output_bytes += StaticBytes(v);
    for (const Value* v : internal) {
      if (std::find(outputs.begin(), outputs.end(), v) == outputs.end()) {
        largest_inside = std::max(largest_inside, StaticBytes(v));
      }
    }
    lg.largest_internal_bytes.push_back(largest_inside > output_bytes ? largest_inside : 0);
    lg.outputs.push_back(std::move(outputs));
    lg.weights.push_back(geo.ok ? geo.weight : nullptr);
  }
  lg.total_params += anonymous_params;
  for (const TiedCopy& t : TiedCopies(counted_in_order, constants)) {
    lg.total_params -= t.elements;
    lg.notes.push_back(absl::StrCat("'", t.copy->name(), "' holds the same values as '",
                                    t.original->name(), "'", t.transposed ? " transposed" : "",
                                    " (a tied weight the exporter stored twice): counted once, ",
                                    t.elements, " parameters"));
  }

  // Data edges between logical nodes.
  size_t n = lg.nodes.size();
  lg.producers.assign(n, {});
  lg.consumers.assign(n, {});
  lg.feeds_graph_output.assign(n, false);
  for (size_t i = 0; i < n; ++i) {
    for (const Value* v : lg.outputs[i])
      lg.feeds_graph_output[i] = lg.feeds_graph_output[i] || graph_outputs.contains(v);
    lg.nodes[i].input_from.assign(lg.data_inputs[i].size(), -1);
    for (size_t k = 0; k < lg.data_inputs[i].size(); ++k) {
      const Value* v = lg.data_inputs[i][k];
      if (v->producer() == nullptr) continue;
      auto it = lg.index_of.find(v->producer());
      if (it == lg.index_of.end()) continue;
      int p = it->second;
      lg.nodes[i].input_from[k] = p;
      auto& prods = lg.producers[i];
      if (std::find(prods.begin(), prods.end(), p) == prods.end()) {
        prods.push_back(p);
        lg.consumers[p].push_back(static_cast<int>(i));
      }
    }
  }
  // The representation path, in execution order (see ReportNode::on_data_path):
  // values computed from the model's data, whatever their type (a QDQ
  // model's uint8 activations, an ArgMax's indices), except through an op
  // that reads only its input's shape.
  absl::flat_hash_set<const Value*> data;
  for (const Value* v : graph.inputs()) {
    if (!v->is_initializer() && v->type().is_tensor() && IsDataInput(v->dtype())) data.insert(v);
  }
  for (size_t i = 0; i < n; ++i) {
    ReportNode& rn = lg.nodes[i];
    bool reads = rn.traits.trainable && rn.params > 0 && rn.traits.semantic_name == "Embedding";
    for (const Value* v : lg.data_inputs[i]) reads |= data.contains(v);
    for (const Node* m : lg.members[i]) {
      for (const Value* v : m->ImplicitInputs()) reads |= data.contains(v);
    }
    bool shape_only = lg.members[i].size() == 1 && ReadsOnlyShape(*lg.members[i][0]);
    rn.on_data_path = reads && !shape_only;
    if (!rn.on_data_path) continue;
    for (const Value* v : lg.outputs[i]) data.insert(v);
  }
  return lg;
}

}  // namespace aic::analysis
