// low-rank: a linear layer's M [out, in] becomes F₂·F₁ with F₁ = Σ_r^½·V_rᵀ
// [r, in] and F₂ = U_r·Σ_r^½ [out, r], the truncated SVD split evenly so
// neither factor's scale dwarfs the other's in float. The layer becomes two:
// MatMul(MatMul(x, F₁ᵀ), F₂ᵀ); Gemm(Gemm(x, F₁ᵀ), F₂ᵀ, C); a Conv with the
// original geometry and r output channels followed by a 1×1 Conv to `out`
// (its bias on the second, so padded positions still come out as the bias).
#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/approximate_edits.h"
#include "analysis/spectrum.h"

namespace aic::analysis {

namespace {

// Weights whose short side is larger are not decomposed (an SVD costs
// O(m·n·min(m, n))); the report's limit.
constexpr int64_t kMaxSvdDim = 4096;

struct Factors {
  int64_t rank = 0;
  std::vector<double> first;   // F₁ [r, in]
  std::vector<double> second;  // F₂ [out, r]
};

Factors Split(const ThinSvd& svd, int64_t r) {
  Factors f;
  f.rank = r;
  f.first.resize(static_cast<size_t>(r * svd.cols));
  f.second.resize(static_cast<size_t>(svd.rows * r));
  for (int64_t i = 0; i < r; ++i) {
    double root = std::sqrt(svd.s[i]);
    for (int64_t c = 0; c < svd.cols; ++c) f.first[i * svd.cols + c] = root * svd.vt[i * svd.cols + c];
    for (int64_t o = 0; o < svd.rows; ++o) f.second[o * r + i] = svd.u[o * svd.k + i] * root;
  }
  return f;
}

std::vector<double> Transposed(const std::vector<double>& a, int64_t rows, int64_t cols) {
  std::vector<double> t(a.size());
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) t[j * rows + i] = a[i * cols + j];
  }
  return t;
}

absl::Status Factorize(Model& model, const std::string& graph_key, const std::string& weight, const Factors& f) {
  Graph* owner = GraphWithKey(model, graph_key);
  if (owner == nullptr) return absl::InternalError(absl::StrCat("the body ", graph_key, " is gone"));
  Graph& g = *owner;
  std::optional<LinearSite> site = SiteReading(g, weight);
  if (!site) return absl::InternalError(absl::StrCat("no linear layer reads ", weight, " any more"));
  const int node_index = site->node;
  Node& n = *g.nodes()[static_cast<size_t>(node_index)];
  const DType dtype = site->weight->dtype();
  const int64_t r = f.rank;
  const std::string base = n.name.empty() ? n.output(0)->name() : n.name;
  Value* x = n.input(0);
  Value* y = n.output(0);
  Value* mid = AddIntermediate(g, y->name() + "/low_rank", dtype);
  if (site->kind == LinearKind::kConv) {
    std::vector<int64_t> first_dims = {r, site->in_channels};
    first_dims.insert(first_dims.end(), site->kernel.begin(), site->kernel.end());
    std::vector<int64_t> second_dims = {site->out, r};
    second_dims.insert(second_dims.end(), site->kernel.size(), 1);
    Value* w1 = AddWeight(g, base + "/low_rank_first", f.first, dtype, first_dims);
    Value* w2 = AddWeight(g, base + "/low_rank_second", f.second, dtype, second_dims);
    Node* a = g.AddNode("Conv", {x, w1}, {mid}, base + "/low_rank_first");
    for (const Attribute& attr : n.attributes) a->SetAttr(attr);
    std::vector<Value*> second_inputs = {mid, w2};
    if (n.has_input(2)) second_inputs.push_back(n.input(2));
    Node* b = g.AddNode("Conv", second_inputs, {y}, base + "/low_rank_second");
    b->SetAttr(Attribute::Ints("kernel_shape", std::vector<int64_t>(site->kernel.size(), 1)));
  } else {
    Value* w1 = AddWeight(g, base + "/low_rank_first", Transposed(f.first, r, site->in), dtype, {site->in, r});
    Value* w2 = AddWeight(g, base + "/low_rank_second", Transposed(f.second, site->out, r), dtype, {r, site->out});
    if (site->kind == LinearKind::kMatMul) {
      g.AddNode("MatMul", {x, w1}, {mid}, base + "/low_rank_first");
      g.AddNode("MatMul", {mid, w2}, {y}, base + "/low_rank_second");
    } else {
      // Gemm: alpha is in M (SiteMatrix); transA stays on the first, C and
      // beta on the second. The first is a MatMul unless it transposes A; a
      // Gemm before opset 11 must have a C (zeros then).
      if (n.GetInt("transA", 0) == 0) {
        g.AddNode("MatMul", {x, w1}, {mid}, base + "/low_rank_first");
      } else {
        std::vector<Value*> first_inputs = {x, w1};
        if (model.OpsetFor("") < 11) {
          first_inputs.push_back(AddWeight(g, base + "/low_rank_zero_bias", std::vector<double>(static_cast<size_t>(r), 0.0), dtype, {r}));
        }
        Node* a = g.AddNode("Gemm", first_inputs, {mid}, base + "/low_rank_first");
        a->SetAttr(Attribute::Int("transA", 1));
        if (model.OpsetFor("") < 7) a->SetAttr(Attribute::Int("broadcast", 1));  // C [r] broadcasts
      }
      std::vector<Value*> second_inputs = {mid, w2};
      if (n.has_input(2)) second_inputs.push_back(n.input(2));
      Node* b = g.AddNode("Gemm", second_inputs, {y}, base + "/low_rank_second");
      if (n.has_input(2)) b->SetAttr(Attribute::Float("beta", n.GetFloat("beta", 1.0f)));
      // Before opset 7 a C that broadcasts says so; the original's C is the one the second reads.
      if (n.HasAttr("broadcast")) b->SetAttr(*n.FindAttr("broadcast"));
    }
  }
  return FinishEdit(g, {node_index}, {});
}

}  // namespace

