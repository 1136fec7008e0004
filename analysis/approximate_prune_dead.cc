// prune-dead: a unit (channel or feature) whose ReLU output is 0 on every
// calibration position contributes nothing downstream, so it can leave every
// layer that writes it and every layer that reads it, and the model computes
// the same on that data. With a share above 0 (--min-activation) rarely
// active units go too, which changes outputs: the driver measures it.
//
// The units of one ReLU often travel further than one layer to the next: a
// residual Add joins them with another block's, and the sum is ReLU'd and
// read again. So a candidate is a unit group: every value that carries the
// same units, followed from a ReLU (or Clip at 0) through the ops that keep
// each unit to itself: residual Adds of two such values, per-unit constant
// Add/Sub/Mul/Div, BatchNormalization, ReLUs, and (channels) MaxPool/
// AveragePool and their global forms. The group ends at linear layers: the
// ones writing it (their rows, and their per-unit biases) and the ones
// reading it (their columns). A unit goes when it is dead at every ReLU whose
// output a reading layer reads (directly or through pooling): those are the
// only places the units leave the group, so the removed unit fed nothing
// but zeros. Anything else touching the group (a Concat, a Reshape, a graph
// output, a body reading it from outside) keeps it as it is.
#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/approximate_edits.h"

namespace aic::analysis {

namespace {

bool IsChannelPooling(const Node& n) {
  static const std::set<std::string> kOps = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"};
  return n.domain.empty() && kOps.count(n.op_type) > 0 && n.num_outputs() == 1;
}

// Relu, or a Clip whose lower bound is a constant 0 (ReLU6): units that are
// never active are exactly 0.
bool ClampsAtZero(const Node& n) {
  if (!n.domain.empty()) return false;
  if (n.op_type == "Relu") return true;
  if (n.op_type != "Clip") return false;
  if (n.HasAttr("min")) return n.GetFloat("min", -1) == 0.0f;
  const Tensor* lo = n.has_input(1) ? n.input(1)->initializer() : nullptr;
  return lo != nullptr && lo->num_elements() == 1 && lo->ElementAsDouble(0) == 0.0;
}

bool IsElementwiseArithmetic(const Node& n) {
  return n.domain.empty() && n.num_inputs() == 2 && n.num_outputs() == 1 &&
         (n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul" || n.op_type == "Div");
}

// A per-unit constant of an op inside the group: its entries along
// `unit_dim` shrink with the units.
// (A constant shared with nodes outside the group is copied for the group's
// nodes, not shrunk under the others: an exporter or CSE may have made one
// tensor of equal biases.)
struct UnitConstant {
  int node = -1;
  size_t slot = 0;
  int64_t unit_dim = 0;
};

struct UnitGroup {
  bool conv = false;  // Conv layers (units on axis 1) or MatMul/Gemm (the last axis)
  int64_t rank = -1;  // of every value in the group
  int64_t axis = -1;
  int64_t width = 0;
  std::vector<LinearSite> producers;  // their rows go
  std::vector<LinearSite> readers;    // their columns go
  std::vector<UnitConstant> constants;
  std::vector<Value*> values;          // carrying the units: their shapes change
  std::vector<int> gates;              // the ReLUs readers read: dead there is dead
  int residual_adds = 0;
  // Identity across edits: the first producer's weight name.
  std::string key;
};

class GroupFinder {
 public:
  explicit GroupFinder(const Graph& g) : g_(g) {
    for (size_t i = 0; i < g.nodes().size(); ++i) index_[g.nodes()[i].get()] = static_cast<int>(i);
  }

  // The group through the ReLU-like node at `index`, if it is one.
  std::optional<UnitGroup> At(int index) {
    const Node& r = *g_.nodes()[static_cast<size_t>(index)];
    if (!ClampsAtZero(r) || r.num_outputs() != 1 || !r.has_input(0) || r.output(0) == nullptr) return std::nullopt;
    const Shape& shape = r.output(0)->shape();
    if (!shape.has_rank() || shape.rank() < 2) return std::nullopt;
    group_ = UnitGroup();
    group_.rank = shape.rank();
    ok_ = true;
    kind_known_ = false;
    pools_ = batch_norms_ = 0;
    constants_.clear();
    batch_norm_constants_.clear();
    seen_values_.clear();
    handled_.clear();
    todo_.clear();
    Enqueue(r.output(0));
    while (ok_ && !todo_.empty()) {
      Value* v = todo_.front();
      todo_.pop_front();
      Visit(v);
    }
    if (!ok_ || group_.producers.empty() || group_.readers.empty() || group_.width <= 0) return std::nullopt;
    group_.axis = group_.conv ? 1 : group_.rank - 1;
    // Pooling keeps channels (axis 1) to themselves, BatchNormalization scales
    // them: in a MatMul group (units on the last axis) only where that is axis 1.
    if ((pools_ > 0 && !group_.conv) || (batch_norms_ > 0 && group_.axis != 1)) return std::nullopt;
    for (const auto& [node, slot] : batch_norm_constants_) {
      if (g_.nodes()[static_cast<size_t>(node)]->input(slot)->initializer()->dim(0) != group_.width) return std::nullopt;
      group_.constants.push_back({node, slot, 0});
    }
    for (const auto& [node, slot] : constants_) {
      // Right-aligned against the group's values: the unit axis, or one value for all.
      const Tensor& t = *g_.nodes()[static_cast<size_t>(node)]->input(slot)->initializer();
      if (t.num_elements() == 1) continue;
      const int64_t unit_dim = t.rank() - (group_.rank - group_.axis);
      if (unit_dim < 0 || t.dim(unit_dim) != group_.width) return std::nullopt;
      for (int64_t d = 0; d < t.rank(); ++d) {
        if (d != unit_dim && t.dim(d) != 1) return std::nullopt;
      }
      group_.constants.push_back({node, slot, unit_dim});
    }
    // Each value's known dims agree with the units found.
    for (const Value* v : group_.values) {
      const Shape& s = v->shape();
      const Dim& d = s.has_rank() ? s.dims()[static_cast<size_t>(group_.axis)] : Dim();
      if (s.has_rank() && d.is_value() && d.value() != group_.width) return std::nullopt;
    }
    // The gates: what each reader reads, back through pooling, is a ReLU's output.
    std::set<int> gates;
    for (const LinearSite& s : group_.readers) {
      const Node* n = g_.nodes()[static_cast<size_t>(s.node)]->input(0)->producer();
      while (n != nullptr && IsChannelPooling(*n)) n = n->input(0)->producer();
      if (n == nullptr || !ClampsAtZero(*n)) return std::nullopt;
      gates.insert(index_.at(n));
    }
    group_.gates.assign(gates.begin(), gates.end());
    group_.key = group_.producers.front().weight->name();
    for (const LinearSite& p : group_.producers) group_.key = std::min(group_.key, p.weight->name());
    return group_;
  }

 private:
  void Fail() { ok_ = false; }

  void Enqueue(Value* v) {
    if (v != nullptr && seen_values_.insert(v).second) {
      group_.values.push_back(v);
      todo_.push_back(v);
    }
  }

  // A layer joining the group: one kind (Conv, or MatMul/Gemm) a group, one width.
  bool Joins(const LinearSite& s, int64_t width) {
    const bool conv = s.kind == LinearKind::kConv;
    if (!kind_known_) {
      kind_known_ = true;
      group_.conv = conv;
      if (conv && group_.rank != 2 + static_cast<int64_t>(s.kernel.size())) return false;
    }
    if (group_.width == 0) group_.width = width;
    return group_.conv == conv && group_.width == width;
  }

  // A constant operand (input `slot` of node `index`; it shrinks). Its shape
  // is checked once the group's unit axis is known. A graph input with a
  // default is not a constant: the caller may feed another.
  bool Constant(int index, size_t slot) {
    const Value* c = g_.nodes()[static_cast<size_t>(index)]->input(slot);
    if (c->initializer() == nullptr || c->is_graph_input()) return false;
    if (c->initializer()->rank() > group_.rank) return false;  // it would broadcast the units away
    constants_.push_back({index, slot});
    return true;
  }

  // Both sides of `v`: the node writing it and every node reading it.
  void Visit(Value* v) {
    if (IsGraphOutput(g_, v) || v->is_graph_input() || v->is_initializer() || v->owner() != &g_) return Fail();
    if (v->shape().has_rank() && v->shape().rank() != group_.rank) return Fail();
    const Node* writer = v->producer();
    if (writer == nullptr) return Fail();
    Handle(index_.at(writer), /*slot=*/-1);
    for (const Use& u : UsesOf(g_, v)) {
      if (u.slot == std::numeric_limits<size_t>::max()) return Fail();  // read inside a body
      Handle(u.node, static_cast<int>(u.slot));
      if (!ok_) return;
    }
  }

  // Node `index` touches the group: at its output (slot -1) or input `slot`.
  void Handle(int index, int slot) {
    if (!ok_) return;
    Node& n = *g_.nodes()[static_cast<size_t>(index)];
    std::optional<LinearSite> s = SiteAt(g_, index);
    // A layer joins once as a writer and once as a reader; any other node
    // once, all its unit-carrying values enqueued then.
    if (!handled_.insert({index, s ? slot : 0}).second) return;
    if (s) {
      if (slot == -1) {
        if (!Joins(*s, s->out)) return Fail();
        group_.producers.push_back(*s);
      } else if (slot == 0) {
        // Gemm with transA reads its units along axis 0.
        if (!Joins(*s, s->in_channels) || n.GetInt("transA", 0) != 0) return Fail();
        group_.readers.push_back(*s);
      } else {
        return Fail();
      }
      return;
    }
    if (!n.domain.empty() || n.num_outputs() != 1 || n.output(0) == nullptr || (slot > 0 && !IsElementwiseArithmetic(n))) {
      return Fail();
    }
    if (ClampsAtZero(n) || IsChannelPooling(n)) {
      pools_ += IsChannelPooling(n);
      Enqueue(n.input(0));
      Enqueue(n.output(0));
      return;
    }
    if (n.op_type == "BatchNormalization") {
      if (n.num_inputs() != 5 || n.GetInt("training_mode", 0) != 0) return Fail();
      // scale, B, mean, var: one value a channel, [C] whatever the rank.
      for (size_t k = 1; k < 5; ++k) {
        const Value* c = n.input(k);
        if (c == nullptr || c->initializer() == nullptr || c->initializer()->rank() != 1 || c->is_graph_input()) {
          return Fail();
        }
        batch_norm_constants_.push_back({index, k});
      }
      ++batch_norms_;
      Enqueue(n.input(0));
      Enqueue(n.output(0));
      return;
    }
    if (IsElementwiseArithmetic(n)) {
      Value* a = n.input(0);
      Value* b = n.input(1);
      const bool a_const = a->initializer() != nullptr, b_const = b->initializer() != nullptr;
      if (a_const == b_const) {
        if (a_const || n.op_type != "Add") return Fail();
        // A residual Add: both operands carry the units.
        ++group_.residual_adds;
        Enqueue(a);
        Enqueue(b);
      } else {
        if (!Constant(index, a_const ? 0 : 1)) return Fail();
        Enqueue(a_const ? b : a);
      }
      Enqueue(n.output(0));
      return;
    }
    Fail();
  }

  const Graph& g_;
  std::map<const Node*, int> index_;
  UnitGroup group_;
  bool ok_ = true;
  bool kind_known_ = false;
  int pools_ = 0, batch_norms_ = 0;
  std::vector<std::pair<int, size_t>> constants_, batch_norm_constants_;  // (node, input slot)
  std::set<const Value*> seen_values_;
  std::set<std::pair<int, int>> handled_;
  std::deque<Value*> todo_;
};

// `t` with only the `keep` indices along `axis`.
Tensor KeepAlong(const Tensor& t, int64_t axis, const std::vector<int64_t>& keep) {
  std::vector<int64_t> dims = t.dims();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  for (int64_t d = axis + 1; d < t.rank(); ++d) inner *= dims[d];
  const int64_t n = dims[axis];
  dims[axis] = static_cast<int64_t>(keep.size());
  Tensor out(t.dtype(), dims);
  const size_t elem = ByteSizeOf(t.dtype(), 1);
  const auto* src = static_cast<const uint8_t*>(t.raw_data());
  auto* dst = static_cast<uint8_t*>(out.mutable_raw_data());
  const size_t run = static_cast<size_t>(inner) * elem;
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t k = 0; k < keep.size(); ++k) {
      std::memcpy(dst + (o * static_cast<int64_t>(keep.size()) + static_cast<int64_t>(k)) * run,
                  src + (o * n + keep[k]) * run, run);
    }
  }
  return out;
}

void Shrink(Graph& g, Value* v, int64_t axis, const std::vector<int64_t>& keep) {
  Tensor t = KeepAlong(*v->initializer(), axis, keep);
  // The value's type too: inference reads it, and the file's value_info would keep the old width.
  v->set_type(TypeInfo::Tensor(t.dtype(), Shape::FromValues(t.dims())));
  g.SetInitializer(v, std::move(t));
}

// The index of the node producing the value named `name` in `g`, or -1.
int ProducerIndex(const Graph& g, const std::string& name) {
  const Value* v = g.FindValue(name);
  if (v == nullptr || v->producer() == nullptr) return -1;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (g.nodes()[i].get() == v->producer()) return static_cast<int>(i);
  }
  return -1;
}

