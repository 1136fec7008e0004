#include "analysis/structure.h"

#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace aic::analysis {

namespace {

// Long single-input runs are rare; the bound keeps a pathological graph cheap.
constexpr int kMaxWalk = 256;

bool Expands(const ReportNode& n) { return n.out_features > n.in_features; }
bool Contracts(const ReportNode& n) { return n.out_features < n.in_features; }

// The next layer downstream of `i` along single-consumer, single-input nodes,
// passing layers that keep the width (a depthwise Conv in an inverted
// bottleneck) when `pass_preserving`; -1 when none.
int DownstreamLayer(const LogicalGraph& lg, int i, bool pass_preserving) {
  int cur = i;
  for (int step = 0; step < kMaxWalk; ++step) {
    if (lg.consumers[cur].size() != 1 || lg.feeds_graph_output[cur]) return -1;
    int c = lg.consumers[cur][0];
    if (lg.producers[c].size() != 1) return -1;
    const ReportNode& n = lg.nodes[c];
    if (n.is_layer && !(pass_preserving && n.in_features == n.out_features)) return c;
    cur = c;
  }
  return -1;
}

// Nodes a merge may look through: linear, elementwise, one data input (Bias,
// Scale, inference BatchNorm, Identity). Transposes and reshapes move
// features around, so they end the search.
bool PassesLinearly(const ReportNode& n) {
  return !n.is_layer && n.traits.elementwise && !n.traits.collapse_producing() &&
         (n.traits.linearity == Linearity::kLinear || n.traits.linearity == Linearity::kAffine);
}

void FindChains(const LogicalGraph& lg, Report& report) {
  std::map<int, size_t> chain_ending_at;  // tail node -> chain
  for (const ReportNode& n : lg.nodes) {
    if (!n.is_layer || n.in_features == n.out_features) continue;
    int prev = UpstreamLayer(lg, n.index);
    auto it = prev >= 0 ? chain_ending_at.find(prev) : chain_ending_at.end();
    if (it != chain_ending_at.end()) {
      Chain& c = report.chains[it->second];
      if (c.kind == n.layer_kind && c.expansion == Expands(n) && c.dims.back() == n.in_features) {
        c.dims.push_back(n.out_features);
        c.nodes.push_back(n.index);
        size_t idx = it->second;
        chain_ending_at.erase(it);
        chain_ending_at[n.index] = idx;
        continue;
      }
    }
    report.chains.push_back(
        Chain{n.layer_kind, Expands(n), {n.in_features, n.out_features}, {n.index}});
    chain_ending_at[n.index] = report.chains.size() - 1;
  }
}

void FindExpandCollapse(const LogicalGraph& lg, Report& report) {
  absl::flat_hash_set<std::pair<int, int>> seen;
  for (int c : report.collapse_points) {
    int wide = UpstreamLayer(lg, c);
    if (wide < 0 || !Expands(lg.nodes[wide])) continue;
    int narrow = DownstreamLayer(lg, c, /*pass_preserving=*/true);
    if (narrow < 0 || !Contracts(lg.nodes[narrow])) continue;
    if (!seen.insert({wide, narrow}).second) continue;
    report.expand_collapse.push_back({wide, c, narrow});
  }
}

void FindMerges(const LogicalGraph& lg, Report& report) {
  for (const ReportNode& a : lg.nodes) {
    if (!a.is_layer || a.group != 1 || lg.weights[a.index] == nullptr) continue;
    int cur = a.index;
    int next = -1;
    for (int step = 0; step < kMaxWalk; ++step) {
      if (lg.consumers[cur].size() != 1 || lg.feeds_graph_output[cur]) break;
      int c = lg.consumers[cur][0];
      if (lg.producers[c].size() != 1) break;
      if (lg.nodes[c].is_layer) {
        next = c;
        break;
      }
      if (!PassesLinearly(lg.nodes[c])) break;
      cur = c;
    }
    if (next < 0) continue;
    const ReportNode& b = lg.nodes[next];
    // Two Linears compose into one; a Conv composes with a following 1×1 Conv.
    bool ok = a.layer_kind == b.layer_kind && b.group == 1 &&
              (a.layer_kind == "Linear" || b.pointwise) && b.in_features == a.out_features;
    if (!ok) continue;
    MergeCandidate m;
    m.first = a.index;
    m.second = b.index;
    m.n = lg.weights[a.index]->num_elements() / a.out_features;  // K, or Cin·kh·kw
    m.h = a.out_features;
    m.m = b.out_features;
    m.break_even =
        static_cast<double>(m.m) * static_cast<double>(m.n) / static_cast<double>(m.m + m.n);
    m.pays = static_cast<double>(m.h) > m.break_even;
    report.merges.push_back(m);
  }
}

}  // namespace

