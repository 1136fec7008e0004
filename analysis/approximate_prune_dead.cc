// prune-dead: a unit (channel or feature) whose ReLU output is 0 on every
// calibration position contributes nothing downstream, so its row of the
// producing layer (and its bias, and its entry of a per-unit Add between the
// layer and the ReLU) and its column of every reading layer go, and the
// model computes the same on that data. With a share above 0 (--min-activation)
// rarely active units go too, which changes outputs: the driver measures it.
// Readers may sit behind channel-wise pooling (MaxPool, AveragePool and their
// global forms keep a zero channel zero); anything else reading the units (a
// residual Add, a Concat, a graph output) keeps the layer as it is.
#include <algorithm>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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

struct PruneSite {
  int collapse = -1;
  LinearSite producer;
  int add = -1;                  // a per-unit Add between the producer and the collapse
  size_t add_constant_slot = 0;  // which of its inputs is the constant
  int64_t add_unit_dim = 0;      // the constant's dim along the unit axis
  std::vector<int> pools;        // pooling between the collapse and readers
  std::vector<LinearSite> readers;
  int64_t axis = -1;
  int64_t width = 0;
};

std::optional<PruneSite> PruneSiteAt(const Graph& g, int index) {
  const Node& r = *g.nodes()[static_cast<size_t>(index)];
  if (!ClampsAtZero(r) || r.num_outputs() != 1 || !r.has_input(0)) return std::nullopt;
  PruneSite p;
  p.collapse = index;
  const Value* in = r.input(0);
  const Node* prev = in->producer();
  if (prev == nullptr || UsesOf(g, in).size() != 1 || IsGraphOutput(g, in)) return std::nullopt;
  auto index_of = [&g](const Node* n) {
    for (size_t i = 0; i < g.nodes().size(); ++i) {
      if (g.nodes()[i].get() == n) return static_cast<int>(i);
    }
    return -1;
  };
  if (prev->op_type == "Add" && prev->domain.empty() && prev->num_inputs() == 2) {
    p.add = index_of(prev);
    for (size_t k = 0; k < 2; ++k) {
      if (prev->input(k)->initializer() != nullptr) p.add_constant_slot = k;
    }
    const Value* data = prev->input(1 - p.add_constant_slot);
    if (prev->input(p.add_constant_slot)->initializer() == nullptr || data->producer() == nullptr ||
        UsesOf(g, data).size() != 1 || IsGraphOutput(g, data) ||
        UsesOf(g, prev->input(p.add_constant_slot)).size() != 1) {
      return std::nullopt;
    }
    prev = data->producer();
  }
  std::optional<LinearSite> producer = SiteAt(g, index_of(prev));
  if (!producer || prev->output(0) == nullptr) return std::nullopt;
  p.producer = *producer;
  p.width = producer->out;
  const bool conv = producer->kind == LinearKind::kConv;
  const int64_t rank = conv ? 2 + static_cast<int64_t>(producer->kernel.size())
                            : r.output(0)->shape().has_rank() ? r.output(0)->shape().rank() : -1;
  p.axis = conv ? 1 : rank - 1;
  if (p.add >= 0) {
    // The Add's constant: `width` values along the unit axis, 1s elsewhere, no higher rank.
    const Tensor& c = *g.nodes()[static_cast<size_t>(p.add)]->input(p.add_constant_slot)->initializer();
    if (c.num_elements() != p.width || rank < 0 || c.rank() > rank) return std::nullopt;
    const int64_t unit_from_right = rank - 1 - p.axis;
    if (c.rank() <= unit_from_right) return std::nullopt;
    p.add_unit_dim = c.rank() - 1 - unit_from_right;
    for (int64_t d = 0; d < c.rank(); ++d) {
      if (c.dim(d) != (d == p.add_unit_dim ? p.width : 1)) return std::nullopt;
    }
  }
  // Readers, through channel pooling (Conv units only).
  std::vector<const Value*> frontier = {r.output(0)};
  while (!frontier.empty()) {
    const Value* v = frontier.back();
    frontier.pop_back();
    if (IsGraphOutput(g, v)) return std::nullopt;
    std::vector<Use> uses = UsesOf(g, v);
    if (uses.empty()) return std::nullopt;
    for (const Use& u : uses) {
      const Node& reader = *g.nodes()[static_cast<size_t>(u.node)];
      if (conv && u.slot == 0 && IsChannelPooling(reader)) {
        p.pools.push_back(u.node);
        frontier.push_back(reader.output(0));
        continue;
      }
      std::optional<LinearSite> s = SiteAt(g, u.node);
      bool kinds_match = conv == (s && s->kind == LinearKind::kConv);
      if (u.slot != 0 || !s || !kinds_match || s->in_channels != p.width || s->node == p.producer.node) {
        return std::nullopt;
      }
      p.readers.push_back(*s);
    }
  }
  return p;
}

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

