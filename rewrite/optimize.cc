// The driver: import, bounded rule iterations with budgets and backoff,
// extraction, emission. See optimize.h.
#include "rewrite/optimize.h"

#include <chrono>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/verify.h"
#include "ops/fused/standard_aliases.h"
#include "ops/infer_shapes.h"
#include "ops/registry.h"
#include "rewrite/egraph/convert.h"
#include "rewrite/egraph/trace.h"
#include "rewrite/rules/rule.h"

namespace aic::rewrite {

namespace {

int64_t InitializerBytes(const Graph& g) {
  int64_t total = 0;
  for (const Value* v : g.initializers()) total += static_cast<int64_t>(v->initializer()->byte_size());
  return total;
}

bool RuleEnabled(const Rule& r, const OptimizeOptions& o, int64_t opset) {
  if (!o.only_rules.empty() && !o.only_rules.count(r.name)) return false;
  if (o.disabled_rules.count(r.name)) return false;
  bool aic_allowed = r.aic_op != nullptr && o.AllowsAic(r.aic_op);
  if (r.aic_only && !aic_allowed) return false;
  if (r.qoperator_op != nullptr && !o.qoperator_ops.count(r.qoperator_op)) return false;
  // Below its opset, a rule runs only when it can emit the ai.aic alias instead.
  if (opset < r.min_opset && !aic_allowed) return false;
  if (r.exactness == Exactness::kApproximate && !o.allow_approximate) return false;
  if (r.exactness == Exactness::kReassociating && o.level < 2) return false;
  return o.level >= r.level;
}

// If(c, then, else) with c known -> the chosen branch, imported into the
// e-graph and unioned with the If's outputs (the If itself is retired).
// Returns how many were inlined.
int InlineKnownIfs(EGraph& eg, const Graph& graph, ImportResult& imported, absl::flat_hash_set<int32_t>& done) {
  int inlined = 0;
  for (size_t i = 0; i < eg.num_nodes(); ++i) {
    const ENode& n = eg.node(static_cast<int32_t>(i));
    if (n.kind != ENodeKind::kOpaque || n.op->op_type != "If" || !n.op->domain.empty() || n.children.empty()) continue;
    if (n.retired || done.count(static_cast<int32_t>(i))) continue;
    const Tensor* cond = eg.value(n.children[0]);
    if (cond == nullptr || cond->num_elements() != 1) continue;
    done.insert(static_cast<int32_t>(i));
    const Attribute* branch = n.op->FindAttr(cond->ElementAsDouble(0) != 0 ? "then_branch" : "else_branch");
    if (branch == nullptr || branch->type != AttrType::kGraph || !branch->g) continue;
    const Node* op = n.op;
    int num_outputs = n.num_outputs;
    absl::StatusOr<std::vector<ClassId>> outs = ImportBranch(graph, *branch->g, eg, imported);
    // A branch that does not import (an undefined name) leaves the If as it is.
    if (!outs.ok() || static_cast<int>(outs->size()) != num_outputs) continue;
    ClassId if_class = eg.ClassOfNode(static_cast<int32_t>(i));
    if (num_outputs == 1) {
      eg.Union(if_class, (*outs)[0]);
    } else {
      for (int k = 0; k < num_outputs; ++k) {
        if (op->output(k) != nullptr) eg.Union(eg.Proj(if_class, k), (*outs)[k]);
      }
    }
    eg.Retire(static_cast<int32_t>(i));
    ++inlined;
  }
  if (inlined > 0) eg.Rebuild();
  return inlined;
}

using Clock = std::chrono::steady_clock;
double SecondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One graph (the main graph or a body): import, rules, extraction.
using DeclaredTypes = absl::flat_hash_map<const Value*, TypeInfo>;

// What the file declares for graph (and body) outputs; inference may rewrite
// it, but the declaration is the contract the emitted model keeps.
void CollectDeclaredOutputs(const Graph& graph, DeclaredTypes& declared) {
  for (const Value* v : graph.outputs()) declared[v] = v->type();
  for (const auto& node : graph.nodes()) {
    for (const Graph* body : node->Subgraphs()) CollectDeclaredOutputs(*body, declared);
  }
}

// `provenance`, when given, receives where each emitted node came from
// (rewrite/egraph/trace.h); only the main graph is traced.
absl::StatusOr<std::unique_ptr<Graph>> OptimizeGraph(const Graph& graph, int64_t opset,
                                                     const OptimizeOptions& options,
                                                     const DeclaredTypes& declared, OptimizeStats& stats,
                                                     GraphProvenance* provenance = nullptr) {
  Clock::time_point start = Clock::now();
  auto elapsed = [&] { return SecondsSince(start); };
  EGraph eg(opset);
  eg.set_first_symbol(stats.fresh_symbols);
  eg.set_value_dequantized_weights(options.fold_dequantize && options.fold_large_dequantized_in_rewriter);
  Clock::time_point phase = Clock::now();
  AIC_ASSIGN_OR_RETURN(ImportResult imported, ImportGraph(graph, eg));
  stats.opaque_nodes += imported.opaque_nodes;
  stats.phase_seconds["import"] += SecondsSince(phase);
  phase = Clock::now();
  std::vector<double> rule_time;

  std::vector<const Rule*> rules;
  for (const Rule& r : AllRules()) {
    if (RuleEnabled(r, options, opset)) rules.push_back(&r);
  }
  for (const Rule* r : options.extra_rules) {
    if (RuleEnabled(*r, options, opset)) rules.push_back(r);
  }
  // Provenance: every e-node tagged with what added it (0: the import, then
  // one tag per rule, then If inlining). Tags are indices into rule_names.
  ENodeOrigins origins;
  const int16_t inline_tag = static_cast<int16_t>(rules.size() + 1);
  if (provenance != nullptr) {
    origins.rule_names.push_back(kOriginalRule);
    for (const Rule* r : rules) origins.rule_names.push_back(r->name);
    origins.rule_names.push_back("inline_known_if");
    origins.tag.assign(eg.num_nodes(), 0);
  }
  std::vector<int> banned_until(rules.size(), 0);
  rule_time.assign(rules.size(), 0.0);
  // (e-node, rule) pairs that already fired: their result is in the class, so
  // later iterations skip them (e-nodes never change, only their classes do).
  absl::flat_hash_set<int64_t> fired;
  absl::flat_hash_set<int32_t> ifs_seen;
  stats.stop_reason = "iteration limit";
  for (int iter = 0; iter < options.max_iterations; ++iter) {
    stats.iterations = iter + 1;
    // Collect matches over a snapshot of the e-nodes, then union.
    struct Match {
      size_t rule;
      ClassId a;
      ClassId b;
    };
    std::vector<Match> matches;
    std::vector<int64_t> match_counts(rules.size(), 0);
    size_t snapshot = eg.num_nodes();
    std::vector<ClassId> node_class(snapshot, kNoClass);
    for (size_t c = 0; c < eg.num_classes(); ++c) {
      ClassId id = static_cast<ClassId>(c);
      if (eg.Find(id) != id) continue;
      for (int32_t i : eg.data(id).nodes) node_class[i] = id;
    }
    bool over_budget = false;
    for (size_t i = 0; i < snapshot && !over_budget; ++i) {
      if (node_class[i] == kNoClass) continue;
      const ENode& n = eg.node(static_cast<int32_t>(i));
      if (n.kind != ENodeKind::kOp) continue;
      for (size_t r = 0; r < rules.size(); ++r) {
        const Rule& rule = *rules[r];
        if (banned_until[r] > iter) continue;
        if (rule.root[0] != '*' && (n.op->op_type != rule.root || !HasStandardSemantics(*n.op))) continue;
        int64_t key = static_cast<int64_t>(i) * static_cast<int64_t>(rules.size()) + static_cast<int64_t>(r);
        if (fired.count(key)) continue;
        RuleContext ctx{eg, options, "", {}};
        ClassId cls = eg.Find(node_class[i]);
        Clock::time_point rule_start = Clock::now();
        ClassId result = rule.apply(ctx, cls, n);
        rule_time[r] += SecondsSince(rule_start);
        // E-nodes the rule added are its (hashconsed ones keep their first tag).
        if (provenance != nullptr) origins.tag.resize(eg.num_nodes(), static_cast<int16_t>(r + 1));
        bool explain = options.explain_rule == rule.name;
        if (result == kNoClass && ctx.extra_unions.empty()) {
          if (explain && !ctx.declined.empty()) {
            stats.explain.push_back(absl::StrCat("declined at ", n.op->op_type, " '",
                                                 eg.data(cls).name, "': ", ctx.declined));
          }
          continue;
        }
        ++match_counts[r];
        fired.insert(key);
        if (result != kNoClass) matches.push_back({r, cls, result});
        for (auto [a, b] : ctx.extra_unions) matches.push_back({r, a, b});
        if (explain && result != kNoClass && eg.Find(result) != eg.Find(cls)) {
          stats.explain.push_back(absl::StrCat("fired at ", n.op->op_type, " '", eg.data(cls).name, "'"));
        }
      }
      if (static_cast<int64_t>(eg.num_nodes()) > options.node_budget) over_budget = true;
    }
    bool changed = false;
    for (const Match& m : matches) {
      if (eg.Union(m.a, m.b)) {
        changed = true;
        ++stats.rule_counts[rules[m.rule]->name];
      }
    }
    for (size_t r = 0; r < rules.size(); ++r) {
      // Backoff: a rule that matches too often sits out the next iterations.
      if (match_counts[r] > options.backoff_threshold) banned_until[r] = iter + 3;
    }
    eg.Rebuild();
    if (over_budget) {
      stats.stop_reason = "node budget";
      break;
    }
    // An If whose condition is known (at import, or folded by this
    // iteration) becomes its branch, which the next iteration rewrites.
    int inlined = InlineKnownIfs(eg, graph, imported, ifs_seen);
    if (provenance != nullptr) origins.tag.resize(eg.num_nodes(), inline_tag);
    if (inlined > 0) {
      stats.rule_counts["inline_known_if"] += inlined;
      changed = true;
    }
    if (!changed) {
      stats.stop_reason = "saturated";
      break;
    }
    if (elapsed() > options.time_budget_s) {
      stats.stop_reason = "time budget";
      break;
    }
  }
  stats.fresh_symbols = eg.next_symbol();
  stats.enodes += static_cast<int64_t>(eg.num_nodes());
  stats.eclasses += static_cast<int64_t>(eg.num_live_classes());

  for (size_t r = 0; r < rules.size(); ++r) stats.rule_seconds[rules[r]->name] += rule_time[r];
  stats.phase_seconds["rewrite"] += SecondsSince(phase);
  phase = Clock::now();
  EmitTrace trace;
  AIC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> out,
                       ExtractGraph(eg, graph, imported, provenance != nullptr ? &trace : nullptr));
  if (provenance != nullptr) *provenance = TraceProvenance(graph, imported, eg, origins, *out, trace);
  stats.phase_seconds["extract"] += SecondsSince(phase);
  for (size_t k = 0; k < graph.outputs().size() && k < out->outputs().size(); ++k) {
    auto it = declared.find(graph.outputs()[k]);
    if (it == declared.end() || !it->second.known()) continue;
    TypeInfo t = it->second;
    // With shapes fixed, an output's symbolic dims become what they now are.
    const TypeInfo& inferred = out->outputs()[k]->type();
    if (options.FixesShapes() && graph.parent() == nullptr && t.is_tensor() && inferred.is_tensor() &&
        t.shape.has_rank() && inferred.shape.rank() == t.shape.rank()) {
      for (size_t d = 0; d < t.shape.dims().size(); ++d) {
        if (!t.shape[d].is_value() && inferred.shape[d].is_value()) t.shape.mutable_dims()[d] = inferred.shape[d];
      }
    }
    out->outputs()[k]->set_type(std::move(t));
  }
  if (graph.parent() == nullptr) AIC_RETURN_IF_ERROR(Verify(*out));
  return out;
}

size_t OuterReads(const Graph& graph) {
  size_t reads = 0;
  for (const auto& node : graph.nodes()) {
    if (!node->Subgraphs().empty()) reads += node->ImplicitInputs().size();
  }
  return reads;
}

// Bodies after the graph that holds them: the graph's folding has made its
// constants initializers by then, which the bodies' import reads as known
// values (so Slice/Concat chains over outer constants fold, and an If whose
// condition becomes known inlines). Returns true when a body now reads fewer
// outer values, so that the holder has dead values to drop.
bool OptimizeBodies(Graph& graph, int64_t opset, const OptimizeOptions& options, const DeclaredTypes& declared,
                    OptimizeStats& stats) {
  size_t reads_before = OuterReads(graph);
  for (const auto& node : graph.nodes()) {
    for (Attribute& a : node->attributes) {
      std::vector<std::shared_ptr<Graph>*> bodies;
      if (a.type == AttrType::kGraph && a.g) bodies.push_back(&a.g);
      if (a.type == AttrType::kGraphs) {
        for (auto& g : a.graphs) bodies.push_back(&g);
      }
      for (std::shared_ptr<Graph>* body : bodies) {
        // A body that fails stays as it was.
        auto optimized = OptimizeGraph(**body, opset, options, declared, stats);
        if (!optimized.ok()) continue;
        std::shared_ptr<Graph> result(std::move(*optimized));
        if (OptimizeBodies(*result, opset, options, declared, stats)) {
          auto again = OptimizeGraph(*result, opset, options, declared, stats);
          if (again.ok()) result = std::shared_ptr<Graph>(std::move(*again));
        }
        *body = std::move(result);
      }
    }
  }
  return OuterReads(graph) < reads_before;
}

}  // namespace

