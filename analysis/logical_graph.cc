#include "analysis/logical_graph.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ops/registry.h"
#include "ops/util/cost_util.h"

namespace aic::analysis {

namespace {

struct Facts {
  Traits traits;
  Cost cost;
};

// Asks the node's OpDef for its traits and cost; an op without an OpDef (or
// without those hooks) gets the neutral defaults: its op type as name, bytes only.
Facts NodeFacts(const Model& model, const Node& node, const ConstantValues& constants) {
  int64_t opset = model.OpsetFor(node.domain);
  const OpDef* def = OpRegistry::Global().Find(node.domain, node.op_type, opset);
  std::vector<TypeInfo> types;
  std::vector<const Tensor*> consts;
  for (const Value* v : node.inputs()) {
    types.push_back(v ? v->type() : TypeInfo());
    consts.push_back(constants.Find(v));
  }
  OpContext ctx(node, opset, std::move(types), consts, nullptr);
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    if (node.output(i) != nullptr) ctx.set_output_type(i, node.output(i)->type());
  }
  Facts f;
  if (def != nullptr && def->traits) f.traits = def->traits(ctx);
  if (f.traits.semantic_name.empty()) f.traits.semantic_name = node.op_type;
  f.cost = def != nullptr && def->cost ? def->cost(ctx) : BytesOnlyCost(ctx);
  return f;
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

// Whether a stored tensor behind a constant operand is a learned parameter.
// Index and shape tensors (an embedding's position ids) are stored but not
// learned. torch.onnx writes every parameter as an initializer and keeps
// Constant nodes for values traced from Python (normalisation means, the
// all-ones scale of its GroupNorm-as-InstanceNorm export): in its files a
// Constant node's value is not a parameter. Other producers (paddle2onnx)
// keep their weights in Constant nodes.
bool IsLearnedOrigin(const Model& model, const Value* origin, const Tensor& t) {
  DType d = t.dtype();
  if (d == DType::kInt64 || d == DType::kInt32 || d == DType::kBool) return false;
  const Node* p = origin->producer();
  return !(p != nullptr && p->op_type == "Constant" && model.producer_name == "pytorch");
}

// Exporters write a tied weight (GPT-2's token embedding, read again by the
// language-model head) a second time, often as its transpose for a MatMul.
// torch counts it once; so does the report, when the values are identical.
struct TiedCopy {
  const Value* original = nullptr;
  const Value* copy = nullptr;
  bool transposed = false;
  int64_t elements = 0;
};

// `counted`: the parameters in the order the graph first reads them; the
// first of two equal tensors is the original.
std::vector<TiedCopy> TiedCopies(const std::vector<const Value*>& counted,
                                 const ConstantValues& constants) {
  constexpr int64_t kMinElements = 4096;  // small tensors equal by chance (zeros) are not ties
  struct Entry {
    const Value* v;
    const Tensor* t;
  };
  std::vector<Entry> candidates;
  for (const Value* v : counted) {
    const Tensor* t = constants.Find(v);
    if (t->rank() != 2 || t->num_elements() < kMinElements || t->dtype() != DType::kFloat) continue;
    // An all-equal tensor (a zero init) equals every other one by chance.
    const float* p = t->data<float>();
    if (std::all_of(p, p + t->num_elements(), [&](float x) { return x == p[0]; })) continue;
    candidates.push_back({v, t});
  }
  std::vector<TiedCopy> out;
  std::vector<bool> is_copy(candidates.size(), false);
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (is_copy[i]) continue;
    const Tensor& a = *candidates[i].t;
    const float* pa = a.data<float>();
    for (size_t j = i + 1; j < candidates.size(); ++j) {
      const Tensor& b = *candidates[j].t;
      if (is_copy[j] || b.num_elements() != a.num_elements()) continue;
      const float* pb = b.data<float>();
      bool same = a.dims() == b.dims() && std::equal(pa, pa + a.num_elements(), pb);
      bool transposed = false;
      if (!same && a.dim(0) == b.dim(1) && a.dim(1) == b.dim(0)) {
        const int64_t rows = a.dim(0), cols = a.dim(1);
        transposed = true;
        for (int64_t r = 0; transposed && r < rows; ++r) {
          for (int64_t c = 0; c < cols; ++c) {
            if (pa[r * cols + c] != pb[c * rows + r]) {
              transposed = false;
              break;
            }
          }
        }
      }
      if (!same && !transposed) continue;
      is_copy[j] = true;
      out.push_back({candidates[i].v, candidates[j].v, transposed, b.num_elements()});
    }
  }
  return out;
}

// One piece of a tensor cut along one axis: a Slice with step 1, or a
// Gather of constant indices forming a contiguous range.
struct Piece {
  const Value* source = nullptr;
  int64_t axis = 0;
  int64_t begin = 0, end = 0, step = 1;  // begin, begin + step, ... < end along axis
};

std::optional<Piece> PieceOf(const Node& n, const ConstantValues& constants) {
  const Value* x = n.input(0);
  if (x == nullptr || !n.domain.empty() || constants.Find(x) != nullptr || !x->shape().has_rank()) {
    return std::nullopt;
  }
  const Shape& shape = x->shape();
  auto dim_of = [&](int64_t axis) -> std::optional<int64_t> {
    if (axis < 0) axis += shape.rank();
    if (axis < 0 || axis >= shape.rank() || !shape.dims()[axis].is_value()) return std::nullopt;
    return shape.dims()[axis].value();
  };
  auto ints = [&](size_t i) -> std::optional<std::vector<int64_t>> {
    const Tensor* t = constants.Find(n.input(i));
    if (t == nullptr || (t->dtype() != DType::kInt64 && t->dtype() != DType::kInt32)) return std::nullopt;
    std::vector<int64_t> v;  // exactly: ends are often INT64_MAX, which a double cannot hold
    for (int64_t k = 0; k < t->num_elements(); ++k) {
      v.push_back(t->dtype() == DType::kInt64 ? t->data<int64_t>()[k] : t->data<int32_t>()[k]);
    }
    return v;
  };
  Piece p;
  p.source = x;
  if (n.op_type == "Gather" && n.num_inputs() == 2) {
    p.axis = n.GetInt("axis", 0);
    auto dim = dim_of(p.axis);
    auto idx = ints(1);
    if (!dim || !idx || idx->empty()) return std::nullopt;
    for (int64_t& i : *idx) i = i < 0 ? i + *dim : i;
    for (size_t k = 1; k < idx->size(); ++k) {
      if ((*idx)[k] != (*idx)[k - 1] + 1) return std::nullopt;
    }
    p.begin = idx->front();
    p.end = idx->back() + 1;
  } else if (n.op_type == "Slice" && n.num_inputs() >= 3) {
    auto starts = ints(1), ends = ints(2);
    if (!starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
    p.axis = 0;
    if (n.has_input(3)) {
      auto axes = ints(3);
      if (!axes || axes->size() != 1) return std::nullopt;
      p.axis = (*axes)[0];
    }
    if (n.has_input(4)) {
      auto steps = ints(4);
      if (!steps || steps->size() != 1 || (*steps)[0] < 1) return std::nullopt;
      p.step = (*steps)[0];
    }
    auto dim = dim_of(p.axis);
    if (!dim) return std::nullopt;
    auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + *dim : v, int64_t{0}, *dim); };
    p.begin = clamp((*starts)[0]);
    p.end = clamp((*ends)[0]);
  } else {
    return std::nullopt;
  }
  if (p.axis < 0) p.axis += shape.rank();
  return p;
}