// Where notes and tables say the group is.
std::string DescribeGroup(const Graph& g, const UnitGroup& grp) {
  auto sites = [&g](const std::vector<LinearSite>& list) {
    std::vector<std::string> names;
    for (const LinearSite& s : list) names.push_back(DescribeSite(g, s));
    return absl::StrJoin(names, ", ");
  };
  if (grp.producers.size() == 1 && grp.gates.size() == 1 && grp.residual_adds == 0) {
    return absl::StrCat(g.nodes()[static_cast<size_t>(grp.gates[0])]->op_type, " after ", sites(grp.producers),
                        ", read by ", sites(grp.readers));
  }
  return absl::StrCat("units joined by ", grp.residual_adds, " residual Add", grp.residual_adds == 1 ? "" : "s",
                      " (", grp.gates.size(), " ReLU outputs read): written by ", sites(grp.producers), "; read by ",
                      sites(grp.readers));
}

// Every layer of the group once, with its weight's parameters before and
// after the prune (a layer both writing and reading the units loses rows and
// columns).
struct LayerChange {
  int node = -1;
  int64_t before = 0, after = 0;
};
std::vector<LayerChange> LayerChanges(const UnitGroup& grp, int64_t kept) {
  struct Role {
    const LinearSite* site = nullptr;
    bool writes = false, reads = false;
  };
  std::map<int, Role> layers;  // by node index
  for (const LinearSite& s : grp.producers) {
    layers[s.node].site = &s;
    layers[s.node].writes = true;
  }
  for (const LinearSite& s : grp.readers) {
    layers[s.node].site = &s;
    layers[s.node].reads = true;
  }
  std::vector<LayerChange> out;
  for (const auto& [node, role] : layers) {
    const LinearSite& s = *role.site;
    const int64_t rows = role.writes ? kept : s.out;
    const int64_t per_channel = s.in / std::max<int64_t>(1, s.in_channels);  // a Conv's kernel size
    const int64_t channels = role.reads ? kept : s.in_channels;
    out.push_back({node, s.params(), rows * channels * per_channel});
  }
  return out;
}

