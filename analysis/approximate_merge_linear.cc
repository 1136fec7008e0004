// merge-linear: a linear layer whose only reader is another, with at most a
// per-unit constant Add between them, is one layer: M₂(M₁x + b₁) + b₂ =
// (M₂M₁)x + (M₂b₁ + b₂). n → h → m costs h(n+m) multiply-adds a position,
// merged n·m, so a merge is a candidate only where h > nm/(n+m). Two
// MatMul/Gemm layers merge into a MatMul (+ Add) or, where either was a
// Gemm, a Gemm; a Conv merges with a following pointwise (1×1) Conv into a
// Conv of the first's geometry. The product is formed in double and rounded
// once: the change is rounding, but it is measured like the others.
#include "absl/strings/str_cat.h"
#include "analysis/approximate_edits.h"
#include "rewrite/rules/rule_util.h"

namespace aic::analysis {

namespace {

struct MergePair {
  LinearSite first, second;
  int add = -1;                   // the Add between them, -1 if none
  std::vector<double> add_bias;  // its constant, one value per unit
};

// The constant operand of an Add at `index` if it is one value per unit of
// a `width`-unit axis (the last, or axis 1 of a rank-`rank` Conv output).
std::optional<std::vector<double>> PerUnitAddend(const Graph& g, int index, const Value* data, int64_t width,
                                                 bool channels_axis, int64_t rank) {
  const Node& n = *g.nodes()[static_cast<size_t>(index)];
  if (n.op_type != "Add" || !n.domain.empty() || n.num_inputs() != 2) return std::nullopt;
  const Value* other = n.input(0) == data ? n.input(1) : n.input(1) == data ? n.input(0) : nullptr;
  if (other == nullptr || other == data) return std::nullopt;
  const Tensor* c = other->initializer();
  if (c == nullptr || c->dtype() != data->dtype() || c->num_elements() != width) return std::nullopt;
  // Right-aligned broadcast: width at the unit axis, 1 everywhere else.
  const int64_t unit_from_right = channels_axis ? rank - 2 : 0;  // 0: the last dim
  if (c->rank() > rank) return std::nullopt;
  for (int64_t d = 0; d < c->rank(); ++d) {
    int64_t from_right = c->rank() - 1 - d;
    if (c->dim(d) != (from_right == unit_from_right ? width : 1) && !(width == 1 && c->dim(d) == 1)) return std::nullopt;
  }
  if (channels_axis && c->rank() < unit_from_right + 1) return std::nullopt;
  return rewrite::ToDoubles(*c);
}

std::optional<MergePair> PairFrom(const Graph& g, const LinearSite& a) {
  const Node& an = *g.nodes()[static_cast<size_t>(a.node)];
  const Value* v = an.output(0);
  if (an.num_outputs() != 1 || IsGraphOutput(g, v)) return std::nullopt;
  std::vector<Use> uses = UsesOf(g, v);
  if (uses.size() != 1) return std::nullopt;
  MergePair p;
  p.first = a;
  const bool conv = a.kind == LinearKind::kConv;
  // The Add must not broadcast the output to a higher rank: its constant may
  // have at most the output's rank (a Conv's is known; else as inferred, 1 when not).
  const int64_t rank = conv ? 2 + static_cast<int64_t>(a.kernel.size()) : v->shape().has_rank() ? v->shape().rank() : 1;
  if (auto bias = PerUnitAddend(g, uses[0].node, v, a.out, conv, rank)) {
    p.add = uses[0].node;
    p.add_bias = *bias;
    v = g.nodes()[static_cast<size_t>(p.add)]->output(0);
    if (IsGraphOutput(g, v)) return std::nullopt;
    uses = UsesOf(g, v);
    if (uses.size() != 1) return std::nullopt;
  }
  if (uses[0].slot != 0) return std::nullopt;
  std::optional<LinearSite> b = SiteAt(g, uses[0].node);
  if (!b || b->in_channels != a.out || b->weight->dtype() != a.weight->dtype()) return std::nullopt;
  if (conv ? !(b->kind == LinearKind::kConv && b->pointwise && b->kernel.size() == a.kernel.size())
           : b->kind == LinearKind::kConv) {
    return std::nullopt;
  }
  p.second = *b;
  return p;
}

absl::Status Merge(Model& model, const std::string& graph_key, const std::string& first_weight) {
  Graph* owner = GraphWithKey(model, graph_key);
  std::optional<LinearSite> a = owner != nullptr ? SiteReading(*owner, first_weight) : std::nullopt;
  std::optional<MergePair> p = a ? PairFrom(*owner, *a) : std::nullopt;
  if (!p) return absl::InternalError(absl::StrCat("the layer reading ", first_weight, " no longer starts a mergeable pair"));
  Graph& g = *owner;
  const LinearSite& s1 = p->first;
  const LinearSite& s2 = p->second;
  const int64_t n = s1.in, h = s1.out, m = s2.out;
  std::vector<double> m1 = SiteMatrix(g, s1), m2 = SiteMatrix(g, s2);
  std::vector<double> b1 = SiteBias(g, s1), b2 = SiteBias(g, s2);
  if (!p->add_bias.empty()) {
    if (b1.empty()) b1.assign(static_cast<size_t>(h), 0.0);
    for (int64_t i = 0; i < h; ++i) b1[i] += p->add_bias[i];
  }
  std::vector<double> merged(static_cast<size_t>(m * n), 0.0);
  for (int64_t o = 0; o < m; ++o) {
    for (int64_t k = 0; k < h; ++k) {
      double w = m2[o * h + k];
      for (int64_t i = 0; i < n; ++i) merged[o * n + i] += w * m1[k * n + i];
    }
  }
  std::vector<double> bias;
  if (!b1.empty() || !b2.empty()) {
    bias = b2.empty() ? std::vector<double>(static_cast<size_t>(m), 0.0) : b2;
    if (!b1.empty()) {
      for (int64_t o = 0; o < m; ++o) {
        for (int64_t k = 0; k < h; ++k) bias[o] += m2[o * h + k] * b1[k];
      }
    }
  }
  Node& first = *g.nodes()[static_cast<size_t>(s1.node)];
  Node& second = *g.nodes()[static_cast<size_t>(s2.node)];
  const DType dtype = s1.weight->dtype();
  const std::string base = (second.name.empty() ? second.output(0)->name() : second.name) + "/merged";
  Value* x = first.input(0);
  Value* y = second.output(0);
  if (s1.kind == LinearKind::kConv) {
    std::vector<int64_t> dims = {m, s1.in_channels};
    dims.insert(dims.end(), s1.kernel.begin(), s1.kernel.end());
    std::vector<Value*> inputs = {x, AddWeight(g, base + "_weight", merged, dtype, dims)};
    if (!bias.empty()) inputs.push_back(AddWeight(g, base + "_bias", bias, dtype, {m}));
    Node* c = g.AddNode("Conv", inputs, {y}, base);
    for (const Attribute& attr : first.attributes) c->SetAttr(attr);
  } else {
    // Stored [n, m] (transB = 0): what MatMul reads and Gemm's default.
    std::vector<double> stored(merged.size());
    for (int64_t o = 0; o < m; ++o) {
      for (int64_t i = 0; i < n; ++i) stored[i * m + o] = merged[o * n + i];
    }
    Value* w = AddWeight(g, base + "_weight", stored, dtype, {n, m});
    if (s1.kind == LinearKind::kGemm || s2.kind == LinearKind::kGemm) {
      // Before opset 11 a Gemm must have a C.
      if (bias.empty() && model.OpsetFor("") < 11) bias.assign(static_cast<size_t>(m), 0.0);
      std::vector<Value*> inputs = {x, w};
      if (!bias.empty()) inputs.push_back(AddWeight(g, base + "_bias", bias, dtype, {m}));
      Node* c = g.AddNode("Gemm", inputs, {y}, base);
      if (s1.kind == LinearKind::kGemm && first.GetInt("transA", 0) != 0) c->SetAttr(Attribute::Int("transA", 1));
      if (!bias.empty() && model.OpsetFor("") < 7) c->SetAttr(Attribute::Int("broadcast", 1));  // C [m] broadcasts
    } else if (bias.empty()) {
      g.AddNode("MatMul", {x, w}, {y}, base);
    } else {
      Value* product = AddIntermediate(g, base + "_product", dtype);
      g.AddNode("MatMul", {x, w}, {product}, base);
      g.AddNode("Add", {product, AddWeight(g, base + "_bias", bias, dtype, {m})}, {y}, base + "_bias");
    }
  }
  std::vector<int> removed = {s1.node, s2.node};
  if (p->add >= 0) removed.push_back(p->add);
  return FinishEdit(g, removed, {});
}

}  // namespace

std::vector<ApproximateCandidate> MergeLinearCandidates(const ModelGraph& where, const SitePositions& positions) {
  std::vector<ApproximateCandidate> out;
  const Graph& g = *where.graph;
  for (const LinearSite& a : FindLinearSites(g)) {
    std::optional<MergePair> p = PairFrom(g, a);
    if (!p) continue;
    const int64_t n = a.in, h = a.out, m = p->second.out;
    if (!(h * (n + m) > n * m)) continue;
    ApproximateCandidate c;
    c.kind = "merge-linear";
    c.key = absl::StrCat("merge-linear:", where.key, ":", a.weight->name(), "+", p->second.weight->name());
    c.where = absl::StrCat(WherePrefix(g), DescribeSite(g, a), " into ", DescribeSite(g, p->second));
    c.detail = absl::StrCat(n, " → ", h, " → ", m, " becomes ", n, " → ", m);
    c.params_before = h * (n + m);
    c.params_after = n * m;
    int64_t pa = positions.size() > static_cast<size_t>(a.node) ? positions[a.node] : -1;
    int64_t pb = positions.size() > static_cast<size_t>(p->second.node) ? positions[p->second.node] : -1;
    if (pa >= 0 && pb >= 0) {
      c.macs_before = pa * a.params() + pb * p->second.params();
      c.macs_after = pb * n * m;
    }
    std::string first_weight = a.weight->name();
    c.apply = [graph_key = where.key, first_weight](Model& target) { return Merge(target, graph_key, first_weight); };
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace aic::analysis