absl::StatusOr<std::map<std::string, TypeInfo>> FixedShapes(const Model& model, const OptimizeOptions& options) {
  const Graph& graph = *model.graph;
  std::map<std::string, TypeInfo> fixed;
  std::set<std::string> dims_seen;
  for (const Value* v : graph.inputs()) {
    if (v->is_initializer()) continue;
    const TypeInfo& t = v->type();
    auto spec = options.fix_shapes.find(v->name());
    bool has_dim = false;
    if (t.is_tensor() && t.shape.has_rank()) {
      for (const Dim& d : t.shape.dims()) {
        if (d.is_symbol() && options.fix_dims.count(d.symbol())) {
          has_dim = true;
          dims_seen.insert(d.symbol());
        }
      }
    }
    if (spec == options.fix_shapes.end() && !has_dim) continue;
    if (!t.is_tensor()) {
      return absl::InvalidArgumentError(absl::StrCat("--fix-shape: input '", v->name(), "' is not a tensor"));
    }
    std::vector<Dim> dims;
    if (spec != options.fix_shapes.end()) {
      const std::vector<int64_t>& given = spec->second;
      if (t.shape.has_rank() && static_cast<int64_t>(given.size()) != t.shape.rank()) {
        return absl::InvalidArgumentError(absl::StrCat("--fix-shape: input '", v->name(), "' has rank ",
                                                       t.shape.rank(), " (", t.shape.ToString(), "), ",
                                                       given.size(), " dims given"));
      }
      for (size_t i = 0; i < given.size(); ++i) {
        const Dim* model_dim = t.shape.has_rank() ? &t.shape[i] : nullptr;
        if (given[i] < 0) {
          dims.push_back(model_dim != nullptr ? *model_dim : Dim::Unknown());
          continue;
        }
        if (model_dim != nullptr && model_dim->is_value() && model_dim->value() != given[i]) {
          return absl::InvalidArgumentError(absl::StrCat("--fix-shape: input '", v->name(), "' dim ", i, " is ",
                                                         model_dim->value(), " in the model (",
                                                         t.shape.ToString(), "), not ", given[i]));
        }
        dims.push_back(Dim(given[i]));
      }
    } else {
      dims = t.shape.dims();
    }
    for (Dim& d : dims) {
      if (d.is_symbol()) {
        auto it = options.fix_dims.find(d.symbol());
        if (it != options.fix_dims.end()) {
          dims_seen.insert(d.symbol());
          d = Dim(it->second);
        }
      }
    }
    fixed[v->name()] = TypeInfo::Tensor(t.dtype, Shape(std::move(dims)));
  }
  for (const auto& [name, dims] : options.fix_shapes) {
    const Value* v = graph.FindValue(name);
    if (v == nullptr || !v->is_graph_input() || v->is_initializer()) {
      return absl::InvalidArgumentError(absl::StrCat("--fix-shape: no graph input named '", name, "'"));
    }
  }
  for (const auto& [name, value] : options.fix_dims) {
    if (!dims_seen.count(name)) {
      return absl::InvalidArgumentError(absl::StrCat("--fix-dim: no graph input has a dim named '", name, "'"));
    }
  }
  return fixed;
}