// The axis of a layer's stored weight along its rows (outputs) or columns
// (inputs): MatMul stores [in, out]; Gemm [out, in] with transB, else [in,
// out]; Conv [out, Cin, k...].
int64_t WeightAxis(const Node& n, LinearKind kind, bool rows) {
  switch (kind) {
    case LinearKind::kMatMul: return rows ? 1 : 0;
    case LinearKind::kGemm: return rows == (n.GetInt("transB", 0) != 0) ? 0 : 1;
    case LinearKind::kConv: return rows ? 0 : 1;
  }
  return 0;
}

absl::Status Prune(Model& model, const std::string& graph_key, const std::string& gate_value,
                   const std::vector<int64_t>& keep) {
  Graph* owner = GraphWithKey(model, graph_key);
  const int gate = owner != nullptr ? ProducerIndex(*owner, gate_value) : -1;
  std::optional<UnitGroup> grp = gate >= 0 ? GroupFinder(*owner).At(gate) : std::nullopt;
  if (!grp) return absl::InternalError(absl::StrCat(gate_value, " no longer has prunable units"));
  Graph& g = *owner;
  // Constant operands (biases, per-unit constants) shrink where only the
  // group's nodes read them, each once; one read from outside the group too
  // is copied for the group's node.
  std::set<const Node*> members;
  for (const LinearSite& s : grp->producers) members.insert(g.nodes()[static_cast<size_t>(s.node)].get());
  for (const UnitConstant& c : grp->constants) members.insert(g.nodes()[static_cast<size_t>(c.node)].get());
  std::set<Value*> shrunk;
  auto shrink_operand = [&](Node& n, size_t slot, int64_t axis) {
    Value* v = n.input(slot);
    bool private_to_group = v->owner() == &g && !v->is_graph_input() && !IsGraphOutput(g, v);
    for (const Use& u : UsesOf(g, v)) {
      private_to_group = private_to_group && members.count(g.nodes()[static_cast<size_t>(u.node)].get()) > 0;
    }
    if (private_to_group) {
      if (shrunk.insert(v).second) Shrink(g, v, axis, keep);
      return;
    }
    n.set_input(slot, AddInitializer(g, v->name() + "_pruned", KeepAlong(*v->initializer(), axis, keep)));
  };
  for (const LinearSite& s : grp->producers) {
    Node& n = *g.nodes()[static_cast<size_t>(s.node)];
    Shrink(g, n.input(1), WeightAxis(n, s.kind, /*rows=*/true), keep);
    if (s.kind != LinearKind::kMatMul && n.has_input(2) && n.input(2)->initializer()->num_elements() == grp->width) {
      shrink_operand(n, 2, n.input(2)->initializer()->rank() - 1);
    }
  }
  for (const LinearSite& s : grp->readers) {
    Node& n = *g.nodes()[static_cast<size_t>(s.node)];
    Shrink(g, n.input(1), WeightAxis(n, s.kind, /*rows=*/false), keep);
  }
  for (const UnitConstant& c : grp->constants) shrink_operand(*g.nodes()[static_cast<size_t>(c.node)], c.slot, c.unit_dim);
  return FinishEdit(g, {}, grp->values);
}

}  // namespace