// Slices (or constant-index Gathers) of one tensor along one axis that
// together cover all of it: q, k and v cut from one projection, the two
// halves of a rotary embedding's rotate_half, a shifted window's roll, the
// even and odd rows of a patch merge. Each piece alone discards the rest;
// together they discard nothing, so they are one logical Split, keyed by
// the first piece in execution order.
absl::flat_hash_map<const Node*, std::vector<const Node*>> Partitions(
    const std::vector<Node*>& order, const ConstantValues& constants) {
  std::map<std::pair<const Value*, int64_t>, std::vector<std::pair<const Node*, Piece>>> cuts;
  for (const Node* n : order) {
    if (constants.IsFolded(n)) continue;
    if (auto p = PieceOf(*n, constants)) cuts[{p->source, p->axis}].push_back({n, *p});
  }
  absl::flat_hash_map<const Node*, std::vector<const Node*>> out;
  for (auto& [key, pieces] : cuts) {
    if (pieces.size() < 2) continue;
    const Shape& shape = key.first->shape();
    int64_t dim = shape.dims()[key.second].value();
    if (dim > (int64_t{1} << 20)) continue;
    std::vector<bool> covered(static_cast<size_t>(dim), false);
    for (const auto& [n, p] : pieces) {
      for (int64_t i = p.begin; i < p.end; i += p.step) covered[static_cast<size_t>(i)] = true;
    }
    if (std::find(covered.begin(), covered.end(), false) != covered.end()) continue;
    std::vector<const Node*> members;
    for (const auto& [n, p] : pieces) members.push_back(n);  // in execution order
    out[members.front()] = std::move(members);
  }
  return out;
}