std::vector<ApproximateCandidate> LowRankCandidates(const ModelGraph& where, const RankChoice& choice,
                                                    const SitePositions& positions) {
  std::vector<ApproximateCandidate> out;
  const Graph& g = *where.graph;
  for (const LinearSite& site : FindLinearSites(g)) {
    const int64_t m = site.out, n = site.in, k = std::min(m, n);
    if (k > kMaxSvdDim || k < 2) continue;
    // Cheapest check first: even rank 1 must pay, and a fixed rank must.
    int64_t wanted = choice.rank > 0 ? std::min(choice.rank, k) : 1;
    if (wanted * (m + n) >= m * n) continue;
    absl::StatusOr<ThinSvd> svd = ComputeThinSvd(SiteMatrix(g, site), m, n);
    if (!svd.ok()) continue;
    double total = 0;
    for (double s : svd->s) total += s * s;
    if (total <= 0) continue;
    // The ranks offered: the one asked for, or one per energy share.
    std::vector<int64_t> ranks;
    if (choice.rank > 0) {
      ranks.push_back(wanted);
    } else {
      std::vector<double> energies = choice.automatic ? std::vector<double>(std::begin(kAutomaticEnergies), std::end(kAutomaticEnergies))
                                                      : std::vector<double>{choice.energy};
      for (double energy : energies) {
        int64_t r = 0;
        double kept = 0;
        while (r < k) {
          kept += svd->s[r] * svd->s[r];
          ++r;
          if (kept >= energy * total * (1 - 1e-12)) break;
        }
        if (ranks.empty() || ranks.back() != r) ranks.push_back(r);
      }
    }
    int64_t p = positions.size() > static_cast<size_t>(site.node) ? positions[site.node] : -1;
    for (int64_t r : ranks) {
      if (r >= k || r * (m + n) >= m * n) continue;
      double kept = 0;
      for (int64_t i = 0; i < r; ++i) kept += svd->s[i] * svd->s[i];
      ApproximateCandidate c;
      c.kind = "low-rank";
      c.group = absl::StrCat("low-rank:", where.key, ":", site.weight->name());
      c.key = absl::StrCat(c.group, "@", r);
      c.where = WherePrefix(g) + DescribeSite(g, site);
      c.detail = absl::StrFormat("rank %d of %d (%.1f%% energy, relative Frobenius error %.3g)", r, k,
                                 100 * kept / total, std::sqrt(std::max(0.0, total - kept) / total));
      c.params_before = m * n;
      c.params_after = r * (m + n);
      if (p >= 0) {
        c.macs_before = p * c.params_before;
        c.macs_after = p * c.params_after;
      }
      auto factors = std::make_shared<const Factors>(Split(*svd, r));
      std::string weight = site.weight->name();
      c.apply = [graph_key = where.key, weight, factors](Model& target) {
        return Factorize(target, graph_key, weight, *factors);
      };
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace aic::analysis
