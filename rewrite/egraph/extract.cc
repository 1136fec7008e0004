// Extraction: one e-node per e-class, chosen greedily and DAG-aware (a class
// shared by several readers is paid once) under the cost model of
// cost_model.h. Building the Graph from the choice is emit.cc's. See convert.h.
#include <algorithm>
#include <limits>

#include "rewrite/egraph/convert.h"
#include "rewrite/egraph/cost_model.h"
#include "rewrite/egraph/extract_internal.h"

namespace aic::rewrite {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Above this many classes the per-class reachability sets get too big; fall
// back to tree costs (shared classes counted per use).
// The DAG costs take time quadratic in the depth of the graph (every class
// sums what it reaches): 4096 classes cover models of a few thousand nodes
// in milliseconds, and keep the time linear beyond.
constexpr size_t kMaxDagClasses = 4096;

class Extractor {
 public:
  explicit Extractor(const EGraph& eg) : eg_(eg), n_(eg.num_classes()) {}

  void Run() {
    best_.assign(n_, -1);
    cost_.assign(n_, kInf);
    own_.assign(n_, 0);
    dag_ = n_ <= kMaxDagClasses;
    words_ = (n_ + 63) / 64;
    if (dag_) sets_.assign(n_, {});
    std::vector<std::vector<double>> node_costs(n_);
    for (size_t c = 0; c < n_; ++c) {
      ClassId id = static_cast<ClassId>(c);
      if (eg_.Find(id) != id) continue;
      for (int32_t i : eg_.data(id).nodes) node_costs[c].push_back(NodeCost(eg_, eg_.node(i), id));
    }
    // Class ids do not follow dependencies (rules add classes late): the
    // passes go children first, so costs settle in a few; after the first pass, an e-node is tried
    // again only when one of its children improved since it was last tried
    // (the worklist of greedy DAG extractors), which makes a pass cost what
    // changed rather than the whole e-graph.
    std::vector<int> improved_in(n_, -1);
    std::vector<ClassId> order = ChildrenFirstOrder();
    for (int pass = 0; pass < 64; ++pass) {
      bool changed = false;
      for (ClassId id : order) {
        size_t c = static_cast<size_t>(id);
        const auto& nodes = eg_.data(id).nodes;
        for (size_t k = 0; k < nodes.size(); ++k) {
          if (pass > 0) {
            bool stale = false;
            for (ClassId ch : eg_.node(nodes[k]).children) {
              if (ch != kNoClass && improved_in[eg_.Find(ch)] >= pass - 1) {
                stale = true;
                break;
              }
            }
            if (!stale) continue;
          }
          if (Try(id, nodes[k], node_costs[c][k])) {
            changed = true;
            improved_in[c] = pass;
          }
        }
      }
      if (!changed) break;
    }
  }

  // Live classes in DFS post-order over all their e-nodes' children: every
  // class after the classes it reads, except along cycles (x = x + 0).
  std::vector<ClassId> ChildrenFirstOrder() const {
    std::vector<ClassId> order;
    std::vector<char> state(n_, 0);  // 0 new, 1 on the stack, 2 done
    std::vector<std::pair<ClassId, size_t>> stack;  // class, next child slot
    std::vector<std::vector<ClassId>> kids(n_);
    for (size_t c = 0; c < n_; ++c) {
      ClassId root = static_cast<ClassId>(c);
      if (eg_.Find(root) != root || state[c]) continue;
      stack.push_back({root, 0});
      state[c] = 1;
      while (!stack.empty()) {
        auto& [id, next] = stack.back();
        std::vector<ClassId>& k = kids[id];
        if (next == 0 && k.empty()) {
          for (int32_t i : eg_.data(id).nodes) {
            for (ClassId ch : eg_.node(i).children) {
              if (ch != kNoClass) k.push_back(eg_.Find(ch));
            }
          }
        }
        if (next < k.size()) {
          ClassId ch = k[next++];
          if (state[ch] == 0) {
            state[ch] = 1;
            stack.push_back({ch, 0});
          }
          continue;
        }
        state[id] = 2;
        order.push_back(id);
        std::vector<ClassId>().swap(k);
        stack.pop_back();
      }
    }
    return order;
  }

  // The chosen e-node per class (see Choice), moved out once Run is done.
  Choice TakeChoice() { return std::move(best_); }

 private:
  static int Priority(ENodeKind k) {
    return k == ENodeKind::kConst ? 0 : k == ENodeKind::kInput ? 1 : 2;
  }

  bool Try(ClassId id, int32_t node_index, double own) {
    const ENode& n = eg_.node(node_index);
    if (n.retired) return false;
    std::vector<uint64_t> set;
    double total;
    if (dag_) {
      set.assign(words_, 0);
      for (ClassId ch : n.children) {
        if (ch == kNoClass) continue;
        ClassId c = eg_.Find(ch);
        if (best_[c] < 0) return false;
        const auto& cs = sets_[c];
        for (size_t w = 0; w < words_; ++w) set[w] |= cs[w];
      }
      if (set[id / 64] >> (id % 64) & 1) return false;  // would read itself
      set[id / 64] |= uint64_t{1} << (id % 64);
      total = 0;
      for (size_t w = 0; w < words_; ++w) {
        uint64_t bits = set[w];
        while (bits) {
          int b = __builtin_ctzll(bits);
          bits &= bits - 1;
          size_t c = w * 64 + b;
          total += c == static_cast<size_t>(id) ? own : own_[c];
        }
      }
    } else {
      total = own;
      for (ClassId ch : n.children) {
        if (ch == kNoClass) continue;
        ClassId c = eg_.Find(ch);
        if (best_[c] < 0 || c == id) return false;
        // Tree costs double along every diamond: cap them so they stay finite.
        total = std::min(total + cost_[c], 1e300);
      }
    }
    bool better = total < cost_[id] - 1e-9 ||
                  (total <= cost_[id] + 1e-9 && best_[id] >= 0 &&
                   Priority(n.kind) < Priority(eg_.node(best_[id]).kind));
    if (!better) return false;
    if (best_[id] == node_index && total >= cost_[id] - 1e-9) return false;
    best_[id] = node_index;
    cost_[id] = total;
    own_[id] = own;
    if (dag_) sets_[id] = std::move(set);
    return true;
  }

  const EGraph& eg_;
  size_t n_;
  bool dag_ = true;
  size_t words_ = 0;
  std::vector<int32_t> best_;
  std::vector<double> cost_;
  std::vector<double> own_;
  std::vector<std::vector<uint64_t>> sets_;
};

}  // namespace

Choice ChooseENodes(const EGraph& egraph) {
  Extractor ex(egraph);
  ex.Run();
  return ex.TakeChoice();
}

absl::StatusOr<std::unique_ptr<Graph>> ExtractGraph(const EGraph& egraph, const Graph& source,
                                                    const ImportResult& imported, EmitTrace* trace) {
  return EmitGraph(egraph, ChooseENodes(egraph), source, imported, trace);
}

}  // namespace aic::rewrite