int UpstreamLayer(const LogicalGraph& lg, int i) {
  int cur = i;
  for (int step = 0; step < kMaxWalk; ++step) {
    if (lg.producers[cur].size() != 1) return -1;
    int p = lg.producers[cur][0];
    if (lg.nodes[p].is_layer) return p;
    cur = p;
  }
  return -1;
}

int64_t UnitAxis(const LogicalGraph& lg, int i, int64_t rank) {
  if (rank <= 1) return rank - 1;
  int layer = lg.nodes[i].is_layer ? i : UpstreamLayer(lg, i);
  if (layer >= 0) return lg.nodes[layer].layer_kind == "Conv" ? 1 : rank - 1;
  return rank >= 4 ? 1 : rank - 1;  // NCHW images, else features last
}

namespace {

// The logical node computing `v`, or -1 (a graph input, a constant).
int ProducerOf(const LogicalGraph& lg, const Value* v) {
  if (v->producer() == nullptr) return -1;
  auto it = lg.index_of.find(v->producer());
  return it == lg.index_of.end() ? -1 : it->second;
}

// Whether collapse-producing node `c` computes a statistic of its own input
// that only rescales, re-centres or completes that input: every path from
// it ends, within a few nodes, in a join with a value its input came from.
// Squeeze-and-excitation's pool (x · gate(pool(x))), the means of a
// LayerNorm or RMSNorm spelled out (x − mean(x), x · 1/√mean(x²)), GRN's
// norms; and a Scale whose zeros another term fills (a rotary embedding's
// x·cos + rotate(x)·sin, where sin(0) = 0). The representation flows
// through the join, not through the statistic, so nothing of it collapses
// there. (A ReLU inside a residual branch is not such a statistic: it is
// kept as a collapse point.) The nodes between the statistic and the join
// (SE's excitation MLP and its gate) go into `side`: their collapses shape
// the statistic, not the representation.
bool IsSideStatistic(const LogicalGraph& lg, int c, absl::flat_hash_set<int>* side) {
  const ReportNode& node = lg.nodes[c];
  const bool reduction = node.traits.collapse == CollapseKind::kReduces;
  const bool zero_scale = node.name == "Scale" && node.traits.collapse == CollapseKind::kSelects;
  if (!reduction && !zero_scale) return false;
  // The values c's input is made of, a few producers back.
  constexpr int kBack = 4;
  absl::flat_hash_set<const Value*> sources;
  std::vector<std::pair<int, int>> back = {{c, 0}};
  for (size_t k = 0; k < back.size(); ++k) {
    auto [i, depth] = back[k];
    for (const Value* v : lg.data_inputs[i]) {
      sources.insert(v);
      int p = ProducerOf(lg, v);
      if (depth + 1 < kBack && p >= 0) back.push_back({p, depth + 1});
    }
  }
  // A reduction's statistic must meet a value its input is made of; a
  // zero-scale's other term may be one step past it (x·cos beside rotate(x)·sin).
  auto joins_a_source = [&](const Value* v) {
    if (sources.contains(v)) return true;
    int p = ProducerOf(lg, v);
    if (reduction || p < 0) return false;
    for (const Value* u : lg.data_inputs[p]) {
      if (sources.contains(u)) return true;
    }
    return false;
  };
  // Forward in execution order (logical nodes are numbered so), within a
  // window: a node reading the branch joins it unless it also reads other
  // values, where the branch must end in a re-joining op.
  constexpr int kWindow = 32;
  const int n = static_cast<int>(lg.nodes.size());
  absl::flat_hash_set<int> branch = {c};
  auto in_branch = [&](const Value* v) { return branch.contains(ProducerOf(lg, v)); };
  size_t open_ends = lg.consumers[c].size();
  for (int b = c + 1; b < n && b <= c + kWindow && open_ends > 0; ++b) {
    bool reads = false;
    std::vector<const Value*> others;
    for (const Value* v : lg.data_inputs[b]) {
      if (in_branch(v)) {
        reads = true;
      } else {
        others.push_back(v);
      }
    }
    if (!reads) continue;
    // Every edge from the branch into b is now accounted for.
    size_t edges = 0;
    for (int p : lg.producers[b]) edges += branch.contains(p) ? 1 : 0;
    open_ends -= std::min(open_ends, edges);
    if (!others.empty()) {
      const std::string& op = lg.nodes[b].name;
      bool rejoin_op = reduction ? (op == "Mul" || op == "Div" || op == "Sub") : op == "Add";
      if (!rejoin_op || !std::all_of(others.begin(), others.end(), joins_a_source)) return false;
      continue;  // the branch ends in this join
    }
    if (lg.feeds_graph_output[b] || lg.consumers[b].empty()) return false;
    branch.insert(b);
    open_ends += lg.consumers[b].size();
  }
  if (lg.feeds_graph_output[c] || open_ends > 0) return false;
  side->insert(branch.begin(), branch.end());
  return true;
}

}  // namespace

