#include "graph/clone.h"

namespace aic {

namespace {

class Cloner {
 public:
  explicit Cloner(const absl::flat_hash_map<const Value*, Value*>* outer) {
    if (outer != nullptr) map_ = *outer;
  }

  std::unique_ptr<Graph> Clone(const Graph& src, Graph* parent) {
    auto dst = std::make_unique<Graph>(parent);
    dst->name = src.name;
    dst->doc_string = src.doc_string;
    dst->opaque_sparse_initializers = src.opaque_sparse_initializers;
    dst->opaque_quantization_annotations = src.opaque_quantization_annotations;
    for (const auto& v : src.values()) {
      Value* c = dst->AddValue(v->name(), v->type());
      c->in_value_info = v->in_value_info;
      c->doc_string = v->doc_string;
      map_[v.get()] = c;
    }
    for (const Value* v : src.initializers()) dst->SetInitializer(map_[v], *v->initializer());
    std::vector<Value*> ins;
    for (const Value* v : src.inputs()) ins.push_back(Map(v));
    dst->set_inputs(ins);
    for (const auto& n : src.nodes()) {
      std::vector<Value*> in, out;
      for (const Value* v : n->inputs()) in.push_back(Map(v));
      for (const Value* v : n->outputs()) out.push_back(Map(v));
      Node* c = dst->AddNode(n->op_type, in, out, n->name, n->domain);
      c->doc_string = n->doc_string;
      c->attributes = n->attributes;
      for (Attribute& a : c->attributes) {
        if (a.type == AttrType::kGraph && a.g) a.g = Clone(*a.g, dst.get());
        for (auto& g : a.graphs) {
          if (g) g = Clone(*g, dst.get());
        }
      }
    }
    std::vector<Value*> outs;
    for (const Value* v : src.outputs()) outs.push_back(Map(v));
    dst->set_outputs(outs);
    return dst;
  }

 private:
  Value* Map(const Value* v) {
    if (v == nullptr) return nullptr;
    auto it = map_.find(v);
    return it != map_.end() ? it->second : const_cast<Value*>(v);
  }
  absl::flat_hash_map<const Value*, Value*> map_;
};

}  // namespace

std::unique_ptr<Graph> CloneGraph(const Graph& src, Graph* parent,
                                  const absl::flat_hash_map<const Value*, Value*>* outer) {
  Cloner cloner(outer);
  return cloner.Clone(src, parent);
}

std::unique_ptr<Model> CloneModel(const Model& src) {
  auto m = std::make_unique<Model>();
  m->ir_version = src.ir_version;
  m->opset_imports = src.opset_imports;
  m->producer_name = src.producer_name;
  m->producer_version = src.producer_version;
  m->domain = src.domain;
  m->model_version = src.model_version;
  m->doc_string = src.doc_string;
  m->metadata_props = src.metadata_props;
  m->functions = src.functions;
  m->opaque_training_info = src.opaque_training_info;
  m->graph = CloneGraph(*src.graph, nullptr);
  return m;
}

}  // namespace aic