std::vector<PrunableUnits> FindPrunableUnits(const ModelGraph& where) {
  std::vector<PrunableUnits> out;
  const Graph& g = *where.graph;
  GroupFinder finder(g);
  std::set<int> gates;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (gates.count(static_cast<int>(i))) continue;
    std::optional<UnitGroup> grp = finder.At(static_cast<int>(i));
    if (!grp) continue;
    for (int gate : grp->gates) {
      if (gates.insert(gate).second) out.push_back({where.key, g.nodes()[gate]->output(0)->name(), grp->axis, grp->width});
    }
  }
  return out;
}

std::vector<ApproximateCandidate> PruneDeadCandidates(const ModelGraph& where, const std::vector<UnitActivity>& activity,
                                                      double max_active_share, const SitePositions& positions) {
  std::vector<ApproximateCandidate> out;
  const Graph& g = *where.graph;
  auto at = [&positions](int node) { return positions.size() > static_cast<size_t>(node) ? positions[node] : -1; };
  std::map<std::string, const UnitActivity*> measured;
  for (const UnitActivity& a : activity) {
    if (a.graph == where.key) measured[a.value] = &a;
  }
  GroupFinder finder(g);
  std::set<std::string> groups;
  for (const UnitActivity& a : activity) {
    if (a.graph != where.key) continue;
    const int start = ProducerIndex(g, a.value);
    std::optional<UnitGroup> grp = start >= 0 ? finder.At(start) : std::nullopt;
    if (!grp || !groups.insert(grp->key).second) continue;
    // A unit's share: the most it is active at any gate; its positions: the fewest any gate saw.
    const int64_t w = grp->width;
    std::vector<double> share(static_cast<size_t>(w), 0.0);
    int64_t positions_seen = -1;
    bool all_measured = true;
    for (int gate : grp->gates) {
      auto it = measured.find(g.nodes()[static_cast<size_t>(gate)]->output(0)->name());
      if (it == measured.end() || static_cast<int64_t>(it->second->active_share.size()) != w) {
        all_measured = false;
        break;
      }
      for (int64_t u = 0; u < w; ++u) share[u] = std::max(share[u], it->second->active_share[u]);
      positions_seen = positions_seen < 0 ? it->second->positions : std::min(positions_seen, it->second->positions);
    }
    if (!all_measured || positions_seen < kMinPositionsToPrune) continue;
    std::vector<int64_t> keep;
    int64_t dead = 0, rare = 0;
    for (int64_t u = 0; u < w; ++u) {
      if (share[u] == 0) {
        ++dead;
      } else if (share[u] <= max_active_share) {
        ++rare;
      } else {
        keep.push_back(u);
      }
    }
    if (dead + rare == 0) continue;
    if (keep.empty()) {
      // Why keep one: a layer of width 0 is a tensor with a 0 dim, which
      // some runtimes refuse; the most active unit stays.
      keep.push_back(std::max_element(share.begin(), share.end()) - share.begin());
      if (dead > 0 && share[keep[0]] == 0) --dead; else --rare;
    }
    const int64_t kept = static_cast<int64_t>(keep.size());
    ApproximateCandidate c;
    c.kind = "prune-dead";
    c.key = absl::StrCat("prune-dead:", where.key, ":", grp->key);
    c.where = WherePrefix(g) + DescribeGroup(g, *grp);
    c.detail = absl::StrCat(dead, " dead");
    if (rare > 0) absl::StrAppend(&c.detail, " and ", rare, " rarely active");
    absl::StrAppend(&c.detail, " of ", w, " units (", positions_seen, " positions measured); width ", kept, " remains");
    bool macs_known = true;
    int64_t macs_before = 0, macs_after = 0;
    for (const LayerChange& l : LayerChanges(*grp, kept)) {
      c.params_before += l.before;
      c.params_after += l.after;
      macs_known = macs_known && at(l.node) >= 0;
      if (macs_known) {
        macs_before += at(l.node) * l.before;
        macs_after += at(l.node) * l.after;
      }
    }
    if (macs_known) {
      c.macs_before = macs_before;
      c.macs_after = macs_after;
    }
    c.apply = [graph_key = where.key, gate_value = a.value, keep](Model& target) {
      return Prune(target, graph_key, gate_value, keep);
    };
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace aic::analysis