std::set<std::string> AllAicOps() {
  std::set<std::string> ops;
  for (const OpDef* def : OpRegistry::Global().All()) {
    if (def->domain == kAicDomain) ops.insert(def->op_type);
  }
  return ops;
}

absl::StatusOr<OptimizeStats> Optimize(Model& model, const OptimizeOptions& options) {
  Clock::time_point start = Clock::now();
  auto elapsed = [&] { return SecondsSince(start); };
  OptimizeStats stats;
  Graph& graph = *model.graph;
  stats.nodes_before = static_cast<int64_t>(graph.num_nodes());
  stats.initializer_bytes_before = InitializerBytes(graph);
  AIC_ASSIGN_OR_RETURN(auto fixed, FixedShapes(model, options));
  if (options.level <= 0) {
    stats.nodes_after = stats.nodes_before;
    stats.initializer_bytes_after = stats.initializer_bytes_before;
    stats.stop_reason = "level 0";
    return stats;
  }
  // What the file declares for the outputs; inference may rewrite it, but the
  // declaration is the contract the emitted model keeps.
  DeclaredTypes declared;
  CollectDeclaredOutputs(graph, declared);
  for (Value* v : graph.inputs()) {
    auto it = fixed.find(v->name());
    if (it != fixed.end()) v->set_type(it->second);
  }
  InferStats infer_stats;
  Clock::time_point infer_start = Clock::now();
  AIC_RETURN_IF_ERROR(InferShapes(model, InferOptions{}, &infer_stats));
  stats.phase_seconds["infer"] += SecondsSince(infer_start);

  int64_t opset = model.OpsetFor("");
  if (opset < 0) opset = 1;
  GraphProvenance provenance;
  GraphProvenance* traced = options.record_provenance ? &provenance : nullptr;
  AIC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> out, OptimizeGraph(graph, opset, options, declared, stats, traced));
  if (OptimizeBodies(*out, opset, options, declared, stats)) {
    GraphProvenance again;
    AIC_ASSIGN_OR_RETURN(out, OptimizeGraph(*out, opset, options, declared, stats,
                                            traced != nullptr ? &again : nullptr));
    if (traced != nullptr) provenance = ComposeProvenance(provenance, again, graph.num_nodes());
  }
  if (model.ir_version < 4) {
    // Before IR 4 every initializer must also be listed as a graph input.
    for (Value* v : out->initializers()) {
      if (!v->is_graph_input()) out->AddInput(v);
    }
  }
  if (options.record_provenance) {
    // The original graph is kept (not destroyed) for the page that shows it.
    auto record = std::make_shared<OptimizeProvenance>();
    record->nodes = std::move(provenance.nodes);
    record->removed = std::move(provenance.removed);
    record->original = std::shared_ptr<const Graph>(std::move(model.graph));
    stats.provenance = std::move(record);
  }
  model.graph = std::move(out);
  if (!options.aic_ops.empty()) {
    bool has = false;
    for (const OpsetImport& o : model.opset_imports) has = has || o.domain == kAicDomain;
    // Fusions happen inside If/Loop/Scan bodies too: their nodes count.
    std::function<bool(const Graph&)> uses_aic = [&uses_aic](const Graph& g) {
      for (const auto& n : g.nodes()) {
        if (n->domain == kAicDomain) return true;
        for (const Graph* body : n->Subgraphs()) {
          if (uses_aic(*body)) return true;
        }
      }
      return false;
    };
    if (!has && uses_aic(*model.graph)) model.opset_imports.push_back({kAicDomain, 1});
  }
  stats.nodes_after = static_cast<int64_t>(model.graph->num_nodes());
  stats.initializer_bytes_after = InitializerBytes(*model.graph);
  stats.seconds = elapsed();
  return stats;
}

}  // namespace aic::rewrite