// What a partition is, as one op (the facts of ONNX's Split, which these
// pieces compute together).
Traits PartitionTraits(size_t pieces) {
  Traits t;
  t.semantic_name = "Split";
  t.meaning = absl::StrCat("y₀ … y", pieces - 1, " = parts of x along one axis that cover all of it");
  t.linearity = Linearity::kLinear;
  t.invertibility = Invertibility::kInvertible;
  t.collapse = CollapseKind::kNone;
  t.effect = RepresentationEffect::kPreserves;
  return t;
}

// Scaled dot-product attention as exporters write it:
//   P = Softmax(MatMul(Q, Kᵀ) [· s | / s] [+ mask]);  [P = Where(IsNaN(P), 0, P)];  Y = MatMul(P, V)
// (Kᵀ a Transpose of K, or K already transposed). One logical op: it mixes
// each query's values by weights that sum to one, the softmax its collapse.
// The rewriter has no fusion for it yet (ONNX's Attention is opset 23); when
// it has, the report takes it from there as it takes the other idioms.
struct AttentionMatch {
  std::vector<const Node*> members;  // in execution order
  Traits traits;
};

std::optional<AttentionMatch> MatchAttention(
    const Node& softmax, const ConstantValues& constants,
    const absl::flat_hash_map<const Value*, std::vector<const Node*>>& readers,
    const absl::flat_hash_set<const Value*>& graph_outputs) {
  auto only_reader = [&](const Value* v) -> const Node* {
    if (v == nullptr || graph_outputs.contains(v)) return nullptr;
    auto it = readers.find(v);
    return it != readers.end() && it->second.size() == 1 ? it->second[0] : nullptr;
  };
  auto producer = [&](const Value* v) -> const Node* {
    const Node* p = v != nullptr ? v->producer() : nullptr;
    return p != nullptr && p->domain.empty() && !constants.IsFolded(p) ? p : nullptr;
  };
  auto constant_operand = [&](const Node& n, const Value* data) {
    const Value* other = n.input(0) == data ? n.input(1) : n.input(0);
    const Tensor* t = constants.Find(other);
    return t != nullptr && t->num_elements() == 1;
  };
  if (softmax.op_type != "Softmax" || !softmax.domain.empty() || softmax.input(0) == nullptr ||
      !softmax.input(0)->shape().has_rank()) {
    return std::nullopt;
  }
  const int64_t rank = softmax.input(0)->shape().rank();
  const int64_t axis = softmax.GetInt("axis", -1);
  if (axis != -1 && axis != rank - 1) return std::nullopt;
  // From the softmax back to the scores' MatMul: masks and biases added
  // (a relative-position bias, a shifted window's mask between reshapes),
  // a constant scale.
  std::vector<const Node*> before;
  const Node* cur = producer(softmax.input(0));
  for (int step = 0; step < 8 && cur != nullptr && only_reader(cur->output(0)) != nullptr; ++step) {
    if (cur->op_type == "Add") {
      before.push_back(cur);
      const Node* pa = producer(cur->input(0));
      bool first_is_scores = pa != nullptr && (pa->op_type == "MatMul" || pa->op_type == "Mul" ||
                                               pa->op_type == "Div" || pa->op_type == "Add" ||
                                               pa->op_type == "Reshape");
      cur = producer(first_is_scores ? cur->input(0) : cur->input(1));
    } else if (cur->op_type == "Reshape") {
      before.push_back(cur);
      cur = producer(cur->input(0));
    } else if ((cur->op_type == "Mul" || cur->op_type == "Div") && constant_operand(*cur, cur->input(0))) {
      before.push_back(cur);
      cur = producer(cur->input(0));
    } else {
      break;
    }
  }
  if (cur == nullptr || cur->op_type != "MatMul" || only_reader(cur->output(0)) == nullptr) return std::nullopt;
  const Node* scores = cur;
  before.push_back(scores);
  const Node* kt = producer(scores->input(1));
  if (kt != nullptr && kt->op_type == "Transpose" && only_reader(kt->output(0)) == scores) before.push_back(kt);
  // After: the NaN guard, then the product with V.
  std::vector<const Node*> after;
  const Value* probs = softmax.output(0);
  auto it = readers.find(probs);
  if (it == readers.end() || graph_outputs.contains(probs)) return std::nullopt;
  const Node* isnan = nullptr;
  const Node* where = nullptr;
  for (const Node* r : it->second) {
    if (r->op_type == "IsNaN") isnan = r;
    if (r->op_type == "Where") where = r;
  }
  if (it->second.size() == 2 && isnan != nullptr && where != nullptr && where->input(0) == isnan->output(0) &&
      where->input(2) == probs && only_reader(isnan->output(0)) == where) {
    after = {isnan, where};
    probs = where->output(0);
  } else if (it->second.size() != 1) {
    return std::nullopt;
  }
  const Node* mix = only_reader(probs);
  if (mix == nullptr && !graph_outputs.contains(probs)) {
    auto r = readers.find(probs);
    if (r != readers.end() && r->second.size() == 1) mix = r->second[0];
  }
  if (mix == nullptr || mix->op_type != "MatMul" || mix->input(0) != probs) return std::nullopt;
  after.push_back(mix);
  AttentionMatch m;
  m.members.assign(before.rbegin(), before.rend());
  m.members.push_back(&softmax);
  m.members.insert(m.members.end(), after.begin(), after.end());
  // Heads and sizes from Q [.., H, S_q, D] and V [.., H, S_kv, D_v].
  const Shape& q = scores->input(0)->shape();
  const Shape& v = mix->input(1)->shape();
  Traits& t = m.traits;
  t.semantic_name = "Attention";
  t.meaning = "y = softmax(Q·Kᵀ·scale + mask)·V";
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = CollapseKind::kReduces;
  std::string sizes;
  if (q.has_rank() && q.rank() >= 3 && v.has_rank() && v.rank() >= 2) {
    const auto& qd = q.dims();
    const auto& vd = v.dims();
    sizes = absl::StrCat(q.rank() >= 4 ? absl::StrCat(qd[qd.size() - 3].ToString(), " heads, ") : "",
                         qd[qd.size() - 2].ToString(), " queries over ", vd[vd.size() - 2].ToString(),
                         " keys, head size ", qd.back().ToString());
  }
  t.effect = RepresentationEffect::kPreserves;
  t.effect_detail = sizes;
  t.collapse_how = absl::StrCat("each query's softmax over the keys: the output mixes the value rows by "
                                "weights that sum to one", sizes.empty() ? "" : " (", sizes,
                                sizes.empty() ? "" : ")");
  return m;
}