void FindStructure(const LogicalGraph& lg, Report& report) {
  absl::flat_hash_set<int> side;
  std::vector<int> candidates;
  for (const ReportNode& n : lg.nodes) {
    if (n.floating && n.on_data_path && n.traits.collapse_producing()) candidates.push_back(n.index);
  }
  for (int c : candidates) {
    if (!side.contains(c)) IsSideStatistic(lg, c, &side);
  }
  for (int c : candidates) {
    if (!side.contains(c)) report.collapse_points.push_back(c);
  }
  FindChains(lg, report);
  FindExpandCollapse(lg, report);
  FindMerges(lg, report);
}

std::optional<int64_t> PeakActivationBytes(const Model& model, const LogicalGraph& lg,
                                           int* at_node) {
  auto bytes_of = [](const Value* v) -> std::optional<int64_t> {
    if (!v->type().is_tensor()) return std::nullopt;
    auto n = v->shape().NumElements();
    if (!n) return std::nullopt;
    return static_cast<int64_t>(ByteSizeOf(v->dtype(), *n));
  };
  const int n = static_cast<int>(lg.nodes.size());
  const int kForever = n;
  absl::flat_hash_map<const Value*, int> last_use;
  for (int i = 0; i < n; ++i) {
    for (const Value* v : lg.data_inputs[i]) last_use[v] = std::max(last_use[v], i);
  }
  for (const Value* v : model.graph->outputs()) last_use[v] = kForever;
  int64_t live = 0, peak = 0;
  std::vector<std::pair<const Value*, int64_t>> alive;
  for (const Value* v : model.graph->inputs()) {
    if (v->is_initializer()) continue;
    auto b = bytes_of(v);
    if (!b) return std::nullopt;
    live += *b;
    alive.push_back({v, *b});
  }
  peak = live;
  if (at_node != nullptr) *at_node = -1;
  for (int i = 0; i < n; ++i) {
    for (const Value* v : lg.outputs[i]) {
      auto b = bytes_of(v);
      if (!b) return std::nullopt;
      live += *b;
      alive.push_back({v, *b});
    }
    if (live + lg.largest_internal_bytes[i] > peak) {
      peak = live + lg.largest_internal_bytes[i];
      if (at_node != nullptr) *at_node = i;
    }
    // Values whose last reader was this node (or that nobody reads) die now.
    std::vector<std::pair<const Value*, int64_t>> still;
    for (const auto& [v, b] : alive) {
      auto it = last_use.find(v);
      int last = it == last_use.end() ? i : it->second;
      if (last <= i) {
        live -= b;
      } else {
        still.push_back({v, b});
      }
    }
    alive = std::move(still);
  }
  return peak;
}

}  // namespace aic::analysis
