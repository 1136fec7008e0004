// Provenance of one extraction; see trace.h and rewrite/provenance.h.
//
// An emitted node stands for the source nodes whose outputs landed in the
// classes it computes (its "producers": the node itself when kept, every copy
// when equal nodes were merged, the root of a fused pattern), and for the
// source nodes between those and its inputs whose classes nothing emitted
// computes any more: the walk goes backwards through the source graph from
// the producers and stops at a class the node reads or any class still
// emitted (a value some other node, an input or an initializer carries).
// So Conv + BatchNormalization -> Conv stands for both; x * Sigmoid(x) ->
// Swish for the Mul and the Sigmoid. Each walk touches only the source
// nodes that disappeared, so the whole trace is linear in practice.
#include "rewrite/egraph/trace.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"

namespace aic::rewrite {

namespace {

constexpr char kOutputCopy[] = "graph output copy";

// The rule that made the class's constant leaf; "" for one that came with
// the source graph (an initializer).
std::string ConstantRule(const EGraph& eg, ClassId c, const ENodeOrigins& origins) {
  for (int32_t i : eg.data(c).nodes) {
    if (eg.node(i).kind != ENodeKind::kConst) continue;
    int16_t t = static_cast<size_t>(i) < origins.tag.size() ? origins.tag[i] : 0;
    return t == 0 ? "" : origins.rule_names[t];
  }
  return "";
}

}  // namespace

GraphProvenance TraceProvenance(const Graph& source, const ImportResult& imported, const EGraph& eg,
                                const ENodeOrigins& origins, const Graph& emitted, const EmitTrace& trace) {
  GraphProvenance p;
  const auto& nodes = source.nodes();
  const size_t ns = nodes.size();
  absl::flat_hash_map<const Node*, int32_t> index;
  index.reserve(ns);
  for (size_t i = 0; i < ns; ++i) index[nodes[i].get()] = static_cast<int32_t>(i);
  auto source_class = [&](const Value* v) -> ClassId {
    auto it = imported.value_class.find(v);
    return it == imported.value_class.end() ? kNoClass : eg.Find(it->second);
  };
  auto emitted_class = [&](const Value* v) -> ClassId {
    auto it = trace.value_class.find(v);
    return it == trace.value_class.end() ? kNoClass : eg.Find(it->second);
  };
  // One emitted value per class still computed.
  absl::flat_hash_map<ClassId, const Value*> emitted_value;
  for (const auto& [v, c] : trace.value_class) emitted_value.emplace(eg.Find(c), v);
  absl::flat_hash_map<ClassId, absl::InlinedVector<int32_t, 1>> producers;
  for (size_t i = 0; i < ns; ++i) {
    for (const Value* out : nodes[i]->outputs()) {
      ClassId c = out != nullptr ? source_class(out) : kNoClass;
      if (c == kNoClass) continue;
      auto& list = producers[c];
      if (list.empty() || list.back() != static_cast<int32_t>(i)) list.push_back(static_cast<int32_t>(i));
    }
  }

  std::vector<uint32_t> seen(ns, 0);  // stamped per emitted node
  std::vector<char> covered(ns, 0);
  uint32_t stamp = 0;
  p.nodes.reserve(emitted.num_nodes());
  for (size_t k = 0; k < emitted.num_nodes(); ++k) {
    const Node& node = *emitted.nodes()[k];
    NodeProvenance np;
    int32_t e = k < trace.node_enode.size() ? trace.node_enode[k] : -1;
    if (e < 0) {
      np.rule = kOutputCopy;
    } else {
      int16_t t = static_cast<size_t>(e) < origins.tag.size() ? origins.tag[e] : 0;
      np.rule = origins.rule_names[t];
    }
    ++stamp;
    absl::InlinedVector<ClassId, 4> reads;
    for (const Value* v : node.inputs()) {
      if (v != nullptr) reads.push_back(emitted_class(v));
    }
    auto add = [&](int32_t s) {
      if (seen[s] == stamp) return;
      seen[s] = stamp;
      np.replaced.push_back(s);
    };
    for (const Value* v : node.outputs()) {
      if (v == nullptr) continue;
      auto it = producers.find(emitted_class(v));
      if (it == producers.end()) continue;
      for (int32_t s : it->second) add(s);
    }
    np.producers = static_cast<int32_t>(np.replaced.size());
    for (size_t q = 0; q < np.replaced.size(); ++q) {
      for (const Value* u : nodes[np.replaced[q]]->inputs()) {
        if (u == nullptr || u->producer() == nullptr) continue;
        ClassId c = source_class(u);
        if (c == kNoClass || emitted_value.contains(c)) continue;
        if (std::find(reads.begin(), reads.end(), c) != reads.end()) continue;
        auto it = index.find(u->producer());
        if (it != index.end()) add(it->second);
      }
    }
    for (int32_t s : np.replaced) covered[s] = 1;
    p.nodes.push_back(std::move(np));
  }
  // A node computing a class no source node computed (a rule's intermediate:
  // the HardSigmoid of x * HardSigmoid(x)) has no producers: it stands for
  // the interior of what its readers replaced. Emission is children first,
  // so going backwards visits readers before what they read.
  absl::flat_hash_map<const Value*, int32_t> reader_of;  // first reader in the emitted graph
  for (size_t k = 0; k < emitted.num_nodes(); ++k) {
    for (const Value* v : emitted.nodes()[k]->inputs()) {
      if (v != nullptr) reader_of.emplace(v, static_cast<int32_t>(k));
    }
  }
  for (size_t k = emitted.num_nodes(); k-- > 0;) {
    NodeProvenance& np = p.nodes[k];
    if (!np.replaced.empty()) continue;
    ++stamp;
    for (const Value* v : emitted.nodes()[k]->outputs()) {
      auto it = v != nullptr ? reader_of.find(v) : reader_of.end();
      if (it == reader_of.end()) continue;
      const NodeProvenance& reader = p.nodes[it->second];
      for (size_t q = reader.producers; q < reader.replaced.size(); ++q) {
        int32_t s = reader.replaced[q];
        if (seen[s] != stamp) {
          seen[s] = stamp;
          np.replaced.push_back(s);
        }
      }
    }
  }

  // What no emitted node stands for: its value folded into an initializer or
  // forwarded to one that is still there, or nothing needs it.
  p.removed.assign(ns, "");
  std::vector<std::pair<int32_t, std::string>> folded;  // source node, the initializer's name
  for (size_t s = 0; s < ns; ++s) {
    if (covered[s]) continue;
    for (const Value* out : nodes[s]->outputs()) {
      ClassId c = out != nullptr ? source_class(out) : kNoClass;
      auto it = c == kNoClass ? emitted_value.end() : emitted_value.find(c);
      if (it == emitted_value.end()) continue;
      const Value* v = it->second;
      std::string rule = v->is_initializer() && !v->is_graph_input() ? ConstantRule(eg, c, origins) : "";
      if (!rule.empty()) {
        p.removed[s] = absl::StrCat("folded into the initializer '", v->name(), "' (", rule, ")");
        folded.push_back({static_cast<int32_t>(s), v->name()});
      } else {
        p.removed[s] = absl::StrCat("bypassed: its output is '", v->name(), "'",
                                    v->is_graph_input()        ? ", a graph input"
                                    : v->is_initializer()      ? ", an initializer"
                                    : v->owner() != &emitted ? ", a value of the enclosing graph"
                                                               : "");
      }
      break;
    }
  }
  // What only fed a folded value folded with it.
  for (size_t q = 0; q < folded.size(); ++q) {
    auto [s, into] = folded[q];
    for (const Value* u : nodes[s]->inputs()) {
      if (u == nullptr || u->producer() == nullptr) continue;
      auto it = index.find(u->producer());
      if (it == index.end() || covered[it->second] || !p.removed[it->second].empty()) continue;
      if (ClassId c = source_class(u); c != kNoClass && emitted_value.contains(c)) continue;
      p.removed[it->second] = absl::StrCat("folded: part of what became the initializer '", into, "'");
      folded.push_back({it->second, into});
    }
  }
  for (size_t s = 0; s < ns; ++s) {
    if (!covered[s] && p.removed[s].empty()) p.removed[s] = "unused: nothing the graph outputs read needs it";
  }
  return p;
}

GraphProvenance ComposeProvenance(const GraphProvenance& first, const GraphProvenance& second,
                                  size_t num_original) {
  GraphProvenance out;
  out.removed = first.removed;
  out.removed.resize(num_original);
  std::vector<char> covered(num_original, 0);
  std::vector<uint32_t> seen(num_original, 0);
  uint32_t stamp = 0;
  for (const NodeProvenance& p2 : second.nodes) {
    NodeProvenance np;
    np.rule = p2.rule;
    ++stamp;
    auto add = [&](int32_t o) {
      if (o < 0 || static_cast<size_t>(o) >= num_original || seen[o] == stamp) return;
      seen[o] = stamp;
      np.replaced.push_back(o);
    };
    // A node the second pass kept keeps the first pass's rule.
    for (int32_t q = 0; q < p2.producers; ++q) {
      const NodeProvenance& p1 = first.nodes[p2.replaced[q]];
      if (np.rule == kOriginalRule) np.rule = p1.rule;
      for (int32_t r = 0; r < p1.producers; ++r) add(p1.replaced[r]);
    }
    np.producers = static_cast<int32_t>(np.replaced.size());
    for (int32_t j : p2.replaced) {
      for (int32_t o : first.nodes[j].replaced) add(o);
    }
    for (int32_t o : np.replaced) covered[o] = 1;
    out.nodes.push_back(std::move(np));
  }
  for (size_t j = 0; j < second.removed.size() && j < first.nodes.size(); ++j) {
    if (second.removed[j].empty()) continue;
    for (int32_t o : first.nodes[j].replaced) {
      if (!covered[o] && out.removed[o].empty()) out.removed[o] = second.removed[j];
    }
  }
  return out;
}

}  // namespace aic::rewrite
