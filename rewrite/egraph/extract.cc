// Extraction (greedy, DAG-aware) and emission back to a Graph. See convert.h.
#include <algorithm>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/clone.h"
#include "ops/registry.h"
#include "rewrite/egraph/convert.h"

namespace aic::rewrite {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// One kernel launch / node dispatch, in element-equivalents: it makes fewer
// nodes win when the arithmetic is equal.
constexpr double kKernelOverhead = 4096;
// Above this many classes the per-class reachability sets get too big; fall
// back to tree costs (shared classes counted per use).
// The DAG costs take time quadratic in the depth of the graph (every class
// sums what it reaches): 4096 classes cover models of a few thousand nodes
// in milliseconds, and keep the time linear beyond.
constexpr size_t kMaxDagClasses = 4096;

double NodeCost(const EGraph& eg, const ENode& n, ClassId cls) {
  switch (n.kind) {
    case ENodeKind::kInput:
    case ENodeKind::kConst:
    case ENodeKind::kProj:
      return 0;
    case ENodeKind::kOpaque:
      return kKernelOverhead;
    case ENodeKind::kOp:
      break;
  }
  // Computed from weights only: a runtime folds it once, so it is (nearly) free.
  if (eg.weight_only(cls)) return 1;
  const OpDef* def = OpRegistry::Global().Find(n.op->domain, n.op->op_type, eg.opset());
  double cost = kKernelOverhead;
  if (def != nullptr && def->cost) {
    std::vector<TypeInfo> types;
    std::vector<const Tensor*> consts;
    for (ClassId c : n.children) {
      if (c == kNoClass) {
        types.emplace_back();
        consts.push_back(nullptr);
      } else {
        types.push_back(eg.data(c).types.empty() ? TypeInfo() : eg.data(c).types[0]);
        consts.push_back(eg.value(c));
      }
    }
    int64_t counter = 0;
    OpContext ctx(*n.op, eg.opset(), std::move(types), std::move(consts),
                  [&counter] { return absl::StrCat("unk__c", counter++); });
    for (size_t i = 0; i < ctx.num_outputs() && i < eg.data(cls).types.size(); ++i) {
      ctx.set_output_type(i, eg.data(cls).types[i]);
    }
    Cost c = def->cost(ctx);
    if (c.known) return cost + c.macs + (c.bytes_read + c.bytes_written) / 4.0;
  }
  return cost + 1000;
}

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

  int32_t best(ClassId c) const { return best_[eg_.Find(c)]; }
  double cost(ClassId c) const { return cost_[eg_.Find(c)]; }

 private:
  static int Priority(ENodeKind k) {
    return k == ENodeKind::kConst ? 0 : k == ENodeKind::kInput ? 1 : 2;
  }