absl::Status Prune(Model& model, int collapse, const std::vector<int64_t>& keep) {
  Graph& g = *model.graph;
  std::optional<PruneSite> p = PruneSiteAt(g, collapse);
  if (!p) return absl::InternalError(absl::StrCat("node ", collapse, " no longer has prunable units"));
  Node& producer = *g.nodes()[static_cast<size_t>(p->producer.node)];
  std::vector<Value*> reshaped = {producer.output(0)};
  // The producer's rows: MatMul stores [in, out]; Gemm [out, in] with transB.
  switch (p->producer.kind) {
    case LinearKind::kMatMul: Shrink(g, producer.input(1), 1, keep); break;
    case LinearKind::kGemm: Shrink(g, producer.input(1), producer.GetInt("transB", 0) != 0 ? 0 : 1, keep); break;
    case LinearKind::kConv: Shrink(g, producer.input(1), 0, keep); break;
  }
  if (p->producer.kind != LinearKind::kMatMul && producer.has_input(2) &&
      producer.input(2)->initializer()->num_elements() == p->width) {
    const Tensor& b = *producer.input(2)->initializer();
    Shrink(g, producer.input(2), b.rank() - 1, keep);
  }
  if (p->add >= 0) {
    Node& add = *g.nodes()[static_cast<size_t>(p->add)];
    Value* c = add.input(p->add_constant_slot);
    Shrink(g, c, p->add_unit_dim, keep);
    reshaped.push_back(add.output(0));
  }
  reshaped.push_back(g.nodes()[static_cast<size_t>(collapse)]->output(0));
  for (int pool : p->pools) reshaped.push_back(g.nodes()[static_cast<size_t>(pool)]->output(0));
  // The readers' columns: MatMul stores [in, out]; Gemm [out, in] with transB; Conv [out, Cin, ...].
  for (const LinearSite& s : p->readers) {
    Node& reader = *g.nodes()[static_cast<size_t>(s.node)];
    switch (s.kind) {
      case LinearKind::kMatMul: Shrink(g, reader.input(1), 0, keep); break;
      case LinearKind::kGemm: Shrink(g, reader.input(1), reader.GetInt("transB", 0) != 0 ? 1 : 0, keep); break;
      case LinearKind::kConv: Shrink(g, reader.input(1), 1, keep); break;
    }
  }
  return FinishEdit(model, {}, reshaped);
}

}  // namespace

std::vector<PrunableUnits> FindPrunableUnits(const Model& model) {
  std::vector<PrunableUnits> out;
  const Graph& g = *model.graph;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    std::optional<PruneSite> p = PruneSiteAt(g, static_cast<int>(i));
    if (p && p->axis >= 0) out.push_back({p->collapse, p->axis, p->width});
  }
  return out;
}

std::vector<ApproximateCandidate> PruneDeadCandidates(const Model& model, const std::vector<UnitActivity>& activity,
                                                      double max_active_share, const SitePositions& positions) {
  std::vector<ApproximateCandidate> out;
  const Graph& g = *model.graph;
  auto at = [&positions](int node) { return positions.size() > static_cast<size_t>(node) ? positions[node] : -1; };
  for (const UnitActivity& a : activity) {
    std::optional<PruneSite> p = PruneSiteAt(g, a.node);
    if (!p || static_cast<int64_t>(a.active_share.size()) != p->width) continue;
    if (a.positions < kMinPositionsToPrune) continue;
    std::vector<int64_t> keep;
    int64_t dead = 0, rare = 0;
    for (int64_t u = 0; u < p->width; ++u) {
      double share = a.active_share[u];
      if (share == 0) {
        ++dead;
      } else if (share <= max_active_share) {
        ++rare;
      } else {
        keep.push_back(u);
      }
    }
    if (dead + rare == 0) continue;
    if (keep.empty()) {
      // Why keep one: a layer of width 0 is a tensor with a 0 dim, which
      // some runtimes refuse; the most active unit stays.
      keep.push_back(std::max_element(a.active_share.begin(), a.active_share.end()) - a.active_share.begin());
      if (dead > 0 && a.active_share[keep[0]] == 0) --dead; else --rare;
    }
    const int64_t w = p->width, kept = static_cast<int64_t>(keep.size());
    ApproximateCandidate c;
    c.kind = "prune-dead";
    c.key = absl::StrCat("prune-dead:", p->producer.weight->name());
    std::string readers;
    for (const LinearSite& s : p->readers) absl::StrAppend(&readers, readers.empty() ? "" : ", ", DescribeSite(g, s));
    c.where = absl::StrCat(g.nodes()[static_cast<size_t>(a.node)]->op_type, " after ", DescribeSite(g, p->producer),
                           ", read by ", readers);
    c.detail = absl::StrCat(dead, " dead");
    if (rare > 0) absl::StrAppend(&c.detail, " and ", rare, " rarely active");
    absl::StrAppend(&c.detail, " of ", w, " units (", a.positions, " positions measured); width ", kept, " remains");
    c.params_before = p->producer.params();
    c.params_after = p->producer.params() / w * kept;
    bool macs_known = at(p->producer.node) >= 0;
    int64_t macs_before = macs_known ? at(p->producer.node) * c.params_before : 0;
    int64_t macs_after = macs_known ? at(p->producer.node) * c.params_after : 0;
    for (const LinearSite& s : p->readers) {
      int64_t before = s.params(), after = s.params() / w * kept;
      c.params_before += before;
      c.params_after += after;
      macs_known = macs_known && at(s.node) >= 0;
      if (macs_known) {
        macs_before += at(s.node) * before;
        macs_after += at(s.node) * after;
      }
    }
    if (macs_known) {
      c.macs_before = macs_before;
      c.macs_after = macs_after;
    }
    int collapse = a.node;
    c.apply = [collapse, keep](Model& target) { return Prune(target, collapse, keep); };
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace aic::analysis