int64_t StaticBytes(const Value* v) {
  if (v == nullptr || !v->type().is_tensor()) return 0;
  auto n = v->shape().NumElements();
  return n ? static_cast<int64_t>(ByteSizeOf(v->dtype(), *n)) : 0;
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
    if (it == facts.end()) it = facts.emplace(n, NodeFacts(model, *n, constants)).first;
    return it->second;
  };

  LogicalGraph lg;
  absl::flat_hash_set<const Node*> absorbed;
  absl::flat_hash_set<const Value*> counted_params;
  std::vector<const Value*> counted_in_order;
  int64_t anonymous_params = 0;
  const absl::flat_hash_map<const Node*, std::vector<const Node*>> partitions =
      Partitions(order, constants);
  // Attention groups, keyed by their last node (the product with V).
  absl::flat_hash_map<const Node*, AttentionMatch> attention;
  for (const Node* n : order) {
    if (constants.IsFolded(n)) continue;
    if (auto m = MatchAttention(*n, constants, readers, graph_outputs)) {
      for (const Node* member : m->members) {
        if (member != m->members.back()) absorbed.insert(member);
      }
      attention[m->members.back()] = *std::move(m);
    }
  }
  // An idiom's nodes are taken at its root (the last of them to run).
  if (idioms != nullptr) {
    for (const auto& [root, idiom] : *idioms) {
      for (const Node* m : idiom.members) {
        if (m != root) absorbed.insert(m);
      }
    }
  }
  for (const Node* node : order) {
    if (constants.IsFolded(node) || absorbed.contains(node)) continue;
    Facts f = facts_of(node);  // a copy: facts_of() may rehash the map
    Geometry geo = LayerGeometry(*node, f.traits, constants);
    std::vector<const Node*> members = {node};
    auto idiom = idioms != nullptr ? idioms->find(node) : decltype(idioms->end()){};
    if (idioms != nullptr && idiom != idioms->end()) {
      members.clear();
      for (const Node* m : idiom->second.members) {
        if (!constants.IsFolded(m)) members.push_back(m);
      }
      f.traits = idiom->second.traits;
      geo = Geometry{};
    } else if (auto att = attention.find(node); att != attention.end()) {
      members = att->second.members;
      f.traits = att->second.traits;
      geo = Geometry{};
    } else if (auto part = partitions.find(node); part != partitions.end()) {
      members = part->second;
      for (const Node* m : members) absorbed.insert(m);
      f.traits = PartitionTraits(members.size());
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
      rn.floating |= IsFloatingPoint(v->dtype());
    }
    for (const Value* v : outputs) rn.output_shapes.push_back(v->shape());
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
    for (const Value* v : lg.data_inputs[i]) {
      if (v->producer() == nullptr) continue;
      auto it = lg.index_of.find(v->producer());
      if (it == lg.index_of.end()) continue;
      int p = it->second;
      auto& prods = lg.producers[i];
      if (std::find(prods.begin(), prods.end(), p) == prods.end()) {
        prods.push_back(p);
        lg.consumers[p].push_back(static_cast<int>(i));
      }
    }
  }
  // The representation path, in execution order (see ReportNode::on_data_path).
  absl::flat_hash_set<const Value*> data;
  for (const Value* v : graph.inputs()) {
    if (!v->is_initializer() && v->type().is_tensor() && IsFloatingPoint(v->dtype())) data.insert(v);
  }
  for (size_t i = 0; i < n; ++i) {
    ReportNode& rn = lg.nodes[i];
    bool reads = rn.traits.trainable && rn.params > 0 && rn.traits.semantic_name == "Embedding";
    for (const Value* v : lg.data_inputs[i]) reads |= data.contains(v);
    for (const Node* m : lg.members[i]) {
      for (const Value* v : m->ImplicitInputs()) reads |= data.contains(v);
    }
    bool floating_out = false;
    for (const Value* v : lg.outputs[i]) {
      floating_out |= v->type().is_tensor() && IsFloatingPoint(v->dtype());
    }
    rn.on_data_path = reads && floating_out;
    if (!rn.on_data_path) continue;
    for (const Value* v : lg.outputs[i]) data.insert(v);
  }
  return lg;
}

}  // namespace aic::analysis
