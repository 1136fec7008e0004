// Emission: the Graph the chosen e-nodes compute (extract.cc picks them),
// with the source graph's inputs, output names, initializer-backed inputs
// and opaque nodes (their bodies re-pointed at the emitted values) carried
// over. Only what the outputs reach is emitted: that is the dead-code
// elimination. See convert.h.
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/clone.h"
#include "rewrite/egraph/extract_internal.h"

namespace aic::rewrite {

namespace {

class Emitter {
 public:
  Emitter(const EGraph& eg, const Choice& choice, const Graph& source, const ImportResult& imported,
          EmitTrace* trace)
      : eg_(eg), choice_(choice), source_(source), imported_(imported), trace_(trace) {}

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
      if (eg_.Find(id) != id || best(id) < 0) continue;
      const ENode& n = eg_.node(best(id));
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
        if (trace_ != nullptr) {
          trace_->node_enode.push_back(-1);
          trace_->value_class[copy] = eg_.Find(imported_.outputs[k]);
        }
        v = copy;
      }
      // The declared type stays true (and keeps the file's dim names).
      if (src->type().known()) v->set_type(src->type());
      v->doc_string = src->doc_string;
      outputs.push_back(v);
    }
    out_->set_outputs(outputs);
    if (trace_ != nullptr) {
      // Provenance only: which class each emitted value computes.
      for (const auto& [c, v] : value_) trace_->value_class.emplace(v, c);
      for (const auto& [key, proj] : proj_class_) {
        auto t = tuple_outputs_.find(key.first);
        if (t == tuple_outputs_.end() || key.second >= static_cast<int64_t>(t->second.size())) continue;
        if (Value* v = t->second[key.second]; v != nullptr) trace_->value_class.emplace(v, proj);
      }
    }
    return std::move(out_);
  }

 private:
  int32_t best(ClassId c) const { return choice_[eg_.Find(c)]; }

  // `base` (`fallback` when empty) made unique among `taken` with a "__N"
  // suffix, and taken.
  std::string Unique(absl::flat_hash_set<std::string>& taken, const std::string& base, const char* fallback) {
    std::string name = base.empty() ? fallback : base;
    if (taken.insert(name).second) return name;
    for (;;) {
      std::string candidate = absl::StrCat(name, "__", counter_++);
      if (taken.insert(candidate).second) return candidate;
    }
  }
  std::string FreshName(const std::string& base) { return Unique(used_names_, base, "rw"); }
  std::string FreshNodeName(const std::string& base) { return Unique(node_names_, base, "node"); }

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
      int32_t bi = best(c);
      if (bi < 0) return absl::InternalError(absl::StrCat("no extractable e-node for e-class ", c));
      const ENode& n = eg_.node(bi);
      if (!expanded) {
        stack.push_back({c, true});
        for (ClassId ch : n.children) {
          if (ch != kNoClass) stack.push_back({ch, false});
        }
        continue;
      }
      AIC_RETURN_IF_ERROR(EmitNode(c, n, bi));
    }
    ClassId c = eg_.Find(root);
    return value_.at(c);
  }

  absl::Status EmitNode(ClassId c, const ENode& n, int32_t index) {
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
                               FreshNodeName(!d.node_name.empty() ? d.node_name
                                             : proto.name.empty()    ? proto.op_type
                                                                     : proto.name),
                               proto.domain);
    node->doc_string = proto.doc_string;
    node->attributes = proto.attributes;
    if (trace_ != nullptr) trace_->node_enode.push_back(index);
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
  const Choice& choice_;
  const Graph& source_;
  const ImportResult& imported_;
  EmitTrace* trace_;  // nullptr unless provenance is recorded
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

absl::StatusOr<std::unique_ptr<Graph>> EmitGraph(const EGraph& egraph, const Choice& choice,
                                                 const Graph& source, const ImportResult& imported,
                                                 EmitTrace* trace) {
  Emitter em(egraph, choice, source, imported, trace);
  return em.Run();
}

}  // namespace aic::rewrite