  bool Try(ClassId id, int32_t node_index, double own) {
    const ENode& n = eg_.node(node_index);
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

class Emitter {
 public:
  Emitter(const EGraph& eg, const Extractor& ex, const Graph& source, const ImportResult& imported)
      : eg_(eg), ex_(ex), source_(source), imported_(imported) {}

  absl::StatusOr<std::unique_ptr<Graph>> Run() {
    out_ = std::make_unique<Graph>(source_.parent());
    out_->name = source_.name;
    out_->doc_string = source_.doc_string;
    out_->opaque_sparse_initializers = source_.opaque_sparse_initializers;
    out_->opaque_quantization_annotations = source_.opaque_quantization_annotations;
    for (const Value* v : source_.inputs()) used_names_.insert(v->name());
    for (const Value* v : source_.outputs()) used_names_.insert(v->name());
    // Graph inputs first, in order, with their overridable defaults.
    std::vector<Value*> inputs;
    for (const Value* v : source_.inputs()) {
      Value* nv = out_->AddValue(v->name(), v->type());
      nv->doc_string = v->doc_string;
      if (v->initializer() != nullptr) out_->SetInitializer(nv, *v->initializer());
      inputs.push_back(nv);
      ClassId c = eg_.Find(imported_.value_class.at(v));
      if (!value_.count(c)) value_[c] = nv;
    }
    out_->set_inputs(inputs);
    for (const auto& [leaf, outer] : imported_.outer_leaves) {
      ClassId c = eg_.Find(leaf);
      if (!value_.count(c)) value_[c] = outer;
    }
    // Each output class takes its output's name when it is computed by a node.
    for (size_t k = 0; k < source_.outputs().size(); ++k) {
      ClassId c = eg_.Find(imported_.outputs[k]);
      output_name_.emplace(c, source_.outputs()[k]->name());
    }
    // Projections name the outputs of multi-output nodes.
    for (size_t c = 0; c < eg_.num_classes(); ++c) {
      ClassId id = static_cast<ClassId>(c);
      if (eg_.Find(id) != id || ex_.best(id) < 0) continue;
      const ENode& n = eg_.node(ex_.best(id));
      if (n.kind == ENodeKind::kProj) proj_class_.emplace(std::make_pair(eg_.Find(n.children[0]), n.index), id);
    }
    std::vector<Value*> outputs;
    for (size_t k = 0; k < source_.outputs().size(); ++k) {
      const Value* src = source_.outputs()[k];
      AIC_ASSIGN_OR_RETURN(Value * v, Emit(imported_.outputs[k]));
      if (v->name() != src->name()) {
        // An input, a constant or an output listed twice: copy under the output's name.
        Value* copy = out_->AddValue(src->name(), v->type());
        out_->AddNode("Identity", {v}, {copy}, FreshNodeName("Identity"));
        v = copy;
      }
      // The declared type stays true (and keeps the file's dim names).
      if (src->type().known()) v->set_type(src->type());
      v->doc_string = src->doc_string;
      outputs.push_back(v);
    }
    out_->set_outputs(outputs);
    return std::move(out_);
  }

 private:
  std::string FreshName(const std::string& base) {
    std::string name = base.empty() ? "rw" : base;
    if (used_names_.insert(name).second) return name;
    for (;;) {
      std::string candidate = absl::StrCat(name, "__", counter_++);
      if (used_names_.insert(candidate).second) return candidate;
    }
  }
  std::string FreshNodeName(const std::string& base) {
    std::string name = base.empty() ? "node" : base;
    if (node_names_.insert(name).second) return name;
    for (;;) {
      std::string candidate = absl::StrCat(name, "__", counter_++);
      if (node_names_.insert(candidate).second) return candidate;
    }
  }

  std::string NameFor(ClassId c) {
    auto it = output_name_.find(c);
    if (it != output_name_.end() && !output_taken_.count(c)) {
      output_taken_.insert(c);
      return it->second;  // reserved in used_names_ already
    }
    return FreshName(eg_.data(c).name);
  }

  // Emits the class (and what it reads) iteratively: deep graphs would
  // overflow the stack with recursion.
  absl::StatusOr<Value*> Emit(ClassId root) {
    std::vector<std::pair<ClassId, bool>> stack{{eg_.Find(root), false}};
    while (!stack.empty()) {
      auto [c, expanded] = stack.back();
      stack.pop_back();
      c = eg_.Find(c);
      if (value_.count(c) || tuple_done_.count(c)) continue;
      int32_t bi = ex_.best(c);
      if (bi < 0) return absl::InternalError(absl::StrCat("no extractable e-node for e-class ", c));
      const ENode& n = eg_.node(bi);
      if (!expanded) {
        stack.push_back({c, true});
        for (ClassId ch : n.children) {
          if (ch != kNoClass) stack.push_back({ch, false});
        }
        continue;
      }
      AIC_RETURN_IF_ERROR(EmitNode(c, n));
    }
    ClassId c = eg_.Find(root);
    return value_.at(c);
  }

  absl::Status EmitNode(ClassId c, const ENode& n) {
    const EClassData& d = eg_.data(c);
    switch (n.kind) {
      case ENodeKind::kInput:
        return absl::InternalError("graph input class without a value");
      case ENodeKind::kConst: {
        const Tensor& t = eg_.constant(n.const_index);
        Value* v = out_->AddValue(FreshName(d.name.empty() ? "const" : d.name),
                                  TypeInfo::Tensor(t.dtype(), Shape::FromValues(t.dims())));
        out_->SetInitializer(v, t);
        value_[c] = v;
        return absl::OkStatus();
      }
      case ENodeKind::kProj: {
        ClassId t = eg_.Find(n.children[0]);
        const auto& outs = tuple_outputs_.at(t);
        if (n.index >= static_cast<int64_t>(outs.size()) || outs[n.index] == nullptr) {
          return absl::InternalError("projection of a missing output");
        }
        value_[c] = outs[n.index];
        return absl::OkStatus();
      }
      case ENodeKind::kOp:
      case ENodeKind::kOpaque:
        break;
    }
    const Node& proto = *n.op;
    size_t num_regular = n.kind == ENodeKind::kOpaque ? proto.num_inputs() : n.children.size();
    std::vector<Value*> ins;
    for (size_t i = 0; i < num_regular; ++i) {
      ClassId ch = n.children[i];
      ins.push_back(ch == kNoClass ? nullptr : value_.at(eg_.Find(ch)));
    }
    std::vector<Value*> outs;
    if (!d.is_tuple) {
      Value* v = out_->AddValue(NameFor(c), d.types.empty() ? TypeInfo() : d.types[0]);
      outs.push_back(v);
      value_[c] = v;
    } else {
      for (int i = 0; i < n.num_outputs; ++i) {
        // Outputs the source left unnamed stay omitted; others get names.
        bool omitted = n.kind == ENodeKind::kOpaque && proto.output(i) == nullptr;
        auto pc = proj_class_.find(std::make_pair(c, static_cast<int64_t>(i)));
        std::string name;
        if (pc != proj_class_.end()) {
          name = NameFor(pc->second);
        } else if (n.kind == ENodeKind::kOpaque && !omitted) {
          name = FreshName(proto.output(i)->name());
        }
        // Outputs nothing reads stay omitted: requesting an optional output
        // can change what an op does (BatchNormalization's running stats).
        TypeInfo type = i < static_cast<int>(d.types.size()) ? d.types[i] : TypeInfo();
        outs.push_back(name.empty() ? nullptr : out_->AddValue(name, type));
      }
      // Only trailing outputs may be left out: one before a named output gets
      // a name of its own (Dropout's output 0 when only the mask is read).
      int last = static_cast<int>(outs.size()) - 1;
      while (last >= 0 && outs[last] == nullptr) --last;
      for (int i = 0; i < last; ++i) {
        if (outs[i] != nullptr || (n.kind == ENodeKind::kOpaque && proto.output(i) == nullptr)) continue;
        TypeInfo type = i < static_cast<int>(d.types.size()) ? d.types[i] : TypeInfo();
        outs[i] = out_->AddValue(FreshName(absl::StrCat(d.name.empty() ? proto.op_type : d.name, "_unused", i)), type);
      }
      tuple_outputs_[c] = outs;
      tuple_done_.insert(c);
    }
    Node* node = out_->AddNode(proto.op_type, ins, outs,
                               FreshNodeName(proto.name.empty() ? proto.op_type : proto.name),
                               proto.domain);
    node->doc_string = proto.doc_string;
    node->attributes = proto.attributes;
    if (n.kind == ENodeKind::kOpaque && !proto.Subgraphs().empty()) {
      // Bodies read outer values by pointer: point them at the emitted ones.
      absl::flat_hash_map<const Value*, Value*> outer;
      for (const Value* v : proto.ImplicitInputs()) {
        auto it = imported_.value_class.find(v);
        if (it == imported_.value_class.end()) continue;
        auto emitted = value_.find(eg_.Find(it->second));
        if (emitted != value_.end()) outer[v] = emitted->second;
      }
      for (Attribute& a : node->attributes) {
        if (a.type == AttrType::kGraph && a.g) a.g = CloneGraph(*a.g, out_.get(), &outer);
        if (a.type == AttrType::kGraphs) {
          for (auto& g : a.graphs) g = CloneGraph(*g, out_.get(), &outer);
        }
      }
    }
    return absl::OkStatus();
  }

  const EGraph& eg_;
  const Extractor& ex_;
  const Graph& source_;
  const ImportResult& imported_;
  std::unique_ptr<Graph> out_;
  absl::flat_hash_map<ClassId, Value*> value_;
  absl::flat_hash_map<ClassId, std::vector<Value*>> tuple_outputs_;
  absl::flat_hash_set<ClassId> tuple_done_;
  absl::flat_hash_map<ClassId, std::string> output_name_;
  absl::flat_hash_map<std::pair<ClassId, int64_t>, ClassId> proj_class_;
  absl::flat_hash_set<ClassId> output_taken_;
  absl::flat_hash_set<std::string> used_names_;
  absl::flat_hash_set<std::string> node_names_;
  int64_t counter_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Graph>> ExtractGraph(const EGraph& egraph, const Graph& source,
                                                    const ImportResult& imported) {
  Extractor ex(egraph);
  ex.Run();
  Emitter em(egraph, ex, source, imported);
  return em.Run();
}

}  // namespace aic::rewrite
